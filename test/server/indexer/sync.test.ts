import { expect } from "chai";
import { ethers, network } from "hardhat";
import { loadFixture, mine, time } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture, DAY, TASK_HASH, USDC } from "../../helpers/fixtures";
import { createTestDb } from "../../helpers/db";
import {
  expectConfigMatchesChain,
  expectProjectionMatchesChain,
  hardhatChain,
  makeIndexer,
  syncToHead,
} from "../../helpers/indexer";
import { runRandomScenario } from "../../helpers/scenario";
import { countEvents } from "../../../server/db/repositories/escrowEvents";
import { getCheckpoint, setCheckpoint } from "../../../server/db/repositories/checkpoints";
import { CHECKPOINT_NAME } from "../../../server/indexer/sync";
import {
  TASK_COLUMNS,
  findTasksByHash,
  listOpenTasks,
  listTasksByPoster,
  taskStats,
} from "../../../server/db/repositories/tasks";

async function actorsFixture() {
  const base = await deployEscrowFixture();
  const { poster, stranger, worker, others } = base;
  return { ...base, posters: [poster, stranger], workers: [worker, others[0], others[1]] };
}

describe("indexer: sync against a Hardhat chain", () => {
  it("projects every task exactly as getTask reports it after a random history", async () => {
    const actors = await loadFixture(actorsFixture);
    const { escrow, book, usdc } = actors;
    const testDb = await createTestDb();
    try {
      const indexer = makeIndexer(testDb, book.escrow.proxy, book.startBlock, { maxBlockRange: 7 });
      for (const seed of [11, 12]) {
        await runRandomScenario(actors, seed, 90);
        await syncToHead(indexer);
        const tasks = await expectProjectionMatchesChain(testDb.db, escrow);
        expect(tasks).to.be.greaterThan(5);
      }
      await expectConfigMatchesChain(testDb.db, escrow, [await usdc.getAddress()]);
    } finally {
      await testDb.cleanup();
    }
  });

  it("replaying ranges it already indexed changes nothing", async () => {
    const actors = await loadFixture(actorsFixture);
    const { escrow, book } = actors;
    const testDb = await createTestDb();
    try {
      await runRandomScenario(actors, 21, 60);
      const indexer = makeIndexer(testDb, book.escrow.proxy, book.startBlock, { maxBlockRange: 5 });
      await syncToHead(indexer);
      const events = await countEvents(testDb.db);
      const tasksBefore = await testDb.db("tasks").orderBy("task_id");
      // Move the checkpoint back to the start: every range is fetched and written again.
      await setCheckpoint(testDb.db, "base", CHECKPOINT_NAME, {
        blockNumber: book.startBlock,
        blockHash: (await ethers.provider.getBlock(book.startBlock))!.hash!,
      });
      await syncToHead(indexer);
      expect(await countEvents(testDb.db)).to.equal(events);
      expect(await testDb.db("tasks").orderBy("task_id")).to.deep.equal(tasksBefore);
      await expectProjectionMatchesChain(testDb.db, escrow);
    } finally {
      await testDb.cleanup();
    }
  });

  it("rolls a reorg back to the common ancestor and re-applies the new branch", async () => {
    const actors = await loadFixture(actorsFixture);
    const { escrow, book, usdc, poster, verifier, worker } = actors;
    const testDb = await createTestDb();
    try {
      await runRandomScenario(actors, 31, 40);
      const indexer = makeIndexer(testDb, book.escrow.proxy, book.startBlock, { maxBlockRange: 4 });
      await syncToHead(indexer);
      const snapshot = await network.provider.send("evm_snapshot");
      const forkPoint = await ethers.provider.getBlockNumber();

      // Branch A: a task and its assignment, indexed.
      await escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), USDC(7), "general", "branch-a", DAY);
      const branchAId = Number(await escrow.nextTaskId()) - 1;
      await escrow.connect(verifier).marketplaceAssign(branchAId, worker.address);
      await syncToHead(indexer);
      expect(await findTasksByHash(testDb.db, TASK_HASH)).to.have.length(1);

      // Branch B replaces it: different blocks at the same heights, and a longer chain.
      await network.provider.send("evm_revert", [snapshot]);
      await time.increase(17);
      await escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), USDC(9), "general", "branch-b", DAY);
      await mine(5);
      expect(await ethers.provider.getBlockNumber()).to.be.greaterThan(forkPoint + 2);
      await syncToHead(indexer);

      await expectProjectionMatchesChain(testDb.db, escrow);
      const [only] = await findTasksByHash(testDb.db, TASK_HASH);
      expect(only.locationZone).to.equal("branch-b");
      expect(only.amount).to.equal(USDC(9).toString());
      const stale = await testDb.db("escrow_events").where("args", "like", "%branch-a%");
      expect(stale).to.have.length(0);
      const checkpoint = await getCheckpoint(testDb.db, "base", CHECKPOINT_NAME);
      expect(checkpoint!.blockHash).to.equal((await ethers.provider.getBlock(checkpoint!.blockNumber))!.hash);
    } finally {
      await testDb.cleanup();
    }
  });

  it("resumes a backfill interrupted by a restart with nothing lost or doubled", async () => {
    const actors = await loadFixture(actorsFixture);
    const { escrow, book } = actors;
    const testDb = await createTestDb();
    try {
      await runRandomScenario(actors, 41, 80);
      const first = makeIndexer(testDb, book.escrow.proxy, book.startBlock, { maxBlockRange: 3 });
      for (let i = 0; i < 8; i++) await first.step();
      const halfway = await getCheckpoint(testDb.db, "base", CHECKPOINT_NAME);
      expect(halfway!.blockNumber).to.be.lessThan(await ethers.provider.getBlockNumber());
      await first.stop();

      const second = makeIndexer(testDb, book.escrow.proxy, book.startBlock, { maxBlockRange: 3 });
      await syncToHead(second);
      await expectProjectionMatchesChain(testDb.db, escrow);
      const duplicates = await testDb
        .db("escrow_events")
        .select("tx_hash", "log_index")
        .count({ n: "*" })
        .groupBy("tx_hash", "log_index")
        .having(testDb.db.raw("count(*) > 1"));
      expect(duplicates).to.have.length(0);
    } finally {
      await testDb.cleanup();
    }
  });

  it("a crash inside a range's transaction leaves the index as it was before the range", async () => {
    const actors = await loadFixture(actorsFixture);
    const { escrow, book } = actors;
    const testDb = await createTestDb();
    try {
      await runRandomScenario(actors, 51, 60);
      let crashes = 0;
      const crashing = makeIndexer(testDb, book.escrow.proxy, book.startBlock, {
        maxBlockRange: 4,
        faults: {
          beforeCommit: ({ from }) => {
            if (from > book.startBlock + 10 && crashes === 0) {
              crashes++;
              throw new Error("simulated crash after the writes, before the commit");
            }
          },
        },
      });
      let before: Awaited<ReturnType<typeof getCheckpoint>>;
      let eventsBefore = 0;
      for (;;) {
        before = await getCheckpoint(testDb.db, "base", CHECKPOINT_NAME);
        eventsBefore = await countEvents(testDb.db);
        try {
          if (!(await crashing.step())) break;
        } catch (error) {
          expect((error as Error).message).to.match(/simulated crash/);
          break;
        }
      }
      expect(crashes).to.equal(1);
      expect(await getCheckpoint(testDb.db, "base", CHECKPOINT_NAME)).to.deep.equal(before);
      expect(await countEvents(testDb.db)).to.equal(eventsBefore);
      await crashing.stop();

      const restarted = makeIndexer(testDb, book.escrow.proxy, book.startBlock, { maxBlockRange: 4 });
      await syncToHead(restarted);
      await expectProjectionMatchesChain(testDb.db, escrow);
    } finally {
      await testDb.cleanup();
    }
  });

  it("reads each range of a backfill once, the next range's logs before the current range commits", async () => {
    const actors = await loadFixture(actorsFixture);
    const { escrow, book } = actors;
    const testDb = await createTestDb();
    try {
      await runRandomScenario(actors, 61, 40);
      const reads: { from: number; to: number }[] = [];
      const chain = hardhatChain();
      const readAheadAtCommit: boolean[] = [];
      const indexer = makeIndexer(testDb, book.escrow.proxy, book.startBlock, {
        maxBlockRange: 4,
        chain: {
          ...chain,
          logs: (address, from, to) => {
            reads.push({ from, to });
            return chain.logs(address, from, to);
          },
        },
        faults: { beforeCommit: ({ to }) => void readAheadAtCommit.push(reads.some((r) => r.from === to + 1)) },
      });
      await syncToHead(indexer);
      await expectProjectionMatchesChain(testDb.db, escrow);
      const head = await ethers.provider.getBlockNumber();
      // Every block read once, in order, in ranges of the configured size.
      expect(reads[0].from).to.equal(book.startBlock);
      expect(reads[reads.length - 1].to).to.equal(head);
      for (const [i, r] of reads.entries()) {
        if (i > 0) expect(r.from).to.equal(reads[i - 1].to + 1);
        expect(r.to - r.from + 1).to.be.at.most(4);
      }
      // Each range but the last was followed by its successor's read before it committed.
      expect(readAheadAtCommit).to.have.length(reads.length);
      expect(readAheadAtCommit.slice(0, -1).every(Boolean)).to.equal(true);
      expect(readAheadAtCommit[readAheadAtCommit.length - 1]).to.equal(false);
    } finally {
      await testDb.cleanup();
    }
  });

  it("inserts each task once, in the range that created it, and upserts it in later ranges", async () => {
    const actors = await loadFixture(actorsFixture);
    const { escrow, book } = actors;
    const testDb = await createTestDb();
    try {
      await runRandomScenario(actors, 61, 40);
      // The task ids each statement into tasks wrote, by kind (with or without the upsert's conflict clause).
      const written = { insert: [] as number[], upsert: [] as number[] };
      const pg = testDb.db.client.config.client === "pg";
      const onQuery = (q: { sql: string; bindings?: unknown[] }) => {
        if (!/^insert into ["`]tasks["`]/i.test(q.sql.trim())) return;
        const b = q.bindings ?? [];
        // task_id is the second column: PostgreSQL binds one array per column, SQLite 30 values per row.
        const ids = pg ? (b[1] as unknown[]) : b.filter((_, i) => i % TASK_COLUMNS.length === 1);
        written[/on conflict/i.test(q.sql) ? "upsert" : "insert"].push(...ids.map(Number));
      };
      testDb.db.on("query", onQuery);
      const indexer = makeIndexer(testDb, book.escrow.proxy, book.startBlock, { maxBlockRange: 4 });
      await syncToHead(indexer);
      testDb.db.off("query", onQuery);
      await expectProjectionMatchesChain(testDb.db, escrow);
      const stored = (await testDb.db("tasks").select("task_id")).map((r) => Number(r.task_id)).sort((a, b) => a - b);
      expect(written.insert.slice().sort((a, b) => a - b)).to.deep.equal(stored);
      expect(written.upsert.length).to.be.greaterThan(0);
    } finally {
      await testDb.cleanup();
    }
  });

  it("a reorg of the range read ahead: the index ends on the new branch", async () => {
    const actors = await loadFixture(actorsFixture);
    const { escrow, book, usdc, poster } = actors;
    const testDb = await createTestDb();
    try {
      await runRandomScenario(actors, 71, 30);
      // The fork point ends a range of 4 from the start block, so the range after it is read ahead from branch A.
      const head = await ethers.provider.getBlockNumber();
      await mine(3 - ((head - book.startBlock) % 4));
      const forkPoint = await ethers.provider.getBlockNumber();
      expect((forkPoint - book.startBlock + 1) % 4).to.equal(0);
      const snapshot = await network.provider.send("evm_snapshot");
      await escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), USDC(7), "general", "branch-a", DAY);
      await mine(8);
      const indexer = makeIndexer(testDb, book.escrow.proxy, book.startBlock, { maxBlockRange: 4 });
      while ((await getCheckpoint(testDb.db, "base", CHECKPOINT_NAME))?.blockNumber !== forkPoint) {
        expect(await indexer.step()).to.equal(true);
      }

      await network.provider.send("evm_revert", [snapshot]);
      await time.increase(17);
      await escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), USDC(9), "general", "branch-b", DAY);
      await mine(10);
      await syncToHead(indexer);

      await expectProjectionMatchesChain(testDb.db, escrow);
      const [only] = await findTasksByHash(testDb.db, TASK_HASH);
      expect(only.locationZone).to.equal("branch-b");
      expect(await testDb.db("escrow_events").where("args", "like", "%branch-a%")).to.have.length(0);
    } finally {
      await testDb.cleanup();
    }
  });

  it("answers the API's queries: open tasks, by hash, by poster, stats", async () => {
    const { escrow, book, usdc, poster, stranger, verifier, worker, admin } = await loadFixture(actorsFixture);
    const testDb = await createTestDb();
    try {
      const token = await usdc.getAddress();
      const hashes = [1, 2, 3, 4].map((n) => ethers.sha256(ethers.toUtf8Bytes(`brief ${n}`)));
      await escrow.connect(poster).createTask(hashes[0], token, USDC(1), "general", "global", 2 * 3600);
      await escrow.connect(poster).createTask(hashes[1], token, USDC(2), "general", "global", DAY);
      await escrow.connect(stranger).createTask(hashes[2], token, USDC(3), "general", "global", DAY);
      await escrow.connect(poster).createTask(hashes[3], token, USDC(4), "general", "global", DAY);
      await escrow.connect(verifier).marketplaceAssign(4, worker.address);
      await escrow.connect(worker).submitEvidence(4, TASK_HASH);
      await escrow.connect(verifier).completeVerification(4, true);
      const indexer = makeIndexer(testDb, book.escrow.proxy, book.startBlock);
      await syncToHead(indexer);

      const now = await time.latest();
      const open = await listOpenTasks(testDb.db, { now, limit: 10, offset: 0 });
      expect(open.total).to.equal(3);
      expect(open.tasks.map((t) => t.taskId)).to.deep.equal([3, 2, 1]);
      const page = await listOpenTasks(testDb.db, { now, limit: 1, offset: 1 });
      expect(page.tasks.map((t) => t.taskId)).to.deep.equal([2]);
      expect(page.total).to.equal(3);

      // Task 1 expires after two hours; a pause of an hour after creation pushes its deadline by an hour.
      await escrow.connect(admin).pause();
      await time.increase(3600);
      await escrow.connect(admin).unpause();
      await time.increase(3600 + 60);
      await syncToHead(indexer);
      const later = await time.latest();
      expect(Number(await escrow.effectiveDeadline(1))).to.be.greaterThan(later);
      expect((await listOpenTasks(testDb.db, { now: later, limit: 10, offset: 0 })).total).to.equal(3);
      await time.increase(3600);
      const expired = await time.latest();
      expect(await escrow.isTaskExpired(1)).to.equal(true);
      expect(
        (await listOpenTasks(testDb.db, { now: expired, limit: 10, offset: 0 })).tasks.map((t) => t.taskId),
      ).to.deep.equal([3, 2]);

      expect((await findTasksByHash(testDb.db, hashes[2]))[0].poster).to.equal(stranger.address.toLowerCase());
      const mine = await listTasksByPoster(testDb.db, poster.address, { limit: 10, offset: 0 });
      expect(mine.tasks.map((t) => t.taskId)).to.deep.equal([4, 2, 1]);
      const stats = await taskStats(testDb.db, expired);
      expect(stats).to.deep.equal({ openTasks: 2, completedTasks: 1 });
      const completed = (await listTasksByPoster(testDb.db, poster.address, { limit: 1, offset: 0 })).tasks[0];
      expect(completed.payout).to.equal(USDC(3.6).toString());
      expect(completed.feePaid).to.equal(USDC(0.4).toString());
    } finally {
      await testDb.cleanup();
    }
  });
});
