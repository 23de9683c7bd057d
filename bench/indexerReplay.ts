/**
 * The indexer's backfill without a chain node: `BENCH_DUMP=<file> npm run bench:indexer` writes base's history (the
 * escrow's logs as the node answers eth_getLogs, every header, the listings), then
 * `npx ts-node --transpile-only bench/indexerReplay.ts <file>` backfills it from memory into fresh better-sqlite3
 * files, BENCH_ROUNDS [5] times, with the configuration of bench:indexer (ranges of 2,000 blocks). It prints each
 * round's wall time and the process's CPU time, as events per second of each: on a shared machine the CPU figure is
 * the one to compare, and with the node out of the process it is the indexer's own cost. BENCH_CPU_PROFILE=<dir>
 * writes a V8 profile of the last round.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import inspector from "node:inspector/promises";
import { performance } from "node:perf_hooks";
import { logFromRpc, type ChainReader, type RpcLog } from "../server/chain/escrowLogs";
import { createDb } from "../server/db/knex";
import { migrateLatest } from "../server/db/migrations";
import { countEvents } from "../server/db/repositories/escrowEvents";
import { Indexer } from "../server/indexer/sync";
import { createLogger } from "../server/logger";
import type { BlockHeader } from "../server/escrow/records";

/** What bench/indexer.ts writes with BENCH_DUMP. */
interface ReplayDump {
  chainId: number;
  escrow: string;
  startBlock: number;
  head: number;
  logs: RpcLog[];
  headers: BlockHeader[];
  listings: Record<string, unknown>[];
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const MAX_BLOCK_RANGE = 2_000;

/** A ChainReader over the dump: logs as providerChainReader shapes them, headers by number. */
function replayReader(dump: ReplayDump): ChainReader {
  const headers = new Map(dump.headers.map((h) => [h.number, h]));
  const logs = dump.logs.map(logFromRpc);
  return {
    chainId: async () => dump.chainId,
    blockNumber: async () => dump.head,
    block: async (n) => headers.get(n) ?? null,
    logs: async (address, from, to) =>
      logs.filter(
        (l) => l.blockNumber >= from && l.blockNumber <= to && l.address.toLowerCase() === address.toLowerCase(),
      ),
  };
}

async function round(dump: ReplayDump, dir: string, profile: boolean) {
  const db = createDb({ sqliteFile: path.join(dir, `replay-${Date.now()}.sqlite`), sqliteDriver: "better-sqlite3" });
  try {
    await migrateLatest(db);
    for (let i = 0; i < dump.listings.length; i += 200) await db("listings").insert(dump.listings.slice(i, i + 200));
    const indexer = new Indexer({
      db,
      chain: replayReader(dump),
      network: "hardhat",
      escrowAddress: dump.escrow,
      startBlock: dump.startBlock,
      config: { confirmations: 0, pollIntervalMs: 100, maxBlockRange: MAX_BLOCK_RANGE, lockTtlMs: 15_000 },
      logger: createLogger("warn", { component: "replay" }),
    });
    const session = profile ? new inspector.Session() : undefined;
    if (session) {
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: 100 });
      await session.post("Profiler.start");
    }
    const cpu = process.cpuUsage();
    const started = performance.now();
    await indexer.start();
    await indexer.waitForBlock(dump.head, 120_000);
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    if (session) {
      const { profile: data } = await session.post("Profiler.stop");
      const file = path.join(process.env.BENCH_CPU_PROFILE!, "replay.cpuprofile");
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, JSON.stringify(data));
      session.disconnect();
    }
    await indexer.stop();
    return { events: await countEvents(db), wallMs, cpuMs: (used.user + used.system) / 1000 };
  } finally {
    await db.destroy();
  }
}

async function main() {
  const file = process.argv[2];
  if (!file) throw new Error("usage: bench/indexerReplay.ts <dump file written with BENCH_DUMP>");
  const dump = JSON.parse(fs.readFileSync(file, "utf8")) as ReplayDump;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "escrow-replay-"));
  const load = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ");
  console.log(
    `replaying ${dump.logs.length} logs over ${dump.head - dump.startBlock + 1} blocks, load average ${load()}`,
  );
  try {
    for (let r = 1; r <= ROUNDS; r++) {
      const { events, wallMs, cpuMs } = await round(dump, dir, Boolean(process.env.BENCH_CPU_PROFILE) && r === ROUNDS);
      console.log(
        `round ${r}: ${events} events, wall ${wallMs.toFixed(0)} ms (${Math.round(events / (wallMs / 1000))} events/s), ` +
          `CPU ${cpuMs.toFixed(0)} ms (${Math.round(events / (cpuMs / 1000))} events per CPU second)`,
      );
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`load average ${load()}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
