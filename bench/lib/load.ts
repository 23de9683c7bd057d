/**
 * The benchmarks' load driver: autocannon in a child process (so the load generator does not share the measured
 * servers' event loop) at LOAD_CONNECTIONS connections, the collector's pauses while a measurement runs, a server
 * for an app on a free port, and the bare Koa app the API is measured against.
 */
import { spawn } from "node:child_process";
import http from "node:http";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { PerformanceObserver, constants as perfConstants } from "node:perf_hooks";
import Koa from "koa";
import type { ApiConfig } from "../../server/config";
import { createHttpServer } from "../../server/api/httpServer";
import { fmt } from "./format";

export const LOAD_CONNECTIONS = 50;
/** BENCH_LOAD_PROFILE=<dir>: a V8 profile of the load generator itself (autocannon), one file per run. */
const LOAD_PROFILE_DIR = process.env.BENCH_LOAD_PROFILE;

/**
 * Serves `app` on 127.0.0.1. With `timeouts`, through the API's own server (createHttpServer: header, request and idle
 * timeouts, as `npm start` serves it); without, a plain Node server (bare Koa's baseline).
 */
export async function listen(
  app: Koa,
  timeouts?: ApiConfig["timeouts"],
): Promise<{ url: string; server: http.Server }> {
  const server = timeouts ? createHttpServer(app.callback(), timeouts) : http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** The baseline every API figure is set against: a Koa app answering a small JSON object. */
export function bareKoa(): Koa {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { success: true, data: { hello: "world" } };
  });
  return app;
}

export interface LoadSpec {
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

export interface LoadResult {
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
  connections: ${LOAD_CONNECTIONS},
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

export function load(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const profile = LOAD_PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(LOAD_PROFILE_DIR)}`] : [];
    const child = spawn(process.execPath, [...profile, "-e", LOAD_SCRIPT, JSON.stringify(spec)], {
      cwd: path.resolve(__dirname, "..", ".."),
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
 * with its total and longest pause. A request in flight when one starts waits for it (docs/performance.md).
 */
export function watchCollections() {
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
