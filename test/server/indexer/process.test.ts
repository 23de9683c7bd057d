/**
 * The standalone indexer (`npm run indexer`) as a real process, killed with SIGKILL at random moments and restarted:
 * whatever the moment, the database ends up holding exactly the escrow's logs, once each, and a projection equal to
 * the chain. And SIGTERM in the middle of a backfill, with a second indexer waiting: the first exits 0 within
 * SHUTDOWN_TIMEOUT_MS, the second holds the released lock at once, and nothing is stored twice or missed. The
 * in-process Hardhat chain is served over HTTP for the child processes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import hre, { ethers } from "hardhat";
import { TASK_NODE_CREATE_SERVER } from "hardhat/builtin-tasks/task-names";
import type { JsonRpcServer } from "hardhat/types";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture, DAY, USDC } from "../../helpers/fixtures";
import { usingPostgres } from "../../helpers/db";
import { expectProjectionMatchesChain } from "../../helpers/indexer";
import { mulberry32, runRandomScenario } from "../../helpers/scenario";
import type { AddressBook } from "../../../server/chain/addressBook";
import { sleep } from "../../../server/chain/rpcErrors";
import { createDb, type Db, type DbOptions } from "../../../server/db/knex";
import { getCheckpoint } from "../../../server/db/repositories/checkpoints";
import { countEvents } from "../../../server/db/repositories/escrowEvents";
import { CHECKPOINT_NAME } from "../../../server/indexer/sync";

const ROOT = path.resolve(__dirname, "..", "..", "..");
const NETWORK = "localhost";
const SEED = 0x5eed;
/** Kills: one during the first start (while it creates its tables), then three 0.3 to 2.5 s into a run. */
const RUNNING_KILLS = 3;

async function actorsFixture() {
  const base = await deployEscrowFixture();
  const { poster, stranger, worker, others } = base;
  return { ...base, posters: [poster, stranger], workers: [worker, others[0], others[1]] };
}

type Actors = Awaited<ReturnType<typeof actorsFixture>>;

/** Funds `count` tasks in batches of up to 50: one transaction, one block and many logs per batch. */
async function createTasks({ escrow, usdc, poster, stranger }: Actors, count: number): Promise<void> {
  const token = await usdc.getAddress();
  for (let left = count, n = 0; left > 0; left -= 50, n++) {
    const batch = Array.from({ length: Math.min(50, left) }, (_, i) => ({
      taskHash: ethers.hexlify(ethers.randomBytes(32)),
      amount: USDC(1 + i),
      category: "general",
      locationZone: "global",
      duration: DAY,
      verifierAgent: ethers.ZeroAddress,
    }));
    await (await escrow.connect(n % 2 ? stranger : poster).createTasks(token, batch)).wait();
  }
}

/** Mines `count` empty blocks one by one (hardhat_mine would report zero parent hashes for them). */
async function mineEmptyBlocks(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await ethers.provider.send("evm_mine", []);
}

/** Serves the in-process Hardhat chain on 127.0.0.1 on a free port, as the devnet does. */
async function serveChain(): Promise<{ rpcUrl: string; close(): Promise<void> }> {
  const server: JsonRpcServer = await hre.run(TASK_NODE_CREATE_SERVER, {
    hostname: "127.0.0.1",
    port: 0,
    provider: hre.network.provider,
  });
  const { address, port } = await server.listen();
  return { rpcUrl: `http://${address}:${port}`, close: () => server.close() };
}

/** A running `server/indexer/main.ts`, with its log lines and its exit. */
interface IndexerProcess {
  child: ChildProcess;
  lines: string[];
  /** Resolves when it logs "indexer started" (its loop runs); rejects if it exits first. */
  started: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function spawnIndexer(env: NodeJS.ProcessEnv, live: Set<ChildProcess>): IndexerProcess {
  const child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", "server/indexer/main.ts"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  live.add(child);
  const lines: string[] = [];
  let onStarted: () => void = () => undefined;
  let onEarlyExit: (error: Error) => void = () => undefined;
  const started = new Promise<void>((resolve, reject) => {
    onStarted = resolve;
    onEarlyExit = reject;
  });
  started.catch(() => undefined);
  let partial = "";
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      if (line.includes('"msg":"indexer started"')) onStarted();
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => {
      live.delete(child);
      onEarlyExit(
        new Error(`the indexer exited (${code ?? signal}) before it started:\n${lines.slice(-20).join("\n")}`),
      );
      resolve({ code, signal });
    });
  });
  return { child, lines, started, exited };
}

/** The environment of `npm run indexer` against the served chain and the test's database. */
function indexerEnv(rpcUrl: string, deploymentsDir: string, dataDir: string, options: DbOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (
      /^(DATABASE_|INDEXER_|RPC_URL$|DEVNET_RPC_URL$|NETWORK$|DATA_DIR$|DEPLOYMENTS_DIR$|LOG_LEVEL$|API_)/.test(name)
    ) {
      delete env[name];
    }
  }
  Object.assign(env, {
    NETWORK,
    RPC_URL: rpcUrl,
    DEPLOYMENTS_DIR: deploymentsDir,
    DATA_DIR: dataDir,
    INDEXER_MAX_BLOCK_RANGE: "2",
    INDEXER_LOCK_TTL_MS: "1000",
    INDEXER_POLL_MS: "50",
    LOG_LEVEL: "info",
  });
  if (options.databaseUrl) Object.assign(env, { DATABASE_URL: options.databaseUrl, DATABASE_SCHEMA: options.pgSchema });
  return env;
}

async function checkpointOf(db: Db): Promise<number | undefined> {
  try {
    return (await getCheckpoint(db, "base", CHECKPOINT_NAME))?.blockNumber;
  } catch {
    return undefined; // not migrated yet
  }
}

async function hasTable(db: Db, table: string): Promise<boolean> {
  try {
    return await db.schema.hasTable(table);
  } catch {
    return false;
  }
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`);
    await sleep(25);
  }
}

describe("indexer process: kill -9 at any moment", () => {
  it("ends with exactly the chain's escrow events and projection after SIGKILLs and restarts", async function () {
    // Five indexer processes started one after another through ts-node: each start takes tens of seconds on a
    // loaded machine.
    this.timeout(420_000);
    const actors = await loadFixture(actorsFixture);
    const { escrow, book } = actors;
    // A history with a few hundred tasks, batches (many logs per block) and random lifecycles, spread over a thousand
    // blocks so that a backfill of two blocks per range lasts through the kills.
    await createTasks(actors, 300);
    for (let round = 0; round < 10; round++) {
      await runRandomScenario(actors, SEED + 100 + round, 10);
      await mineEmptyBlocks(90);
    }
    await createTasks(actors, 100);

    const rand = mulberry32(SEED);
    const temp = fs.mkdtempSync(path.join(os.tmpdir(), "indexer-process-"));
    const deploymentsDir = path.join(temp, "deployments");
    const dataDir = path.join(temp, "data");
    fs.mkdirSync(deploymentsDir);
    const addressBook: AddressBook = { ...book, network: NETWORK };
    fs.writeFileSync(path.join(deploymentsDir, `${NETWORK}.json`), JSON.stringify(addressBook, null, 2));
    const dbOptions: DbOptions = usingPostgres()
      ? { databaseUrl: process.env.DATABASE_URL, pgSchema: `t_${crypto.randomBytes(6).toString("hex")}` }
      : { sqliteFile: path.join(dataDir, `${NETWORK}.sqlite`), sqliteDriver: "better-sqlite3" };

    const live = new Set<ChildProcess>();
    const killAll = () => {
      for (const child of live) child.kill("SIGKILL");
    };
    process.on("exit", killAll);
    const chain = await serveChain();
    const db = createDb(dbOptions);
    try {
      const env = indexerEnv(chain.rpcUrl, deploymentsDir, dataDir, dbOptions);
      const kills: { atCheckpoint: number | undefined; head: number; signal: NodeJS.Signals | null }[] = [];

      // Our connection comes first: it creates the PostgreSQL schema (or the SQLite file) before any child runs.
      await db.raw("select 1");
      // The first kill lands during startup, as soon as the child has begun creating its tables.
      const first = spawnIndexer(env, live);
      await waitFor(
        () => hasTable(db, "knex_migrations"),
        60_000,
        () => `the first indexer to migrate:\n${first.lines.join("\n")}`,
      );
      await sleep(Math.floor(rand() * 50));
      first.child.kill("SIGKILL");
      kills.push({
        atCheckpoint: await checkpointOf(db),
        head: await ethers.provider.getBlockNumber(),
        signal: (await first.exited).signal,
      });

      for (let i = 0; i < RUNNING_KILLS; i++) {
        const running = spawnIndexer(env, live);
        await running.started;
        // A random moment of a real indexer process's run is the thing tested: no condition to wait for.
        await sleep(300 + Math.floor(rand() * 2200));
        running.child.kill("SIGKILL");
        const { signal } = await running.exited;
        kills.push({ atCheckpoint: await checkpointOf(db), head: await ethers.provider.getBlockNumber(), signal });
        // The chain moves on while the indexer is down.
        await runRandomScenario(actors, SEED + i + 1, 6);
      }

      const last = spawnIndexer(env, live);
      await last.started;
      const head = await ethers.provider.getBlockNumber();
      await waitFor(
        async () => ((await checkpointOf(db)) ?? -1) >= head,
        60_000,
        () => `the last indexer to reach block ${head}:\n${last.lines.slice(-10).join("\n")}`,
      );
      last.child.kill("SIGTERM");
      const stopped = await last.exited;

      expect(kills.map((k) => k.signal)).to.deep.equal(Array(RUNNING_KILLS + 1).fill("SIGKILL"));
      // The running kills interrupted a backfill in progress, not an idle follower.
      const midway = kills.slice(1).filter((k) => k.atCheckpoint !== undefined && k.atCheckpoint < k.head);
      expect(midway.length, `kills in the middle of the backfill: ${JSON.stringify(kills)}`).to.be.at.least(2);
      expect(stopped, `SIGTERM stops it cleanly:\n${last.lines.slice(-5).join("\n")}`).to.deep.equal({
        code: 0,
        signal: null,
      });

      const checkpoint = (await getCheckpoint(db, "base", CHECKPOINT_NAME))!;
      expect(checkpoint.blockNumber).to.equal(head);
      expect(checkpoint.blockHash).to.equal((await ethers.provider.getBlock(head))!.hash);
      expect(await expectProjectionMatchesChain(db, escrow)).to.be.at.least(400);

      const duplicates = await db("escrow_events")
        .select("tx_hash", "log_index")
        .count({ n: "*" })
        .groupBy("tx_hash", "log_index")
        .having(db.raw("count(*) > 1"));
      expect(duplicates).to.deep.equal([]);
      const logs = await ethers.provider.getLogs({
        address: book.escrow.proxy,
        fromBlock: book.startBlock,
        toBlock: head,
      });
      expect(await countEvents(db)).to.equal(logs.length);
      const stored = (await db("escrow_events").select("tx_hash", "log_index")).map(
        (r) => `${r.tx_hash}:${Number(r.log_index)}`,
      );
      expect(stored.sort()).to.deep.equal(logs.map((l) => `${l.transactionHash.toLowerCase()}:${l.index}`).sort());
    } finally {
      killAll();
      process.off("exit", killAll);
      await chain.close();
      if (dbOptions.pgSchema) await db.raw(`drop schema if exists "${dbOptions.pgSchema}" cascade`);
      await db.destroy();
      fs.rmSync(temp, { recursive: true, force: true });
    }
  });
});

describe("indexer process: SIGTERM with a second indexer waiting", () => {
  // Long enough that, on SQLite, the waiting indexer can only get the lock before it by the writer's release.
  const LOCK_TTL_MS = 60_000;
  const SHUTDOWN_TIMEOUT_MS = 20_000;

  it("exits 0 within the bound in the middle of a backfill, hands the lock over at once, stores every log once", async function () {
    this.timeout(180_000);
    const actors = await loadFixture(actorsFixture);
    const { escrow, book } = actors;
    // Blocks of many logs between stretches of empty blocks: a backfill of two blocks per range lasts seconds.
    for (let round = 0; round < 4; round++) {
      await createTasks(actors, 50);
      await runRandomScenario(actors, SEED + 200 + round, 6);
      await mineEmptyBlocks(100);
    }

    const temp = fs.mkdtempSync(path.join(os.tmpdir(), "indexer-sigterm-"));
    const deploymentsDir = path.join(temp, "deployments");
    const dataDir = path.join(temp, "data");
    fs.mkdirSync(deploymentsDir);
    fs.writeFileSync(path.join(deploymentsDir, `${NETWORK}.json`), JSON.stringify({ ...book, network: NETWORK }));
    const dbOptions: DbOptions = usingPostgres()
      ? { databaseUrl: process.env.DATABASE_URL, pgSchema: `t_${crypto.randomBytes(6).toString("hex")}` }
      : { sqliteFile: path.join(dataDir, `${NETWORK}.sqlite`), sqliteDriver: "better-sqlite3" };
    const live = new Set<ChildProcess>();
    const killAll = () => {
      for (const child of live) child.kill("SIGKILL");
    };
    process.on("exit", killAll);
    const chain = await serveChain();
    const db = createDb(dbOptions);
    try {
      const env = {
        ...indexerEnv(chain.rpcUrl, deploymentsDir, dataDir, dbOptions),
        INDEXER_LOCK_TTL_MS: String(LOCK_TTL_MS),
        SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      };
      await db.raw("select 1");
      const head = await ethers.provider.getBlockNumber();
      const holdsLock = (x: IndexerProcess) => x.lines.some((l) => l.includes('"msg":"indexer holds the writer lock"'));
      const writer = spawnIndexer(env, live);
      await writer.started;
      await waitFor(
        async () => holdsLock(writer),
        30_000,
        () => `the first indexer to take the writer lock`,
      );
      const standby = spawnIndexer(env, live);
      await standby.started;
      // The writer is some way into the backfill, the standby waiting for its lock.
      await waitFor(
        async () => ((await checkpointOf(db)) ?? -1) >= book.startBlock + 40,
        60_000,
        () => `the writer to index 40 blocks:\n${writer.lines.slice(-10).join("\n")}`,
      );
      expect(holdsLock(standby), "the standby waits for the lock").to.equal(false);

      writer.child.kill("SIGTERM");
      const signalledAt = Date.now();
      const stopped = await writer.exited;
      const stoppedMs = Date.now() - signalledAt;
      const atStop = (await checkpointOf(db))!;
      await waitFor(
        async () => holdsLock(standby),
        LOCK_TTL_MS,
        () => `the standby to take the lock:\n${standby.lines.slice(-10).join("\n")}`,
      );
      const takeoverMs = Date.now() - signalledAt;

      expect(stopped, `SIGTERM stops it cleanly:\n${writer.lines.slice(-5).join("\n")}`).to.deep.equal({
        code: 0,
        signal: null,
      });
      expect(stoppedMs).to.be.below(SHUTDOWN_TIMEOUT_MS);
      expect(writer.lines.some((l) => l.includes('"msg":"stopped"'))).to.equal(true);
      expect(atStop, "stopped in the middle of the backfill").to.be.below(head);
      // The lock was released, not left to expire: the standby started well within its lease time.
      expect(takeoverMs).to.be.below(LOCK_TTL_MS / 4);

      await waitFor(
        async () => ((await checkpointOf(db)) ?? -1) >= head,
        90_000,
        () => `the standby to reach block ${head}:\n${standby.lines.slice(-10).join("\n")}`,
      );
      standby.child.kill("SIGTERM");
      expect(await standby.exited).to.deep.equal({ code: 0, signal: null });

      // Nothing in flight lost or doubled: every log of the escrow once, and the projection equal to the chain.
      const logs = await ethers.provider.getLogs({
        address: book.escrow.proxy,
        fromBlock: book.startBlock,
        toBlock: head,
      });
      const stored = (await db("escrow_events").select("tx_hash", "log_index")).map(
        (r) => `${r.tx_hash}:${Number(r.log_index)}`,
      );
      expect(stored.sort()).to.deep.equal(logs.map((l) => `${l.transactionHash.toLowerCase()}:${l.index}`).sort());
      expect(await expectProjectionMatchesChain(db, escrow)).to.be.at.least(200);
      console.log(
        `    indexer SIGTERM: stopped in ${stoppedMs} ms at block ${atStop} of ${head}, standby held the lock ${takeoverMs} ms after the signal`,
      );
    } finally {
      killAll();
      process.off("exit", killAll);
      await chain.close();
      if (dbOptions.pgSchema) await db.raw(`drop schema if exists "${dbOptions.pgSchema}" cascade`);
      await db.destroy();
      fs.rmSync(temp, { recursive: true, force: true });
    }
  });
});
