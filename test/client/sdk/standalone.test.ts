/**
 * The SDK stands alone, as a published client library must: its wire types are generated plain TypeScript
 * (client/sdk/types.ts, kept equal to what scripts/sdkTypes generates from the server's schemas), it builds from its
 * own files with no server code on disk, and its packed tarball (`npm pack` of client/sdk/package.json) installs
 * into a scratch project that type-checks against it and calls the real API with it.
 */
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture } from "../../helpers/fixtures";
import { startTestApi } from "../../helpers/api";
import { TARGET, generateSdkTypes } from "../../../scripts/sdkTypes/generate";

const ROOT = path.join(__dirname, "..", "..", "..");
const SDK = path.join(ROOT, "client", "sdk");
const MODULES = path.join(ROOT, "node_modules");
const TSC = path.join(MODULES, "typescript", "bin", "tsc");
const PACKAGE = JSON.parse(fs.readFileSync(path.join(SDK, "package.json"), "utf8")) as {
  name: string;
  dependencies: Record<string, string>;
};

const run = (cwd: string, file: string, args: string[]) =>
  execFileSync(file, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

const SCRATCH_APP = `
import { ApiError, MarketApi, CLIENT_CODES, type Stats, type TaskDetail } from "${PACKAGE.name}";

async function main(baseUrl: string) {
  const api = new MarketApi({ baseUrl });
  const stats: Stats = await api.stats();
  let code = "";
  try {
    const task: TaskDetail = await api.task("999999");
    code = String(task);
  } catch (error) {
    if (error instanceof ApiError) code = error.code;
  }
  console.log(JSON.stringify({ openTasks: stats.openTasks, code, clientCodes: CLIENT_CODES.length > 0 }));
}

void main(process.argv[2]);
`;

describe("SDK: standalone", () => {
  it("carries the wire types scripts/sdkTypes generates from the server's schemas (npm run sdk:types)", async () => {
    expect(fs.readFileSync(TARGET, "utf8")).to.equal(await generateSdkTypes());
  });

  it("builds with no server code on disk, packs, and works from a scratch project", async function () {
    this.timeout(120_000);
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-standalone-"));
    try {
      // The SDK's own files alone, beside the dependencies (no server/, client/ or test/ on disk there).
      const sdk = path.join(work, "sdk");
      fs.mkdirSync(sdk);
      for (const file of fs.readdirSync(SDK)) {
        if (/\.ts$|^package\.json$|^tsconfig\.json$|^README\.md$/.test(file)) {
          fs.copyFileSync(path.join(SDK, file), path.join(sdk, file));
        }
      }
      fs.symlinkSync(MODULES, path.join(sdk, "node_modules"), "dir");
      run(sdk, process.execPath, [TSC, "-p", "."]);
      const tarball = run(sdk, "npm", ["pack", "--silent", "--pack-destination", work]).trim().split("\n").pop()!;
      const listed = run(work, "tar", ["-tzf", tarball]).split("\n").filter(Boolean);
      expect(listed).to.include.members(["package/package.json", "package/dist/index.js", "package/dist/index.d.ts"]);
      expect(listed.filter((entry) => !/^package\/(dist\/|package\.json$|README\.md$)/.test(entry))).to.deep.equal([]);

      // A scratch project: the tarball unpacked where `npm install` puts it, its dependencies beside it.
      const app = path.join(work, "app");
      const installed = path.join(app, "node_modules", ...PACKAGE.name.split("/"));
      fs.mkdirSync(installed, { recursive: true });
      run(work, "tar", ["-xzf", tarball, "-C", installed, "--strip-components=1"]);
      for (const dependency of [...Object.keys(PACKAGE.dependencies), "@types/node"]) {
        const where = path.join(app, "node_modules", dependency);
        fs.mkdirSync(path.dirname(where), { recursive: true });
        fs.symlinkSync(path.join(MODULES, dependency), where, "dir");
      }
      fs.writeFileSync(path.join(app, "index.ts"), SCRATCH_APP);
      const compilerOptions = { strict: true, target: "es2022", module: "commonjs", types: ["node"] };
      fs.writeFileSync(path.join(app, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["index.ts"] }));
      run(app, process.execPath, [TSC, "-p", "."]);

      const { book } = await loadFixture(deployEscrowFixture);
      const api = await startTestApi(book);
      try {
        const output = await new Promise<string>((resolve, reject) => {
          execFile(process.execPath, ["index.js", api.url], { cwd: app }, (error, stdout) =>
            error ? reject(error) : resolve(stdout),
          );
        });
        expect(JSON.parse(output)).to.deep.equal({ openTasks: 0, code: "NOT_FOUND", clientCodes: true });
      } finally {
        await api.close();
      }
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
