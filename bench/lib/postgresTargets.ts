/**
 * The targets on PostgreSQL (+ Redis for the API), printed beside the SQLite targets when DATABASE_URL is set, and a
 * second API process's gain (docs/performance.md, "PostgreSQL reads and targets", which
 * gives the figures they come from).
 *
 * The API's are shares within one run, as the SQLite targets are, so a machine's speed cancels out. Each is SQLite's
 * target scaled by the server CPU a request measured on both databases in the same minutes (the row's CPU against its
 * reference row's, on each), rounded down to 5%, and never above SQLite's own target: a read answered from the caches
 * keyed by the data version costs PostgreSQL no statement, so where PostgreSQL's ratio came out no worse than
 * SQLite's, SQLite's target stands. The indexer's are rates on a quiet machine of this project's kind (2 cores).
 */
import { fmt } from "./format";
import type { LoadResult } from "./load";

export const POSTGRES_API_TARGETS = {
  /** The open-task listing, as a share of bare Koa's rate. */
  listingShareOfKoa: 0.3,
  /** One task by id, as a share of the listing's rate. */
  taskShareOfListing: 0.55,
  /** MCP browse_tasks, as a share of the REST listing's rate. */
  mcpShareOfRest: 0.6,
  /** A2A tasks/list, as a share of the REST listing's rate. */
  a2aShareOfRest: 0.5,
  /**
   * The listing with two API processes against one (bench:api, BENCH_API_PROCESSES=2) on this project's 2-core
   * machine, where the load generator takes most of a core: a second process should cost no more than it costs bare
   * Koa (0.87-0.92x measured), the machine's own price of a second process.
   */
  listingTwoProcesses: 0.9,
} as const;

export const POSTGRES_INDEXER_TARGETS = {
  /** One chain's backfill from scratch, escrow events a second. */
  backfillEventsPerSecond: 10_000,
  /** Receipt to queryable while following the head, median (ms). */
  followMedianMs: 100,
} as const;

const verdict = (pass: boolean) => (pass ? "PASS" : "UNDER");

/** bench:api's PostgreSQL + Redis targets for the in-process run (its rows a, b, c, e, f). */
export function printPostgresApiTargets(rows: {
  bare: LoadResult;
  listing: LoadResult;
  oneTask: LoadResult;
  a2a: LoadResult;
  mcp: LoadResult;
}): void {
  const t = POSTGRES_API_TARGETS;
  const share = (r: LoadResult, of: LoadResult) => r.rps / of.rps;
  // A row left out (BENCH_ONLY) has no rate, and its share is not printed.
  const line = (name: string, value: number, target: number, of: string) => {
    if (!Number.isFinite(value)) return;
    console.log(
      `  ${name}: ${fmt(value * 100, 1)}% of ${of} (PostgreSQL target >= ${fmt(target * 100)}%): ` +
        verdict(value >= target),
    );
  };
  console.log("PostgreSQL + Redis targets (shares within this run):");
  line("the open-task listing", share(rows.listing, rows.bare), t.listingShareOfKoa, "bare Koa");
  line("one task by id", share(rows.oneTask, rows.listing), t.taskShareOfListing, "the listing");
  line("A2A tasks/list", share(rows.a2a, rows.listing), t.a2aShareOfRest, "the REST listing");
  line("MCP browse_tasks", share(rows.mcp, rows.listing), t.mcpShareOfRest, "the REST listing");
}

/** The listing's gain from a second API process, against its target (undefined when b was not measured). */
export function printProcessesTarget(listing: { one: LoadResult; many: LoadResult } | undefined, count: number) {
  if (!listing || count !== 2) return;
  const ratio = listing.many.rps / listing.one.rps;
  console.log(
    `  the listing with 2 processes: ${fmt(ratio, 2)}x one (PostgreSQL target >= ${fmt(
      POSTGRES_API_TARGETS.listingTwoProcesses,
      1,
    )}x): ${verdict(ratio >= POSTGRES_API_TARGETS.listingTwoProcesses)}`,
  );
}

/** bench:indexer's PostgreSQL targets (one chain's backfill and following the head). */
export function printPostgresIndexerTargets(r: { eventsPerSecond: number; followMedianMs?: number }): void {
  const t = POSTGRES_INDEXER_TARGETS;
  console.log(
    `PostgreSQL targets: backfill ${fmt(r.eventsPerSecond)} events/s (>= ${fmt(t.backfillEventsPerSecond)}): ` +
      `${verdict(r.eventsPerSecond >= t.backfillEventsPerSecond)}; follow median ` +
      (r.followMedianMs === undefined
        ? "not measured"
        : `${fmt(r.followMedianMs)} ms (<= ${t.followMedianMs} ms): ${r.followMedianMs <= t.followMedianMs ? "PASS" : "OVER"}`),
  );
}
