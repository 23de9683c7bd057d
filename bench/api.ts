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
 * the targets (TARGETS: listing >= 50% of bare Koa with p99 <= 10 ms, one task >= 60% of the listing with p99 <= 15
 * ms, build >= 5,000 req/s, MCP >= 60% and A2A >= 50% of the listing) as PASS or UNDER; how often the chain clock read the chain
 * under load; then where one listing request spends its time (each step called in sequence, in-process).
 *
 * DATABASE_URL (a fresh PostgreSQL schema, dropped at the end) and REDIS_URL (the rate limits) run the same table on
 * them. With both and BENCH_API_PROCESSES=N (N >= 2), the same rows are then measured again with the API in separate
 * processes behind one port, 1 against N (bench/lib/processes.ts), and the ratio printed. The script never asserts and
 * exits 0 unless it fails to run.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { ethers, network } from "hardhat";
import { BATCH, POSTERS, deployFundedPosters } from "./history";
import { printTable } from "./report";
import { fmt, now, seconds } from "./lib/format";
import { LOAD_CONNECTIONS, bareKoa, listen, load, watchCollections, type LoadResult, type LoadSpec } from "./lib/load";
import {
  API_PROCESSES,
  compareProcesses,
  processesUnavailable,
  startApiProcesses,
  type ProcessRow,
} from "./lib/processes";
import { printPostgresApiTargets, printProcessesTarget } from "./lib/postgresTargets";
import { countStatements } from "./lib/statements";
import { CPU_PROFILE_DIR, cpuProfile, profileListing, profileTaskRead, taskReadLayers } from "./lib/profilers";
import { loadConfig } from "../server/config";
import { createLogger } from "../server/logger";
import { createDb, dbOptions } from "../server/db/knex";
import { migrateLatest } from "../server/db/migrations";
import { buildDeps } from "../server/main";
import { createApp } from "../server/api/app";
import { Indexer } from "../server/indexer/sync";
import { providerChainReader } from "../server/chain/escrowLogs";
import { insertApiKey } from "../server/db/repositories/apiKeys";
import { insertListing, type ListingRecord } from "../server/db/repositories/listings";
import { newApiKey } from "../server/domain/credentials";
import type { Deps } from "../server/domain/deps";

const TASKS = Math.max(50, Number(process.env.BENCH_TASKS ?? 10_000));
const SECONDS = Math.max(1, Number(process.env.BENCH_SECONDS ?? 10));
const WARMUP_SECONDS = 2;
/** With DATABASE_URL: the API's database is a fresh PostgreSQL schema of this name, dropped at the end. */
const PG_SCHEMA = process.env.DATABASE_URL ? `bench_api_${crypto.randomBytes(4).toString("hex")}` : undefined;

/** BENCH_ONLY=a,b,f: run only those measurements (letters as printed); BENCH_CPU_PROFILE=<dir>: see cpuProfile. */
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(",")) : undefined;
/** The API's throughput and latency targets, and the protocols' against REST (docs/performance.md). */
const TARGETS = {
  listingShareOfKoa: 0.5,
  listingP99Ms: 10,
  taskShareOfListing: 0.6,
  taskP99Ms: 15,
  buildRps: 5000,
  /** MCP browse_tasks against the REST listing. */
  mcpShareOfRest: 0.6,
  /** A2A tasks/list against the REST listing. */
  a2aShareOfRest: 0.5,
} as const;

const CAPABILITIES = ["python", "translation", "vision", "web", "sql", "audio"];

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

async function startApi(book: Awaited<ReturnType<typeof fundTasks>>["book"], dir: string) {
  const deploymentsDir = path.join(dir, "deployments");
  fs.mkdirSync(deploymentsDir, { recursive: true });
  fs.writeFileSync(path.join(deploymentsDir, "hardhat.json"), JSON.stringify(book));
  // The API's environment, also given to its separate processes (bench/lib/processes.ts) when measured there.
  const env: Record<string, string> = {
    NETWORK: "hardhat",
    DEPLOYMENTS_DIR: deploymentsDir,
    DATA_DIR: path.join(dir, "data"),
    LOG_LEVEL: "warn",
    API_PORT: "0",
    DATABASE_URL: process.env.DATABASE_URL ?? "",
    REDIS_URL: process.env.REDIS_URL ?? "",
    INDEXER_POLL_MS: "100",
    RATE_IP_PER_WINDOW: "1000000000",
    RATE_FAILED_AUTH_PER_WINDOW: "1000000000",
    RATE_WALLET_FAMILY_PER_MINUTE: "1000000000",
    RATE_MCP_CALLS_PER_MINUTE: "1000000000",
    RATE_IP_POSTING_PER_MINUTE: "1000000000",
    ...(PG_SCHEMA ? { DATABASE_SCHEMA: PG_SCHEMA } : {}),
  };
  const config = loadConfig(env);
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
  return { deps, indexer, url, server, db, env };
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

/** The same rows with the API in 1 and BENCH_API_PROCESSES processes behind one port (bench/lib/processes.ts). */
async function inProcesses(env: Record<string, string>, rows: ProcessRow[], inProcess: { api: string; koa: string }) {
  const unavailable = processesUnavailable();
  if (unavailable) {
    if (API_PROCESSES > 1) console.log(`\nThe API in ${API_PROCESSES} processes: skipped (${unavailable})`);
    return;
  }
  const processes = await startApiProcesses(env, 1);
  try {
    const urlOf = (url: string) => (url === inProcess.koa ? processes.koaUrl : processes.apiUrl);
    const results = await compareProcesses({
      rows,
      processes,
      count: API_PROCESSES,
      urlOf,
      seconds: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
    });
    printProcessesTarget([...results].find(([name]) => name.startsWith("b."))?.[1], API_PROCESSES);
  } finally {
    await processes.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------

async function main() {
  const wall = now();
  console.log(`API benchmark: ${fmt(TASKS)} tasks, ${LOAD_CONNECTIONS} connections, ${SECONDS} s per measurement`);
  console.log(
    `Database: ${PG_SCHEMA ? `PostgreSQL (schema ${PG_SCHEMA})` : "SQLite"}; rate limits: ${process.env.REDIS_URL ? "Redis" : "in memory"}`,
  );
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
    const statements = countStatements(api.db);
    const statementLines: string[] = [];
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
    const rows: ProcessRow[] = [];
    const run = async (name: string, spec: Omit<LoadSpec, "seconds">) => {
      const letter = name.split(".")[0];
      if (ONLY && !ONLY.has(letter)) return skipped;
      rows.push({ name, spec });
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
      statements.reset();
      const r = await load({ ...spec, seconds: SECONDS });
      loopDelay.disable();
      statementLines.push(
        ...statements.report(r.total).map((line, i) => (i === 0 ? `  ${name}: ${line}` : `    ${line}`)),
      );
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

    // The same open-task page through the protocols (the target: at least half of REST's rate).
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
      `\nResults (${LOAD_CONNECTIONS} connections, ${SECONDS} s each, ${fmt(chain.funded)} tasks indexed and listed):`,
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

    console.log("\nProtocols (the same page, against the REST listing's rate):");
    for (const [name, r, target] of [
      ["A2A tasks/list", a2aList, TARGETS.a2aShareOfRest],
      ["MCP browse_tasks", mcpBrowse, TARGETS.mcpShareOfRest],
    ] as const) {
      const ratio = r.rps / listing.rps;
      console.log(
        `  ${name}: ${fmt(ratio * 100, 1)}% of REST (target >= ${target * 100}%), p99 ${fmt(r.p99)} ms, ` +
          `non-2xx ${fmt(r.non2xx)}: ${ratio >= target && r.non2xx === 0 ? "PASS" : "UNDER"}`,
      );
    }
    if (PG_SCHEMA) printPostgresApiTargets({ bare, listing, oneTask, a2a: a2aList, mcp: mcpBrowse });

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
    statements.close();
    console.log("\nStatements the API sent while measured (knex's query event; the most frequent, a request each):");
    for (const line of statementLines) console.log(line);

    if (!ONLY && !CPU_PROFILE_DIR) await profileListing(api.deps, api.url);
    if ((!ONLY || ONLY.has("c")) && !CPU_PROFILE_DIR) {
      await profileTaskRead(api.deps, api.url, chain.funded);
      await taskReadLayers(api.deps, chain.funded);
    }
    if (!CPU_PROFILE_DIR) await inProcesses(api.env, rows, { api: api.url, koa: koa.url });
  } finally {
    koa.server.closeAllConnections();
    await new Promise<void>((resolve) => koa.server.close(() => resolve()));
    api.server.closeAllConnections();
    await new Promise<void>((resolve) => api.server.close(() => resolve()));
    await api.indexer.stop();
    await api.deps.limits.close();
    if (PG_SCHEMA) await api.db.raw(`drop schema if exists "${PG_SCHEMA}" cascade`);
    await api.db.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nTotal ${seconds(now() - wall)}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
