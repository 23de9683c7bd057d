/**
 * bench:api's multi-process topology (BENCH_API_PROCESSES=N, N >= 2, with DATABASE_URL and REDIS_URL): the API in
 * separate processes behind one port, as a production host runs a second process, to show what it adds.
 *
 * The bench's process stays the cluster primary: it keeps the Hardhat chain (served to the API processes over
 * JSON-RPC HTTP, as a node would be) and the indexer (writing the shared database, as a separate indexer process
 * would). Each API process is bench/lib/apiWorker.ts, forked with node:cluster: startServer configured from the same
 * environment as the in-process API, listening on one shared port, with a bare Koa hello-world on a second shared
 * port. Node's cluster rather than SO_REUSEPORT because Node 20's net.listen has no reusePort (Node 22 adds it); the
 * primary accepts each connection and hands it to the processes in turn.
 *
 * compareProcesses measures each row (the letters of bench/api.ts) with one process and with N, back to back and in
 * alternating order (1, N; N, 1; ...) so a change in the shared machine's load falls on both sides, and prints the
 * ratio of N processes to one, the API processes' CPU per request and the bench process's share of a core (chain,
 * RPC, indexer). SQLite is not offered here: a SQLite file shared by two writing processes is not a supported
 * production topology.
 */
import cluster, { type Worker } from "node:cluster";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { serveChain, type ServedChain } from "../../test/helpers/rpc";
import { freePort } from "../../test/helpers/api";
import { printTable } from "../report";
import { fmt } from "./format";
import { load, type LoadResult, type LoadSpec } from "./load";
import type { FromApiProcess, ToApiProcess } from "./apiWorker";

/** BENCH_API_PROCESSES=N: also measure the API in N processes against one (needs DATABASE_URL and REDIS_URL). */
export const API_PROCESSES = Math.max(1, Math.floor(Number(process.env.BENCH_API_PROCESSES ?? 1)));

/** Why the multi-process comparison cannot run in this environment, or undefined when it can. */
export function processesUnavailable(): string | undefined {
  if (API_PROCESSES < 2) return "BENCH_API_PROCESSES unset";
  if (!process.env.DATABASE_URL || !process.env.REDIS_URL) {
    return "it needs DATABASE_URL and REDIS_URL: a SQLite file and in-memory limits shared by several processes are not a supported topology";
  }
  return undefined;
}

export interface ProcessStats {
  pid: number;
  cpuMicros: number;
  koaRequests: number;
}

export interface ApiProcesses {
  /** The API's shared port. */
  apiUrl: string;
  /** The bare Koa hello-world's shared port, served by the same processes. */
  koaUrl: string;
  /** How many processes serve now. */
  count(): number;
  /** Forks processes or stops the newest ones (gracefully) until `count` serve. */
  scale(count: number): Promise<void>;
  /** Each serving process's pid, CPU time (µs) and bare Koa requests served, oldest first. */
  stats(): Promise<ProcessStats[]>;
  close(): Promise<void>;
}

/**
 * Starts `count` API processes configured by `env` (loadConfig's variables; API_PORT, RPC_URL and RUN_INDEXER are set
 * here), reading this process's Hardhat chain over HTTP.
 */
export async function startApiProcesses(env: Record<string, string>, count: number): Promise<ApiProcesses> {
  const chain: ServedChain = await serveChain();
  const [apiPort, koaPort] = [await freePort(), await freePort()];
  cluster.setupPrimary({
    exec: path.join(__dirname, "apiWorker.ts"),
    execArgv: ["-r", "ts-node/register/transpile-only"],
    args: [],
  });
  const workerEnv = {
    ...env,
    RPC_URL: chain.url,
    API_HOST: "127.0.0.1",
    API_PORT: String(apiPort),
    RUN_INDEXER: "false",
    // As the in-process API: no agent host polling the database beside the API.
    RUN_AGENT_HOST: "false",
    BENCH_KOA_PORT: String(koaPort),
  };
  const workers: Worker[] = [];

  const fork = () =>
    new Promise<Worker>((resolve, reject) => {
      const worker = cluster.fork(workerEnv);
      const exited = (code: number) => reject(new Error(`an API process exited (${code}) before it was ready`));
      worker.once("exit", exited);
      worker.once("message", (message: FromApiProcess) => {
        worker.off("exit", exited);
        if (message.type === "ready") resolve(worker);
        else reject(new Error(`an API process sent ${message.type} before it was ready`));
      });
    });
  const ask = (worker: Worker) =>
    new Promise<ProcessStats>((resolve, reject) => {
      worker.once("message", (message: FromApiProcess) =>
        message.type === "stats" ? resolve(message) : reject(new Error(`an API process sent ${message.type}`)),
      );
      worker.send({ type: "stats" } satisfies ToApiProcess);
    });
  const stop = (worker: Worker) =>
    new Promise<void>((resolve) => {
      worker.once("exit", () => resolve());
      worker.send({ type: "stop" } satisfies ToApiProcess);
    });

  const processes: ApiProcesses = {
    apiUrl: `http://127.0.0.1:${apiPort}`,
    koaUrl: `http://127.0.0.1:${koaPort}`,
    count: () => workers.length,
    async scale(target) {
      while (workers.length < target) workers.push(await fork());
      while (workers.length > target) await stop(workers.pop()!);
    },
    async stats() {
      const stats: ProcessStats[] = [];
      for (const worker of workers) stats.push(await ask(worker));
      return stats;
    },
    async close() {
      await processes.scale(0);
      await chain.close();
    },
  };
  try {
    await processes.scale(count);
  } catch (error) {
    await processes.close().catch(() => undefined);
    throw error;
  }
  return processes;
}

export interface ProcessRow {
  name: string;
  spec: Omit<LoadSpec, "seconds">;
}

interface Measured {
  r: LoadResult;
  /** The API processes' CPU per request (µs). */
  apiMicros: number;
  /** Each API process's share of their CPU time (%), oldest first: how evenly the shared port spreads the work. */
  split: number[];
  /**
   * The bench process's CPU, % of one core: the chain and its RPC server, the indexer's polls, the idle in-process
   * API, the cluster's accepts (as a share of a core, not per request: much of it does not grow with requests).
   */
  benchCore: number;
  /** The bench process's event loop delay p99 (ms): the chain's and RPC server's thread, shared by every process. */
  benchLoopP99: number;
}

/**
 * Measures every row with one API process and with `count`, in alternating order, and prints both, the ratio and
 * the CPU per request. `urlOf` maps a row's in-process URL to the processes' (the API's or bare Koa's).
 */
export async function compareProcesses(options: {
  rows: ProcessRow[];
  processes: ApiProcesses;
  count: number;
  urlOf: (inProcessUrl: string) => string;
  seconds: number;
  warmupSeconds: number;
}): Promise<Map<string, { one: LoadResult; many: LoadResult }>> {
  const { rows, processes, count, urlOf, seconds, warmupSeconds } = options;
  const measure = async (spec: LoadSpec): Promise<Measured> => {
    await load({ ...spec, seconds: warmupSeconds });
    const before = await processes.stats();
    const benchBefore = process.cpuUsage();
    const loopDelay = monitorEventLoopDelay({ resolution: 1 });
    loopDelay.enable();
    const r = await load(spec);
    loopDelay.disable();
    const bench = process.cpuUsage(benchBefore);
    const after = await processes.stats();
    const used = after.map((s, i) => s.cpuMicros - before[i].cpuMicros);
    const api = used.reduce((sum, micros) => sum + micros, 0);
    const requests = Math.max(1, r.total);
    return {
      r,
      apiMicros: api / requests,
      split: used.map((micros) => (100 * micros) / Math.max(1, api)),
      benchCore: (bench.user + bench.system) / 10_000 / spec.seconds,
      benchLoopP99: loopDelay.percentile(99) / 1e6,
    };
  };

  console.log(
    `\nThe API in separate processes behind one port (node:cluster; the chain over HTTP from this process, which ` +
      `also indexes): 1 and ${count} processes, each row measured back to back in alternating order...`,
  );
  const table: { name: string; one: Measured; many: Measured }[] = [];
  for (const [i, row] of rows.entries()) {
    const spec: LoadSpec = { ...row.spec, url: urlOf(row.spec.url), seconds };
    const results = new Map<number, Measured>();
    // 1, N for even rows and N, 1 for odd ones: each scale change is one fork or stop, and the order alternates.
    for (const n of i % 2 === 0 ? [1, count] : [count, 1]) {
      await processes.scale(n);
      results.set(n, await measure(spec));
    }
    const one = results.get(1)!;
    const many = results.get(count)!;
    console.log(`  ${row.name}: ${fmt(one.r.rps)} req/s with 1, ${fmt(many.r.rps)} with ${count}`);
    table.push({ name: row.name, one, many });
  }

  console.log(`\nResults, 1 and ${count} API processes (PostgreSQL + Redis; ${seconds} s each):`);
  printTable(
    [
      "endpoint",
      "1: req/s",
      "1: p99",
      `${count}: req/s`,
      `${count}: p99`,
      `${count} / 1`,
      "API CPU µs/req (1, N)",
      `${count}: CPU split`,
      "bench process CPU (1, N)",
      "non-2xx (1, N)",
    ],
    table.map(({ name, one, many }) => [
      name,
      fmt(one.r.rps),
      `${fmt(one.r.p99)} ms`,
      fmt(many.r.rps),
      `${fmt(many.r.p99)} ms`,
      `${fmt(many.r.rps / one.r.rps, 2)}x`,
      `${fmt(one.apiMicros)}, ${fmt(many.apiMicros)}`,
      many.split.map((share) => `${fmt(share)}%`).join("/"),
      `${fmt(one.benchCore)}%, ${fmt(many.benchCore)}%`,
      `${fmt(one.r.non2xx + one.r.errors)}, ${fmt(many.r.non2xx + many.r.errors)}`,
    ]),
    [1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
  console.log(
    `  the bench process's event loop delay p99 (chain, RPC server, indexer, cluster primary): ` +
      table
        .map(
          ({ name, one, many }) => `${name.split(".")[0]} ${fmt(one.benchLoopP99, 1)}/${fmt(many.benchLoopP99, 1)} ms`,
        )
        .join(", "),
  );
  console.log(
    `  load average: ${os
      .loadavg()
      .map((l) => fmt(l, 2))
      .join(", ")} (1, 5, 15 min); ${os.cpus().length} CPUs shared by the load generator, the API processes and ` +
      `the bench process`,
  );
  return new Map(table.map(({ name, one, many }) => [name, { one: one.r, many: many.r }]));
}
