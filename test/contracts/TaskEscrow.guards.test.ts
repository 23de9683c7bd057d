/**
 * The guards every state-changing entry point carries (re-entrancy, pause) and the rarer branches of the open-task
 * dispute rules, each exercised once: the re-entrancy guard of every guarded function, reached from inside a payout.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import {
  CATEGORY,
  DAY,
  EVIDENCE_HASH,
  OPEN_SALT,
  PHASE,
  STATUS,
  TASK_HASH,
  USDC,
  ZONE,
  commitOpen,
  deployEscrowFixture,
  openPhaseStarts,
} from "../helpers/fixtures";
import { escrowEventNames } from "../helpers/events";

const NATIVE = ethers.ZeroAddress;
const OTHER_HASH = ethers.id("another delivery");

/** The escrow with native currency allowed and a ReentrantReceiver as its admin (it accepted the transfer). */
async function contractAdminFixture() {
  const base = await deployEscrowFixture();
  const { escrow, admin } = base;
  await escrow.connect(admin).allowToken(NATIVE);
  const receiver = await ethers.deployContract("ReentrantReceiver");
  const receiverAddress = await receiver.getAddress();
  const escrowAddress = await escrow.getAddress();
  await escrow.connect(admin).proposeAdmin(receiverAddress);
  await receiver.execute(escrowAddress, escrow.interface.encodeFunctionData("acceptAdmin"));
  return { ...base, receiver, receiverAddress, escrowAddress };
}

/** Open task 1 (100 USDC): `worker` and `stranger` reveal, `others[0]` commits only; at the start of Selection. */
async function twoRevealedFixture() {
  const base = await deployEscrowFixture();
  const { escrow, usdc, poster, worker, stranger, others } = base;
  await escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), USDC(100), CATEGORY, ZONE, DAY);
  await commitOpen(escrow, worker, 1n, EVIDENCE_HASH);
  await commitOpen(escrow, stranger, 1n, OTHER_HASH);
  await commitOpen(escrow, others[0], 1n, EVIDENCE_HASH);
  const starts = await openPhaseStarts(escrow, 1n);
  await time.increaseTo(starts.reveal);
  await escrow.connect(worker).revealOpen(1n, EVIDENCE_HASH, OPEN_SALT);
  await escrow.connect(stranger).revealOpen(1n, OTHER_HASH, OPEN_SALT);
  await time.increaseTo(starts.selection);
  return { ...base, taskId: 1n, starts };
}

describe("TaskEscrow", () => {
  describe("re-entrancy guard of every guarded entry point", () => {
    it("refuses each one called back from inside a payout", async () => {
      const { escrow, receiver, escrowAddress, worker } = await loadFixture(contractAdminFixture);
      const i = escrow.interface;
      const labels = [TASK_HASH, NATIVE, 1n, CATEGORY, ZONE, DAY] as const;
      const calls: [string, string][] = [
        ["createTask", i.encodeFunctionData("createTask", [...labels])],
        ["createTaskWithVerifier", i.encodeFunctionData("createTaskWithVerifier", [...labels, worker.address])],
        ["createTasks", i.encodeFunctionData("createTasks", [NATIVE, []])],
        ["createTaskOpen", i.encodeFunctionData("createTaskOpen", [...labels])],
        ["completeVerification", i.encodeFunctionData("completeVerification", [1n, true])],
        ["completeVerificationWithTEE", i.encodeFunctionData("completeVerificationWithTEE", [1n, true, "0x", "0x"])],
        ["cancelTask", i.encodeFunctionData("cancelTask", [1n])],
        ["claimTimeout", i.encodeFunctionData("claimTimeout", [1n])],
        ["raiseDispute", i.encodeFunctionData("raiseDispute", [1n])],
        ["resolveDispute", i.encodeFunctionData("resolveDispute", [1n, true])],
        ["escalateUnjudgedWork", i.encodeFunctionData("escalateUnjudgedWork", [1n])],
        ["releaseUnjudgedWork", i.encodeFunctionData("releaseUnjudgedWork", [1n])],
        ["commitOpen", i.encodeFunctionData("commitOpen", [1n, EVIDENCE_HASH])],
        ["revealOpen", i.encodeFunctionData("revealOpen", [1n, EVIDENCE_HASH, OPEN_SALT])],
        ["selectWinner", i.encodeFunctionData("selectWinner", [1n, worker.address])],
        ["releaseOpenDefault", i.encodeFunctionData("releaseOpenDefault", [1n])],
        ["reclaimOpen", i.encodeFunctionData("reclaimOpen", [1n])],
        ["contestOpen", i.encodeFunctionData("contestOpen", [1n])],
        ["judgeOpen", i.encodeFunctionData("judgeOpen", [1n, worker.address])],
        ["splitUnruled", i.encodeFunctionData("splitUnruled", [1n])],
        ["withdraw", i.encodeFunctionData("withdraw", [NATIVE, worker.address])],
        ["sweepSurplus", i.encodeFunctionData("sweepSurplus", [NATIVE, worker.address])],
      ];
      const guard = i.getError("ReentrancyGuardReentrantCall")!.selector;
      const seen: string[] = [];
      for (const [name, payload] of calls) {
        // The receiver posts a native task and cancels it: the refund calls back into the escrow with `payload`.
        const id = await escrow.nextTaskId();
        await receiver.execute(escrowAddress, i.encodeFunctionData("createTask", [...labels]), { value: 1n });
        await receiver.setMode(2, escrowAddress, payload); // Reenter: one call back, its revert recorded
        await receiver.execute(escrowAddress, i.encodeFunctionData("cancelTask", [id]));
        if ((await receiver.lastReentryError()).startsWith(guard)) seen.push(name);
      }
      expect(seen).to.deep.equal(calls.map(([name]) => name));
    });
  });

  describe("pause gate of the open-task dispute functions", () => {
    it("refuses contestOpen, judgeOpen and splitUnruled while paused", async () => {
      const { escrow, admin, poster, verifier, stranger, taskId } = await loadFixture(twoRevealedFixture);
      await escrow.connect(admin).pause();
      await expect(escrow.connect(poster).contestOpen(taskId)).to.be.revertedWithCustomError(escrow, "EnforcedPause");
      await expect(escrow.connect(verifier).judgeOpen(taskId, ethers.ZeroAddress)).to.be.revertedWithCustomError(
        escrow,
        "EnforcedPause",
      );
      await expect(escrow.connect(stranger).splitUnruled(taskId)).to.be.revertedWithCustomError(
        escrow,
        "EnforcedPause",
      );
    });
  });

  describe("open-task disputes", () => {
    it("the poster's dispute needs a revealed submission", async () => {
      const { escrow, usdc, poster, worker } = await loadFixture(deployEscrowFixture);
      await escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), USDC(1), CATEGORY, ZONE, DAY);
      await commitOpen(escrow, worker, 1n, EVIDENCE_HASH);
      await time.increaseTo((await openPhaseStarts(escrow, 1n)).selection);
      await expect(escrow.connect(poster).contestOpen(1n)).to.be.revertedWithCustomError(
        escrow,
        "NoRevealedSubmission",
      );
    });

    it("a submitter's contest needs a pick, and a revealed submission of its own", async () => {
      const { escrow, poster, worker, others, taskId } = await loadFixture(twoRevealedFixture);
      await expect(escrow.connect(worker).contestOpen(taskId)).to.be.revertedWithCustomError(escrow, "NotSubmitter");
      await escrow.connect(poster).selectWinner(taskId, worker.address);
      await expect(escrow.connect(others[0]).contestOpen(taskId)).to.be.revertedWithCustomError(escrow, "NotSubmitter");
    });

    it("judgeOpen needs a disputed task and a revealed winner", async () => {
      const { escrow, poster, verifier, others, taskId } = await loadFixture(twoRevealedFixture);
      await expect(escrow.connect(verifier).judgeOpen(taskId, ethers.ZeroAddress))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Funded, STATUS.Disputed);
      await escrow.connect(poster).contestOpen(taskId);
      await expect(escrow.connect(verifier).judgeOpen(taskId, others[0].address)).to.be.revertedWithCustomError(
        escrow,
        "NotSubmitter",
      );
    });

    it("the judge of an open task cannot commit to it", async () => {
      const { escrow, usdc, poster, verifier } = await loadFixture(deployEscrowFixture);
      await escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), USDC(1), CATEGORY, ZONE, DAY);
      await usdc.mint(verifier.address, USDC(1));
      await usdc.connect(verifier).approve(await escrow.getAddress(), ethers.MaxUint256);
      await expect(commitOpen(escrow, verifier, 1n, EVIDENCE_HASH)).to.be.revertedWithCustomError(
        escrow,
        "SelfAssignment",
      );
    });

    it("a dispute keeps the task in Selection when a backdated pause moves the windows back", async () => {
      const { escrow, admin, poster, taskId, starts } = await loadFixture(twoRevealedFixture);
      await escrow.connect(poster).contestOpen(taskId);
      await escrow.connect(admin).pause();
      await escrow.connect(admin).recordPauseStart(starts.selection - 60n);
      await escrow.connect(admin).unpause();
      expect(await escrow.effectiveDeadline(taskId)).to.be.greaterThan(BigInt(await time.latest()) - BigInt(DAY));
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Selection);
    });

    it("an open task keeps labels other than the defaults", async () => {
      const { escrow, usdc, poster } = await loadFixture(deployEscrowFixture);
      await escrow
        .connect(poster)
        .createTaskOpen(TASK_HASH, await usdc.getAddress(), USDC(1), "design", "eu-west", DAY);
      const task = await escrow.getTask(1n);
      expect([task.category, task.locationZone]).to.deep.equal(["design", "eu-west"]);
    });
  });

  describe("splits and batches at the edges", () => {
    it("a one-unit dispute left unruled credits its unit to the poster and nothing to the worker", async () => {
      const { escrow, usdc, verifier, poster, worker, stranger } = await loadFixture(deployEscrowFixture);
      await escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), 1n, CATEGORY, ZONE, DAY);
      await escrow.connect(verifier).marketplaceAssign(1n, worker.address);
      await escrow.connect(worker).submitEvidence(1n, EVIDENCE_HASH);
      await escrow.connect(poster).raiseDispute(1n);
      await time.increase(await escrow.DISPUTE_WINDOW());
      const tx = await escrow.connect(stranger).splitUnruled(1n);
      expect(await escrowEventNames(escrow, tx)).to.deep.equal(["Credited", "UnruledSplit"]);
      await expect(tx).to.emit(escrow, "UnruledSplit").withArgs(1n, worker.address, 0n, poster.address, 1n, 0n);
    });

    it("splitUnruled leaves an escalation of unjudged work to releaseUnjudgedWork", async () => {
      const { escrow, usdc, verifier, poster, worker } = await loadFixture(deployEscrowFixture);
      await escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), USDC(1), CATEGORY, ZONE, DAY);
      await escrow.connect(verifier).marketplaceAssign(1n, worker.address);
      await escrow.connect(worker).submitEvidence(1n, EVIDENCE_HASH);
      await time.increase(DAY);
      await escrow.connect(poster).claimTimeout(1n);
      await time.increase(await escrow.DISPUTE_WINDOW());
      await expect(escrow.connect(worker).splitUnruled(1n)).to.be.revertedWithCustomError(
        escrow,
        "EscalatedForAdjudication",
      );
    });

    it("createTasks refuses an empty batch", async () => {
      const { escrow, usdc, poster } = await loadFixture(deployEscrowFixture);
      await expect(escrow.connect(poster).createTasks(await usdc.getAddress(), [])).to.be.revertedWithCustomError(
        escrow,
        "EmptyBatch",
      );
    });

    it("createTasks refuses a batch over MAX_BATCH", async () => {
      const { escrow, usdc, poster } = await loadFixture(deployEscrowFixture);
      const task = {
        taskHash: TASK_HASH,
        amount: 1n,
        category: CATEGORY,
        locationZone: ZONE,
        duration: DAY,
        verifierAgent: ethers.ZeroAddress,
      };
      await expect(escrow.connect(poster).createTasks(await usdc.getAddress(), Array(51).fill(task)))
        .to.be.revertedWithCustomError(escrow, "BatchTooLarge")
        .withArgs(51n, 50n);
    });
  });
});
