/**
 * An API over the in-process Hardhat chain and a fresh test database, listening on 127.0.0.1 with an ephemeral port,
 * with its indexer running. `request` speaks HTTP like any client; `createKey` gives a wallet an API key directly
 * (the sign-in flow has its own tests).
 */
import crypto from "node:crypto";
import os from "node:os";
import path from "node:path";
import fs from "node:fs";
import net, { type AddressInfo } from "node:net";
import { ethers } from "hardhat";
import { loadConfig, type Config } from "../../server/config";
import { silentLogger } from "../../server/logger";
import { createApp } from "../../server/api/app";
import { createHttpServer } from "../../server/api/httpServer";
import { buildDeps } from "../../server/main";
import { startPush, stopPush } from "../../server/domain/events";
import { chainClock, type Clock } from "../../server/chain/clock";
import { Indexer } from "../../server/indexer/sync";
import { providerChainReader } from "../../server/chain/escrowLogs";
import { insertApiKey } from "../../server/db/repositories/apiKeys";
import { newApiKey } from "../../server/domain/credentials";
import type { Deps } from "../../server/domain/deps";
import type { AddressBook } from "../../server/chain/addressBook";
import type { ChainName } from "../../server/escrow/records";
import type { Provider } from "ethers";
import { createTestDb, type TestDb } from "./db";

export interface TestApi {
  url: string;
  deps: Deps;
  /** The service's clock: chain time read on every call, wall time that `advanceWall` moves forward. */
  clock: TestClock;
  testDb: TestDb;
  indexer: Indexer;
  /** arc's indexer, when the API was started with `arc`. */
  arcIndexer?: Indexer;
  /** Stops arc's indexer and starts a new one over the same database, as a restarted indexer process would. */
  restartArcIndexer(): Promise<void>;
  request(method: string, urlPath: string, options?: RequestOptions): Promise<ApiResponse>;
  createKey(wallet: string): Promise<string>;
  /** Waits until the indexer has every block up to the chain head. */
  synced(): Promise<void>;
  close(): Promise<void>;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  rawBody?: string | Buffer;
  key?: string;
  headers?: Record<string, string>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  text: string;
}

export interface TestClock extends Clock {
  /** Moves the service's wall clock forward (sign-in nonces, reservations, offer windows, accept locks). */
  advanceWall(seconds: number): void;
}

/**
 * Chain time read from the in-process chain on every call (no cache: a test that moves the chain's time sees it in
 * its next request), and the machine's wall time plus an offset the test moves instead of sleeping.
 */
function testClock(): TestClock {
  const chain = chainClock(ethers.provider, 0);
  let offsetMs = 0;
  return {
    chainNow: () => chain.chainNow(),
    chainNowFresh: () => chain.chainNowFresh(),
    wallNowMs: () => Date.now() + offsetMs,
    wallNow: () => Math.floor((Date.now() + offsetMs) / 1000),
    advanceWall: (seconds) => void (offsetMs += seconds * 1000),
  };
}

/** A port free on 127.0.0.1 right now (the OS picks it). */
/**
 * A port for a process the test spawns, which binds it later. The port is below the kernel's ephemeral range, so no
 * server listening on port 0 and no outgoing connection can take it between this probe and the child's bind (that
 * race made a spawned API fail to bind while the test talked to another worker's server on the same port), and it is
 * claimed for this process by an exclusive file in the temporary folder, so parallel test workers never pick the
 * same one. Claims of processes that ended are taken over.
 */
export async function freePort(): Promise<number> {
  const [low, high] = reservablePorts();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + crypto.randomInt(high - low);
    if (portsClaimed.has(port) || !claimPort(port)) continue;
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port between ${low} and ${high} after 200 attempts`);
}

const PORT_CLAIMS = path.join(os.tmpdir(), "market-test-ports");
const portsClaimed = new Set<number>();

/** The ports below the ephemeral range (/proc's ip_local_port_range where Linux has it). */
function reservablePorts(): [number, number] {
  let ephemeralLow = 32768;
  try {
    ephemeralLow = Number(fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
  } catch {
    // Not Linux: IANA's dynamic range starts at 49152, Linux's default at 32768; stay under both.
  }
  return [20_000, Math.max(21_000, Math.min(ephemeralLow, 32_768) - 1)];
}

function claimPort(port: number): boolean {
  fs.mkdirSync(PORT_CLAIMS, { recursive: true });
  const file = path.join(PORT_CLAIMS, String(port));
  try {
    fs.writeFileSync(file, String(process.pid), { flag: "wx" });
  } catch {
    if (alive(Number(fs.readFileSync(file, "utf8")))) return false;
    fs.writeFileSync(file, String(process.pid));
  }
  portsClaimed.add(port);
  return true;
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function bindable(port: number): Promise<boolean> {
  const probe = net.createServer();
  const bound = await new Promise<boolean>((resolve) => {
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => resolve(true));
  });
  if (bound) await new Promise<void>((resolve) => probe.close(() => resolve()));
  return bound;
}

process.once("exit", () => {
  for (const port of portsClaimed) fs.rmSync(path.join(PORT_CLAIMS, String(port)), { force: true });
});

/** The second chain an API may settle on besides base (test/helpers/arc.ts arcFixture). */
export interface SecondChain {
  book: AddressBook;
  provider: Provider;
}

/**
 * Resolves once `api`'s base indexer has indexed up to the chain's head as it is now. `startTestApi` returns with its
 * indexer still catching up, so a test that reads right after the start what only the indexer records (the token
 * allowed at deployment, which makes a chain postable in GET /settlement) waits for this first.
 */
export async function indexedToHead(api: TestApi, ms = 30_000): Promise<void> {
  if (!(await reachesHead(api.indexer, await ethers.provider.getBlockNumber(), ms))) {
    throw new Error(`the indexer did not reach the chain's head in ${ms} ms`);
  }
}

/** Whether `indexer` indexes up to block `head` within `ms`, checked every 20 ms. */
async function reachesHead(indexer: Indexer, head: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while ((indexer.status().checkpoint ?? -1) < head) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/**
 * Starts an API for `book` (the fixture's deployment). `env` overrides configuration (limits, for example). With
 * `arc`, the API settles on two chains (CHAINS=base,arc), base staying the posting chain, each with its own indexer.
 */
export async function startTestApi(
  book: AddressBook,
  env: Record<string, string> = {},
  options: { arc?: SecondChain } = {},
): Promise<TestApi> {
  const deploymentsDir = fs.mkdtempSync(path.join(os.tmpdir(), "escrow-deployments-"));
  fs.writeFileSync(path.join(deploymentsDir, "hardhat.json"), JSON.stringify(book));
  const { arc } = options;
  if (arc) fs.writeFileSync(path.join(deploymentsDir, "hardhat-arc.json"), JSON.stringify(arc.book));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "escrow-data-"));
  const port = await freePort();
  const config: Readonly<Config> = loadConfig({
    NETWORK: "hardhat",
    DEPLOYMENTS_DIR: deploymentsDir,
    DATA_DIR: dataDir,
    LOG_LEVEL: "silent",
    // A free port chosen up front, so PUBLIC_URL (cards, sign-in messages) names the port the API listens on.
    API_PORT: String(port),
    INDEXER_POLL_MS: "20",
    VERIFIER_POLL_MS: "50",
    REDIS_URL: process.env.REDIS_URL ?? "",
    // Each API counts under its own Redis prefix, as separate deployments would; a test sharing a budget between
    // two APIs passes the same prefix to both.
    RATE_LIMIT_PREFIX: `test:${crypto.randomBytes(6).toString("hex")}:`,
    ...(arc ? { CHAINS: "base,arc", ARC_NETWORK: "hardhat-arc" } : {}),
    ...env,
  });
  const testDb = await createTestDb();
  const clock = testClock();
  const deps = await buildDeps(config, silentLogger, testDb.db, ethers.provider, {
    clock,
    providers: arc ? { arc: arc.provider } : {},
    // arc's time read on every call too (a test that moves it sees it at once).
    chainTimeCacheMs: 0,
  });
  const indexer = new Indexer({
    db: testDb.db,
    chain: providerChainReader(ethers.provider),
    network: "hardhat",
    escrowAddress: book.escrow.proxy,
    agentFactoryAddress: book.agentFactory.proxy,
    startBlock: book.startBlock,
    config: config.indexer,
    logger: silentLogger,
    onEvents: () => deps.events?.notify(),
  });
  await indexer.start();
  deps.indexer = indexer;
  testDb.onCleanup(() => indexer.stop());
  const indexers = new Map<ChainName, Indexer>([["base", indexer]]);
  let arcIndexer: Indexer | undefined;
  const newArcIndexer = (arc: SecondChain) =>
    new Indexer({
      db: testDb.db,
      chain: providerChainReader(arc.provider),
      chainName: "arc",
      network: "hardhat-arc",
      escrowAddress: arc.book.escrow.proxy,
      agentFactoryAddress: arc.book.agentFactory.proxy,
      startBlock: arc.book.startBlock,
      config: config.indexer,
      logger: silentLogger,
      onEvents: () => deps.events?.notify(),
    });
  if (arc) {
    arcIndexer = newArcIndexer(arc);
    await arcIndexer.start();
    indexers.set("arc", arcIndexer);
    testDb.onCleanup(() => arcIndexer!.stop());
  }
  deps.indexers = indexers;
  // The deployment's own events (the token allowed, which makes a chain postable in GET /settlement) are indexed
  // before the API answers, as a started devnet's are: a test then never races the first backfill. Bounded, so a
  // test whose indexer cannot reach the head goes on as it would without this wait.
  await Promise.all([
    reachesHead(indexer, await ethers.provider.getBlockNumber(), 10_000),
    ...(arc && arcIndexer ? [reachesHead(arcIndexer, await arc.provider.getBlockNumber(), 10_000)] : []),
  ]);
  // The marketplace verifiers run when env has VERIFIER_PRIVATE_KEY (buildDeps creates one per chain).
  for (const verifier of deps.verifiers?.values() ?? []) {
    await verifier.start();
    testDb.onCleanup(() => verifier.stop());
  }
  // Push: the event hub (SSE streams) and webhook deliveries, stopped before the database goes away.
  await startPush(deps);
  testDb.onCleanup(() => stopPush(deps));
  const server = createHttpServer(createApp(deps).callback(), config.api.timeouts);
  await new Promise<void>((resolve) => server.listen(config.api.port, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    deps,
    clock,
    testDb,
    indexer,
    get arcIndexer() {
      return arcIndexer;
    },
    async restartArcIndexer() {
      if (!arc || !arcIndexer) throw new Error("this API was started without arc");
      await arcIndexer.stop();
      arcIndexer = newArcIndexer(arc);
      await arcIndexer.start();
      indexers.set("arc", arcIndexer);
    },
    async request(method, urlPath, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      let body: string | Buffer | undefined;
      if (options.rawBody !== undefined) body = options.rawBody;
      else if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers["content-type"] ??= "application/json";
      }
      if (options.key) headers["x-api-key"] = options.key;
      const response = await fetch(`${url}${urlPath}`, { method, headers, body: body as BodyInit | undefined });
      const text = await response.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: response.status, headers: response.headers, json, text };
    },
    async createKey(wallet) {
      const { key, keyHash, prefix } = newApiKey();
      await insertApiKey(testDb.db, {
        address: wallet.toLowerCase(),
        keyHash,
        prefix,
        label: "test",
        createdAt: Math.floor(Date.now() / 1000),
      });
      return key;
    },
    async synced() {
      await indexer.waitForBlock(await ethers.provider.getBlockNumber(), 20_000);
      if (arc) await arcIndexer!.waitForBlock(await arc.provider.getBlockNumber(), 20_000);
    },
    async close() {
      // Connections still open (a client's keep-alive or a held stream) would keep close() waiting.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await deps.limits.close();
      await testDb.cleanup();
      fs.rmSync(deploymentsDir, { recursive: true, force: true });
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
