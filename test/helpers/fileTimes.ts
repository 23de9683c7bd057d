/**
 * A mocha reporter that prints what the spec reporter prints and records each test file's wall time and CPU time as
 * JSON, enabled by `TEST_FILE_TIMES=<file.json>` (see hardhat.config.ts). A file's time runs from its first top-level
 * suite's start to its last top-level suite's end, so its hooks and fixtures count. Its CPU time is this process's
 * plus that of the child processes it reaped meanwhile (spawned servers and CLIs), read from /proc/self/stat where
 * there is one: on a loaded machine wall times stretch, CPU times much less. The JSON is rewritten after each file,
 * so an interrupted run still leaves its table.
 */
import fs from "node:fs";
import path from "node:path";
import Mocha from "mocha";
import type { FileTime } from "./fileTime";

/** User + system CPU of this process and its reaped children, in ms (clock ticks of 10 ms), or null. */
function cpuWithChildrenMs(): number | null {
  try {
    const stat = fs.readFileSync("/proc/self/stat", "utf8");
    // Fields after the parenthesised command name; utime, stime, cutime, cstime are fields 14-17.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
    return ticks * 10;
  } catch {
    return null;
  }
}

interface Row {
  start: number;
  end: number;
  cpuStart: number | null;
  cpuEnd: number | null;
  passed: number;
  failed: number;
  pending: number;
}

class FileTimes extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const out = process.env.TEST_FILE_TIMES;
    const files = new Map<string, Row>();
    const entry = (file: string | undefined): Row => {
      const key = path.relative(process.cwd(), file ?? "(no file)");
      let row = files.get(key);
      if (!row) {
        const cpu = cpuWithChildrenMs();
        row = { start: Date.now(), end: Date.now(), cpuStart: cpu, cpuEnd: cpu, passed: 0, failed: 0, pending: 0 };
        files.set(key, row);
      }
      return row;
    };
    const write = () => {
      if (!out) return;
      const rows: FileTime[] = [...files].map(([file, r]) => ({
        file,
        ms: r.end - r.start,
        cpuMs: r.cpuStart === null || r.cpuEnd === null ? null : r.cpuEnd - r.cpuStart,
        passed: r.passed,
        failed: r.failed,
        pending: r.pending,
      }));
      fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
      fs.writeFileSync(out, JSON.stringify(rows, null, 2) + "\n");
    };
    runner.on(Mocha.Runner.constants.EVENT_SUITE_BEGIN, (suite) => {
      if (suite.parent?.root) entry(suite.file);
    });
    runner.on(Mocha.Runner.constants.EVENT_SUITE_END, (suite) => {
      if (!suite.parent?.root) return;
      const row = entry(suite.file);
      row.end = Date.now();
      row.cpuEnd = cpuWithChildrenMs();
      write();
    });
    runner.on(Mocha.Runner.constants.EVENT_TEST_PASS, (test) => void entry(test.file).passed++);
    runner.on(Mocha.Runner.constants.EVENT_TEST_FAIL, (test) => void entry(test.file).failed++);
    runner.on(Mocha.Runner.constants.EVENT_TEST_PENDING, (test) => void entry(test.file).pending++);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, write);
  }
}

export = FileTimes;
