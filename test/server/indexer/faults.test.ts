/**
 * The indexer under faults: RPC error classification and retries, a flaky node that refuses large log ranges, a node
 * that goes away, a database that belongs to another chain, and two indexers competing for the writer lock.
 */
import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { FetchRequest, JsonRpcProvider, makeError } from "ethers";
import knex, { type Knex } from "knex";
import { deployEscrowFixture, DAY, USDC } from "../../helpers/fixtures";
import { createTestDb, usingPostgres, type TestDb } from "../../helpers/db";
import { expectProjectionMatchesChain, hardhatChain } from "../../helpers/indexer";
import { mulberry32, runRandomScenario } from "../../helpers/scenario";
import { ManualTime, type ManualTimers } from "../../helpers/timers";
import { deployAll } from "../../../scripts/deploy";
import type { AddressBook } from "../../../server/chain/addressBook";
import { realTimers, type Timers } from "../../../server/chain/clock";
import type { ChainReader } from "../../../server/chain/escrowLogs";
import { backoffDelay, classifyRpcError, sleep, withRetry, type RpcErrorKind } from "../../../server/chain/rpcErrors";
import { loadConfig, type IndexerConfig } from "../../../server/config";
import { createDb } from "../../../server/db/knex";
import { migrateLatest } from "../../../server/db/migrations";
import { getChainIdentity, recordChainIdentity } from "../../../server/db/repositories/chainIdentity";
import { countEvents } from "../../../server/db/repositories/escrowEvents";
import { getCheckpoint } from "../../../server/db/repositories/checkpoints";
import { ChainIdentityMismatchError, ensureChainIdentity } from "../../../server/indexer/chainIdentity";
import { resetHint } from "../../../server/indexer/index";
import { CHECKPOINT_NAME, Indexer } from "../../../server/indexer/sync";
import type { Logger } from "../../../server/logger";

// ---------------------------------------------------------------------------------------------------------------
// Fixtures and helpers
// ---------------------------------------------------------------------------------------------------------------

async function actorsFixture() {
  const base = await deployEscrowFixture();
  const { poster, stranger, worker, others } = base;
  return { ...base, posters: [poster, stranger], workers: [worker, others[0], others[1]] };
}

/** The escrow of deployEscrowFixture, and a second escrow deployed later on the same chain. */
async function twoDeploymentsFixture() {
  const base = await deployEscrowFixture();
  const other = await deployAll({ write: false });
  return { ...base, otherBook: other.book };
}

type Deployed = Pick<Awaited<ReturnType<typeof deployEscrowFixture>>, "escrow" | "usdc" | "poster">;

/** Funds `count` tasks in batches of up to 50 (one transaction, one block and many logs per batch). */
async function createTasks({ escrow, usdc, poster }: Deployed, count: number): Promise<void> {
  const token = await usdc.getAddress();
  for (let left = count; left > 0; left -= 50) {
    const batch = Array.from({ length: Math.min(50, left) }, (_, i) => ({
      taskHash: ethers.hexlify(ethers.randomBytes(32)),
      amount: USDC(1 + i),
      category: "general",
      locationZone: "global",
      duration: DAY,
      verifierAgent: ethers.ZeroAddress,
    }));
    await (await escrow.connect(poster).createTasks(token, batch)).wait();
  }
}

interface LogEntry {
  level: "debug" | "info" | "warn" | "error";
  msg: string;
  fields: Record<string, unknown>;
}

/** A logger that keeps every entry, so a test can read what the indexer reported. */
function recordingLogger(entries: LogEntry[]): Logger {
  const make = (base: Record<string, unknown>): Logger => ({
    debug: (msg, fields) => void entries.push({ level: "debug", msg, fields: { ...base, ...fields } }),
    info: (msg, fields) => void entries.push({ level: "info", msg, fields: { ...base, ...fields } }),
    warn: (msg, fields) => void entries.push({ level: "warn", msg, fields: { ...base, ...fields } }),
    error: (msg, fields) => void entries.push({ level: "error", msg, fields: { ...base, ...fields } }),
    child: (fields) => make({ ...base, ...fields }),
  });
  return make({});
}

const LOCK_TTL_MS = 1500;

interface IndexerSetup {
  db?: Knex;
  chain?: ChainReader;
  logger?: Logger;
  config?: Partial<IndexerConfig>;
  escrowAddress?: string;
  startBlock?: number;
  resetHint?: string;
  timers?: Timers;
}

/** An Indexer over `book`'s escrow on `testDb` (or another pool on it), stopped by the test database's cleanup. */
function newIndexer(testDb: TestDb, book: AddressBook, setup: IndexerSetup = {}): Indexer {
  const indexer = new Indexer({
    db: setup.db ?? testDb.db,
    chain: setup.chain ?? hardhatChain(),
    network: "hardhat",
    escrowAddress: setup.escrowAddress ?? book.escrow.proxy,
    startBlock: setup.startBlock ?? book.startBlock,
    config: { confirmations: 0, pollIntervalMs: 20, maxBlockRange: 2000, lockTtlMs: LOCK_TTL_MS, ...setup.config },
    logger: setup.logger ?? recordingLogger([]),
    resetHint: setup.resetHint,
    timers: setup.timers,
  });
  testDb.onCleanup(() => indexer.stop());
  return indexer;
}

type Method = keyof ChainReader;

/**
 * A ChainReader that calls `intercept` before each call of `inner`: the interceptor may throw (a failing node), wait
 * (a hung node) or record the call.
 */
function interceptChain(
  inner: ChainReader,
  intercept: (method: Method, args: number[]) => void | Promise<void>,
): ChainReader {
  return {
    chainId: async () => (await intercept("chainId", []), inner.chainId()),
    blockNumber: async () => (await intercept("blockNumber", []), inner.blockNumber()),
    block: async (n) => (await intercept("block", [n]), inner.block(n)),
    logs: async (address, from, to) => (await intercept("logs", [from, to]), inner.logs(address, from, to)),
  };
}

/** What Node's socket layer throws when nothing listens on the node's port. */
const connectionRefused = () =>
  Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8545"), {
    code: "ECONNREFUSED",
    errno: -111,
    syscall: "connect",
  });

/**
 * Mines `count` empty blocks one by one, linked as on a real chain. (hardhat_mine, behind the network helpers'
 * mine(n), reports a zero parentHash for the blocks it mines at once.)
 */
async function mineEmptyBlocks(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await ethers.provider.send("evm_mine", []);
}

/** The shape of ethers' SERVER_ERROR for an HTTP 503. */
const serverUnavailable = () =>
  Object.assign(new Error("server response 503 Service Unavailable"), {
    code: "SERVER_ERROR",
    shortMessage: "server response 503 Service Unavailable",
  });

/** Polls `condition` every 20 ms until it holds; fails after `timeoutMs`. */
async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Waits until `indexer`, woken from a wait for the writer lock, has waited again or taken the lock. */
async function settled(indexer: Indexer, timers: ManualTimers): Promise<void> {
  await until(
    () => timers.sleeps().length > 0 || indexer.status().state !== "waiting-for-lock",
    10_000,
    "the indexer to wait for the writer lock again or take it",
  );
}

/**
 * Moves `time` forward by `ms`, one timer at a time, each waiter settling after each (see `settled`); answers how
 * many of the waiters' waits ended on the way (their tries for the lock).
 */
async function passTime(time: ManualTime, ms: number, waiters: [Indexer, ManualTimers][]): Promise<number> {
  const end = time.now() + ms;
  const before = waiters.reduce((n, [, timers]) => n + timers.slept, 0);
  for (let due = time.next(); due !== undefined && due <= end; due = time.next()) {
    await time.advanceTo(due);
    for (const [indexer, timers] of waiters) await settled(indexer, timers);
  }
  await time.advanceTo(end);
  return waiters.reduce((n, [, timers]) => n + timers.slept, 0) - before;
}

/** Moves `time` timer by timer until `indexer` holds the writer lock. */
async function timeUntilLocked(time: ManualTime, indexer: Indexer, timers: ManualTimers): Promise<void> {
  for (let turn = 0; indexer.status().state === "waiting-for-lock"; turn++) {
    if (turn > 1000) throw new Error("the indexer never took the writer lock");
    await time.fireNext();
    await settled(indexer, timers);
  }
}

async function duplicateEvents(db: Knex): Promise<unknown[]> {
  return db("escrow_events")
    .select("tx_hash", "log_index")
    .count({ n: "*" })
    .groupBy("tx_hash", "log_index")
    .having(db.raw("count(*) > 1"));
}

/** Logs of the escrow in (fromExclusive, toInclusive]. */
async function escrowLogCount(book: AddressBook, fromExclusive: number, toInclusive: number): Promise<number> {
  if (toInclusive <= fromExclusive) return 0;
  const logs = await ethers.provider.getLogs({
    address: book.escrow.proxy,
    fromBlock: fromExclusive + 1,
    toBlock: toInclusive,
  });
  return logs.length;
}

// ---------------------------------------------------------------------------------------------------------------
// Real ethers errors: a stub JSON-RPC node answers as told, and ethers' JsonRpcProvider turns the answer into the
// error the indexer would see.
// ---------------------------------------------------------------------------------------------------------------

type StubAnswer =
  | { httpStatus: number; body: string }
  | { rpcError: { code: number; message: string; data?: string } }
  | { hang: true };

async function errorFromEthers(
  answer: StubAnswer,
  call: (provider: JsonRpcProvider) => Promise<unknown> = (p) => p.getBlockNumber(),
): Promise<unknown> {
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      if ("hang" in answer) return;
      if ("httpStatus" in answer) {
        res.writeHead(answer.httpStatus, { "content-type": "text/plain" });
        res.end(answer.body);
        return;
      }
      const { id } = JSON.parse(body);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id, error: answer.rpcError }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const request = new FetchRequest(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  // ethers retries a 429 itself before giving up; keep its throttle short.
  request.setThrottleParams({ maxAttempts: 2, slotInterval: 1 });
  request.timeout = 300;
  const provider = new JsonRpcProvider(request, 31337, { staticNetwork: true, batchMaxCount: 1 });
  try {
    await call(provider);
    throw new Error("the stub node's answer did not fail");
  } catch (error) {
    return error;
  } finally {
    provider.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** The error ethers throws when nothing listens on the node's port. */
async function refusedByClosedPort(): Promise<unknown> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  const provider = new JsonRpcProvider(`http://127.0.0.1:${port}`, 31337, { staticNetwork: true });
  try {
    await provider.getBlockNumber();
    throw new Error("a closed port answered");
  } catch (error) {
    return error;
  } finally {
    provider.destroy();
  }
}

interface ClassificationCase {
  name: string;
  kind: RpcErrorKind;
  make: () => unknown | Promise<unknown>;
  /** The ethers error code the built error must carry (checks the case is the real thing). */
  ethersCode?: string;
}

const CLASSIFICATION: ClassificationCase[] = [
  // A retry can help.
  {
    name: "an ethers NETWORK_ERROR",
    kind: "retryable",
    make: () => makeError("network error", "NETWORK_ERROR", { event: "noNetwork" }),
    ethersCode: "NETWORK_ERROR",
  },
  {
    name: "an ethers TIMEOUT from a node that never answers",
    kind: "retryable",
    make: () => errorFromEthers({ hang: true }),
    ethersCode: "TIMEOUT",
  },
  {
    name: "an ethers SERVER_ERROR for an HTTP 503",
    kind: "retryable",
    make: () => errorFromEthers({ httpStatus: 503, body: "upstream unavailable" }),
    ethersCode: "SERVER_ERROR",
  },
  {
    name: "ECONNREFUSED from ethers against a closed port",
    kind: "retryable",
    make: refusedByClosedPort,
    ethersCode: "ECONNREFUSED",
  },
  {
    name: "ECONNREFUSED two causes deep under neutral messages",
    kind: "retryable",
    make: () =>
      new Error("indexer request failed", {
        cause: new Error("transport failure", {
          cause: Object.assign(new Error("socket error"), { code: "ECONNREFUSED" }),
        }),
      }),
  },
  {
    name: 'the text "429 Too Many Requests"',
    kind: "retryable",
    make: () => new Error("server response 429 Too Many Requests"),
  },
  {
    name: 'the text "rate limit exceeded" (an HTTP 429 body)',
    kind: "retryable",
    make: () => new Error("429: rate limit exceeded, slow down"),
  },
  {
    name: "an HTTP 429 after ethers' own throttling retries",
    kind: "retryable",
    make: () => errorFromEthers({ httpStatus: 429, body: "Too Many Requests" }),
    ethersCode: "SERVER_ERROR",
  },
  { name: 'the text "503 Service Unavailable"', kind: "retryable", make: () => new Error("503 Service Unavailable") },
  {
    name: '"header not found" (-32000) through ethers',
    kind: "retryable",
    make: () => errorFromEthers({ rpcError: { code: -32000, message: "header not found" } }),
  },
  // The request asked for too much: shrink the log range.
  {
    name: "JSON-RPC -32005 through ethers",
    kind: "range-too-large",
    make: () =>
      errorFromEthers({ rpcError: { code: -32005, message: "request exceeds defined limit" } }, (p) =>
        p.getLogs({ fromBlock: 0, toBlock: 100_000 }),
      ),
  },
  {
    name: '"query returned more than 10000 results"',
    kind: "range-too-large",
    make: () => Object.assign(new Error("query returned more than 10000 results"), { code: -32000 }),
  },
  {
    name: '"block range too large" through ethers',
    kind: "range-too-large",
    make: () =>
      errorFromEthers({ rpcError: { code: -32000, message: "block range too large" } }, (p) =>
        p.getLogs({ fromBlock: 0, toBlock: 100_000 }),
      ),
  },
  // It cannot succeed as sent.
  {
    name: "invalid params (-32602) as the node's raw JSON-RPC error",
    kind: "fatal",
    make: () => Object.assign(new Error("invalid argument 0: hex string without 0x prefix"), { code: -32602 }),
  },
  {
    name: "invalid params (-32602) through ethers",
    kind: "fatal",
    make: () =>
      errorFromEthers(
        { rpcError: { code: -32602, message: "invalid argument 0: hex string without 0x prefix" } },
        (p) => p.getLogs({ fromBlock: 0, toBlock: 10 }),
      ),
  },
  {
    name: "method not found (-32601) through ethers",
    kind: "fatal",
    make: () =>
      errorFromEthers({
        rpcError: { code: -32601, message: "the method eth_getLogs does not exist/is not available" },
      }),
  },
  {
    name: "an ethers CALL_EXCEPTION for a reverted eth_call",
    kind: "fatal",
    make: () =>
      errorFromEthers({ rpcError: { code: 3, message: "execution reverted", data: "0x7bfa4b9f" } }, (p) =>
        p.call({ to: ethers.ZeroAddress, data: "0x8456cb59" }),
      ),
    ethersCode: "CALL_EXCEPTION",
  },
  { name: "a plain Error", kind: "fatal", make: () => new Error("unexpected end of JSON input") },
  {
    name: "a TypeError",
    kind: "fatal",
    make: () => new TypeError("cannot read properties of undefined (reading 'hash')"),
  },
  { name: "a thrown string", kind: "fatal", make: () => "boom" },
  { name: "undefined", kind: "fatal", make: () => undefined },
];

// ---------------------------------------------------------------------------------------------------------------

describe("indexer: faults", () => {
  describe("classifyRpcError", () => {
    for (const { name, kind, make, ethersCode } of CLASSIFICATION) {
      it(`classifies ${name} as ${kind}`, async () => {
        const error = await make();
        if (ethersCode) expect((error as { code?: unknown }).code, "the case's error code").to.equal(ethersCode);
        expect(classifyRpcError(error)).to.equal(kind);
      });
    }
  });

  describe("withRetry", () => {
    const retryable = () => makeError("network error", "NETWORK_ERROR", { event: "noNetwork" });

    it("retries retryable errors, then returns the first success", async () => {
      let calls = 0;
      const retries: number[] = [];
      const value = await withRetry(
        async () => {
          calls++;
          if (calls <= 2) throw retryable();
          return 42;
        },
        { retries: 5, baseDelayMs: 1, maxDelayMs: 2, onRetry: (_error, attempt) => retries.push(attempt) },
      );
      expect(value).to.equal(42);
      expect(calls).to.equal(3);
      expect(retries).to.deep.equal([1, 2]);
    });

    it("gives up after `retries` retries and throws the last error", async () => {
      let calls = 0;
      const errors: Error[] = [];
      const failing = withRetry(
        async () => {
          calls++;
          const error = retryable();
          errors.push(error);
          throw error;
        },
        { retries: 3, baseDelayMs: 1, maxDelayMs: 2 },
      );
      const thrown = await failing.then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(calls).to.equal(4);
      expect(thrown).to.equal(errors[3]);
    });

    it("throws a fatal error at once", async () => {
      let calls = 0;
      const fatal = new Error("invalid argument 0");
      const thrown = await withRetry(
        async () => {
          calls++;
          throw fatal;
        },
        { retries: 5, baseDelayMs: 1 },
      ).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(thrown).to.equal(fatal);
      expect(calls).to.equal(1);
    });

    it("leaves a range-too-large error to the caller without retrying", async () => {
      let calls = 0;
      const tooLarge = new Error("query returned more than 10000 results");
      const thrown = await withRetry(
        async () => {
          calls++;
          throw tooLarge;
        },
        { retries: 5, baseDelayMs: 1 },
      ).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(thrown).to.equal(tooLarge);
      expect(calls).to.equal(1);
    });

    it("stops retrying once its signal is aborted", async () => {
      const signal = { aborted: false };
      let calls = 0;
      const thrown = await withRetry(
        async () => {
          calls++;
          if (calls === 2) signal.aborted = true;
          throw retryable();
        },
        { retries: 10, baseDelayMs: 1, maxDelayMs: 2, signal },
      ).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect((thrown as { code?: string }).code).to.equal("NETWORK_ERROR");
      expect(calls).to.equal(2);
    });

    it("waits on the given sleep, and a stop during that wait ends the retries without another call", async () => {
      const controller = new AbortController();
      const waits: number[] = [];
      let calls = 0;
      const thrown = await withRetry(
        async () => {
          calls++;
          throw retryable();
        },
        {
          retries: 10,
          baseDelayMs: 50_000,
          maxDelayMs: 60_000,
          signal: controller.signal,
          sleep: async (ms) => {
            waits.push(ms);
            if (waits.length === 2) controller.abort();
          },
        },
      ).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect((thrown as { code?: string }).code).to.equal("NETWORK_ERROR");
      expect(waits).to.have.length(2);
      expect(waits[0]).to.be.within(25_000, 50_000);
      expect(calls).to.equal(2);
    });

    it("backs off exponentially with jitter between half and all of the capped ceiling", () => {
      for (let attempt = 0; attempt < 12; attempt++) {
        const ceiling = Math.min(5000, 100 * 2 ** attempt);
        for (let i = 0; i < 20; i++) {
          const delay = backoffDelay(attempt, 100, 5000);
          expect(delay, `attempt ${attempt}`).to.be.within(ceiling / 2, ceiling);
        }
      }
    });
  });

  describe("real timers", () => {
    it("sleep ends as soon as its signal aborts, and at once when it already has", async () => {
      const controller = new AbortController();
      const started = Date.now();
      const sleeping = realTimers.sleep(60_000, controller.signal);
      controller.abort();
      await sleeping;
      await realTimers.sleep(60_000, controller.signal);
      expect(Date.now() - started).to.be.lessThan(1_000);
    });

    it("every ticks until stopped", async () => {
      let ticks = 0;
      const stop = realTimers.every(5, () => ticks++);
      await until(() => ticks >= 3, 5_000, "three ticks");
      stop();
      const stoppedAt = ticks;
      await realTimers.sleep(30);
      expect(ticks).to.equal(stoppedAt);
    });
  });

  describe("the run loop against a failing node", () => {
    it("reaches the head through random retryable failures and a node that refuses large log ranges", async () => {
      const actors = await loadFixture(actorsFixture);
      const { escrow, book } = actors;
      await runRandomScenario(actors, 61, 50);
      await createTasks(actors, 60);
      const testDb = await createTestDb();
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on("unhandledRejection", onUnhandled);
      try {
        const MAX_LOG_RANGE = 5;
        const rand = mulberry32(20240611);
        const transient = [
          () => makeError("network error", "NETWORK_ERROR", { event: "noNetwork" }),
          () => makeError("timeout", "TIMEOUT", { operation: "request.send", reason: "timeout" }),
          () => serverUnavailable(),
          () =>
            new Error("request failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) }),
          () => Object.assign(new Error("header not found"), { code: -32000 }),
        ];
        const entries: LogEntry[] = [];
        let failing = false;
        let failures = 0;
        const logCalls: { size: number; refused: boolean; entriesBefore: number }[] = [];
        const chain = interceptChain(hardhatChain(), (method, [from, to]) => {
          if (failing && rand() < 0.08) {
            failures++;
            throw transient[Math.floor(rand() * transient.length)]();
          }
          if (method !== "logs") return;
          const size = to - from + 1;
          const refused = size > MAX_LOG_RANGE;
          logCalls.push({ size, refused, entriesBefore: entries.length });
          if (refused) {
            throw logCalls.length % 2
              ? Object.assign(new Error("query returned more than 10000 results"), { code: -32005 })
              : Object.assign(new Error(`block range too large: at most ${MAX_LOG_RANGE} blocks`), { code: -32000 });
          }
        });
        const indexer = newIndexer(testDb, book, {
          chain,
          logger: recordingLogger(entries),
          config: { maxBlockRange: 32, pollIntervalMs: 10 },
        });
        await indexer.start();
        // start()'s own identity check is covered by a test of its own; from here on, every call may fail.
        failing = true;
        const head = await ethers.provider.getBlockNumber();
        await indexer.waitForBlock(head, 60_000);

        // Following the head, still flaky.
        await runRandomScenario(actors, 62, 20);
        const newHead = await ethers.provider.getBlockNumber();
        await indexer.waitForBlock(newHead, 60_000);
        failing = false;

        expect(await expectProjectionMatchesChain(testDb.db, escrow)).to.be.greaterThan(60);
        expect(await countEvents(testDb.db)).to.equal(await escrowLogCount(book, book.startBlock - 1, newHead));
        expect(await duplicateEvents(testDb.db)).to.have.length(0);
        expect(failures, "injected failures").to.be.greaterThan(10);

        // The range shrank: the node refused ranges above MAX_LOG_RANGE, the indexer reported a range it accepts, and
        // from then on it never asked for a refused range again.
        expect(logCalls.filter((c) => c.refused).length, "refused log ranges").to.be.greaterThan(0);
        const firstShrink = entries.findIndex((e) => e.msg === "node refused a large log range; using a smaller one");
        expect(firstShrink, "the shrink is reported").to.be.at.least(0);
        expect(entries[firstShrink].fields.range).to.be.within(1, MAX_LOG_RANGE);
        const afterShrink = logCalls.filter((c) => c.entriesBefore > firstShrink);
        expect(afterShrink.length, "log calls after the shrink").to.be.greaterThan(10);
        expect(
          afterShrink.filter((c) => c.refused),
          "refusals after the shrink",
        ).to.deep.equal([]);

        const status = indexer.status();
        expect(status.state).to.equal("following");
        expect(status.checkpoint).to.equal(newHead);
        expect(unhandled, "unhandled rejections").to.deep.equal([]);
      } finally {
        process.off("unhandledRejection", onUnhandled);
        await testDb.cleanup();
      }
    });

    it("rides out a one-second outage inside a step: retries absorb it and nothing is reported", async () => {
      const actors = await loadFixture(actorsFixture);
      const { escrow, book } = actors;
      await runRandomScenario(actors, 63, 20);
      const testDb = await createTestDb();
      try {
        let down = false;
        let refusedCalls = 0;
        const chain = interceptChain(hardhatChain(), () => {
          if (!down) return;
          refusedCalls++;
          throw connectionRefused();
        });
        // The retries' backoff runs on test time: the outage lasts one second of it, however slow the machine.
        const time = new ManualTime();
        const timers = time.timers();
        const entries: LogEntry[] = [];
        const indexer = newIndexer(testDb, book, { chain, timers, logger: recordingLogger(entries) });
        await indexer.start();
        await indexer.waitForBlock(await ethers.provider.getBlockNumber());

        const errorsSeen: string[] = [];
        const sampler = setInterval(() => {
          const { lastError } = indexer.status();
          if (lastError) errorsSeen.push(lastError);
        }, 10);
        try {
          down = true;
          const downAt = time.now();
          await createTasks(actors, 10);
          // Each turn: the indexer meets the refusal and waits to retry; the clock moves to the next timer's end.
          while (time.now() - downAt < 1000) {
            await until(() => timers.sleeps().length > 0, 10_000, "the indexer to wait before a retry");
            await time.fireNext();
          }
          down = false;
          while (timers.sleeps().length > 0) await time.fireNext();
          await indexer.waitForBlock(await ethers.provider.getBlockNumber(), 15_000);
        } finally {
          clearInterval(sampler);
        }
        expect(refusedCalls, "calls refused during the outage").to.be.greaterThan(0);
        expect(timers.slept, "waits before a retry during the outage").to.be.at.least(2);
        expect(errorsSeen).to.deep.equal([]);
        expect(entries.filter((e) => e.msg === "indexer step failed")).to.deep.equal([]);
        await expectProjectionMatchesChain(testDb.db, escrow);
      } finally {
        await testDb.cleanup();
      }
    });

    it("survives an outage longer than its retries: lastError is set while failing, then cleared", async () => {
      const actors = await loadFixture(actorsFixture);
      const { escrow, book } = actors;
      await runRandomScenario(actors, 64, 20);
      const testDb = await createTestDb();
      try {
        let down = false;
        const chain = interceptChain(hardhatChain(), () => {
          if (down) throw connectionRefused();
        });
        const entries: LogEntry[] = [];
        // The backoff runs on test time, moved from one wait to the next.
        const time = new ManualTime();
        const timers = time.timers();
        const indexer = newIndexer(testDb, book, { chain, timers, logger: recordingLogger(entries) });
        await indexer.start();
        await indexer.waitForBlock(await ethers.provider.getBlockNumber());
        const before = await getCheckpoint(testDb.db, "base", CHECKPOINT_NAME);
        const eventsBefore = await countEvents(testDb.db);

        down = true;
        await createTasks(actors, 10);
        // withRetry gives up after five retries; the loop then reports the error and keeps going.
        const reported = () => indexer.status().lastError !== null;
        while (!reported()) {
          await until(() => timers.sleeps().length > 0 || reported(), 10_000, "a retry's wait or the report");
          if (!reported()) await time.fireNext();
        }
        expect(timers.slept, "waits before a retry, then the step failed").to.equal(5);
        const failing = indexer.status();
        expect(failing.lastError).to.match(/ECONNREFUSED/);
        expect(await getCheckpoint(testDb.db, "base", CHECKPOINT_NAME)).to.deep.equal(before);
        expect(await countEvents(testDb.db)).to.equal(eventsBefore);
        const failed = entries.filter((e) => e.msg === "indexer step failed");
        expect(failed.length).to.be.greaterThan(0);
        expect(failed[0].fields.kind).to.equal("retryable");

        down = false;
        await createTasks(actors, 5);
        const head = await ethers.provider.getBlockNumber();
        // The loop's wait after the failed step ends; the next step succeeds.
        while (timers.sleeps().length > 0) await time.fireNext();
        await indexer.waitForBlock(head, 15_000);
        await until(() => indexer.status().lastError === null, 5_000, "lastError to clear");
        expect(indexer.status().checkpoint).to.equal(head);
        await expectProjectionMatchesChain(testDb.db, escrow);
        expect(await countEvents(testDb.db)).to.equal(await escrowLogCount(book, book.startBlock - 1, head));
      } finally {
        await testDb.cleanup();
      }
    });

    it("reports a fatal failure without dying, and its long wait still stops at once", async () => {
      const actors = await loadFixture(actorsFixture);
      const { book } = actors;
      await createTasks(actors, 5);
      const testDb = await createTestDb();
      try {
        let poisoned = false;
        const chain = interceptChain(hardhatChain(), (method) => {
          if (poisoned && method === "logs") {
            throw Object.assign(new Error("invalid argument 0: hex string without 0x prefix"), { code: -32602 });
          }
        });
        const entries: LogEntry[] = [];
        // Real timers, watched: the test learns when the loop begins its 30 s wait.
        let waiting: () => void = () => undefined;
        const longWait = new Promise<void>((resolve) => (waiting = resolve));
        const timers: Timers = {
          ...realTimers,
          sleep: (ms, signal) => {
            if (ms === 30_000) waiting();
            return realTimers.sleep(ms, signal);
          },
        };
        const indexer = newIndexer(testDb, book, { chain, timers, logger: recordingLogger(entries) });
        await indexer.start();
        await indexer.waitForBlock(await ethers.provider.getBlockNumber());
        poisoned = true;
        await createTasks(actors, 1);
        await until(() => indexer.status().lastError !== null, 5_000, "the loop to report the fatal error");
        expect(indexer.status().lastError).to.equal("invalid argument 0: hex string without 0x prefix");
        const failed = entries.filter((e) => e.msg === "indexer step failed");
        expect(failed.map((e) => [e.level, e.fields.kind])).to.deep.equal([["error", "fatal"]]);
        expect(failed[0].fields.retryInMs).to.equal(30_000);

        // The loop now waits 30 s before trying again; stopping does not wait for that.
        await longWait;
        const started = Date.now();
        await indexer.stop();
        expect(Date.now() - started, "stop() during the 30 s wait").to.be.lessThan(1_000);
        expect(indexer.status().state).to.equal("stopped");
      } finally {
        await testDb.cleanup();
      }
    });

    it("start() retries a transient failure of the chain identity check instead of failing", async () => {
      const actors = await loadFixture(actorsFixture);
      const { escrow, book } = actors;
      await createTasks(actors, 5);
      const testDb = await createTestDb();
      try {
        const failedOnce = new Set<Method>();
        const chain = interceptChain(hardhatChain(), (method) => {
          if (failedOnce.has(method)) return;
          failedOnce.add(method);
          throw connectionRefused();
        });
        const indexer = newIndexer(testDb, book, { chain });
        await indexer.start();
        await indexer.waitForBlock(await ethers.provider.getBlockNumber(), 15_000);
        await expectProjectionMatchesChain(testDb.db, escrow);
      } finally {
        await testDb.cleanup();
      }
    });

    it("learns a node's log range limit even when transient failures interrupt the split", async () => {
      const actors = await loadFixture(actorsFixture);
      const { escrow, book } = actors;
      await createTasks(actors, 20);
      await mineEmptyBlocks(600);
      await createTasks(actors, 20);
      const testDb = await createTestDb();
      try {
        // A node that serves at most 10 blocks per getLogs (common on hosted plans) and drops one getLogs in 20.
        let logCalls = 0;
        const chain = interceptChain(hardhatChain(), (method, [from, to]) => {
          if (method !== "logs") return;
          logCalls++;
          if (logCalls % 20 === 0) throw serverUnavailable();
          if (to - from + 1 > 10)
            throw Object.assign(new Error("block range too large: at most 10 blocks"), { code: -32000 });
        });
        const indexer = newIndexer(testDb, book, { chain });
        await indexer.start();
        await indexer.waitForBlock(await ethers.provider.getBlockNumber(), 20_000);
        await expectProjectionMatchesChain(testDb.db, escrow);
      } finally {
        await testDb.cleanup();
      }
    });

    it("keeps its log range when the node refuses nothing: a short range at the head is not a refusal", async () => {
      const actors = await loadFixture(actorsFixture);
      const { escrow, book } = actors;
      await createTasks(actors, 5);
      const testDb = await createTestDb();
      try {
        const RANGE = 8;
        const ranges: number[] = [];
        let paused: Promise<void> | undefined;
        let blocked = () => undefined as void;
        const chain = interceptChain(hardhatChain(), async (method, [from, to]) => {
          if (method === "blockNumber" && paused) {
            blocked();
            await paused;
          }
          if (method === "logs") ranges.push(to - from + 1);
        });
        const entries: LogEntry[] = [];
        const indexer = newIndexer(testDb, book, {
          chain,
          logger: recordingLogger(entries),
          config: { maxBlockRange: RANGE },
        });
        await indexer.start();
        // Follow the head one block at a time for a while.
        for (let i = 0; i < 3; i++) {
          await createTasks(actors, 1);
          await indexer.waitForBlock(await ethers.provider.getBlockNumber());
        }
        // Then fall behind by 80 blocks (a busy chain, or a process paused for a while): the catch-up uses full ranges.
        // The next step stops at its first call (the head), before any log range of it is asked for.
        let resume = () => undefined as void;
        const atPause = new Promise<void>((resolve) => (blocked = resolve));
        paused = new Promise<void>((resolve) => (resume = resolve));
        await atPause;
        const lagStart = ranges.length;
        await mineEmptyBlocks(80);
        const head = await ethers.provider.getBlockNumber();
        paused = undefined;
        resume();
        await indexer.waitForBlock(head, 30_000);
        const catchUp = ranges.slice(lagStart);
        expect(catchUp.length, "log calls to catch up 80 blocks").to.be.at.most(Math.ceil(80 / RANGE) + 1);
        expect(Math.max(...catchUp), "largest catch-up range").to.equal(RANGE);
        expect(
          entries.filter((e) => e.msg.startsWith("node refused")),
          "no refusal reported",
        ).to.deep.equal([]);
        await expectProjectionMatchesChain(testDb.db, escrow);
      } finally {
        await testDb.cleanup();
      }
    });
  });

  describe("chain identity", () => {
    /** The reset hint the composition root would give for this database. */
    const hintFor = (testDb: TestDb) =>
      resetHint(
        loadConfig(
          testDb.options.databaseUrl
            ? { NETWORK: "hardhat", DATABASE_URL: testDb.options.databaseUrl }
            : { NETWORK: "hardhat", DATA_DIR: "/var/lib/escrow" },
        ),
      );

    async function expectRefusal(indexer: Indexer): Promise<ChainIdentityMismatchError> {
      const error = await indexer.start().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(ChainIdentityMismatchError);
      return error as ChainIdentityMismatchError;
    }

    it("refuses another escrow address on the same chain, and writes nothing", async () => {
      const deployed = await loadFixture(twoDeploymentsFixture);
      const { book, otherBook } = deployed;
      await createTasks(deployed, 3);
      const testDb = await createTestDb();
      try {
        const built = newIndexer(testDb, book);
        await built.start();
        await built.waitForBlock(await ethers.provider.getBlockNumber());
        await built.stop();
        const events = await countEvents(testDb.db);
        expect(events).to.be.greaterThan(0);
        const checkpoint = await getCheckpoint(testDb.db, "base", CHECKPOINT_NAME);

        const hint = hintFor(testDb);
        const other = newIndexer(testDb, book, {
          escrowAddress: otherBook.escrow.proxy,
          startBlock: otherBook.startBlock,
          resetHint: hint,
        });
        const error = await expectRefusal(other);
        const { chainId } = await ethers.provider.getNetwork();
        const deploymentHash = (await ethers.provider.getBlock(book.startBlock))!.hash!;
        expect(error.message).to.include(
          `this database was built from chain ${chainId}, escrow ${book.escrow.proxy.toLowerCase()}, deployment block ` +
            `${book.startBlock} (${deploymentHash})`,
        );
        expect(error.message).to.include(`escrow ${otherBook.escrow.proxy.toLowerCase()}`);
        expect(error.message).to.include(hint);
        expect(hint).to.match(
          testDb.options.databaseUrl ? /npm run db:reset/ : /delete \/var\/lib\/escrow\/hardhat\.sqlite/,
        );
        expect(error.stored?.escrowAddress).to.equal(book.escrow.proxy.toLowerCase());
        expect(error.current.escrowAddress).to.equal(otherBook.escrow.proxy.toLowerCase());

        // No loop started: a started loop's first step marks the indexer waiting for the lock before its first await.
        expect(other.status()).to.include({ state: "starting", checkpoint: null, eventsIndexed: 0 });
        expect(await countEvents(testDb.db)).to.equal(events);
        expect(await getCheckpoint(testDb.db, "base", CHECKPOINT_NAME)).to.deep.equal(checkpoint);
        expect((await getChainIdentity(testDb.db, "base"))?.escrowAddress).to.equal(book.escrow.proxy.toLowerCase());
      } finally {
        await testDb.cleanup();
      }
    });

    it("refuses another deployment block of the same escrow, and writes nothing", async () => {
      const { book } = await loadFixture(deployEscrowFixture);
      const testDb = await createTestDb();
      try {
        await ensureChainIdentity(testDb.db, hardhatChain(), {
          chainName: "base",
          network: "hardhat",
          escrowAddress: book.escrow.proxy,
          startBlock: book.startBlock,
          resetHint: "unused",
        });
        const other = newIndexer(testDb, book, { startBlock: book.startBlock + 1, resetHint: hintFor(testDb) });
        const error = await expectRefusal(other);
        expect(error.message).to.include(`deployment block ${book.startBlock} (`);
        expect(error.message).to.include(`block ${book.startBlock + 1} (`);
        expect(error.message).to.include(hintFor(testDb));
        expect(error.stored?.deploymentBlock).to.equal(book.startBlock);
        expect(error.current.deploymentBlock).to.equal(book.startBlock + 1);
        expect(await countEvents(testDb.db)).to.equal(0);
        expect(await getCheckpoint(testDb.db, "base", CHECKPOINT_NAME)).to.equal(undefined);
      } finally {
        await testDb.cleanup();
      }
    });

    it("refuses the same chain id and addresses after a devnet restart (another deployment block hash)", async () => {
      const { book } = await loadFixture(deployEscrowFixture);
      const testDb = await createTestDb();
      try {
        const { chainId } = await ethers.provider.getNetwork();
        const oldHash = ethers.hexlify(ethers.randomBytes(32));
        await recordChainIdentity(testDb.db, "base", {
          chainId: Number(chainId),
          escrowAddress: book.escrow.proxy,
          deploymentBlock: book.startBlock,
          deploymentBlockHash: oldHash,
          network: "hardhat",
        });
        const hint = hintFor(testDb);
        const error = await expectRefusal(newIndexer(testDb, book, { resetHint: hint }));
        const newHash = (await ethers.provider.getBlock(book.startBlock))!.hash!;
        expect(error.message).to.include(`built from chain ${chainId}, escrow ${book.escrow.proxy.toLowerCase()}`);
        expect(error.message).to.include(`deployment block ${book.startBlock} (${oldHash})`);
        expect(error.message).to.include(`block ${book.startBlock} (${newHash})`);
        expect(error.message).to.include("A restarted devnet is a new chain");
        expect(error.message).to.include(hint);
        expect(await countEvents(testDb.db)).to.equal(0);
        expect(await getCheckpoint(testDb.db, "base", CHECKPOINT_NAME)).to.equal(undefined);
      } finally {
        await testDb.cleanup();
      }
    });

    it("refuses an address book whose deployment block the node does not have", async () => {
      const { book } = await loadFixture(deployEscrowFixture);
      const testDb = await createTestDb();
      try {
        const missing = (await ethers.provider.getBlockNumber()) + 1000;
        const error = await expectRefusal(newIndexer(testDb, book, { startBlock: missing }));
        expect(error.message).to.include(`the node has no block ${missing}`);
        expect(await getChainIdentity(testDb.db, "base")).to.equal(undefined);
        expect(await countEvents(testDb.db)).to.equal(0);
      } finally {
        await testDb.cleanup();
      }
    });
  });

  describe("writer lock", () => {
    it("a second indexer on another pool waits while the first runs, then takes over and reaches the head", async () => {
      const actors = await loadFixture(actorsFixture);
      const { escrow, book } = actors;
      await runRandomScenario(actors, 71, 30);
      const testDb = await createTestDb();
      try {
        // Both indexers' lock waits, lease renewals and lease clock run on one test clock.
        const time = new ManualTime();
        const first = newIndexer(testDb, book, { timers: time.timers() });
        await first.start();
        await first.waitForBlock(await ethers.provider.getBlockNumber());

        let secondLogCalls = 0;
        const secondChain = interceptChain(hardhatChain(), (method) => {
          if (method === "logs") secondLogCalls++;
        });
        const secondTimers = time.timers();
        const second = newIndexer(testDb, book, { db: testDb.reopen(), chain: secondChain, timers: secondTimers });
        await second.start();
        await settled(second, secondTimers);

        // The first keeps indexing; the second waits and indexes nothing, trying again and again for twice the
        // lease's lifetime while the first renews it.
        await runRandomScenario(actors, 72, 15);
        const midHead = await ethers.provider.getBlockNumber();
        await first.waitForBlock(midHead);
        const attempts = await passTime(time, 2 * LOCK_TTL_MS, [[second, secondTimers]]);
        expect(attempts, "the second's tries for the lock").to.be.at.least(5);
        expect(first.status().state).to.equal("following");
        expect(second.status()).to.include({ state: "waiting-for-lock", checkpoint: null, eventsIndexed: 0 });
        expect(secondLogCalls).to.equal(0);

        await first.stop();
        const handedOver = (await getCheckpoint(testDb.db, "base", CHECKPOINT_NAME))!.blockNumber;
        expect(handedOver).to.equal(midHead);
        await timeUntilLocked(time, second, secondTimers);
        await runRandomScenario(actors, 73, 15);
        const head = await ethers.provider.getBlockNumber();
        await second.waitForBlock(head, 15_000);

        expect(second.status().state).to.equal("following");
        expect(second.status().eventsIndexed).to.equal(await escrowLogCount(book, handedOver, head));
        await expectProjectionMatchesChain(testDb.db, escrow);
        expect(await countEvents(testDb.db)).to.equal(await escrowLogCount(book, book.startBlock - 1, head));
        expect(await duplicateEvents(testDb.db)).to.have.length(0);
      } finally {
        await testDb.cleanup();
      }
    });

    it("takes over from a holder that died without releasing the lock", async () => {
      const actors = await loadFixture(actorsFixture);
      const { escrow, book } = actors;
      await runRandomScenario(actors, 81, 30);
      const testDb = await createTestDb();
      const holderDb = createDb(testDb.options);
      let thaw: ((error: Error) => void) | undefined;
      const frozen = new Promise<never>((_resolve, reject) => (thaw = reject));
      frozen.catch(() => undefined);
      let hung = false;
      try {
        const holderChain = interceptChain(hardhatChain(), async () => {
          if (hung) await frozen;
        });
        // Both indexers' lock waits, lease renewals and lease clock run on one test clock.
        const time = new ManualTime();
        const holder = newIndexer(testDb, book, { db: holderDb, chain: holderChain, timers: time.timers() });
        await holder.start();
        await holder.waitForBlock(await ethers.provider.getBlockNumber());
        const successorTimers = time.timers();
        const successor = newIndexer(testDb, book, { db: testDb.reopen(), timers: successorTimers });
        await successor.start();
        await settled(successor, successorTimers);

        // Hung but connected: the holder's chain calls never return, yet its session (PostgreSQL) or its lease
        // renewals (SQLite) keep the lock; the successor keeps trying past twice the lease's lifetime.
        hung = true;
        await runRandomScenario(actors, 82, 15);
        const attempts = await passTime(time, 2 * LOCK_TTL_MS, [[successor, successorTimers]]);
        expect(attempts, "the successor's tries for the lock").to.be.at.least(5);
        expect(successor.status()).to.include({ state: "waiting-for-lock", checkpoint: null });

        // Dead: its database session ends without a release. PostgreSQL frees a dead session's advisory lock; an
        // SQLite lease nobody renews expires.
        if (usingPostgres()) {
          const pids = await advisoryLockHolders(testDb, book);
          expect(pids, "one session holds the advisory lock").to.have.length(1);
          await testDb.db.raw("select pg_terminate_backend(?)", [pids[0]]);
          await timeUntilLocked(time, successor, successorTimers);
        } else {
          await holderDb.destroy();
          const lease = await testDb.db("indexer_lock").first();
          const expiresAt = Number(lease.expires_at);
          expect(expiresAt, "the lease was renewed until the holder died").to.be.greaterThan(time.now());
          await timeUntilLocked(time, successor, successorTimers);
          expect(time.now(), "taken over only once the lease expired").to.be.at.least(expiresAt);
        }

        const head = await ethers.provider.getBlockNumber();
        await successor.waitForBlock(head, 15_000);
        await expectProjectionMatchesChain(testDb.db, escrow);
        expect(await countEvents(testDb.db)).to.equal(await escrowLogCount(book, book.startBlock - 1, head));
        expect(await duplicateEvents(testDb.db)).to.have.length(0);
      } finally {
        // Unblock the hung holder with a fatal error so its loop can be stopped by the cleanup.
        thaw!(new Error("the test is over"));
        await testDb.cleanup();
        if (usingPostgres()) await holderDb.destroy();
      }
    });

    if (usingPostgres()) {
      it("(PostgreSQL) indexer processes starting together on a fresh schema all start; one indexes, the others wait", async () => {
        const actors = await loadFixture(actorsFixture);
        const { escrow, book } = actors;
        await createTasks(actors, 5);
        // What main.ts does in each process: its own pool, migrations, then the indexer.
        const options = {
          databaseUrl: process.env.DATABASE_URL,
          pgSchema: `t_${crypto.randomBytes(6).toString("hex")}`,
        };
        const pools = Array.from({ length: 4 }, () => createDb(options));
        const indexers: Indexer[] = [];
        try {
          const started = await Promise.allSettled(
            pools.map(async (db) => {
              await migrateLatest(db);
              const indexer = new Indexer({
                db,
                chain: hardhatChain(),
                network: "hardhat",
                escrowAddress: book.escrow.proxy,
                startBlock: book.startBlock,
                config: { confirmations: 0, pollIntervalMs: 20, maxBlockRange: 2000, lockTtlMs: LOCK_TTL_MS },
                logger: recordingLogger([]),
              });
              indexers.push(indexer);
              await indexer.start();
              return indexer;
            }),
          );
          const failures = started.flatMap((r) =>
            r.status === "rejected" ? [String((r.reason as Error).message)] : [],
          );
          expect(failures, "processes that failed to start").to.deep.equal([]);
          const head = await ethers.provider.getBlockNumber();
          await until(
            () => indexers.some((i) => (i.status().checkpoint ?? -1) >= head),
            15_000,
            "one indexer to reach the head",
          );
          expect(indexers.filter((i) => i.status().state === "waiting-for-lock")).to.have.length(pools.length - 1);
          await expectProjectionMatchesChain(pools[0], escrow);
        } finally {
          for (const indexer of indexers) await indexer.stop();
          await pools[0].raw(`drop schema if exists "${options.pgSchema}" cascade`).catch(() => undefined);
          for (const db of pools) await db.destroy();
        }
      });

      it("(PostgreSQL) retakes the advisory lock after its session is killed, without leaking pool connections", async () => {
        const actors = await loadFixture(actorsFixture);
        const { escrow, book } = actors;
        await createTasks(actors, 5);
        const testDb = await createTestDb();
        // The pool createDb builds (at most 10 connections), with a short acquire timeout so that an exhausted pool
        // fails in seconds rather than a minute.
        const pool = knex({
          client: "pg",
          connection: testDb.options.databaseUrl,
          searchPath: [testDb.options.pgSchema!],
          pool: { min: 0, max: 10 },
          acquireConnectionTimeout: 2_000,
        });
        try {
          const indexer = newIndexer(testDb, book, { db: pool });
          await indexer.start();
          await indexer.waitForBlock(await ethers.provider.getBlockNumber());
          // Sessions die in production too: a server restart, a failover, idle_session_timeout, a proxy.
          for (let kill = 1; kill <= 10; kill++) {
            const [pid] = await advisoryLockHolders(testDb, book);
            await testDb.db.raw("select pg_terminate_backend(?)", [pid]);
            await until(
              async () => {
                const holders = await advisoryLockHolders(testDb, book);
                return holders.length === 1 && holders[0] !== pid;
              },
              5_000,
              `the indexer to retake the lock after kill ${kill} (pool: ${pool.client.pool.numUsed()} connections in use)`,
            );
          }
          await createTasks(actors, 3);
          await indexer.waitForBlock(await ethers.provider.getBlockNumber(), 10_000);
          await expectProjectionMatchesChain(testDb.db, escrow);
        } finally {
          await testDb.cleanup();
          // A pool with leaked (never released) connections never finishes destroying: do not wait for it forever.
          await Promise.race([pool.destroy(), sleep(1_000)]);
        }
      });
    }
  });
});

/** Backends holding the indexer's advisory lock of `book`'s escrow in this test's schema. */
async function advisoryLockHolders(testDb: TestDb, book: AddressBook): Promise<number[]> {
  // The key lock.ts derives: the first 8 bytes of sha256("<search path>/<chain>/indexer:<escrow>"), as a signed
  // bigint; these tests index the posting chain, base.
  const name = `base/indexer:${book.escrow.proxy.toLowerCase()}`;
  const key = crypto.createHash("sha256").update(`${testDb.options.pgSchema}/${name}`).digest().readBigInt64BE(0);
  const unsigned = BigInt.asUintN(64, key);
  const rows = await testDb.db.raw(
    "select pid from pg_locks where locktype = 'advisory' and granted and classid = ? and objid = ? and objsubid = 1",
    [Number(unsigned >> 32n), Number(unsigned & 0xffffffffn)],
  );
  return rows.rows.map((r: { pid: number }) => Number(r.pid));
}
