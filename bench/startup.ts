/**
 * Start time and memory of the production processes, from the sources (ts-node) and from the build:
 * `npm run bench:startup` (bench/startup.ts) after `npm run build:node` (or BENCH_BUILD_DIR=<a tsc -p tsconfig.build.json
 * output directory>).
 *
 * On the in-process Hardhat network served over HTTP: deploys the contracts and writes their address book to a
 * temporary folder, then starts each process BENCH_RUNS (default 2) times per way, one at a time, on a fresh SQLite
 * file (the first start of each migrates it): the API (`server/main.ts`, RUN_AGENT_HOST=false RUN_INDEXER=false, no
 * chain configured, hosted agents off), ready when /health/live answers 200; the indexer (`server/indexer/main.ts`), ready at its "indexer started" log line;
 * the agent host (`server/hosting/main.ts`, no agents to run), ready at its "agent host started" line. Start time is
 * from the spawn to ready; memory is the process's resident set (VmRSS) two seconds after ready. From the sources the
 * processes run as `node -r ts-node/register/transpile-only <file>.ts`, as `npm run start:dev` does; from the build
 * as `node <build>/<file>.js`, as `npm start` does. Prints one row per process and way. Never asserts: a benchmark.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { printTable } from "./report";
import { fmt } from "./lib/format";
import { deployEscrowFixture } from "../test/helpers/fixtures";
import { serveChain } from "../test/helpers/rpc";

const ROOT = path.join(__dirname, "..");
const BUILD = path.resolve(ROOT, process.env.BENCH_BUILD_DIR ?? "dist");
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 2));
const READY_TIMEOUT_MS = 120_000;
/** The API's port (BENCH_API_PORT, default 18610). */
const API_PORT = Number(process.env.BENCH_API_PORT ?? 18610);

type Ready = { kind: "http"; path: string } | { kind: "log"; msg: string };

const PROCESSES: { name: string; file: string; ready: Ready; chain: boolean }[] = [
  // No chain for the API: its start then measures the process itself, not RPC round trips to this script's chain.
  { name: "API", file: "server/main", ready: { kind: "http", path: "/health/live" }, chain: false },
  { name: "indexer", file: "server/indexer/main", ready: { kind: "log", msg: "indexer started" }, chain: true },
  { name: "agent host", file: "server/hosting/main", ready: { kind: "log", msg: "agent host started" }, chain: true },
];
/** BENCH_PROCESSES=API,indexer: only those (names as printed). */
const ONLY = process.env.BENCH_PROCESSES ? new Set(process.env.BENCH_PROCESSES.split(",")) : undefined;

function get(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    http
      .get(url, (res) => {
        res.resume();
        resolve(res.statusCode);
      })
      .on("error", () => resolve(undefined));
  });
}

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

async function measure(
  args: string[],
  ready: Ready,
  env: NodeJS.ProcessEnv,
  port: number,
): Promise<{ startMs: number; rssMb: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => (log += chunk));
  try {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${args.join(" ")} exited ${child.exitCode}:\n${log}`);
      if (Date.now() > deadline) throw new Error(`${args.join(" ")} not ready within ${READY_TIMEOUT_MS} ms:\n${log}`);
      const isReady =
        ready.kind === "http"
          ? (await get(`http://127.0.0.1:${port}${ready.path}`)) === 200
          : log.includes(`"msg":"${ready.msg}"`);
      if (isReady) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const startMs = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    return { startMs, rssMb: rssMb(child.pid!) };
  } finally {
    await stop(child);
  }
}

async function main() {
  if (!fs.existsSync(path.join(BUILD, "server", "main.js"))) {
    throw new Error(`no build in ${BUILD}: run npm run build:node first (or set BENCH_BUILD_DIR)`);
  }
  const fx = await deployEscrowFixture();
  const chain = await serveChain();
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), "bench-startup-"));
  const rows: string[][] = [];
  try {
    fs.mkdirSync(path.join(temp, "deployments"));
    fs.writeFileSync(
      path.join(temp, "deployments", "hardhat.json"),
      JSON.stringify({ ...fx.book, network: "hardhat" }),
    );
    const port = API_PORT;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? "",
      NETWORK: "hardhat",
      RPC_URL: chain.url,
      DEPLOYMENTS_DIR: path.join(temp, "deployments"),
      DATA_DIR: temp,
      API_PORT: String(port),
      API_URL: `http://127.0.0.1:${port}`,
      RUN_AGENT_HOST: "false",
      RUN_INDEXER: "false",
      LOG_LEVEL: "info",
    };
    const ways: { name: string; args: (file: string) => string[] }[] = [
      {
        name: "sources (ts-node)",
        args: (file) => ["-r", "ts-node/register/transpile-only", path.join(ROOT, `${file}.ts`)],
      },
      { name: `build (${path.relative(ROOT, BUILD)})`, args: (file) => [path.join(BUILD, `${file}.js`)] },
    ];
    fs.mkdirSync(path.join(temp, "no-deployments"));
    // Without a chain the development secrets cannot be checked against a local chain id: hosted agents off (the
    // API starts no agent host here anyway).
    const noChain: NodeJS.ProcessEnv = {
      ...env,
      DEPLOYMENTS_DIR: path.join(temp, "no-deployments"),
      HOSTED_AGENTS: "off",
    };
    delete noChain.RPC_URL;
    for (const p of PROCESSES) {
      if (ONLY && !ONLY.has(p.name)) continue;
      for (const way of ways) {
        const runs: { startMs: number; rssMb: number }[] = [];
        for (let i = 0; i < RUNS; i++)
          runs.push(await measure(way.args(p.file), p.ready, p.chain ? env : noChain, port));
        rows.push([
          p.name,
          way.name,
          runs.map((r) => `${fmt(r.startMs / 1000, 2)} s`).join(", "),
          runs.map((r) => `${fmt(r.rssMb)} MB`).join(", "),
        ]);
        console.log(`${p.name}, ${way.name}: done`);
      }
    }
  } finally {
    await chain.close();
    fs.rmSync(temp, { recursive: true, force: true });
  }
  console.log(`\nStart to ready, and resident memory 2 s later (${RUNS} runs each; load average ${os.loadavg()[0]}):`);
  printTable(["process", "from", "start", "RSS"], rows);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
