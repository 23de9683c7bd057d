/**
 * Two settlement chains in one database: an indexer per chain, each with its own rows, checkpoint, block hashes and
 * writer lock. Both indexers here read the in-process Hardhat chain (one node stands in for two), so what is tested
 * is the database's separation: a reorg seen by base's indexer rolls back base's rows and leaves arc's as they were.
 */
import { expect } from "chai";
import { ethers, network } from "hardhat";
import { loadFixture, mine, time } from "@nomicfoundation/hardhat-network-helpers";
import type { Knex } from "knex";
import { deployEscrowFixture, DAY, TASK_HASH, USDC } from "../../helpers/fixtures";
import { createTestDb } from "../../helpers/db";
import { makeIndexer, syncToHead } from "../../helpers/indexer";
import { runRandomScenario } from "../../helpers/scenario";
import { getCheckpoint } from "../../../server/db/repositories/checkpoints";
import { findTaskById } from "../../../server/db/repositories/tasks";
import { CHECKPOINT_NAME } from "../../../server/indexer/sync";
import type { ChainName } from "../../../server/escrow/records";

async function actorsFixture() {
  const base = await deployEscrowFixture();
  const { poster, stranger, worker, others } = base;
  return { ...base, posters: [poster, stranger], workers: [worker, others[0], others[1]] };
}

const PER_CHAIN_TABLES = ["tasks", "escrow_events", "blocks", "checkpoints", "allowed_tokens", "escrow_config"];

/** Every row of `chain` in the per-chain tables, in a stable order. */
async function rowsOf(db: Knex, chain: ChainName) {
  const out: Record<string, unknown[]> = {};
  for (const table of PER_CHAIN_TABLES) {
    out[table] = await db(table)
      .where({ chain })
      .orderByRaw("1, 2, 3")
      .then((rows) => rows.map((r) => ({ ...r, recorded_at: undefined, updated_at: undefined })));
  }
  return out;
}

describe("indexer: two chains in one database", () => {
  it("keeps each chain's rows apart: a reorg on base leaves arc's rows untouched", async () => {
    const actors = await loadFixture(actorsFixture);
    const { escrow, book, usdc, poster } = actors;
    const testDb = await createTestDb();
    try {
      await runRandomScenario(actors, 51, 30);
      const base = makeIndexer(testDb, book.escrow.proxy, book.startBlock, { chainName: "base", maxBlockRange: 4 });
      const arc = makeIndexer(testDb, book.escrow.proxy, book.startBlock, { chainName: "arc", maxBlockRange: 7 });
      const snapshot = await network.provider.send("evm_snapshot");
      await escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), USDC(7), "general", "branch-a", DAY);
      const branchAId = Number(await escrow.nextTaskId()) - 1;
      await syncToHead(base);
      await syncToHead(arc);
      // The same on-chain ids on both chains, each its own row.
      expect((await findTaskById(testDb.db, branchAId, "base"))!.locationZone).to.equal("branch-a");
      expect((await findTaskById(testDb.db, branchAId, "arc"))!.locationZone).to.equal("branch-a");
      const arcBefore = await rowsOf(testDb.db, "arc");
      expect(arcBefore.tasks.length).to.be.greaterThan(3);

      // Base's chain reorganises: its indexer rolls back to the common ancestor and applies the new branch.
      await network.provider.send("evm_revert", [snapshot]);
      await time.increase(17);
      await escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), USDC(9), "general", "branch-b", DAY);
      await mine(5);
      await syncToHead(base);

      expect((await findTaskById(testDb.db, branchAId, "base"))!.locationZone).to.equal("branch-b");
      const baseCheckpoint = await getCheckpoint(testDb.db, "base", CHECKPOINT_NAME);
      expect(baseCheckpoint!.blockHash).to.equal((await ethers.provider.getBlock(baseCheckpoint!.blockNumber))!.hash);
      // Arc's rows are exactly as they were: its tasks, events, block hashes, checkpoint and configuration.
      expect(await rowsOf(testDb.db, "arc")).to.deep.equal(arcBefore);
      expect((await findTaskById(testDb.db, branchAId, "arc"))!.locationZone).to.equal("branch-a");
    } finally {
      await testDb.cleanup();
    }
  });

  it("takes one writer lock per chain: base's indexer does not wait for arc's", async () => {
    const { book } = await loadFixture(actorsFixture);
    const testDb = await createTestDb();
    try {
      const arc = makeIndexer(testDb, book.escrow.proxy, book.startBlock, { chainName: "arc" });
      const arcAgain = makeIndexer(testDb, book.escrow.proxy, book.startBlock, {
        chainName: "arc",
        db: testDb.reopen(),
      });
      const base = makeIndexer(testDb, book.escrow.proxy, book.startBlock, {
        chainName: "base",
        db: testDb.reopen(),
      });
      expect(await arc.step()).to.equal(true);
      // A second writer of arc's rows waits for the lock arc's first writer holds...
      await arcAgain.start();
      while (arcAgain.status().state !== "waiting-for-lock") await new Promise((r) => setImmediate(r));
      // ...while base's writer, another chain's, takes its own and indexes.
      expect(await base.step()).to.equal(true);
      expect(base.status().checkpoint).to.equal(await ethers.provider.getBlockNumber());
      expect(arcAgain.status().state).to.equal("waiting-for-lock");
    } finally {
      await testDb.cleanup();
    }
  });
});
