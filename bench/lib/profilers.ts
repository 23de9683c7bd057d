/**
 * The API benchmark's profilers: where one listing request and one task read spend their time (in-process, in
 * sequence), one task read under the load layer by layer, and V8 CPU profiles of each measurement (BENCH_CPU_PROFILE).
 */
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import inspector from "node:inspector/promises";
import { printTable } from "../report";
import { createApp } from "../../server/api/app";
import { taskRoute } from "../../server/operations/listings";
import type { AnyOperation } from "../../server/operations/operation";
import { findListingByTaskId, getListings } from "../../server/db/repositories/listings";
import { findTaskById, listOpenTasks } from "../../server/db/repositories/tasks";
import { loadPausePeriods } from "../../server/db/repositories/pausePeriods";
import { listOpenListedTasks, readTask } from "../../server/domain/listing";
import { marketplaceMeta, marketplaceState, onChainTask, projectionContext } from "../../server/domain/projection";
import { findTaskRows } from "../../server/db/repositories/taskRows";
import { getAssignments } from "../../server/db/repositories/assignments";
import type { Deps } from "../../server/domain/deps";
import { fmt, now } from "./format";
import { listen, load, type LoadSpec } from "./load";

const PROFILE_ROUNDS = 50;
const TASK_READ_ROUNDS = 2_000;
/** BENCH_CPU_PROFILE=<dir>: see cpuProfile. */
export const CPU_PROFILE_DIR = process.env.BENCH_CPU_PROFILE;
const CPU_PROFILE_ROUNDS = Number(process.env.BENCH_CPU_PROFILE_ROUNDS ?? 2000);

export async function profileListing(deps: Deps, url: string): Promise<void> {
  const { db } = deps;
  const steps = new Map<string, number>();
  const add = (name: string, ms: number) => steps.set(name, (steps.get(name) ?? 0) + ms);
  const query = { limit: 50, offset: 0, minReputation: 0 };
  for (let i = 0; i < PROFILE_ROUNDS; i++) {
    let t = now();
    const chainNow = await deps.clock.chainNow();
    add("deps.clock.chainNow() (chain clock, cached 1 s)", now() - t);
    t = now();
    const pauses = await loadPausePeriods(db, "base");
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
      deps.config.api.postingChain,
    );
    add("SQL: listings + capabilities of the page (getListings)", now() - t);
    t = now();
    const ctx = {
      chains: new Map([
        [deps.config.api.postingChain, { chainId: deps.chain?.book.chainId ?? null, pauses, now: chainNow }],
      ]),
      now: chainNow,
    };
    const out = page.tasks.map((task) => {
      const listing = listings.get(task.taskId)!;
      return { meta: marketplaceMeta(listing, task, ctx), state: marketplaceState(listing, task, ctx) };
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
 * in-process; the same rows read as three statements beside the one statement the API uses.
 */
export async function profileTaskRead(deps: Deps, url: string, maxId: number): Promise<void> {
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
  await time("SQL: the same as three statements (one per table)", async (id) => {
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

export async function taskReadLayers(deps: Deps, maxId: number): Promise<void> {
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
        onChainTask(task!, ctx);
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
export async function cpuProfile(letter: string, spec: Omit<LoadSpec, "seconds">): Promise<void> {
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
