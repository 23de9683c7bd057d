import { expect } from "chai";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { PROJECT_ROOT } from "../../server/projectRoot";

// `npm start`, `npm run indexer` and `npm run agents:host` run the build; their pre-scripts say how to make one.
describe("scripts/requireBuild.js (the production scripts' pre-check)", function () {
  const script = path.join(PROJECT_ROOT, "scripts", "requireBuild.js");

  it("refuses a missing build with the command that makes it", function () {
    const run = spawnSync(process.execPath, [script, "dist/no-such-entry.js"], { encoding: "utf8" });
    expect(run.status).to.equal(1);
    expect(run.stderr).to.contain("dist/no-such-entry.js is missing");
    expect(run.stderr).to.contain("npm run build:node");
  });

  it("passes when the entry exists", function () {
    const run = spawnSync(process.execPath, [script, "package.json"], { encoding: "utf8" });
    expect(run.status).to.equal(0);
    expect(run.stderr).to.equal("");
  });

  it("guards each production script", async function () {
    const { scripts } = (await import(path.join(PROJECT_ROOT, "package.json"))) as { scripts: Record<string, string> };
    for (const name of ["start", "indexer", "agents:host"]) {
      const entry = scripts[name]!.replace(/^node /, "");
      expect(scripts[`pre${name}`]).to.equal(`node scripts/requireBuild.js ${entry}`);
    }
  });
});
