/**
 * Following the head: how an indexer level with the chain learns of a new block. The poll interval is a minute in
 * every case here, so an index that catches up within the tests' seconds was woken by a pushed head or the head poll.
 */
import { expect } from "chai";
import { ethers, network } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture, DAY, TASK_HASH, USDC } from "../../helpers/fixtures";
import { createTestDb, type TestDb } from "../../helpers/db";
import { hardhatChain } from "../../helpers/indexer";
import type { ChainReader } from "../../../server/chain/escrowLogs";
import { eip1193Heads, type HeadSource, type SubscribeHeadsOptions } from "../../../server/chain/heads";
import { Indexer } from "../../../server/indexer/sync";
import { findTaskById } from "../../../server/db/repositories/tasks";
import type { IndexerConfig } from "../../../server/config";
import type { Logger } from "../../../server/logger";

/** Long enough that no test below can pass by waiting it out. */
const POLL_INTERVAL_MS = 60_000;
const HEAD_POLL_MS = 25;
/** How long a woken indexer may take to index a new block here (a loaded machine included). */
const WOKEN_WITHIN_MS = 5_000;

type Fixture = Awaited<ReturnType<typeof deployEscrowFixture>>;

interface LogEntry {
  level: string;
  msg: string;
}

function recordingLogger(entries: LogEntry[]): Logger {
  const logger: Logger = {
    debug: (msg) => void entries.push({ level: "debug", msg }),
    info: (msg) => void entries.push({ level: "info", msg }),
    warn: (msg) => void entries.push({ level: "warn", msg }),
    error: (msg) => void entries.push({ level: "error", msg }),
    child: () => logger,
  };
  return logger;
}

/** A ChainReader counting its calls by method. */
function countingChain(inner: ChainReader): ChainReader & { calls: Record<"blockNumber" | "block" | "logs", number> } {
  const calls = { blockNumber: 0, block: 0, logs: 0 };
  return {
    calls,
    heads: inner.heads,
    chainId: () => inner.chainId(),
    blockNumber: () => (calls.blockNumber++, inner.blockNumber()),
    block: (n) => (calls.block++, inner.block(n)),
    logs: (address, from, to) => (calls.logs++, inner.logs(address, from, to)),
  };
}

/** A HeadSource that tells when it is subscribed and unsubscribed, and hands the test its options. */
function watchedHeads(inner?: HeadSource) {
  let subscribed!: (options: SubscribeHeadsOptions) => void;
  const watch = {
    subscribed: new Promise<SubscribeHeadsOptions>((resolve) => (subscribed = resolve)),
    unsubscribes: 0,
    source: {
      async subscribe(options: SubscribeHeadsOptions) {
        const unsubscribe = inner ? await inner.subscribe(options) : async () => undefined;
        subscribed(options);
        return async () => {
          watch.unsubscribes++;
          await unsubscribe();
        };
      },
    } as HeadSource,
  };
  return watch;
}

function newIndexer(
  testDb: TestDb,
  { book }: Fixture,
  chain: ChainReader,
  config: Partial<IndexerConfig> = {},
  logger: Logger = recordingLogger([]),
): Indexer {
  const indexer = new Indexer({
    db: testDb.db,
    chain,
    network: "hardhat",
    escrowAddress: book.escrow.proxy,
    startBlock: book.startBlock,
    config: { confirmations: 0, pollIntervalMs: POLL_INTERVAL_MS, maxBlockRange: 2000, lockTtlMs: 1500, ...config },
    logger,
  });
  testDb.onCleanup(() => indexer.stop());
  return indexer;
}

/** Starts `indexer` and waits until it has indexed the current head. */
async function startLevel(indexer: Indexer): Promise<void> {
  await indexer.start();
  await indexer.waitForBlock(await ethers.provider.getBlockNumber(), 30_000);
}

/** Mines a block holding a new task; answers its block and task id. */
async function newTaskBlock({ escrow, usdc, poster }: Fixture): Promise<{ block: number; taskId: number }> {
  const tx = await escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), USDC(1), "general", "z", DAY);
  const receipt = (await tx.wait())!;
  return { block: receipt.blockNumber, taskId: Number(await escrow.nextTaskId()) - 1 };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe("indexer: following the head", () => {
  it("indexes a block the node announces long before the poll interval", async () => {
    const fixture = await loadFixture(deployEscrowFixture);
    const testDb = await createTestDb();
    try {
      const heads = watchedHeads(eip1193Heads(network.provider));
      const indexer = newIndexer(testDb, fixture, { ...hardhatChain(), heads: heads.source }, { headPollMs: 0 });
      await startLevel(indexer);
      // The subscription begins in the loop's first wait for a new head: from here the loop is waiting.
      await heads.subscribed;

      const { block, taskId } = await newTaskBlock(fixture);
      await indexer.waitForBlock(block, WOKEN_WITHIN_MS);
      expect(await findTaskById(testDb.db, taskId), "the new task is queryable").to.not.equal(undefined);
    } finally {
      await testDb.cleanup();
    }
  });

  it("without a subscription, wakes on the head poll and reads only the head until it moves", async () => {
    const fixture = await loadFixture(deployEscrowFixture);
    const testDb = await createTestDb();
    try {
      const chain = countingChain(hardhatChain());
      const indexer = newIndexer(testDb, fixture, chain, { headPollMs: HEAD_POLL_MS });
      await startLevel(indexer);
      await sleep(HEAD_POLL_MS * 2);
      const before = { ...chain.calls };
      await until(() => chain.calls.blockNumber >= before.blockNumber + 5, "five head polls");
      expect(chain.calls.block, "no block read while the head stays").to.equal(before.block);
      expect(chain.calls.logs, "no getLogs while the head stays").to.equal(before.logs);

      const { block, taskId } = await newTaskBlock(fixture);
      await indexer.waitForBlock(block, WOKEN_WITHIN_MS);
      expect(await findTaskById(testDb.db, taskId), "the new task is queryable").to.not.equal(undefined);
    } finally {
      await testDb.cleanup();
    }
  });

  it("with neither a subscription nor a head poll, waits out the poll interval; stop() ends that wait at once", async () => {
    const fixture = await loadFixture(deployEscrowFixture);
    const testDb = await createTestDb();
    try {
      const indexer = newIndexer(testDb, fixture, hardhatChain(), { headPollMs: 0 });
      await startLevel(indexer);
      const { block } = await newTaskBlock(fixture);
      await expect(indexer.waitForBlock(block, 1_000)).to.be.rejectedWith(/did not reach block/);

      const started = Date.now();
      await indexer.stop();
      expect(Date.now() - started, "stop() during a 60 s wait").to.be.below(1_000);
    } finally {
      await testDb.cleanup();
    }
  });

  it("falls back to the head poll when the node refuses the subscription", async () => {
    const fixture = await loadFixture(deployEscrowFixture);
    const testDb = await createTestDb();
    try {
      const entries: LogEntry[] = [];
      let tries = 0;
      const refusing: HeadSource = {
        subscribe: async () => {
          tries++;
          throw Object.assign(new Error("the method eth_subscribe does not exist"), { code: -32601 });
        },
      };
      const chain = { ...hardhatChain(), heads: refusing };
      const indexer = newIndexer(testDb, fixture, chain, { headPollMs: HEAD_POLL_MS }, recordingLogger(entries));
      await startLevel(indexer);
      await until(() => entries.some((e) => e.msg.startsWith("new-head subscription refused")), "the refusal logged");

      const { block } = await newTaskBlock(fixture);
      await indexer.waitForBlock(block, WOKEN_WITHIN_MS);
      expect(tries, "no new try before RESUBSCRIBE_AFTER_MS").to.equal(1);
      expect(entries.filter((e) => e.level === "warn")).to.have.length(1);
    } finally {
      await testDb.cleanup();
    }
  });

  it("skips the head poll while subscribed, and polls again when the subscription is lost", async () => {
    const fixture = await loadFixture(deployEscrowFixture);
    const testDb = await createTestDb();
    try {
      const entries: LogEntry[] = [];
      // A subscription that never announces anything: only the head poll can wake the indexer.
      const heads = watchedHeads();
      const chain = countingChain({ ...hardhatChain(), heads: heads.source });
      const indexer = newIndexer(testDb, fixture, chain, { headPollMs: HEAD_POLL_MS }, recordingLogger(entries));
      await startLevel(indexer);
      const { onLost } = await heads.subscribed;
      await sleep(HEAD_POLL_MS * 2);
      const before = chain.calls.blockNumber;
      await sleep(HEAD_POLL_MS * 8);
      expect(chain.calls.blockNumber, "no head poll while subscribed").to.equal(before);

      onLost(new Error("socket closed"));
      await until(() => chain.calls.blockNumber >= before + 3, "the head poll to resume");
      const { block } = await newTaskBlock(fixture);
      await indexer.waitForBlock(block, WOKEN_WITHIN_MS);
      expect(entries.map((e) => e.msg)).to.include("new-head subscription lost; polling the head");
    } finally {
      await testDb.cleanup();
    }
  });

  it("stop() while waiting for a head ends at once and ends the subscription", async () => {
    const fixture = await loadFixture(deployEscrowFixture);
    const testDb = await createTestDb();
    try {
      const listeners = network.provider.listenerCount("message");
      const heads = watchedHeads(eip1193Heads(network.provider));
      const indexer = newIndexer(testDb, fixture, { ...hardhatChain(), heads: heads.source }, { headPollMs: 0 });
      await startLevel(indexer);
      await heads.subscribed;
      expect(network.provider.listenerCount("message"), "listening to the node").to.equal(listeners + 1);

      const started = Date.now();
      await indexer.stop();
      expect(Date.now() - started, "stop() during a 60 s wait").to.be.below(1_000);
      expect(heads.unsubscribes, "the subscription ended").to.equal(1);
      expect(network.provider.listenerCount("message"), "no listener left").to.equal(listeners);
      expect(indexer.status().state).to.equal("stopped");
    } finally {
      await testDb.cleanup();
    }
  });
});
