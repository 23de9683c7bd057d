/**
 * bench:api's multi-process topology (bench/lib/processes.ts): the API in separate processes behind one shared port,
 * each answering, the primary able to remove one while the others keep serving, and the port gone once closed. On
 * PostgreSQL when DATABASE_URL is set (a schema of its own, dropped afterwards), else on a SQLite file the processes
 * open in turn.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { startApiProcesses, type ApiProcesses } from "../../bench/lib/processes";
import { createDb } from "../../server/db/knex";
import { usingPostgres } from "../helpers/db";

const STARTUP_MS = 240_000;

/** One GET on a connection of its own (no keep-alive), so the cluster primary hands each to the next process. */
function getOnNewConnection(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      })
      .on("error", reject);
  });
}

async function processesFixture() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-processes-"));
  const schema = usingPostgres() ? `t_${crypto.randomBytes(6).toString("hex")}` : undefined;
  const env: Record<string, string> = {
    NETWORK: "hardhat",
    // No address book: the API starts without a chain gateway, which these checks do not need.
    DEPLOYMENTS_DIR: path.join(dir, "deployments"),
    DATA_DIR: path.join(dir, "data"),
    LOG_LEVEL: "silent",
    DATABASE_URL: process.env.DATABASE_URL ?? "",
    REDIS_URL: process.env.REDIS_URL ?? "",
    ...(schema ? { DATABASE_SCHEMA: schema } : {}),
  };
  fs.mkdirSync(env.DEPLOYMENTS_DIR, { recursive: true });
  const processes = await startApiProcesses(env, 2);
  return {
    processes,
    async cleanup(running: ApiProcesses) {
      await running.close();
      if (schema) {
        const db = createDb({ databaseUrl: process.env.DATABASE_URL, pgSchema: schema });
        await db.raw(`drop schema if exists "${schema}" cascade`);
        await db.destroy();
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe("bench/lib/processes", () => {
  describe("startApiProcesses", () => {
    it("serves the API and bare Koa from each process behind one port, keeps serving with one, and frees the port", async function () {
      this.timeout(STARTUP_MS);
      const { processes, cleanup } = await processesFixture();
      try {
        expect(processes.count()).to.equal(2);
        expect(await getOnNewConnection(`${processes.apiUrl}/health/live`)).to.equal(200);

        const connections = 20;
        for (let i = 0; i < connections; i++) expect(await getOnNewConnection(processes.koaUrl)).to.equal(200);
        const both = await processes.stats();
        expect(new Set(both.map((s) => s.pid)).size).to.equal(2);
        expect(both.map((s) => s.pid)).to.not.include(process.pid);
        // The primary hands connections out in turn: every process serves some, and together all of them.
        for (const s of both) expect(s.koaRequests).to.be.greaterThan(0);
        expect(both.reduce((sum, s) => sum + s.koaRequests, 0)).to.equal(connections);

        await processes.scale(1);
        expect(processes.count()).to.equal(1);
        const [survivor] = await processes.stats();
        expect(survivor.pid).to.equal(both[0].pid);
        expect(await getOnNewConnection(processes.koaUrl)).to.equal(200);
        expect(await getOnNewConnection(`${processes.apiUrl}/health/live`)).to.equal(200);
        expect((await processes.stats())[0].koaRequests).to.equal(survivor.koaRequests + 1);
      } finally {
        await cleanup(processes);
      }
      const refused = await getOnNewConnection(processes.koaUrl).then(
        () => undefined,
        (error: NodeJS.ErrnoException) => error.code,
      );
      expect(refused).to.equal("ECONNREFUSED");
    });
  });
});
