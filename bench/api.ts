/**
 * API benchmark: `npx hardhat run bench/api.ts` (npm run bench:api).
 *
 * On the in-process Hardhat network: deploys with the deploy library (no address book written), funds at least
 * BENCH_TASKS (default 10,000) tasks with createTasks in batches of 50 by four posters, lets the indexer project them
 * into a fresh SQLite database (temporary folder), and lists every one of them on the marketplace by inserting
 * listing rows through the listings repository (what POST /a2a/tasks/index stores, without reading 200 receipts).
 * Then starts the API on 127.0.0.1 (buildDeps + createApp in the API's own HTTP server with its timeouts, rate limits
 * raised so nothing is throttled) and a bare Koa hello-world beside it in the same process, and measures each with
 * autocannon, run in a child process so the load generator does not share the servers' event loop, at 50 connections
 * for BENCH_SECONDS (default 10) each:
 *
 *   a. bare Koa: GET / answering a small JSON object
 *   b. GET /api/v1/a2a/tasks?limit=50: the open-task listing
 *   c. GET /api/v1/tasks/<id>: one task, a random id per request
 *   d. POST /api/v1/tasks: a task build with a valid key, a fresh task hash per request
 *
 * Prints requests per second, p50 and p99 latency, non-2xx answers, and the listing as a percentage of bare Koa with
 * the targets (issue 9: listing >= 45% of bare Koa with p99 <= 15 ms, one task >= 40% of the listing with p99 <= 20 ms,
 * build >= 2,000 req/s; issue 10: MCP and A2A >= 50% of the listing) as PASS or UNDER; how often the chain clock read the chain
 * under load; then where one listing request spends its time (each step called in sequence, in-process). The script
 * never asserts and exits 0 unless it fails to run.
 */
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { PerformanceObserver, constants as perfConstants, monitorEventLoopDelay, performance } from "node:perf_hooks";
import inspector from "node:inspector/promises";
import Koa from "koa";
import { ethers, network } from "hardhat";
import { BATCH, POSTERS, deployFundedPosters } from "./history";
import { printTable } from "./report";
import { loadConfig, type ApiConfig } from "../server/config";
import { createLogger } from "../server/logger";
import { createDb, dbOptions } from "../server/db/knex";
import { migrateLatest } from "../server/db/migrations";
import { buildDeps } from "../server/main";
import { createApp } from "../server/api/app";
import { createHttpServer } from "../server/api/httpServer";
import { taskRoute } from "../server/operations/listings";
import type { AnyOperation } from "../server/operations/operation";
import { Indexer } from "../server/indexer/sync";
import { providerChainReader } from "../server/chain/escrowLogs";
import { insertApiKey } from "../server/db/repositories/apiKeys";
import {
  findListingByTaskId,
  getListings,
  insertListing,
  type ListingRecord,
} from "../server/db/repositories/listings";
import { findTaskById, listOpenTasks } from "../server/db/repositories/tasks";
import { loadPausePeriods } from "../server/db/repositories/pausePeriods";
import { newApiKey } from "../server/domain/credentials";
import { listOpenListedTasks, readTask } from "../server/domain/listing";
import { marketplaceMeta, marketplaceState, onChainTask, projectionContext } from "../server/domain/projection";
import { findTaskRows } from "../server/db/repositories/taskRows";
import { getAssignments } from "../server/db/repositories/assignments";
import type { Deps } from "../server/domain/deps";

const TASKS = Math.max(50, Number(process.env.BENCH_TASKS ?? 10_000));
const CONNECTIONS = 50;
const SECONDS = Math.max(1, Number(process.env.BENCH_SECONDS ?? 10));
const WARMUP_SECONDS = 2;
const PROFILE_ROUNDS = 50;
const TASK_READ_ROUNDS = 2_000;
/** BENCH_ONLY=a,b,f: run only those measurements (letters as printed); BENCH_CPU_PROFILE=<dir>: see cpuProfile. */
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(",")) : undefined;
const CPU_PROFILE_DIR = process.env.BENCH_CPU_PROFILE;
/** BENCH_LOAD_PROFILE=<dir>: a V8 profile of the load generator itself (autocannon), one file per run. */
const LOAD_PROFILE_DIR = process.env.BENCH_LOAD_PROFILE;
const CPU_PROFILE_ROUNDS = Number(process.env.BENCH_CPU_PROFILE_ROUNDS ?? 2000);
/** Issue 9's API targets and issue 10's protocol target. */
const TARGETS = {
  listingShareOfKoa: 0.45,
  listingP99Ms: 15,
  taskShareOfListing: 0.4,
  taskP99Ms: 20,
  buildRps: 2000,
  protocolShareOfRest: 0.5,
} as const;

const CAPABILITIES = ["python", "translation", "vision", "web", "sql", "audio"];

const now = () => performance.now();
const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const seconds = (ms: number) => `${fmt(ms / 1000, 1)} s`;
const briefHash = (label: string) => ethers.sha256(ethers.toUtf8Bytes(`bench brief: ${label}`));

// ---------------------------------------------------------------------------------------------------------------
// Chain: the escrow and its tasks
// ---------------------------------------------------------------------------------------------------------------

async function fundTasks() {
  const { escrow, token, escrowAddress, book, posters, batch, made } = await deployFundedPosters({
    tasks: TASKS,
    minDays: 7,
    briefHash,
  });

  const started = now();
  // The first batch sizes the gas limit of the others, which are then sent without estimation (automine on).
  const first = await (await escrow.connect(posters[0]).createTasks(token, batch())).wait();
  const gas = ethers.toQuantity((first!.gasUsed * 13n) / 10n);
  const hashes: string[] = [];
  for (let i = 1; made() < TASKS; i++) {
    const data = escrow.interface.encodeFunctionData("createTasks", [token, batch()]);
    hashes.push(
      await network.provider.send("eth_sendTransaction", [
        { from: posters[i % POSTERS].address, to: escrowAddress, data, gas },
      ]),
    );
  }
  for (const hash of hashes) {
    const receipt = await ethers.provider.getTransactionReceipt(hash);
    if (receipt?.status !== 1) throw new Error(`createTasks ${hash} did not succeed`);
  }
  const funded = Number(await escrow.nextTaskId()) - 1;
  console.log(
    `Chain: ${fmt(funded)} tasks funded in ${fmt(hashes.length + 1)} createTasks transactions of ${BATCH} ` +
      `(${fmt(Number(first!.gasUsed))} gas each) in ${seconds(now() - started)}`,
  );
  return { book, posters, funded };
}

// ---------------------------------------------------------------------------------------------------------------
// The API: database, indexer, listings, key, server
// ---------------------------------------------------------------------------------------------------------------

/** A listing for every indexed task, as POST /a2a/tasks/index would store it (terms varied, a fifth public). */
async function listEverything(deps: Deps): Promise<number> {
  const { db } = deps;
  const tasks = await db("tasks")
    .orderBy("task_id")
    .select("task_id", "task_hash", "poster", "token", "amount", "deadline", "created_at", "created_tx", "verifier");
  await db.transaction(async (trx) => {
    for (const task of tasks) {
      const id = Number(task.task_id);
      const isPublic = id % 5 === 0;
      const verifier = task.verifier === ethers.ZeroAddress ? null : task.verifier;
      const listing: ListingRecord = {
        taskId: id,
        taskHash: task.task_hash,
        chain: deps.config.api.postingChain,
        poster: task.poster,
        txHash: task.created_tx,
        privacy: isPublic ? "public" : "private",
        verificationMode: verifier ? "agent" : id % 3 === 0 ? "auto" : "manual",
        verificationCriteria: !verifier && id % 3 === 0 ? { min_length: 200, contains_keywords: ["summary"] } : null,
        verifierAddress: verifier,
        rootHash: `0x${crypto.createHash("sha256").update(`root ${id}`).digest("hex")}`,
        wrappedKeys: isPublic ? null : { [task.poster]: `0x04${"ab".repeat(96)}` },
        targetExecutor: null,
        serviceId: null,
        serviceTerms: null,
        publicBrief: isPublic ? `Public brief of task ${id}: summarise the attached report in 200 words.` : null,
        custodyWrappedKey: null,
        token: task.token,
        amount: String(task.amount),
        deadline: Number(task.deadline),
        listedAt: Number(task.created_at),
        capabilities: CAPABILITIES.filter((_, c) => (id + c) % 4 === 0).sort(),
      };
      await insertListing(trx, listing);
    }
  });
  return tasks.length;
}

/**
 * Serves `app` on 127.0.0.1. With `timeouts`, through the API's own server (createHttpServer: header, request and idle
 * timeouts, as `npm start` serves it); without, a plain Node server (bare Koa's baseline).
 */
async function listen(app: Koa, timeouts?: ApiConfig["timeouts"]): Promise<{ url: string; server: http.Server }> {
  const server = timeouts ? createHttpServer(app.callback(), timeouts) : http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function startApi(book: Awaited<ReturnType<typeof fundTasks>>["book"], dir: string) {
  const deploymentsDir = path.join(dir, "deployments");
  fs.mkdirSync(deploymentsDir, { recursive: true });
  fs.writeFileSync(path.join(deploymentsDir, "hardhat.json"), JSON.stringify(book));
  const config = loadConfig({
    NETWORK: "hardhat",
    DEPLOYMENTS_DIR: deploymentsDir,
    DATA_DIR: path.join(dir, "data"),
    LOG_LEVEL: "warn",
    API_PORT: "0",
    REDIS_URL: "",
    INDEXER_POLL_MS: "100",
    RATE_IP_PER_WINDOW: "1000000000",
    RATE_FAILED_AUTH_PER_WINDOW: "1000000000",
    RATE_WALLET_FAMILY_PER_MINUTE: "1000000000",
    RATE_MCP_CALLS_PER_MINUTE: "1000000000",
    RATE_IP_POSTING_PER_MINUTE: "1000000000",
  });
  const logger = createLogger(config.logLevel, { service: "bench-api" });
  const db = createDb(dbOptions(config));
  await migrateLatest(db);
  const deps = await buildDeps(config, logger, db, ethers.provider);
  const indexer = new Indexer({
    db,
    chain: providerChainReader(ethers.provider),
    network: config.network,
    escrowAddress: book.escrow.proxy,
    startBlock: book.startBlock,
    config: config.indexer,
    logger: logger.child({ component: "indexer" }),
  });
  const head = await ethers.provider.getBlockNumber();
  const started = now();
  await indexer.start();
  deps.indexer = indexer;
  await indexer.waitForBlock(head, 240_000);
  const indexed = Number((await db("tasks").count({ n: "*" }).first())?.n ?? 0);
  console.log(`Indexer: ${fmt(indexed)} tasks projected (blocks up to ${head}) in ${seconds(now() - started)}`);

  const listedAt = now();
  const listed = await listEverything(deps);
  console.log(`Listings: ${fmt(listed)} inserted through the listings repository in ${seconds(now() - listedAt)}`);

  const { url, server } = await listen(createApp(deps), config.api.timeouts);
  return { deps, indexer, url, server, db };
}

/** Counts the chain clock's reads (getBlock("latest") on the API's provider; the indexer reads numbered blocks). */
function countClockReads(deps: Deps) {
  const provider = deps.chain!.provider as unknown as { getBlock: (...args: unknown[]) => Promise<unknown> };
  const original = provider.getBlock.bind(provider);
  const counter = { calls: 0, ms: 0 };
  provider.getBlock = async (...args: unknown[]) => {
    if (args[0] !== "latest") return original(...args);
    counter.calls++;
    const t = now();
    try {
      return await original(...args);
    } finally {
      counter.ms += now() - t;
    }
  };
  return counter;
}

function bareKoa(): Koa {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { success: true, data: { hello: "world" } };
  });
  return app;
}

// ---------------------------------------------------------------------------------------------------------------
// Load: autocannon in a child process
// ---------------------------------------------------------------------------------------------------------------

interface LoadSpec {
  url: string;
  path: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  /** A fixed request body (JSON-RPC calls). */
  body?: string;
  /** "task": GET /api/v1/tasks/<random id up to maxId>; "build": a fresh task hash per POST body. */
  mode?: "task" | "build";
  maxId?: number;
  seconds: number;
}

interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statuses: Record<string, number>;
  /** CPU time the load generator itself used (µs): with 2 cores it shows when the client, not the server, limits. */
  loadCpuMicros: number;
}

// Runs in the child (CommonJS, plain JavaScript): the spec comes as argv[1], the summary goes to stdout as JSON.
const LOAD_SCRIPT = `
const autocannon = require("autocannon");
const crypto = require("node:crypto");
const spec = JSON.parse(process.argv[1]);
const options = {
  url: spec.url + spec.path,
  connections: ${CONNECTIONS},
  duration: spec.seconds,
  method: spec.method || "GET",
  headers: spec.headers || {},
  ...(spec.body ? { body: spec.body } : {}),
};
if (spec.mode === "task") {
  options.requests = [{
    setupRequest: (req) => ({ ...req, path: "/api/v1/tasks/" + (1 + Math.floor(Math.random() * spec.maxId)) }),
  }];
}
if (spec.mode === "build") {
  options.requests = [{
    setupRequest: (req) => ({
      ...req,
      body: JSON.stringify({
        taskHash: "0x" + crypto.randomBytes(32).toString("hex"),
        amount: "5000000",
        locationZone: "global",
        duration: "86400",
      }),
    }),
  }];
}
const cpuStart = process.cpuUsage();
autocannon(options, (error, r) => {
  if (error) { process.stderr.write(String(error.stack || error)); process.exit(1); }
  const cpu = process.cpuUsage(cpuStart);
  process.stdout.write(JSON.stringify({
    rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total,
    non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts, statuses: r.statusCodeStats || {},
    loadCpuMicros: cpu.user + cpu.system,
  }));
});
`;

function load(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const profile = LOAD_PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(LOAD_PROFILE_DIR)}`] : [];
    const child = spawn(process.execPath, [...profile, "-e", LOAD_SCRIPT, JSON.stringify(spec)], {
      cwd: path.resolve(__dirname, ".."),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}: ${err.trim()}`));
      try {
        const parsed = JSON.parse(out) as Omit<LoadResult, "statuses"> & {
          statuses: Record<string, { count: number }>;
        };
        const statuses = Object.fromEntries(Object.entries(parsed.statuses).map(([s, v]) => [s, v.count]));
        resolve({ ...parsed, statuses });
      } catch (error) {
        reject(new Error(`autocannon output unreadable: ${out.slice(0, 200)} ${err.slice(0, 200)} (${error})`));
      }
    });
  });
}

/**
 * The collector's pauses while a measurement runs: young-generation scavenges and full mark-compacts, each counted
 * with its total and longest pause. A request in flight when one starts waits for it (docs/performance.md, item 8).
 */
function watchCollections() {
  const kinds = new Map<string, { count: number; ms: number; max: number }>();
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      const name =
        kind === perfConstants.NODE_PERFORMANCE_GC_MINOR
          ? "scavenges"
          : kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR
            ? "mark-compacts"
            : "other";
      const k = kinds.get(name) ?? { count: 0, ms: 0, max: 0 };
      k.count++;
      k.ms += entry.duration;
      k.max = Math.max(k.max, entry.duration);
      kinds.set(name, k);
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  return {
    stop(requests: number): string {
      observer.disconnect();
      const parts = [...kinds].map(
        ([name, k]) =>
          `${fmt(k.count)} ${name} (${fmt(k.ms)} ms, ${fmt(k.ms / k.count, 1)} ms each, longest ${fmt(k.max, 1)} ms)`,
      );
      const paused = [...kinds.values()].reduce((sum, k) => sum + k.ms, 0);
      return `${parts.join("; ") || "none"}; ${fmt((paused * 1000) / Math.max(1, requests), 1)} µs a request`;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Where one listing request spends its time (in-process, sequential)
// ---------------------------------------------------------------------------------------------------------------

async function profileListing(deps: Deps, url: string): Promise<void> {
  const { db } = deps;
  const steps = new Map<string, number>();
  const add = (name: string, ms: number) => steps.set(name, (steps.get(name) ?? 0) + ms);
  const query = { limit: 50, offset: 0, minReputation: 0 };
  for (let i = 0; i < PROFILE_ROUNDS; i++) {
    let t = now();
    const chainNow = await deps.clock.chainNow();
    add("deps.clock.chainNow() (chain clock, cached 1 s)", now() - t);
    t = now();
    const pauses = await loadPausePeriods(db);
    add("SQL: pause periods", now() - t);
    t = now();
    const page = await listOpenTasks(db, { now: chainNow, limit: 50, offset: 0, listedOnly: true });
    add("SQL: open tasks page + count (listOpenTasks)", now() - t);
    t = now();
    // The count, nearly alone: the same call with an empty page.
    await listOpenTasks(db, { now: chainNow, limit: 0, offset: 0, listedOnly: true });
    add("  of which the total (same call, limit 0)", now() - t);
    t = now();
    const listings = await getListings(
      db,
      page.tasks.map((task) => task.taskId),
    );
    add("SQL: listings + capabilities of the page (getListings)", now() - t);
    t = now();
    const ctx = { chainId: deps.chain?.book.chainId ?? null, pauses, now: chainNow };
    const out = page.tasks.map((task) => {
      const listing = listings.get(task.taskId)!;
      return { meta: marketplaceMeta(listing, task, ctx), state: marketplaceState(listing, task, pauses, chainNow) };
    });
    add("JS: projection (meta, state)", now() - t);
    t = now();
    JSON.stringify({ success: true, data: { tasks: out, total: page.total } });
    add("JS: JSON.stringify of the envelope", now() - t);
    t = now();
    await listOpenListedTasks(deps, query);
    add("whole domain call (listOpenListedTasks)", now() - t);
    t = now();
    const res = await fetch(`${url}/api/v1/a2a/tasks?limit=50`);
    await res.arrayBuffer();
    add("whole HTTP request (fetch, sequential)", now() - t);
  }
  console.log(`\nWhere one listing request spends its time (mean of ${PROFILE_ROUNDS} sequential calls, in-process):`);
  printTable(
    ["step", "mean"],
    [...steps.entries()].map(([name, ms]) => [name, `${fmt(ms / PROFILE_ROUNDS, 3)} ms`]),
    [1],
  );
}

/**
 * Where one task read (c) spends its time: each step over the same TASK_READ_ROUNDS random ids, in sequence,
 * in-process; the three-statement read it replaced (docs/performance.md, item 7) beside its one statement.
 */
async function profileTaskRead(deps: Deps, url: string, maxId: number): Promise<void> {
  const { db } = deps;
  const ids = Array.from({ length: TASK_READ_ROUNDS }, () => 1 + Math.floor(Math.random() * maxId));
  const rows: [string, string][] = [];
  const time = async (name: string, step: (id: number) => Promise<unknown>) => {
    for (const id of ids.slice(0, 200)) await step(id); // warm-up
    const t = now();
    for (const id of ids) await step(id);
    rows.push([name, `${fmt(((now() - t) / ids.length) * 1000, 1)} µs`]);
  };
  await time("SQL: task, listing, capabilities, assignment (findTaskRows)", (id) => findTaskRows(db, { taskId: id }));
  await time("SQL: the same as three statements (before item 7)", async (id) => {
    await findTaskById(db, id);
    await findListingByTaskId(db, id);
    await getAssignments(db, [id]);
  });
  await time("projection context (pauses and chain clock, cached)", () => projectionContext(deps));
  await time("whole domain call (readTask)", (id) => readTask(deps, { taskId: id }, undefined));
  const sample = JSON.stringify({ success: true, data: await readTask(deps, { taskId: 1 }, undefined) });
  await time("JS: JSON.stringify of the envelope", async () => JSON.stringify(JSON.parse(sample)));
  await time("whole HTTP request (fetch, sequential)", async (id) => {
    await (await fetch(`${url}/api/v1/tasks/${id}`)).arrayBuffer();
  });
  console.log(`\nWhere one task read spends its time (mean over ${fmt(TASK_READ_ROUNDS)} random ids, in sequence):`);
  printTable(["step", "mean"], rows, [1]);
}

/**
 * One task read under the load, built up: the same route (path parameter, middleware, JSON answer) answering a
 * prepared task, then also reading its rows, then also projecting the on-chain view, then the real handler. Each on
 * an app of its own with only that route. The machine's speed changes within a run, so the layers take turns over
 * LAYER_ROUNDS rounds of LAYER_SECONDS each, and the table shows each layer's least server CPU per request (what the
 * layer costs when nothing else slows it) beside its range and its p99s.
 */
const LAYER_ROUNDS = 3;
const LAYER_SECONDS = 3;

async function taskReadLayers(deps: Deps, maxId: number): Promise<void> {
  const prepared = await readTask(deps, { taskId: 1 }, undefined);
  type Handler = typeof taskRoute.handler;
  const layers: [string, Handler][] = [
    ["the route answering a prepared task (no database)", () => prepared],
    [
      "+ the task's rows (findTaskRows)",
      async ({ params }) => {
        await findTaskRows(deps.db, params.id);
        return prepared;
      },
    ],
    [
      "+ the on-chain view (projection context, onChainTask)",
      async ({ params }) => {
        const { task } = await findTaskRows(deps.db, params.id);
        const ctx = await projectionContext(deps);
        onChainTask(task!, ctx.pauses, ctx.now);
        return prepared;
      },
    ],
    ["the real handler (readTask)", taskRoute.handler],
  ];
  const apps = await Promise.all(
    layers.map(([, handler]) =>
      listen(createApp(deps, [{ ...taskRoute, handler } as AnyOperation]), deps.config.api.timeouts),
    ),
  );
  const measured = layers.map(() => ({ micros: [] as number[], p99: [] as number[], non2xx: 0 }));
  try {
    for (let round = 0; round < LAYER_ROUNDS; round++) {
      for (const [i, app] of apps.entries()) {
        const spec = { url: app.url, path: "/", mode: "task" as const, maxId };
        await load({ ...spec, seconds: 1 }); // warm-up
        const cpuBefore = process.cpuUsage();
        const r = await load({ ...spec, seconds: LAYER_SECONDS });
        const cpu = process.cpuUsage(cpuBefore);
        measured[i].micros.push((cpu.user + cpu.system) / Math.max(1, r.total));
        measured[i].p99.push(r.p99);
        measured[i].non2xx += r.non2xx;
      }
    }
  } finally {
    for (const app of apps) {
      app.server.closeAllConnections();
      await new Promise<void>((resolve) => app.server.close(() => resolve()));
    }
  }
  console.log(
    `\nOne task read under the load, layer by layer (an app per layer; ${LAYER_ROUNDS} rounds of ${LAYER_SECONDS} s, ` +
      "the layers taking turns):",
  );
  printTable(
    ["layer", "least server CPU a request", "range", "p99 per round", "non-2xx"],
    layers.map(([name], i) => {
      const { micros, p99, non2xx } = measured[i];
      return [
        name,
        `${fmt(Math.min(...micros))} µs`,
        `${fmt(Math.min(...micros))}-${fmt(Math.max(...micros))} µs`,
        p99.map((ms) => `${fmt(ms)} ms`).join(", "),
        fmt(non2xx),
      ];
    }),
    [1, 2, 4],
  );
}

/**
 * BENCH_CPU_PROFILE=<dir>: each measurement's request sent CPU_PROFILE_ROUNDS times in sequence from this process
 * (robust to a loaded machine: one request at a time), under the V8 profiler; writes <dir>/<letter>.cpuprofile
 * (open in Chrome DevTools) and prints the mean time of one request.
 */
async function cpuProfile(letter: string, spec: Omit<LoadSpec, "seconds">): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const once = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const body =
        spec.mode === "build"
          ? JSON.stringify({
              taskHash: "0x" + crypto.randomBytes(32).toString("hex"),
              amount: "5000000",
              locationZone: "global",
              duration: "86400",
            })
          : spec.body;
      const pathname = spec.mode === "task" ? `/api/v1/tasks/${1 + (i % spec.maxId!)}` : spec.path;
      const req = http.request(
        `${spec.url}${pathname}`,
        { method: spec.method ?? "GET", headers: spec.headers, agent },
        (res) => {
          res.resume();
          res.on("end", () =>
            res.statusCode! < 300 ? resolve() : reject(new Error(`${pathname}: ${res.statusCode}`)),
          );
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  for (let i = 0; i < 200; i++) await once(i); // warm-up
  const session = new inspector.Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", {
    interval: process.env.BENCH_CPU_PROFILE_LOAD === "1" ? 500 : 100,
  });
  await session.post("Profiler.start");
  const t = now();
  // BENCH_CPU_PROFILE_LOAD=1: the servers' CPU under the autocannon load instead (the load runs in a child).
  const underLoad = process.env.BENCH_CPU_PROFILE_LOAD === "1" ? await load({ ...spec, seconds: 5 }) : undefined;
  if (!underLoad) for (let i = 0; i < CPU_PROFILE_ROUNDS; i++) await once(i);
  const ms = now() - t;
  const { profile } = await session.post("Profiler.stop");
  session.disconnect();
  agent.destroy();
  fs.mkdirSync(CPU_PROFILE_DIR!, { recursive: true });
  fs.writeFileSync(path.join(CPU_PROFILE_DIR!, `${letter}.cpuprofile`), JSON.stringify(profile));
  console.log(
    underLoad
      ? `  ${letter}: ${fmt(underLoad.rps)} req/s under load while profiled`
      : `  ${letter}: ${fmt(ms / CPU_PROFILE_ROUNDS, 3)} ms a request (${CPU_PROFILE_ROUNDS} in sequence)`,
  );
}

// ---------------------------------------------------------------------------------------------------------------

async function main() {
  const wall = now();
  console.log(`API benchmark: ${fmt(TASKS)} tasks, ${CONNECTIONS} connections, ${SECONDS} s per measurement`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-api-"));
  const chain = await fundTasks();
  const api = await startApi(chain.book, dir);
  const koa = await listen(bareKoa());
  try {
    const { key, keyHash, prefix } = newApiKey();
    const poster = chain.posters[0].address.toLowerCase();
    await insertApiKey(api.db, {
      address: poster,
      keyHash,
      prefix,
      label: "bench",
      createdAt: Math.floor(Date.now() / 1000),
    });

    const sample = await (await fetch(`${api.url}/api/v1/a2a/tasks?limit=50`)).json();
    console.log(
      `Open listing: ${sample.data?.tasks?.length ?? "?"} tasks per page of ${fmt(sample.data?.total ?? 0)} open, ` +
        `${fmt(JSON.stringify(sample).length)} bytes`,
    );

    console.log(`\nMeasuring (autocannon in a child process; a ${WARMUP_SECONDS} s warm-up before each run)...`);
    const results: { name: string; r: LoadResult }[] = [];
    const clock = countClockReads(api.deps);
    const clockReads: string[] = [];
    const serverCpu: string[] = [];
    const loopStalls: string[] = [];
    const collections: string[] = [];
    const skipped: LoadResult = {
      rps: NaN,
      p50: NaN,
      p99: NaN,
      total: 0,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
      statuses: {},
      loadCpuMicros: 0,
    };
    const run = async (name: string, spec: Omit<LoadSpec, "seconds">) => {
      const letter = name.split(".")[0];
      if (ONLY && !ONLY.has(letter)) return skipped;
      if (CPU_PROFILE_DIR) {
        await cpuProfile(letter, spec);
        return skipped;
      }
      await load({ ...spec, seconds: WARMUP_SECONDS });
      const before = { ...clock };
      const cpuBefore = process.cpuUsage();
      const gc = watchCollections();
      const loopDelay = monitorEventLoopDelay({ resolution: 1 });
      loopDelay.enable();
      const r = await load({ ...spec, seconds: SECONDS });
      loopDelay.disable();
      collections.push(`  ${name}: ${gc.stop(r.total)}`);
      const cpu = process.cpuUsage(cpuBefore);
      // How long the event loop was held: a stall of the one thread delays every request in flight, which is what a
      // p99 of several times the p50 comes from.
      const ms = (ns: number) => fmt(ns / 1e6, 1);
      loopStalls.push(
        `  ${name}: p50 ${ms(loopDelay.percentile(50))} ms, p99 ${ms(loopDelay.percentile(99))} ms, ` +
          `max ${ms(loopDelay.max)} ms`,
      );
      serverCpu.push(
        `  ${name}: ${fmt((cpu.user + cpu.system) / 10_000 / SECONDS)}% of one core, ` +
          `${fmt((cpu.user + cpu.system) / Math.max(1, r.total))} µs a request; the load generator ` +
          `${fmt(r.loadCpuMicros / 10_000 / SECONDS)}% of one core`,
      );
      results.push({ name, r });
      const calls = clock.calls - before.calls;
      if (calls > 0) {
        clockReads.push(
          `  ${name}: ${fmt(calls)} chain clock reads (${fmt(calls / SECONDS, 1)} a second, ` +
            `${fmt((clock.ms - before.ms) / calls, 1)} ms each while under load)`,
        );
      }
      console.log(`  ${name}: ${fmt(r.rps)} req/s`);
      return r;
    };
    const bare = await run("a. bare Koa hello-world", { url: koa.url, path: "/" });
    const listing = await run("b. GET /api/v1/a2a/tasks?limit=50", {
      url: api.url,
      path: "/api/v1/a2a/tasks?limit=50",
    });
    const oneTask = await run("c. GET /api/v1/tasks/<random id>", {
      url: api.url,
      path: "/api/v1/tasks/1",
      mode: "task",
      maxId: chain.funded,
    });
    const build = await run("d. POST /api/v1/tasks (build)", {
      url: api.url,
      path: "/api/v1/tasks",
      method: "POST",
      mode: "build",
      headers: { "content-type": "application/json", "x-api-key": key },
    });

    // The same open-task page through the protocols (issue 10's target: at least half of REST's rate).
    const a2aList = await run("e. A2A tasks/list (pageSize 50)", {
      url: api.url,
      path: "/a2a/v1",
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/list", params: { pageSize: 50 } }),
    });
    const mcpBrowse = await run("f. MCP tools/call browse_tasks (limit 50)", {
      url: api.url,
      path: "/mcp",
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "x-api-key": key },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "browse_tasks", arguments: { limit: 50 } },
      }),
    });

    console.log(
      `\nResults (${CONNECTIONS} connections, ${SECONDS} s each, ${fmt(chain.funded)} tasks indexed and listed):`,
    );
    printTable(
      ["endpoint", "req/s", "p50", "p99", "requests", "non-2xx", "errors", "statuses"],
      results.map(({ name, r }) => [
        name,
        fmt(r.rps),
        `${fmt(r.p50)} ms`,
        `${fmt(r.p99)} ms`,
        fmt(r.total),
        fmt(r.non2xx),
        fmt(r.errors + r.timeouts),
        Object.entries(r.statuses)
          .map(([s, n]) => `${s}:${n}`)
          .join(" "),
      ]),
      [1, 2, 3, 4, 5, 6],
    );

    const share = listing.rps / bare.rps;
    const sharePass = share >= TARGETS.listingShareOfKoa;
    const p99Pass = listing.p99 <= TARGETS.listingP99Ms;
    console.log("\nTargets (the open-task listing):");
    console.log(
      `  throughput: ${fmt(share * 100, 1)}% of bare Koa (target >= ${TARGETS.listingShareOfKoa * 100}%): ` +
        `${sharePass ? "PASS" : "UNDER"}`,
    );
    console.log(
      `  p99 latency: ${fmt(listing.p99)} ms (target <= ${TARGETS.listingP99Ms} ms): ${p99Pass ? "PASS" : "UNDER"}`,
    );

    const taskShare = oneTask.rps / listing.rps;
    console.log("One task by id:");
    console.log(
      `  throughput: ${fmt(taskShare * 100, 1)}% of the listing (target >= ${TARGETS.taskShareOfListing * 100}%): ` +
        `${taskShare >= TARGETS.taskShareOfListing ? "PASS" : "UNDER"}`,
    );
    console.log(
      `  p99 latency: ${fmt(oneTask.p99)} ms (target <= ${TARGETS.taskP99Ms} ms): ` +
        `${oneTask.p99 <= TARGETS.taskP99Ms ? "PASS" : "UNDER"}`,
    );
    console.log("Task build (POST /api/v1/tasks):");
    console.log(
      `  throughput: ${fmt(build.rps)} req/s (target >= ${fmt(TARGETS.buildRps)} req/s): ` +
        `${build.rps >= TARGETS.buildRps && build.non2xx === 0 ? "PASS" : "UNDER"}`,
    );
    console.log(
      `  load average during the run: ${os
        .loadavg()
        .map((l) => fmt(l, 2))
        .join(", ")} (1, 5, 15 min)`,
    );

    console.log("\nProtocols (the same page; target >= 50% of the REST listing's rate):");
    for (const [name, r] of [
      ["A2A tasks/list", a2aList],
      ["MCP browse_tasks", mcpBrowse],
    ] as const) {
      const ratio = r.rps / listing.rps;
      console.log(
        `  ${name}: ${fmt(ratio * 100, 1)}% of REST, p99 ${fmt(r.p99)} ms, non-2xx ${fmt(r.non2xx)}: ` +
          `${ratio >= TARGETS.protocolShareOfRest && r.non2xx === 0 ? "PASS" : "UNDER"}`,
      );
    }

    console.log(
      "\nChain clock (deps.clock.chainNow(), cached 1 s; one read at a time, the last value served meanwhile):",
    );
    for (const line of clockReads) console.log(line);
    console.log(
      "\nServer process CPU while measured (the servers and the in-process chain; the load runs in a child):",
    );
    for (const line of serverCpu) console.log(line);
    console.log("\nEvent loop delay while measured (perf_hooks.monitorEventLoopDelay, sampled every 1 ms):");
    for (const line of loopStalls) console.log(line);
    console.log("\nGarbage collection while measured (perf_hooks 'gc' entries: the pauses of the servers' thread):");
    for (const line of collections) console.log(line);

    if (!ONLY && !CPU_PROFILE_DIR) await profileListing(api.deps, api.url);
    if ((!ONLY || ONLY.has("c")) && !CPU_PROFILE_DIR) {
      await profileTaskRead(api.deps, api.url, chain.funded);
      await taskReadLayers(api.deps, chain.funded);
    }
  } finally {
    koa.server.closeAllConnections();
    await new Promise<void>((resolve) => koa.server.close(() => resolve()));
    api.server.closeAllConnections();
    await new Promise<void>((resolve) => api.server.close(() => resolve()));
    await api.indexer.stop();
    await api.deps.limits.close();
    await api.db.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nTotal ${seconds(now() - wall)}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
