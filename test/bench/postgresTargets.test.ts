/**
 * bench:api's PostgreSQL targets (bench/lib/postgresTargets.ts): each share printed against its own target, A2A and
 * MCP apart (SQLite's 50% and 60%), and a row left out (BENCH_ONLY) not printed.
 */
import { expect } from "chai";
import { POSTGRES_API_TARGETS, printPostgresApiTargets } from "../../bench/lib/postgresTargets";
import type { LoadResult } from "../../bench/lib/load";

const rate = (rps: number): LoadResult => ({
  rps,
  p50: 1,
  p99: 2,
  total: rps * 10,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  statuses: {},
  loadCpuMicros: 0,
});

function printed(rows: Parameters<typeof printPostgresApiTargets>[0]): string[] {
  const lines: string[] = [];
  const log = console.log;
  console.log = (line: string) => lines.push(line);
  try {
    printPostgresApiTargets(rows);
  } finally {
    console.log = log;
  }
  return lines;
}

describe("bench:api's PostgreSQL targets (bench/lib/postgresTargets.ts)", () => {
  it("judges each share against its own target: the listing 30% of Koa, one task 55%, MCP 60%, A2A 50%", () => {
    expect(POSTGRES_API_TARGETS).to.include({
      listingShareOfKoa: 0.3,
      taskShareOfListing: 0.55,
      mcpShareOfRest: 0.6,
      a2aShareOfRest: 0.5,
    });
    const lines = printed({
      bare: rate(10_000),
      listing: rate(3_100), // 31%
      oneTask: rate(1_674), // 54% of the listing
      a2a: rate(1_705), // 55%
      mcp: rate(1_705), // 55%
    });
    const verdict = (name: string) =>
      lines
        .find((l) => l.includes(name))
        ?.split(": ")
        .at(-1);
    expect(verdict("the open-task listing")).to.equal("PASS");
    expect(verdict("one task by id")).to.equal("UNDER");
    expect(verdict("A2A tasks/list")).to.equal("PASS");
    expect(verdict("MCP browse_tasks")).to.equal("UNDER");
    expect(lines.find((l) => l.includes("MCP"))).to.include("PostgreSQL target >= 60%");
  });

  it("prints no share for a row that was not measured", () => {
    const lines = printed({
      bare: rate(10_000),
      listing: rate(3_100),
      oneTask: rate(NaN),
      a2a: rate(NaN),
      mcp: rate(2_000),
    });
    expect(lines.some((l) => l.includes("one task by id"))).to.equal(false);
    expect(lines.some((l) => l.includes("A2A"))).to.equal(false);
    expect(lines.some((l) => l.includes("MCP browse_tasks"))).to.equal(true);
  });
});
