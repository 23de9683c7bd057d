/**
 * SIGTERM to a real API process (`server/main.ts`, as `npm start` runs it) under load (docs/operations.md,
 * "Shutdown"): accepts that make the marketplace verifier send a transaction, reads, and an open event stream, with
 * the signal sent while requests are in flight. The process exits 0 within SHUTDOWN_TIMEOUT_MS; every request was
 * either answered in full or never taken (its connection refused or reset before it was read); every accept answered
 * 200 is assigned on the chain, and no task is assigned that was not answered 200 (nothing lost, nothing doubled);
 * no verifier intent is left half done; the stream was ended by the server. And the bound itself: a shutdown that
 * hangs or fails exits 1.
 */
import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { CATEGORY, DAY, USDC, ZONE, deployEscrowFixture } from "../../helpers/fixtures";
import { freePort } from "../../helpers/api";
import { serveChain } from "../../helpers/rpc";
import { openEvents } from "../../helpers/sse";
import { verifierPrivateKey } from "../../helpers/keys";
import { childEnv } from "../../helpers/childEnv";
import { usingPostgres } from "../../helpers/db";
import { createDb, type DbOptions } from "../../../server/db/knex";
import { migrateLatest } from "../../../server/db/migrations";
import { insertApiKey } from "../../../server/db/repositories/apiKeys";
import { upsertExecutor } from "../../../server/db/repositories/executors";
import { newApiKey } from "../../../server/domain/credentials";
import { agentPublicKey } from "../../../server/domain/briefs";
import { createLogger } from "../../../server/logger";
import { stopOnSignals } from "../../../server/observability/shutdown";

const ROOT = path.join(__dirname, "..", "..", "..");
const TASKS = 16;
const SHUTDOWN_TIMEOUT_MS = 20_000;

interface Outcome {
  /** The HTTP status, or the socket error's code when no answer came. */
  status?: number;
  error?: string;
  body?: string;
  answeredAt?: number;
}

/** One request on a connection of its own (no pooled keep-alive socket the server may close under it). */
function request(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = http.request(url, { method, headers: { ...headers, connection: "close" }, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode, body: text, answeredAt: Date.now() }));
      res.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    });
    req.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end(body);
  });
}

async function key(db: ReturnType<typeof createDb>, wallet: string): Promise<string> {
  const { key: apiKey, keyHash, prefix } = newApiKey();
  await insertApiKey(db, { address: wallet.toLowerCase(), keyHash, prefix, label: "test", createdAt: 1 });
  return apiKey;
}

describe("graceful shutdown: SIGTERM to the API process under load", () => {
  it("exits 0 in time, finishes what it took, takes nothing it does not finish", async function () {
    this.timeout(240_000);
    const fx = await loadFixture(deployEscrowFixture);
    const chain = await serveChain();
    const temp = fs.mkdtempSync(path.join(os.tmpdir(), "shutdown-"));
    const deploymentsDir = path.join(temp, "deployments");
    fs.mkdirSync(deploymentsDir);
    fs.writeFileSync(path.join(deploymentsDir, "hardhat.json"), JSON.stringify({ ...fx.book, network: "hardhat" }));
    const dbOptions: DbOptions = usingPostgres()
      ? { databaseUrl: process.env.DATABASE_URL, pgSchema: `t_${crypto.randomBytes(6).toString("hex")}` }
      : { sqliteFile: path.join(temp, "hardhat.sqlite"), sqliteDriver: "better-sqlite3" };
    const db = createDb(dbOptions);
    let child: ChildProcess | undefined;
    try {
      await migrateLatest(db);
      const posterKey = await key(db, fx.poster.address);
      const workers = await Promise.all(
        Array.from({ length: TASKS }, async () => {
          const wallet = ethers.Wallet.createRandom();
          await upsertExecutor(db, {
            address: wallet.address.toLowerCase(),
            publicKey: agentPublicKey(wallet.privateKey),
            capabilities: [],
            supportedChains: ["arc", "base"],
            minReward: "0",
            verifierOptIn: false,
            name: null,
            registeredAt: 1,
            updatedAt: 1,
            lastSeenAt: 1,
          });
          return { address: wallet.address.toLowerCase(), key: await key(db, wallet.address) };
        }),
      );

      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const env: NodeJS.ProcessEnv = childEnv();
      Object.assign(env, {
        NETWORK: "hardhat",
        RPC_URL: chain.url,
        DEPLOYMENTS_DIR: deploymentsDir,
        DATA_DIR: temp,
        API_PORT: String(port),
        VERIFIER_PRIVATE_KEY: verifierPrivateKey(),
        RUN_AGENT_HOST: "false",
        INDEXER_POLL_MS: "50",
        VERIFIER_POLL_MS: "50",
        RATE_IP_PER_WINDOW: "100000",
        RATE_WALLET_FAMILY_PER_MINUTE: "100000",
        RATE_IP_POSTING_PER_MINUTE: "100000",
        SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
        LOG_REQUESTS: "off",
        ...(dbOptions.databaseUrl ? { DATABASE_URL: dbOptions.databaseUrl, DATABASE_SCHEMA: dbOptions.pgSchema } : {}),
      });
      child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", "server/main.ts"], {
        cwd: ROOT,
        env,
        stdio: ["ignore", "ignore", "pipe"],
      });
      const lines: string[] = [];
      child.stderr!.setEncoding("utf8");
      child.stderr!.on("data", (chunk: string) => lines.push(...chunk.split("\n").filter(Boolean)));
      const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
        child!.once("exit", (code) => resolve({ code, at: Date.now() })),
      );

      // Ready: listening, and the index at the chain's head.
      const deadline = Date.now() + 60_000;
      while ((await request(`${url}/health/ready`, "GET", {})).status !== 200) {
        if (Date.now() > deadline) throw new Error(`the API never became ready:\n${lines.slice(-20).join("\n")}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }

      // Tasks funded on the chain and listed through the API.
      const token = await fx.usdc.getAddress();
      const tasks: { taskId: number; taskHash: string }[] = [];
      for (let i = 0; i < TASKS; i++) {
        const taskHash = ethers.sha256(ethers.toUtf8Bytes(`shutdown brief ${i} ${Math.random()}`));
        const tx = await fx.escrow.connect(fx.poster).createTask(taskHash, token, USDC(5), CATEGORY, ZONE, DAY);
        await tx.wait();
        const listed = await request(
          `${url}/api/v1/a2a/tasks/index`,
          "POST",
          { "content-type": "application/json", "x-api-key": posterKey },
          JSON.stringify({ txHash: tx.hash, taskHash, privacy: "public" }),
        );
        expect(listed.status, listed.body).to.equal(200);
        tasks.push({ taskId: Number(await fx.escrow.nextTaskId()) - 1, taskHash });
      }
      const stream = await openEvents(url, { key: posterKey });
      expect(stream.status).to.equal(200);

      // Load: one accept every 15 ms (each a verifier transaction), reads beside them; SIGTERM in the middle.
      const accepts: Promise<Outcome>[] = [];
      const reads: Promise<Outcome>[] = [];
      let killedAt = 0;
      for (let i = 0; i < TASKS; i++) {
        accepts.push(
          request(`${url}/api/v1/a2a/tasks/${tasks[i].taskHash}/accept`, "POST", { "x-api-key": workers[i].key }),
        );
        reads.push(request(`${url}/api/v1/stats`, "GET", {}));
        if (i === Math.floor(TASKS / 3)) {
          killedAt = Date.now();
          child.kill("SIGTERM");
        }
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
      const outcomes = await Promise.all(accepts);
      const readOutcomes = await Promise.all(reads);
      const exit = await exited;
      child = undefined;

      // Exit 0, within the bound, having said so.
      expect(exit.code, lines.slice(-20).join("\n")).to.equal(0);
      expect(exit.at - killedAt).to.be.below(SHUTDOWN_TIMEOUT_MS);
      expect(lines.some((l) => l.includes('"msg":"stopped"'))).to.equal(true);
      await stream.ended;

      // Every request answered in full, or never taken: its connection refused or reset before the server read it.
      for (const outcome of [...outcomes, ...readOutcomes]) {
        if (outcome.status === undefined) expect(outcome.error).to.be.oneOf(["ECONNREFUSED", "ECONNRESET"]);
      }
      const answered = outcomes.filter((o) => o.status !== undefined);
      expect(
        answered.every((o) => o.status === 200),
        JSON.stringify(answered),
      ).to.equal(true);
      // Some were still being served when the signal came, and were finished.
      expect(answered.filter((o) => o.answeredAt! > killedAt)).to.not.be.empty;

      // On the chain: exactly the tasks whose accept was answered 200 are assigned, each to its worker, once.
      for (const [i, outcome] of outcomes.entries()) {
        const onChain = await fx.escrow.getTask(tasks[i].taskId);
        const assigned = onChain.worker.toLowerCase() === workers[i].address;
        expect(assigned, `task ${tasks[i].taskId}: ${JSON.stringify(outcome)}`).to.equal(outcome.status === 200);
        const logs = await fx.escrow.queryFilter(fx.escrow.filters.WorkerAssigned(tasks[i].taskId));
        expect(logs).to.have.length(assigned ? 1 : 0);
      }
      // The verifier's intents: one per answered accept, none left pending (recorded but never signed).
      const intents = await db("verifier_intents").select("status", "task_id");
      expect(intents.filter((r) => r.status === "pending")).to.deep.equal([]);
      expect(intents).to.have.length(answered.length);
    } finally {
      child?.kill("SIGKILL");
      if (dbOptions.pgSchema) await db.raw("drop schema if exists ?? cascade", [dbOptions.pgSchema]);
      await db.destroy();
      await chain.close();
      fs.rmSync(temp, { recursive: true, force: true });
    }
  });
});

describe("stopOnSignals: the shutdown bound", () => {
  const quiet = createLogger("silent");

  it("exits 0 once close finished, and runs close once for repeated signals", async () => {
    const codes: number[] = [];
    let closes = 0;
    const stop = stopOnSignals({
      logger: quiet,
      timeoutMs: 1000,
      signals: [],
      exit: (code) => codes.push(code),
      close: async () => void closes++,
    });
    await Promise.all([stop("SIGTERM"), stop("SIGTERM"), stop("SIGINT")]);
    expect({ closes, codes }).to.deep.equal({ closes: 1, codes: [0] });
  });

  it("exits 1 when close has not finished within the bound, or failed", async () => {
    const codes: number[] = [];
    let exited!: () => void;
    const exit = new Promise<void>((resolve) => (exited = resolve));
    const stuck = stopOnSignals({
      logger: quiet,
      timeoutMs: 100,
      signals: [],
      exit: (code) => (codes.push(code), exited()),
      close: () => new Promise<void>(() => undefined),
    });
    void stuck("SIGTERM");
    await exit; // the bound ran out: close never settles
    expect(codes).to.deep.equal([1]);
    const failing = stopOnSignals({
      logger: quiet,
      timeoutMs: 1000,
      signals: [],
      exit: (code) => codes.push(code),
      close: () => Promise.reject(new Error("database gone")),
    });
    await failing("SIGTERM");
    expect(codes).to.deep.equal([1, 1]);
  });
});
