/**
 * One API process of bench:api's multi-process topology (bench/lib/processes.ts forks it with node:cluster): the
 * server as `npm start` composes it (startServer, configured from the environment the primary passes: the shared
 * database and Redis, the bench's chain over HTTP), without an indexer of its own (the bench's process indexes into
 * the shared database, as a separate indexer process would), and a bare Koa hello-world on a second shared port, the
 * baseline of what these processes can serve. Both listen through the cluster primary, which hands each new
 * connection to one of the processes in turn.
 *
 * Messages from the primary: "stats" (answered with this process's CPU time so far, µs, and how many requests its
 * bare Koa has served: the share each process gets of the shared port) and "stop" (closes both servers as a
 * shutdown would, then exits 0). Sends "ready" once both listen.
 */
import http from "node:http";
import { startServer } from "../../server/main";
import { bareKoa } from "./load";

export type ToApiProcess = { type: "stats" } | { type: "stop" };
export type FromApiProcess =
  { type: "ready"; url: string } | { type: "stats"; pid: number; cpuMicros: number; koaRequests: number };

const send = (message: FromApiProcess) => process.send!(message);

async function main() {
  const running = await startServer({ runIndexer: false });
  const koa = http.createServer(bareKoa().callback());
  let koaRequests = 0;
  koa.on("request", () => koaRequests++);
  await new Promise<void>((resolve, reject) => {
    koa.once("error", reject);
    koa.listen(Number(process.env.BENCH_KOA_PORT), "127.0.0.1", resolve);
  });
  process.on("message", (message: ToApiProcess) => {
    if (message.type === "stats") {
      const cpu = process.cpuUsage();
      send({ type: "stats", pid: process.pid, cpuMicros: cpu.user + cpu.system, koaRequests });
    } else if (message.type === "stop") {
      koa.closeAllConnections();
      koa.close();
      running.close().then(
        () => process.exit(0),
        (error) => {
          console.error(error);
          process.exit(1);
        },
      );
    }
  });
  send({ type: "ready", url: running.url });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
