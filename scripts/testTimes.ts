/**
 * Turns the per-file times that test/helpers/fileTimes.ts records (TEST_FILE_TIMES=<file.json> on a serial
 * `hardhat test`, one file or several, e.g. one per folder) into the two things kept in the repository:
 * test/durations.json (each file's seconds, the order in which `npm test` hands files to its workers) and the table of
 * docs/performance.md ("npm test, file by file"), printed as Markdown.
 *
 *     TEST_FILE_TIMES=times.json npx hardhat test
 *     npx ts-node --transpile-only scripts/testTimes.ts times.json [more.json ...]
 */
import fs from "node:fs";
import path from "node:path";
import type { FileTime as Row } from "../test/helpers/fileTime";

const DURATIONS = path.join(__dirname, "..", "test", "durations.json");
const TOP = 25;

const seconds = (ms: number) => (ms / 1000).toFixed(1);

export function durations(rows: Row[]): Record<string, number> {
  const sorted = [...rows].sort((a, b) => b.ms - a.ms || a.file.localeCompare(b.file));
  return Object.fromEntries(sorted.map((row) => [row.file, Math.round(row.ms / 100) / 10]));
}

export function table(rows: Row[]): string[] {
  const cpu = (row: { cpuMs: number | null }) => (row.cpuMs === null ? "-" : seconds(row.cpuMs));
  const lines = ["| File | Wall s | CPU s | Tests |", "| - | -: | -: | -: |"];
  for (const row of [...rows].sort((a, b) => b.ms - a.ms).slice(0, TOP)) {
    lines.push(`| ${row.file} | ${seconds(row.ms)} | ${cpu(row)} | ${row.passed + row.failed + row.pending} |`);
  }
  const folders = new Map<string, { files: number; ms: number; cpuMs: number | null; tests: number }>();
  for (const row of rows) {
    const folder = path.posix.dirname(row.file);
    const total = folders.get(folder) ?? { files: 0, ms: 0, cpuMs: 0, tests: 0 };
    total.files++;
    total.ms += row.ms;
    total.cpuMs = total.cpuMs === null || row.cpuMs === null ? null : total.cpuMs + row.cpuMs;
    total.tests += row.passed + row.failed + row.pending;
    folders.set(folder, total);
  }
  lines.push("", "| Folder | Files | Wall s | CPU s | Tests |", "| - | -: | -: | -: | -: |");
  const all = { files: 0, ms: 0, cpuMs: 0 as number | null, tests: 0 };
  for (const [folder, total] of [...folders].sort((a, b) => b[1].ms - a[1].ms)) {
    lines.push(`| ${folder} | ${total.files} | ${seconds(total.ms)} | ${cpu(total)} | ${total.tests} |`);
    all.files += total.files;
    all.ms += total.ms;
    all.cpuMs = all.cpuMs === null || total.cpuMs === null ? null : all.cpuMs + total.cpuMs;
    all.tests += total.tests;
  }
  lines.push(`| all | ${all.files} | ${seconds(all.ms)} | ${cpu(all)} | ${all.tests} |`);
  return lines;
}

if (require.main === module) {
  const inputs = process.argv.slice(2);
  if (inputs.length === 0) {
    console.error("usage: ts-node scripts/testTimes.ts <times.json> [more.json ...]");
    process.exit(2);
  }
  const rows = inputs.flatMap((file) => JSON.parse(fs.readFileSync(file, "utf8")) as Row[]);
  fs.writeFileSync(DURATIONS, JSON.stringify(durations(rows), null, 2) + "\n");
  console.log(table(rows).join("\n"));
}
