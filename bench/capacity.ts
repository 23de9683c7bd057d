/**
 * Write capacity of the shared stores, for the capacity plan (docs/operations.md): `DATABASE_URL=postgres://...
 * REDIS_URL=redis://... npm run bench:capacity`. Each part runs only when its URL is set. For BENCH_SECONDS
 * (default 5) each:
 *
 *   PostgreSQL (a fresh schema, dropped at the end):
 *   1. the event log as the indexer writes it: one writer, transactions of BENCH_EVENT_BATCH (default 20) rows through
 *      insertMarketEvents (the advisory lock, one multi-row INSERT ... ON CONFLICT), events per second;
 *   2. the same from 8 concurrent writers (several API processes appending listings' events): events per second;
 *   3. lease renewals as agent hosts make them: 1,000 hosted agents leased to 4 hosts, each host renewing its 250 in
 *      one renewAgentLeases statement in a loop, rows per second (a host renews every AGENT_LEASE_MS / 3);
 *   Redis (keys under a prefix of their own, left to expire):
 *   4. the fixed-window counter every request takes (RedisLimitStore.hitWindow, a Lua script), 50 calls in flight;
 *   5. a posting take of two token buckets (RedisLimitStore.take), 50 calls in flight.
 *
 * The API's own requests per second against PostgreSQL and Redis: `DATABASE_URL=... REDIS_URL=... npm run bench:api`.
 * Prints operations per second and the latency's median and p99. Never asserts: a benchmark.
 */
import crypto from "node:crypto";
import os from "node:os";
import { printTable } from "./report";
import { fmt, now } from "./lib/format";
import { createTestDb } from "../test/helpers/db";
import { insertHostedAgent } from "../test/helpers/hostedAgentRows";
import { insertMarketEvents, type NewMarketEvent } from "../server/db/repositories/marketEvents";
import { renewAgentLeases } from "../server/db/repositories/agentHosts";
import { RedisLimitStore } from "../server/limits/store";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const EVENT_BATCH = Number(process.env.BENCH_EVENT_BATCH ?? 20);
const AGENTS = 1000;
const HOSTS = 4;
const IN_FLIGHT = 50;

interface Figure {
  what: string;
  ops: number;
  unit: string;
  latencies: number[];
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

/** Runs `workers` loops of `step` (each call counting `units`) for SECONDS; units per second and each call's latency. */
async function run(workers: number, step: (worker: number) => Promise<number>) {
  const latencies: number[] = [];
  let units = 0;
  const until = now() + SECONDS * 1000;
  const started = now();
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (now() < until) {
        const at = now();
        const done = await step(worker);
        units += done;
        latencies.push(now() - at);
      }
    }),
  );
  return { perSecond: units / ((now() - started) / 1000), latencies };
}

let sequence = 0;
function event(taskId: number): NewMarketEvent {
  const n = ++sequence;
  return {
    type: "task.open",
    taskId,
    taskHash: `0x${crypto.randomBytes(32).toString("hex")}`,
    poster: `0x${"0a".repeat(20)}`,
    worker: null,
    target: null,
    toPoster: true,
    toWorker: false,
    toTarget: false,
    toExecutors: true,
    onChainStatus: 1,
    txHash: `0x${crypto.randomBytes(32).toString("hex")}`,
    fields: { amount: "5000000", privacy: "public", categories: ["translate"] },
    atMs: Date.now(),
    source: `bench:${n}`,
  };
}

async function postgres(figures: Figure[]) {
  const testDb = await createTestDb();
  const { db } = testDb;
  try {
    const single = await run(1, async () => {
      const batch = Array.from({ length: EVENT_BATCH }, (_, i) => event(i + 1));
      await db.transaction((trx) => insertMarketEvents(trx, batch));
      return batch.length;
    });
    figures.push({
      what: `PostgreSQL: event log, 1 writer, ${EVENT_BATCH} rows a transaction`,
      ops: single.perSecond,
      unit: "rows/s",
      latencies: single.latencies,
    });
    const concurrent = await run(8, async () => {
      await db.transaction((trx) => insertMarketEvents(trx, [event(1)]));
      return 1;
    });
    figures.push({
      what: "PostgreSQL: event log, 8 writers, 1 row a transaction",
      ops: concurrent.perSecond,
      unit: "rows/s",
      latencies: concurrent.latencies,
    });

    const kek = crypto.randomBytes(32);
    const perHost: string[][] = Array.from({ length: HOSTS }, () => []);
    for (let i = 0; i < AGENTS; i++) {
      // Rows only: the key is never used, so any 32 bytes and any address do.
      const agent = await insertHostedAgent(db, kek, {
        privateKey: `0x${crypto.randomBytes(32).toString("hex")}`,
        wallet: `0x${crypto.randomBytes(20).toString("hex")}`,
      });
      perHost[i % HOSTS].push(agent.id);
    }
    for (let h = 0; h < HOSTS; h++) {
      await db("hosted_agents")
        .whereIn("id", perHost[h])
        .update({ lease_host: `host-${h}`, lease_until_ms: Date.now() + 60_000 });
    }
    const leases = await run(HOSTS, async (h) => {
      await renewAgentLeases(db, `host-${h}`, perHost[h], Date.now() + 60_000);
      return perHost[h].length;
    });
    figures.push({
      what: `PostgreSQL: lease renewals, ${HOSTS} hosts x ${AGENTS / HOSTS} agents a statement`,
      ops: leases.perSecond,
      unit: "rows/s",
      latencies: leases.latencies,
    });
  } finally {
    await testDb.cleanup();
  }
}

async function redis(url: string, figures: Figure[]) {
  const store = new RedisLimitStore(url, `bench:${crypto.randomBytes(4).toString("hex")}:`);
  try {
    const windows = await run(IN_FLIGHT, async (w) => {
      await store.hitWindow(`ip:10.0.${w}.1`, 60_000);
      return 1;
    });
    figures.push({
      what: `Redis: rate-limit window hit, ${IN_FLIGHT} in flight`,
      ops: windows.perSecond,
      unit: "ops/s",
      latencies: windows.latencies,
    });
    const takes = await run(IN_FLIGHT, async (w) => {
      await store.take(
        [
          { key: `posting_ip:10.0.${w}.1:builds`, capacity: 1e9, refillMs: 60_000 },
          { key: `wallet:${w}:builds`, capacity: 1e9, refillMs: 60_000 },
        ],
        1,
      );
      return 1;
    });
    figures.push({
      what: `Redis: posting take of 2 buckets, ${IN_FLIGHT} in flight`,
      ops: takes.perSecond,
      unit: "ops/s",
      latencies: takes.latencies,
    });
  } finally {
    await store.close();
  }
}

async function main() {
  const figures: Figure[] = [];
  if (process.env.DATABASE_URL) await postgres(figures);
  else console.log("PostgreSQL skipped (DATABASE_URL unset)");
  if (process.env.REDIS_URL) await redis(process.env.REDIS_URL, figures);
  else console.log("Redis skipped (REDIS_URL unset)");
  console.log(
    `\n${SECONDS} s each; load average ${os
      .loadavg()
      .map((l) => fmt(l, 1))
      .join(", ")}:`,
  );
  printTable(
    ["part", "throughput", "p50", "p99"],
    figures.map((f) => {
      const sorted = [...f.latencies].sort((a, b) => a - b);
      return [
        f.what,
        `${fmt(f.ops)} ${f.unit}`,
        `${fmt(percentile(sorted, 0.5), 1)} ms`,
        `${fmt(percentile(sorted, 0.99), 1)} ms`,
      ];
    }),
    [1, 2, 3],
  );
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
