/**
 * Indexer benchmark: `npx hardhat run bench/indexer.ts` (npm run bench:indexer). Set DATABASE_URL to include
 * PostgreSQL (a fresh schema, dropped at the end).
 *
 * On the in-process Hardhat network, deploys with the deploy library (no address book written) and builds a history
 * of at least BENCH_TASKS (default 10,000) tasks created with createTasks in batches of 50 by several posters: one to
 * three batches per block, a tenth of the tasks with their own verifier agent, and runs of empty blocks between busy
 * blocks, so the backfill spans several getLogs ranges. The first BENCH_LISTED (default 2,000) tasks are listed on the
 * marketplace (a listings row in each database before its backfill) and have work on chain after the history: the
 * marketplace verifier assigns each to a worker, who submits evidence (100 transactions a block), so the backfill also
 * writes the push event log (market_events: task.assigned and task.submitted, two rows per listed task). Then, for each database (SQLite through better-sqlite3,
 * SQLite through node-sqlite3, PostgreSQL when configured), starting from the same chain (evm_snapshot/evm_revert):
 *
 *   1. Backfill: a fresh, migrated database; the Indexer's own background loop (start()) from the deployment block
 *      to the head, timed until waitForBlock(head) resolves. Prints events, blocks, ranges, wall time and events per
 *      second against the target, and where the time went (each step's phases: before the transaction (reorg check,
 *      waiting for the range's getLogs and headers, read ahead, and decoding), the database transaction split by
 *      statement, and the commit; then the chain reads' own time, which overlaps the transactions).
 *   2. Follow the head: with the loop still running, ~60 blocks mined one at a time, each with one createTask,
 *      spaced by a random 50-300 ms (sent on that schedule whether or not the previous one is indexed yet). Latency
 *      of each: from the receipt being available to the checkpoint covering its block and the task being readable
 *      (findTaskById) through a second connection pool, as the API reads it. Median and p95. How the idle indexer
 *      learns of a new head is BENCH_FOLLOW: `subscription` (the in-process node's newHeads, as a WebSocket node
 *      pushes them), `poll` (no subscription: eth_blockNumber every BENCH_HEAD_POLL_MS) or `interval` (neither: a
 *      full step every pollIntervalMs, 100 ms).
 *   3. Catch-up: a burst of 200 empty blocks, then the time and the number of getLogs calls to be level again (shows
 *      whether the getLogs range is still the configured one after following the head).
 *   4. Both chains at once: a second in-process Hardhat chain (`arc`, chain id 31338, a runtime of its own as the
 *      devnet makes it) holds the same history (same seed); on another fresh database, base's and arc's indexers
 *      (each its own checkpoint, reorg state and writer lock, as the API runs them) backfill together from their
 *      deployment blocks to their heads. Prints each chain's events per second and the events per second of both
 *      together (all events over the wall time until both are level), beside the one-chain backfill of step 1.
 *
 * Figures that have a target are printed with PASS and UNDER/OVER. The script never asserts and exits 0 unless it
 * fails to run: it is a benchmark. Knobs (defaults in brackets): BENCH_TASKS [10000], BENCH_FOLLOW_BLOCKS [60],
 * BENCH_LISTED [2000], BENCH_LOG_LEVEL [warn] for the indexer's own log, BENCH_BACKFILL_TIMEOUT_MS [240000], BENCH_TWO_CHAINS [1]: 0 skips
 * step 4 (and building arc's history), BENCH_FOLLOW [subscription], BENCH_HEAD_POLL_MS [20], BENCH_SQLITE3 [1]: 0 skips
 * the node-sqlite3 database, BENCH_CPU_PROFILE [unset]: a directory where each one-chain backfill (step 1) writes a
 * V8 `.cpuprofile` of this process (the indexer and the in-process chain node both), `backfill-<database>.cpuprofile`,
 * BENCH_DUMP [unset]: a file where base's history is written (the escrow's logs as the node answers them, every
 * block's header, the listings) for `bench/indexerReplay.ts`, which backfills it from memory.
 */
import { mulberry32 } from "../test/helpers/scenario";
import crypto from "node:crypto";
import fs from "node:fs";
import inspector from "node:inspector/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import hre, { ethers, network } from "hardhat";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import type { Log } from "ethers";
import { AMOUNT, BATCH, CATEGORIES, DAY, POSTERS, ZONES, deployFundedPosters } from "./history";
import { printTable } from "./report";
import { printPostgresIndexerTargets } from "./lib/postgresTargets";
import { providerChainReader, type ChainReader } from "../server/chain/escrowLogs";
import { eip1193Heads } from "../server/chain/heads";
import { createDb, type Db, type DbOptions } from "../server/db/knex";
import { migrateLatest } from "../server/db/migrations";
import { countEvents } from "../server/db/repositories/escrowEvents";
import { findTaskById } from "../server/db/repositories/tasks";
import { Indexer } from "../server/indexer/sync";
import { createLogger, type Logger } from "../server/logger";
import type { ChainName } from "../server/escrow/records";
import { DEVNET_ARC_CHAIN_ID } from "../scripts/devnet";
import { secondChainRuntime } from "../scripts/secondChain";
import type { ITaskEscrow } from "../typechain-types/contracts/TaskEscrow";

const TASKS = Math.max(50, Number(process.env.BENCH_TASKS ?? 10_000));
const LISTED = Math.min(TASKS, Number(process.env.BENCH_LISTED ?? 2_000));
const WORK_PER_BLOCK = 100;
const MAX_TX_PER_BLOCK = 3;
const MAX_EMPTY_GAP = 100;
const PROGRESS_EVERY = 2_000;
const MAX_BLOCK_RANGE = 2_000;
const CONFIRMATIONS = 0;
const POLL_INTERVAL_MS = 100;
const FOLLOW_BLOCKS = Number(process.env.BENCH_FOLLOW_BLOCKS ?? 60);
const FOLLOW_GAP_MS: [number, number] = [50, 300];
const FOLLOW = (process.env.BENCH_FOLLOW ?? "subscription") as "subscription" | "poll" | "interval";
if (!["subscription", "poll", "interval"].includes(FOLLOW)) throw new Error(`BENCH_FOLLOW=${FOLLOW}: unknown`);
const HEAD_POLL_MS = Number(process.env.BENCH_HEAD_POLL_MS ?? 20);
const BURST_BLOCKS = 200;

const LOG_LEVEL = (process.env.BENCH_LOG_LEVEL ?? "warn") as "debug" | "info" | "warn" | "error" | "silent";
const BACKFILL_TIMEOUT_MS = Number(process.env.BENCH_BACKFILL_TIMEOUT_MS ?? 240_000);
const TWO_CHAINS = process.env.BENCH_TWO_CHAINS !== "0";
const SQLITE3 = process.env.BENCH_SQLITE3 !== "0";
const CPU_PROFILE_DIR = process.env.BENCH_CPU_PROFILE;
const DUMP_FILE = process.env.BENCH_DUMP;

const TARGETS = { backfillEventsPerSecond: 30_000 } as const;
/** Receipt to queryable while following the head (issue 31's row). */
const FOLLOW_TARGETS = { medianMs: 20, p95Ms: 50 } as const;
const followPasses = (sorted: number[]) =>
  quantile(sorted, 0.5) <= FOLLOW_TARGETS.medianMs && quantile(sorted, 0.95) <= FOLLOW_TARGETS.p95Ms;

/** Deterministic randomness, so every run builds the same history. */
const rng = mulberry32;
const SEED = 20240611;
const random = rng(SEED);
const randomInt = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
const randomIntOf = (source: () => number) => (min: number, max: number) =>
  min + Math.floor(source() * (max - min + 1));

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const now = () => performance.now();
const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const ms = (n: number) => `${fmt(n, n < 10 ? 1 : 0)} ms`;
const briefHash = (label: string) => ethers.keccak256(ethers.toUtf8Bytes(`brief: ${label}`));

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

// ---------------------------------------------------------------------------------------------------------------
// Profiling: the indexer is not modified; its ChainReader is wrapped and its knex instance observed. A step starts
// with chain.blockNumber(); until its transaction's BEGIN it checks for a reorg, waits for the range's reads (started
// during the previous range's transaction) and decodes; the transaction runs from BEGIN to COMMIT; the commit (and
// publishing the checkpoint) ends when the next step starts. The chain reads' own time is summed apart: it overlaps.
// ---------------------------------------------------------------------------------------------------------------

interface StepProfile {
  start: number;
  logs: number;
  headers: number;
  begin?: number;
  commit?: number;
  end?: number;
  /** Time inside the driver (from knex's "query" event to its "query-response"), by statement, in the transaction. */
  queries: Map<string, { ms: number; count: number }>;
}

class Profiler {
  steps: StepProfile[] = [];
  private current: StepProfile | undefined;
  private readonly pending = new Map<string, { t: number; label: string; inTx: boolean }>();
  enabled = true;
  outsideTxQueries = { ms: 0, count: 0 };
  /** Every getLogs call and every one the node refused, profiled or not. */
  logsCalls = 0;
  logsRefused = 0;
  /** Time inside getLogs and getBlock calls while profiling (they overlap the transactions: read ahead). */
  logsMs = 0;
  blockMs = 0;

  wrapChain(chain: ChainReader): ChainReader {
    return {
      heads: chain.heads,
      chainId: () => chain.chainId(),
      blockNumber: async () => {
        if (this.enabled) this.startStep();
        return chain.blockNumber();
      },
      block: async (number) => {
        const step = this.enabled ? this.current : undefined;
        const t = now();
        const result = await chain.block(number);
        if (step) {
          step.headers++;
          this.blockMs += now() - t;
        }
        return result;
      },
      logs: async (address, fromBlock, toBlock) => {
        const step = this.enabled ? this.current : undefined;
        const t = now();
        this.logsCalls++;
        let logs: Log[];
        try {
          logs = await chain.logs(address, fromBlock, toBlock);
        } catch (error) {
          this.logsRefused++;
          throw error;
        }
        if (step) {
          this.logsMs += now() - t;
          step.logs += logs.length;
        }
        return logs;
      },
    };
  }

  observe(db: Db): void {
    db.on("query", (q: { sql: string; __knexQueryUid?: string; __knexTxId?: string }) => {
      if (!this.enabled) return;
      const t = now();
      const step = this.current;
      if (/^BEGIN\b/i.test(q.sql)) {
        if (step && step.begin === undefined) step.begin = t;
        return;
      }
      if (/^COMMIT\b/i.test(q.sql)) {
        if (step) step.commit = t;
        return;
      }
      if (q.__knexQueryUid)
        this.pending.set(q.__knexQueryUid, { t, label: statementLabel(q.sql), inTx: !!q.__knexTxId });
    });
    db.on("query-response", (_r: unknown, q: { __knexQueryUid?: string }) => {
      const p = q.__knexQueryUid ? this.pending.get(q.__knexQueryUid) : undefined;
      if (!p) return;
      this.pending.delete(q.__knexQueryUid!);
      const dt = now() - p.t;
      const step = this.current;
      if (p.inTx && step && step.begin !== undefined) {
        const entry = step.queries.get(p.label) ?? { ms: 0, count: 0 };
        entry.ms += dt;
        entry.count++;
        step.queries.set(p.label, entry);
      } else {
        this.outsideTxQueries.ms += dt;
        this.outsideTxQueries.count++;
      }
    });
  }

  private startStep(): void {
    const t = now();
    if (this.current) {
      this.current.end = t;
      this.steps.push(this.current);
    }
    this.current = { start: t, logs: 0, headers: 0, queries: new Map() };
  }

  /** Closes the step in progress and stops recording. */
  finish(at: number): void {
    if (this.current) {
      this.current.end = at;
      this.steps.push(this.current);
      this.current = undefined;
    }
    this.enabled = false;
  }
}

function statementLabel(sql: string): string {
  const s = sql.trim().toLowerCase();
  const table = /(?:from|into|update)\s+[`"]?(\w+)/.exec(s)?.[1] ?? "?";
  const verb = s.split(/\s+/)[0];
  if (verb === "insert") return `insert ${table}${/on conflict.*do update/.test(s) ? " (upsert)" : ""}`;
  return `${verb} ${table}`;
}

interface Breakdown {
  ranges: number;
  logs: number;
  headers: number;
  phases: { name: string; ms: number }[];
  /** The chain reads' own durations: they run ahead, during the previous range's transaction, so not in `phases`. */
  reads: { name: string; ms: number }[];
  queries: { name: string; ms: number; count: number }[];
}

function breakdown(profiler: Profiler): Breakdown {
  const ranges = profiler.steps.filter((s) => s.begin !== undefined);
  const sum = (f: (s: StepProfile) => number) => ranges.reduce((acc, s) => acc + f(s), 0);
  const queries = new Map<string, { ms: number; count: number }>();
  for (const s of ranges) {
    for (const [label, q] of s.queries) {
      const e = queries.get(label) ?? { ms: 0, count: 0 };
      e.ms += q.ms;
      e.count += q.count;
      queries.set(label, e);
    }
  }
  const inDriver = [...queries.values()].reduce((acc, q) => acc + q.ms, 0);
  const tx = sum((s) => s.commit! - s.begin!);
  return {
    ranges: ranges.length,
    logs: sum((s) => s.logs),
    headers: sum((s) => s.headers),
    phases: [
      {
        name: "before the transaction: head, reorg check, the range's reads still running, decode",
        ms: sum((s) => s.begin! - s.start),
      },
      { name: "transaction: SQL in the driver", ms: inDriver },
      { name: "transaction: JS (query building, fold)", ms: tx - inDriver },
      { name: "COMMIT + publish", ms: sum((s) => s.end! - s.commit!) },
    ],
    reads: [
      { name: "getLogs calls", ms: profiler.logsMs },
      { name: "getBlock calls (headers, 8 at a time)", ms: profiler.blockMs },
    ],
    queries: [...queries.entries()].map(([name, q]) => ({ name, ...q })).sort((a, b) => b.ms - a.ms),
  };
}

/** The indexer's logger (warnings and errors on stderr), remembering when it shrinks its getLogs range. */
function recordingLogger(name: string): { logger: Logger; rangeShrinks: number[] } {
  const base = createLogger(LOG_LEVEL, { component: `indexer ${name}` });
  const rangeShrinks: number[] = [];
  const logger: Logger = {
    ...base,
    info: (msg, fields) => {
      if (msg.startsWith("node refused a large log range")) rangeShrinks.push(Number(fields?.range));
      base.info(msg, fields);
    },
  };
  return { logger, rangeShrinks };
}

// ---------------------------------------------------------------------------------------------------------------
// Databases
// ---------------------------------------------------------------------------------------------------------------

interface Target {
  name: string;
  options: DbOptions;
  cleanup: (db: Db) => Promise<void>;
  /** Another fresh database of the same kind (another file, another schema). */
  another: (label: string) => Target;
}

function sqliteTarget(driver: "better-sqlite3" | "sqlite3", dir: string, label = ""): Target {
  const file = path.join(dir, `${driver}${label}.sqlite`);
  return {
    another: (other) => sqliteTarget(driver, dir, `${label}-${other}`),
    name: `SQLite (${driver})`,
    options: { sqliteFile: file, sqliteDriver: driver },
    cleanup: async () => {
      for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(file + suffix, { force: true });
    },
  };
}

function postgresTarget(url: string): Target {
  const schema = `bench_${crypto.randomBytes(5).toString("hex")}`;
  return {
    another: () => postgresTarget(url),
    name: "PostgreSQL",
    options: { databaseUrl: url, pgSchema: schema },
    cleanup: async (db) => {
      await db.raw(`drop schema if exists "${schema}" cascade`);
    },
  };
}

interface Result {
  name: string;
  events: number;
  blocks: number;
  ranges: number;
  backfillMs: number;
  eventsPerSecond: number;
  /** Rows of the push event log (market_events) the backfill wrote. */
  pushEvents: number;
  breakdown: Breakdown;
  latencies: number[];
  followError?: string;
  catchUp?: { behind: number; ms: number; logsCalls: number; range: number; shrinks: number; refused: number };
  error?: string;
  both?: BothChainsResult;
}

interface ChainHistory {
  name: ChainName;
  runtime: HardhatRuntimeEnvironment;
  escrow: Awaited<ReturnType<typeof deployFundedPosters>>["escrow"];
  token: string;
  posters: Awaited<ReturnType<typeof deployFundedPosters>>["posters"];
  book: Awaited<ReturnType<typeof deployFundedPosters>>["book"];
  head: number;
  /** The listed tasks (ids 1..BENCH_LISTED), each assigned and submitted on chain. */
  listed: { taskId: number; taskHash: string; poster: string }[];
}

interface BothChainsResult {
  chains: {
    name: ChainName;
    events: number;
    pushEvents: number;
    blocks: number;
    ms: number;
    eventsPerSecond: number;
  }[];
  events: number;
  wallMs: number;
  eventsPerSecond: number;
  error?: string;
}

// ---------------------------------------------------------------------------------------------------------------
// Chain
// ---------------------------------------------------------------------------------------------------------------

async function buildHistory(
  name: ChainName,
  runtime: HardhatRuntimeEnvironment,
  randomInt: (min: number, max: number) => number,
): Promise<ChainHistory> {
  const { ethers, network } = runtime;
  // Briefs named per chain: a task hash is unique across the market, so both chains' tasks can be listed.
  const brief = (label: string) => briefHash(`${name} ${label}`);
  const { escrow, token, escrowAddress, book, posters, batch, made } = await deployFundedPosters(
    { tasks: TASKS, minDays: 1, briefHash: brief },
    runtime,
  );
  const encode = (tasks: ITaskEscrow.NewTaskStruct[]) =>
    escrow.interface.encodeFunctionData("createTasks", [token, tasks]);

  // One batch with automine on, to size the gas limit of the others (sent without estimation, several per block).
  const first = await (await escrow.connect(posters[0]).createTasks(token, batch())).wait();
  const gasLimit = (first!.gasUsed * 13n) / 10n;
  const blockGasLimit = (await ethers.provider.getBlock("latest"))!.gasLimit;
  const perBlock = Math.max(1, Math.min(MAX_TX_PER_BLOCK, Number(blockGasLimit / gasLimit)));

  console.log(
    `\nBuilding ${name}'s history (chain id ${(await ethers.provider.getNetwork()).chainId}): ${fmt(TASKS)} tasks in createTasks batches of ${BATCH} by ${POSTERS} posters, ` +
      `1-${perBlock} batches per block, 0-${MAX_EMPTY_GAP} empty blocks between busy blocks ` +
      `(a batch uses ${fmt(Number(first!.gasUsed))} gas)`,
  );
  const started = now();
  let nextProgress = PROGRESS_EVERY;
  let busyBlocks = 1;
  let transactions = 1;
  await network.provider.send("evm_setAutomine", [false]);
  try {
    while (made() < TASKS) {
      const count = Math.min(randomInt(1, perBlock), Math.ceil((TASKS - made()) / BATCH));
      const hashes: string[] = [];
      for (let i = 0; i < count; i++) {
        const poster = posters[(transactions + i) % POSTERS];
        hashes.push(
          await network.provider.send("eth_sendTransaction", [
            { from: poster.address, to: escrowAddress, data: encode(batch()), gas: ethers.toQuantity(gasLimit) },
          ]),
        );
      }
      transactions += count;
      await network.provider.send("evm_mine", []);
      busyBlocks++;
      for (const hash of hashes) {
        let receipt = await ethers.provider.getTransactionReceipt(hash);
        while (!receipt) {
          await network.provider.send("evm_mine", []);
          busyBlocks++;
          receipt = await ethers.provider.getTransactionReceipt(hash);
        }
        if (receipt.status !== 1) throw new Error(`createTasks ${hash} reverted`);
      }
      // Real empty blocks: hardhat_mine's reserved blocks report a zero parentHash, which the indexer's range
      // consistency check (parentHash of the range's first block == checkpoint hash) rejects forever.
      const gap = randomInt(0, MAX_EMPTY_GAP);
      for (let i = 0; i < gap; i++) await network.provider.send("evm_mine", []);
      if (made() >= nextProgress || made() >= TASKS) {
        console.log(
          `  ${fmt(made()).padStart(6)} tasks, block ${await ethers.provider.getBlockNumber()}, ${fmt((now() - started) / 1000, 1)} s`,
        );
        while (nextProgress <= made()) nextProgress += PROGRESS_EVERY;
      }
    }
    // Work on the listed tasks: the marketplace verifier (deployAll's default, signer 2) assigns, the worker submits.
    const signers = await ethers.getSigners();
    const [verifier, worker] = [signers[2], signers[3 + POSTERS + 1]];
    const steps: [string, (id: number) => string][] = [
      [verifier.address, (id) => escrow.interface.encodeFunctionData("marketplaceAssign", [id, worker.address])],
      [worker.address, (id) => escrow.interface.encodeFunctionData("submitEvidence", [id, brief(`evidence ${id}`)])],
    ];
    for (const [from, data] of steps) {
      for (let first = 1; first <= LISTED; first += WORK_PER_BLOCK) {
        const hashes: string[] = [];
        for (let id = first; id < first + WORK_PER_BLOCK && id <= LISTED; id++) {
          hashes.push(
            await network.provider.send("eth_sendTransaction", [
              { from, to: escrowAddress, data: data(id), gas: ethers.toQuantity(200_000) },
            ]),
          );
        }
        transactions += hashes.length;
        await network.provider.send("evm_mine", []);
        busyBlocks++;
        for (const hash of hashes) {
          let receipt = await ethers.provider.getTransactionReceipt(hash);
          while (!receipt) {
            await network.provider.send("evm_mine", []);
            busyBlocks++;
            receipt = await ethers.provider.getTransactionReceipt(hash);
          }
          if (receipt.status !== 1) throw new Error(`work transaction ${hash} reverted`);
        }
      }
    }
  } finally {
    await network.provider.send("evm_setAutomine", [true]);
  }
  const head = await ethers.provider.getBlockNumber();
  console.log(
    `History: ${fmt(Number(await escrow.nextTaskId()) - 1)} tasks (${fmt(LISTED)} listed, assigned and submitted), ` +
      `${fmt(transactions)} transactions in ` +
      `${fmt(busyBlocks)} busy blocks, blocks ${book.startBlock}..${head} (${fmt(head - book.startBlock + 1)} blocks), ` +
      `built in ${fmt((now() - started) / 1000, 1)} s`,
  );
  const listed = [];
  for (let taskId = 1; taskId <= LISTED; taskId++) {
    const task = await escrow.getTask(taskId);
    listed.push({ taskId, taskHash: task.taskHash.toLowerCase(), poster: task.poster.toLowerCase() });
  }
  return { name, runtime, escrow, token, posters, book, head, listed };
}

async function countPushEvents(db: Db, chain?: ChainName): Promise<number> {
  const row = await db("market_events")
    .where(chain ? { chain } : {})
    .count({ n: "*" })
    .first();
  return Number(row?.n ?? 0);
}

/** The listings the marketplace would hold for `chain`'s listed tasks (written before the backfill, as at funding). */
async function insertListings(db: Db, chain: ChainHistory): Promise<void> {
  const rows = listingRows(chain);
  for (let i = 0; i < rows.length; i += 200) await db("listings").insert(rows.slice(i, i + 200));
}

function listingRows(chain: ChainHistory) {
  return chain.listed.map((t) => ({
    chain: chain.name,
    task_id: t.taskId,
    task_hash: t.taskHash,
    poster: t.poster,
    tx_hash: ethers.ZeroHash,
    privacy: "public",
    verification_mode: "manual",
    token: chain.token.toLowerCase(),
    amount: AMOUNT.toString(),
    listed_at: 1,
  }));
}

/** BENCH_DUMP: base's history as the indexer reads it, for bench/indexerReplay.ts (ReplayDump there). */
async function dumpHistory(file: string, chain: ChainHistory): Promise<void> {
  const provider = chain.runtime.ethers.provider;
  const head = await provider.getBlockNumber();
  const logs = await provider.send("eth_getLogs", [
    {
      address: chain.book.escrow.proxy,
      fromBlock: ethers.toQuantity(chain.book.startBlock),
      toBlock: ethers.toQuantity(head),
    },
  ]);
  const headers = [];
  for (let n = chain.book.startBlock - 1; n <= head; n++) {
    const b = (await provider.getBlock(n))!;
    headers.push({ number: b.number, hash: b.hash!, parentHash: b.parentHash, timestamp: b.timestamp });
  }
  const chainId = Number((await provider.getNetwork()).chainId);
  const dump = { chainId, escrow: chain.book.escrow.proxy, startBlock: chain.book.startBlock, head, logs, headers };
  fs.writeFileSync(file, JSON.stringify({ ...dump, listings: listingRows(chain) }));
  console.log(`history written to ${file}: ${logs.length} logs, ${headers.length} headers`);
}

// ---------------------------------------------------------------------------------------------------------------
// One database: backfill, then follow the head
// ---------------------------------------------------------------------------------------------------------------

async function benchDatabase(target: Target, chainInfo: ChainHistory): Promise<Result> {
  const { escrow, token, posters, book } = chainInfo;
  const db = createDb(target.options);
  let reader: Db | undefined;
  let indexer: Indexer | undefined;
  const result: Result = {
    name: target.name,
    events: 0,
    blocks: 0,
    ranges: 0,
    backfillMs: 0,
    eventsPerSecond: 0,
    pushEvents: 0,
    breakdown: { ranges: 0, logs: 0, headers: 0, phases: [], reads: [], queries: [] },
    latencies: [],
  };
  try {
    await migrateLatest(db);
    await insertListings(db, chainInfo);
    const profiler = new Profiler();
    profiler.observe(db);
    const { logger, rangeShrinks } = recordingLogger(target.name);
    indexer = new Indexer({
      db,
      chain: profiler.wrapChain(
        providerChainReader(ethers.provider, FOLLOW === "subscription" ? eip1193Heads(network.provider) : undefined),
      ),
      network: "hardhat",
      escrowAddress: book.escrow.proxy,
      startBlock: book.startBlock,
      config: {
        confirmations: CONFIRMATIONS,
        pollIntervalMs: POLL_INTERVAL_MS,
        headPollMs: FOLLOW === "poll" ? HEAD_POLL_MS : 0,
        maxBlockRange: MAX_BLOCK_RANGE,
        lockTtlMs: 15_000,
      },
      logger,
    });

    // 1. Backfill.
    const head = await ethers.provider.getBlockNumber();
    const profiling = CPU_PROFILE_DIR ? await startCpuProfile() : undefined;
    const started = now();
    await indexer.start();
    const watchdog = setInterval(() => {
      const s = indexer!.status();
      console.log(
        `  (${target.name}: ${s.state}, checkpoint ${s.checkpoint}, head ${s.head}, ${fmt(s.eventsIndexed)} events` +
          `${s.lastError ? `, last error: ${s.lastError}` : ""})`,
      );
    }, 10_000);
    try {
      await indexer.waitForBlock(head, BACKFILL_TIMEOUT_MS);
    } finally {
      clearInterval(watchdog);
    }
    const finished = now();
    if (profiling) {
      const file = path.join(CPU_PROFILE_DIR!, `backfill-${target.name.replace(/[^a-z0-9-]+/gi, "-")}.cpuprofile`);
      await profiling.stop(file);
      console.log(`  CPU profile of the backfill: ${file}`);
    }
    profiler.finish(finished);
    result.backfillMs = finished - started;
    result.events = await countEvents(db);
    result.pushEvents = await countPushEvents(db);
    result.blocks = head - book.startBlock + 1;
    result.breakdown = breakdown(profiler);
    result.ranges = result.breakdown.ranges;
    result.eventsPerSecond = result.events / (result.backfillMs / 1000);
    printBackfill(result);

    // 2. Follow the head, the loop still running; the API's view is another pool on the same database.
    reader = createDb(target.options);
    await findTaskById(reader, 1);
    const latencies: number[] = [];
    const watchers: Promise<void>[] = [];
    const asPoster = escrow.connect(posters[0]);
    const data = (i: number) =>
      asPoster.interface.encodeFunctionData("createTask", [
        briefHash(`follow ${target.name} ${i}`),
        token,
        AMOUNT,
        CATEGORIES[i % CATEGORIES.length],
        ZONES[i % ZONES.length],
        DAY,
      ]);
    const taskCreated = escrow.interface.getEvent("TaskCreated")!.topicHash;
    for (let i = 0; i < FOLLOW_BLOCKS; i++) {
      await sleep(randomInt(...FOLLOW_GAP_MS));
      const hash: string = await network.provider.send("eth_sendTransaction", [
        { from: posters[0].address, to: book.escrow.proxy, data: data(i), gas: ethers.toQuantity(500_000) },
      ]);
      let receipt = await ethers.provider.getTransactionReceipt(hash);
      while (!receipt) {
        await sleep(1);
        receipt = await ethers.provider.getTransactionReceipt(hash);
      }
      const available = now();
      const log = receipt.logs.find((l) => l.topics[0] === taskCreated)!;
      const taskId = Number(BigInt(log.topics[1]));
      const blockNumber = receipt.blockNumber;
      watchers.push(
        (async () => {
          await indexer!.waitForBlock(blockNumber, 30_000);
          while (!(await findTaskById(reader!, taskId))) await sleep(2);
          latencies.push(now() - available);
        })(),
      );
    }
    const settled = await Promise.allSettled(watchers);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failed) result.followError = String(failed.reason?.message ?? failed.reason);
    result.latencies = latencies.sort((a, b) => a - b);
    printFollow(result);

    // 3. A burst of empty blocks mined as fast as the node goes, the loop still running: how it catches up.
    for (let i = 0; i < BURST_BLOCKS; i++) await network.provider.send("evm_mine", []);
    const burstEnd = now();
    const burstHead = await ethers.provider.getBlockNumber();
    const behind = burstHead - (indexer.status().checkpoint ?? 0);
    const callsBefore = profiler.logsCalls;
    await indexer.waitForBlock(burstHead, 60_000);
    result.catchUp = {
      behind,
      ms: now() - burstEnd,
      logsCalls: profiler.logsCalls - callsBefore,
      range: rangeShrinks.length ? rangeShrinks[rangeShrinks.length - 1] : MAX_BLOCK_RANGE,
      shrinks: rangeShrinks.length,
      refused: profiler.logsRefused,
    };
    printCatchUp(result);
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
    console.log(`\n${target.name}: FAILED: ${result.error}`);
  } finally {
    await indexer?.stop().catch(() => undefined);
    await reader?.destroy().catch(() => undefined);
    await target.cleanup(db).catch((e) => console.log(`  cleanup of ${target.name} failed: ${e}`));
    await db.destroy().catch(() => undefined);
  }
  return result;
}

/** A V8 CPU profile of this process from now until `stop` (BENCH_CPU_PROFILE), sampled every 100 µs. */
async function startCpuProfile(): Promise<{ stop: (file: string) => Promise<void> }> {
  const session = new inspector.Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  return {
    stop: async (file) => {
      const { profile } = await session.post("Profiler.stop");
      session.disconnect();
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, JSON.stringify(profile));
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Both chains at once: base's and arc's indexers backfilling together into one database
// ---------------------------------------------------------------------------------------------------------------

async function benchBothChains(target: Target, chains: readonly ChainHistory[]): Promise<BothChainsResult> {
  const db = createDb(target.options);
  const indexers: Indexer[] = [];
  const result: BothChainsResult = { chains: [], events: 0, wallMs: 0, eventsPerSecond: 0 };
  try {
    await migrateLatest(db);
    for (const chain of chains) await insertListings(db, chain);
    for (const chain of chains) {
      indexers.push(
        new Indexer({
          db,
          chain: providerChainReader(chain.runtime.ethers.provider),
          chainName: chain.name,
          network: chain.name === "base" ? "hardhat" : `hardhat-${chain.name}`,
          escrowAddress: chain.book.escrow.proxy,
          startBlock: chain.book.startBlock,
          config: {
            confirmations: CONFIRMATIONS,
            pollIntervalMs: POLL_INTERVAL_MS,
            maxBlockRange: MAX_BLOCK_RANGE,
            lockTtlMs: 15_000,
          },
          logger: createLogger(LOG_LEVEL, { component: `indexer ${target.name} ${chain.name}` }),
        }),
      );
    }
    const heads = await Promise.all(chains.map((c) => c.runtime.ethers.provider.getBlockNumber()));
    const started = now();
    await Promise.all(indexers.map((indexer) => indexer.start()));
    const watchdog = setInterval(() => {
      const states = indexers.map((indexer, i) => {
        const s = indexer.status();
        return `${chains[i].name} ${s.state} at ${s.checkpoint}/${heads[i]}${s.lastError ? ` (${s.lastError})` : ""}`;
      });
      console.log(`  (${target.name}, both chains: ${states.join("; ")})`);
    }, 10_000);
    const finished: number[] = [];
    try {
      await Promise.all(
        indexers.map(async (indexer, i) => {
          await indexer.waitForBlock(heads[i], BACKFILL_TIMEOUT_MS);
          finished[i] = now();
        }),
      );
    } finally {
      clearInterval(watchdog);
    }
    result.wallMs = Math.max(...finished) - started;
    for (const [i, chain] of chains.entries()) {
      const events = await countEvents(db, chain.name);
      const ms = finished[i] - started;
      result.chains.push({
        name: chain.name,
        events,
        pushEvents: await countPushEvents(db, chain.name),
        blocks: heads[i] - chain.book.startBlock + 1,
        ms,
        eventsPerSecond: events / (ms / 1000),
      });
      result.events += events;
    }
    result.eventsPerSecond = result.events / (result.wallMs / 1000);
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
    console.log(`\n${target.name}, both chains: FAILED: ${result.error}`);
  } finally {
    for (const indexer of indexers) await indexer.stop().catch(() => undefined);
    await target.cleanup(db).catch((e) => console.log(`  cleanup of ${target.name} failed: ${e}`));
    await db.destroy().catch(() => undefined);
  }
  return result;
}

function printBoth(name: string, both: BothChainsResult, oneChain: Result): void {
  console.log(`\n== ${name}: both chains indexing at once (a fresh database, each chain its own indexer) ==`);
  if (both.error) {
    console.log(`FAILED: ${both.error}`);
    return;
  }
  printTable(
    ["chain", "events", "push events", "blocks", "level after", "events/s"],
    [
      ...both.chains.map((c) => [
        c.name,
        fmt(c.events),
        fmt(c.pushEvents),
        fmt(c.blocks),
        `${fmt(c.ms / 1000, 2)} s`,
        fmt(c.eventsPerSecond),
      ]),
      [
        "both",
        fmt(both.events),
        fmt(both.chains.reduce((n, c) => n + c.pushEvents, 0)),
        "",
        `${fmt(both.wallMs / 1000, 2)} s`,
        fmt(both.eventsPerSecond),
      ],
    ],
    [1, 2, 3, 4, 5],
  );
  if (oneChain.eventsPerSecond > 0) {
    console.log(
      `both chains together: ${fmt(both.eventsPerSecond)} events/s against ${fmt(oneChain.eventsPerSecond)} for ` +
        `base alone (step 1), ${fmt((100 * both.eventsPerSecond) / oneChain.eventsPerSecond)}%`,
    );
  }
}

function printBackfill(r: Result): void {
  const pass = r.eventsPerSecond >= TARGETS.backfillEventsPerSecond ? "PASS" : "UNDER";
  const b = r.breakdown;
  console.log(`\n== ${r.name}: backfill from scratch ==`);
  console.log(
    `events ${fmt(r.events)} (and ${fmt(r.pushEvents)} push events written), blocks ${fmt(r.blocks)} ` +
      `(${b.ranges} ranges of <= ${MAX_BLOCK_RANGE}, ` +
      `${fmt(b.headers)} headers read), wall ${fmt(r.backfillMs / 1000, 2)} s, ` +
      `${fmt(r.eventsPerSecond)} events/s (target >= ${fmt(TARGETS.backfillEventsPerSecond)}): ${pass}`,
  );
  const total = b.phases.reduce((acc, p) => acc + p.ms, 0);
  const rows = b.phases.map((p) => [p.name, ms(p.ms), `${fmt((100 * p.ms) / r.backfillMs, 1)}%`]);
  rows.push([
    "(start, lock, waits between steps)",
    ms(r.backfillMs - total),
    `${fmt((100 * (r.backfillMs - total)) / r.backfillMs, 1)}%`,
  ]);
  console.log("");
  printTable(["where the time went (summed over ranges)", "time", "of wall"], rows, [1, 2]);
  console.log("");
  printTable(
    ["chain reads (the next range's during this one's transaction)", "time", "of wall"],
    b.reads.map((p) => [p.name, ms(p.ms), `${fmt((100 * p.ms) / r.backfillMs, 1)}%`]),
    [1, 2],
  );
  console.log("");
  printTable(
    ["SQL statement, in the range transactions", "count", "time in driver", "per event"],
    b.queries.map((q) => [q.name, fmt(q.count), ms(q.ms), `${fmt((1000 * q.ms) / Math.max(1, r.events), 1)} us`]),
    [1, 2, 3],
  );
}

function printFollow(r: Result): void {
  const l = r.latencies;
  if (l.length === 0) {
    console.log(
      `\n== ${r.name}: following the head: no block measured${r.followError ? ` (${r.followError})` : ""} ==`,
    );
    return;
  }
  const median = quantile(l, 0.5);
  const pass = followPasses(l) ? "PASS" : "OVER";
  console.log(`\n== ${r.name}: following the head (${followMode()}, confirmations ${CONFIRMATIONS}) ==`);
  console.log(
    `${l.length}/${FOLLOW_BLOCKS} blocks, one createTask each, ${FOLLOW_GAP_MS[0]}-${FOLLOW_GAP_MS[1]} ms apart; ` +
      `receipt -> checkpoint and task readable: median ${ms(median)}, p95 ${ms(quantile(l, 0.95))} ` +
      `(targets <= ${FOLLOW_TARGETS.medianMs} ms, <= ${FOLLOW_TARGETS.p95Ms} ms): ${pass}, ` +
      `min ${ms(l[0])}, max ${ms(l[l.length - 1])}`,
  );
  if (r.followError) console.log(`  some blocks were not indexed in time: ${r.followError}`);
}

function followMode(): string {
  if (FOLLOW === "subscription") return `woken by the node's newHeads, pollIntervalMs ${POLL_INTERVAL_MS}`;
  if (FOLLOW === "poll") return `head poll every ${HEAD_POLL_MS} ms, pollIntervalMs ${POLL_INTERVAL_MS}`;
  return `a step every pollIntervalMs ${POLL_INTERVAL_MS}`;
}

function printCatchUp(r: Result): void {
  const c = r.catchUp!;
  console.log(`\n== ${r.name}: catching up after a burst of ${BURST_BLOCKS} empty blocks ==`);
  console.log(
    `${c.behind} blocks behind when the burst ended; level again after ${ms(c.ms)} with ${c.logsCalls} getLogs calls ` +
      `(${fmt(c.behind / Math.max(1, c.logsCalls), 1)} blocks per call). getLogs range now ${fmt(c.range)} blocks ` +
      `(configured ${fmt(MAX_BLOCK_RANGE)}), shrunk ${c.shrinks} times although the node refused ${c.refused} calls`,
  );
}

function printComparison(results: Result[]): void {
  console.log("\n== Comparison ==\n");
  printTable(
    [
      "database",
      "events",
      "blocks",
      "backfill",
      "events/s",
      "backfill",
      "follow p50",
      "follow p95",
      "follow",
      "catch-up",
      "2 chains events/s",
    ],
    results.map((r) =>
      r.error && r.events === 0
        ? [r.name, "-", "-", "-", "-", "FAILED", "-", "-", "FAILED", "-", bothCell(r)]
        : [
            r.name,
            fmt(r.events),
            fmt(r.blocks),
            `${fmt(r.backfillMs / 1000, 2)} s`,
            fmt(r.eventsPerSecond),
            r.eventsPerSecond >= TARGETS.backfillEventsPerSecond ? "PASS" : "UNDER",
            r.latencies.length ? ms(quantile(r.latencies, 0.5)) : "-",
            r.latencies.length ? ms(quantile(r.latencies, 0.95)) : "-",
            !r.latencies.length ? "FAILED" : followPasses(r.latencies) ? "PASS" : "OVER",
            r.catchUp ? `${ms(r.catchUp.ms)}, ${r.catchUp.logsCalls} getLogs` : "-",
            bothCell(r),
          ],
    ),
    [1, 2, 3, 4, 6, 7, 9, 10],
  );
  console.log(
    `\ntargets: backfill >= ${fmt(TARGETS.backfillEventsPerSecond)} events/s; follow median <= ` +
      `${FOLLOW_TARGETS.medianMs} ms and p95 <= ${FOLLOW_TARGETS.p95Ms} ms (${followMode()}, maxBlockRange ${MAX_BLOCK_RANGE}, ` +
      `confirmations ${CONFIRMATIONS}); catch-up: time and getLogs calls to index a burst of ${BURST_BLOCKS} empty blocks ` +
      `after following the head; 2 chains: events per second of base's and arc's backfills running together into ` +
      `one fresh database`,
  );
}

const bothCell = (r: Result) => (!r.both ? "-" : r.both.error ? "FAILED" : fmt(r.both.eventsPerSecond));

async function main(): Promise<void> {
  const wall = now();
  const startLoad = os
    .loadavg()
    .map((l) => fmt(l, 1))
    .join(" ");
  console.log(
    `Indexer benchmark on the in-process Hardhat network, Node ${process.version}, ${os.cpus().length} CPUs ` +
      `(load average ${startLoad})` +
      (process.env.DATABASE_URL ? ", PostgreSQL included (DATABASE_URL)" : ", PostgreSQL skipped (DATABASE_URL unset)"),
  );
  const chainInfo = await buildHistory("base", hre, randomInt);
  if (DUMP_FILE) await dumpHistory(DUMP_FILE, chainInfo);
  // arc: the same history on a second in-process chain (a generator of its own from the same seed).
  const arc = TWO_CHAINS
    ? await buildHistory("arc", secondChainRuntime(DEVNET_ARC_CHAIN_ID), randomIntOf(rng(SEED)))
    : undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "escrow-bench-"));
  const targets: Target[] = [sqliteTarget("better-sqlite3", dir)];
  if (SQLITE3) targets.push(sqliteTarget("sqlite3", dir));
  if (process.env.DATABASE_URL) targets.push(postgresTarget(process.env.DATABASE_URL));

  const results: Result[] = [];
  try {
    let snapshot: string = await network.provider.send("evm_snapshot", []);
    for (const target of targets) {
      // Every database starts from the same chain: the previous run's follow-the-head blocks are undone.
      if (results.length > 0) {
        await network.provider.send("evm_revert", [snapshot]);
        snapshot = await network.provider.send("evm_snapshot", []);
      }
      const result = await benchDatabase(target, chainInfo);
      results.push(result);
      if (arc) {
        // base as it was built: the follow-the-head and burst blocks undone.
        await network.provider.send("evm_revert", [snapshot]);
        snapshot = await network.provider.send("evm_snapshot", []);
        result.both = await benchBothChains(target.another("both"), [chainInfo, arc]);
        printBoth(target.name, result.both, result);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  printComparison(results);
  const postgres = results.find((r) => r.name === "PostgreSQL" && !r.error);
  if (postgres) {
    printPostgresIndexerTargets({
      eventsPerSecond: postgres.eventsPerSecond,
      followMedianMs: postgres.latencies.length ? quantile(postgres.latencies, 0.5) : undefined,
    });
  }
  console.log(
    `\nwhole run ${fmt((now() - wall) / 1000, 1)} s; load average ${os
      .loadavg()
      .map((l) => fmt(l, 1))
      .join(" ")} ` + `(at the start ${startLoad}): the machine is shared, figures move with it`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
