/**
 * The per-file timing of the suites: the reporter (test/helpers/fileTimes.ts, `TEST_FILE_TIMES`) records each test
 * file's wall time and counts, and scripts/testTimes.ts turns such records into test/durations.json's order and the
 * table of docs/performance.md.
 */
import { expect } from "chai";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { childEnv } from "../helpers/childEnv";
import type { FileTime } from "../helpers/fileTime";
import { durations, table } from "../../scripts/testTimes";

const ROOT = path.join(__dirname, "..", "..");

describe("test file times", () => {
  it("records each file's wall time and its passed, failed and pending tests, and orders the slowest first", async function () {
    this.timeout(60_000);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "file-times-"));
    try {
      fs.writeFileSync(
        path.join(dir, "slow.test.js"),
        `describe("slow", () => {
           it("waits", (done) => setTimeout(done, 300));
           it("fails", () => { throw new Error("on purpose"); });
           it.skip("is skipped", () => {});
         });`,
      );
      fs.writeFileSync(path.join(dir, "quick.test.js"), `describe("quick", () => { it("passes", () => {}); });`);
      const out = path.join(dir, "times.json");
      const run = promisify(execFile)(
        process.execPath,
        [
          "-r",
          require.resolve("ts-node/register/transpile-only"),
          path.join(ROOT, "node_modules", "mocha", "bin", "mocha.js"),
          "--reporter",
          path.join(ROOT, "test", "helpers", "fileTimes.ts"),
          path.join(dir, "slow.test.js"),
          path.join(dir, "quick.test.js"),
        ],
        { cwd: dir, env: { ...childEnv(), TS_NODE_PROJECT: path.join(ROOT, "tsconfig.json"), TEST_FILE_TIMES: out } },
      );
      // One test fails on purpose, so mocha exits 1; the record is what is checked.
      const failed = await run.then(
        () => undefined,
        (error: { code?: number; stdout?: string }) => error,
      );
      expect(failed?.code).to.equal(1);
      expect(failed?.stdout).to.contain("1 failing"); // the spec reporter's own summary is still printed

      const rows = JSON.parse(fs.readFileSync(out, "utf8")) as FileTime[];
      const byFile = new Map(rows.map((row) => [row.file, row]));
      expect([...byFile.keys()].sort()).to.deep.equal(["quick.test.js", "slow.test.js"]);
      const slow = byFile.get("slow.test.js")!;
      expect([slow.passed, slow.failed, slow.pending]).to.deep.equal([1, 1, 1]);
      expect(slow.ms).to.be.at.least(290);
      const quick = byFile.get("quick.test.js")!;
      expect([quick.passed, quick.failed, quick.pending]).to.deep.equal([1, 0, 0]);
      expect(quick.ms).to.be.below(slow.ms);

      expect(Object.keys(durations(rows))).to.deep.equal(["slow.test.js", "quick.test.js"]);
      const lines = table(rows);
      expect(lines[2]).to.match(/^\| slow\.test\.js \| 0\.\d \| /);
      expect(lines[2]).to.match(/ \| 3 \|$/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
