/**
 * server/indexer/marketEvents.ts: the push events of escrow logs are written in the indexer's range transaction, so
 * a range that fails to commit leaves no event and its retry writes each event once; tasks the marketplace did not
 * list have none; writing the same logs again adds nothing.
 */
import { expect } from "chai";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { DAY, EVIDENCE_HASH, TASK_HASH, USDC, CATEGORY, ZONE, deployEscrowFixture } from "../../helpers/fixtures";
import { createTestDb } from "../../helpers/db";
import { makeIndexer, syncToHead } from "../../helpers/indexer";
import { insertListing } from "../../../server/db/repositories/listings";
import { listEventsAfter } from "../../../server/db/repositories/marketEvents";
import { listEventsOfTasks } from "../../../server/db/repositories/escrowEvents";
import { getTasks } from "../../../server/db/repositories/tasks";
import { writeChainEvents } from "../../../server/indexer/marketEvents";

describe("indexer: push events of escrow logs", function () {
  this.timeout(60_000);

  it("writes them with the range (none when it fails to commit), once, and only for listed tasks", async () => {
    const { escrow, usdc, poster, verifier, worker, book } = await loadFixture(deployEscrowFixture);
    const testDb = await createTestDb();
    try {
      const token = await usdc.getAddress();
      const fund = await escrow.connect(poster).createTask(TASK_HASH, token, USDC(10), CATEGORY, ZONE, DAY);
      await fund.wait();
      await (
        await escrow.connect(poster).createTask(`0x${"77".repeat(32)}`, token, USDC(10), CATEGORY, ZONE, DAY)
      ).wait();
      await insertListing(testDb.db, {
        taskId: 1,
        taskHash: TASK_HASH.toLowerCase(),
        chain: "base",
        poster: poster.address.toLowerCase(),
        txHash: fund.hash.toLowerCase(),
        privacy: "public",
        verificationMode: "manual",
        verificationCriteria: null,
        verifierAddress: null,
        rootHash: null,
        wrappedKeys: null,
        targetExecutor: null,
        serviceId: null,
        serviceTerms: null,
        publicBrief: null,
        custodyWrappedKey: null,
        token: token.toLowerCase(),
        amount: USDC(10).toString(),
        deadline: null,
        listedAt: 1,
        capabilities: [],
      });
      for (const id of [1, 2]) await (await escrow.connect(verifier).marketplaceAssign(id, worker.address)).wait();
      await (await escrow.connect(worker).submitEvidence(1, EVIDENCE_HASH)).wait();
      await (await escrow.connect(verifier).completeVerification(1, true)).wait();

      let failing = true;
      const indexer = makeIndexer(testDb, book.escrow.proxy, book.startBlock, {
        faults: {
          beforeCommit: () => {
            if (failing) throw new Error("crash before commit");
          },
        },
      });
      await expect(indexer.step()).to.be.rejectedWith("crash before commit");
      expect(await listEventsAfter(testDb.db, 0, 100)).to.deep.equal([]);
      failing = false;
      await syncToHead(indexer);

      const events = await listEventsAfter(testDb.db, 0, 100);
      expect(events.map((e) => [e.type, e.taskId])).to.deep.equal([
        ["task.assigned", 1],
        ["task.submitted", 1],
        ["task.verdict", 1],
        ["task.settled", 1],
      ]);
      const w = worker.address.toLowerCase();
      expect(events.every((e) => e.poster === poster.address.toLowerCase() && e.worker === w)).to.equal(true);
      expect(events.every((e) => e.toPoster && e.toWorker && !e.toExecutors && !e.toTarget)).to.equal(true);
      expect(events[2].fields).to.deep.equal({ passed: true, attempt: 1 });
      expect(events[3].fields).to.include({ outcome: "paid" });
      expect(events.map((e) => e.id)).to.deep.equal([...events.map((e) => e.id)].sort((a, b) => a - b));

      // The same logs again (a replay) add nothing.
      const stored = await listEventsOfTasks(testDb.db, "base", [1]);
      const tasks = await getTasks(testDb.db, "base", [1]);
      expect(await testDb.db.transaction((trx) => writeChainEvents(trx, "base", stored, tasks))).to.equal(0);
      expect(await listEventsAfter(testDb.db, 0, 100)).to.have.length(4);
    } finally {
      await testDb.cleanup();
    }
  });
});
