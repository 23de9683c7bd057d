/**
 * The task lifecycle of TaskEscrow, one branch per leaf, as the spec's "States and transitions" table states it:
 * the labels a task is created with, assignment, submission, verdicts, cancellation, timeout claims, disputes, rulings and the release of escalated
 * work; then what a settled task refuses, a native-currency task, an escalation carried across an upgrade of the
 * proxy, and whole paths from funding to settlement.
 *
 * Neighbouring suites own the rest, and this one does not repeat them: EnforcedPause on every call and windows
 * extended by a pause (TaskEscrow.pause), the TEE path (TaskEscrow.tee), reputation and registry reports
 * (TaskEscrow.hooks), configuration setters (TaskEscrow.admin), open-submission tasks (TaskEscrow.open) and
 * upgrades (upgrades).
 *
 * Boundaries are tested to the second with `time.setNextBlockTimestamp`: the transaction under test is mined at
 * exactly the instant named by the test.
 */
import { expect } from "chai";
import { ethers, upgrades } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import {
  CATEGORY,
  DAY,
  EVIDENCE_HASH,
  FEE_BPS,
  STATUS,
  TASK_HASH,
  ZONE,
  agentVerifiedTaskFixture,
  assignedTaskFixture,
  deployEscrowFixture,
  disputedTaskFixture,
  escalatedTaskFixture,
  failedVerdictFixture,
  fundedTaskFixture,
  submittedTaskFixture,
} from "../helpers/fixtures";
import {
  SECOND_EVIDENCE_HASH,
  agentFundedTaskFixture,
  agentSubmittedTaskFixture,
  appealedTaskFixture,
  exhaustedAttemptsFixture,
  nativeSubmittedTaskFixture,
  openTaskFixture,
  payoutSplit,
} from "../helpers/lifecycle";
import { blockTimeOf, escrowEventNames } from "../helpers/events";
import { NOT_PARTY } from "../helpers/model";
import type { TaskEscrow } from "../../typechain-types";

const UNKNOWN_TASK_ID = 404n;

describe("TaskEscrow", () => {
  describe("#marketplaceAssign", () => {
    it("reverts when the caller is not the marketplace verifier", async () => {
      const { escrow, poster, worker, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(poster).marketplaceAssign(taskId, worker.address)).to.be.revertedWithCustomError(
        escrow,
        "NotVerifier",
      );
    });

    it("reverts when the caller is the task's own verifier agent", async () => {
      const { escrow, verifierAgent, worker, taskId } = await loadFixture(agentFundedTaskFixture);
      await expect(
        escrow.connect(verifierAgent).marketplaceAssign(taskId, worker.address),
      ).to.be.revertedWithCustomError(escrow, "NotVerifier");
    });

    it("reverts when the task is an open-submission task", async () => {
      const { escrow, verifier, worker, taskId } = await loadFixture(openTaskFixture);
      await expect(escrow.connect(verifier).marketplaceAssign(taskId, worker.address)).to.be.revertedWithCustomError(
        escrow,
        "OpenTaskNotAssignable",
      );
    });

    it("reverts when the task is already Assigned", async () => {
      const { escrow, verifier, stranger, taskId } = await loadFixture(assignedTaskFixture);
      await expect(escrow.connect(verifier).marketplaceAssign(taskId, stranger.address))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Assigned, STATUS.Funded);
    });

    it("reverts when the task was cancelled", async () => {
      const { escrow, poster, verifier, worker, taskId } = await loadFixture(fundedTaskFixture);
      await escrow.connect(poster).cancelTask(taskId);
      await expect(escrow.connect(verifier).marketplaceAssign(taskId, worker.address))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Cancelled, STATUS.Funded);
    });

    it("reverts when the worker is the zero address", async () => {
      const { escrow, verifier, taskId } = await loadFixture(fundedTaskFixture);
      await expect(
        escrow.connect(verifier).marketplaceAssign(taskId, ethers.ZeroAddress),
      ).to.be.revertedWithCustomError(escrow, "ZeroAddress");
    });

    it("reverts when the worker is the poster", async () => {
      const { escrow, verifier, poster, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(verifier).marketplaceAssign(taskId, poster.address)).to.be.revertedWithCustomError(
        escrow,
        "SelfAssignment",
      );
    });

    it("reverts when the worker is the task's verifier agent", async () => {
      const { escrow, verifier, verifierAgent, taskId } = await loadFixture(agentFundedTaskFixture);
      await expect(
        escrow.connect(verifier).marketplaceAssign(taskId, verifierAgent.address),
      ).to.be.revertedWithCustomError(escrow, "SelfAssignment");
    });

    it("reverts when the worker is the marketplace verifier judging the task", async () => {
      const { escrow, verifier, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(verifier).marketplaceAssign(taskId, verifier.address)).to.be.revertedWithCustomError(
        escrow,
        "SelfAssignment",
      );
    });

    it("assigns the marketplace verifier to a task judged by its own verifier agent", async () => {
      const { escrow, verifier, taskId } = await loadFixture(agentFundedTaskFixture);
      await escrow.connect(verifier).marketplaceAssign(taskId, verifier.address);
      expect((await escrow.getTask(taskId)).worker).to.equal(verifier.address);
    });

    it("reverts when the effective deadline is reached", async () => {
      const { escrow, verifier, worker, taskId } = await loadFixture(fundedTaskFixture);
      await time.setNextBlockTimestamp(await escrow.effectiveDeadline(taskId));
      await expect(escrow.connect(verifier).marketplaceAssign(taskId, worker.address)).to.be.revertedWithCustomError(
        escrow,
        "DeadlineReached",
      );
    });

    it("reverts when the task does not exist", async () => {
      const { escrow, verifier, worker } = await loadFixture(deployEscrowFixture);
      await expect(escrow.connect(verifier).marketplaceAssign(UNKNOWN_TASK_ID, worker.address))
        .to.be.revertedWithCustomError(escrow, "TaskNotFound")
        .withArgs(UNKNOWN_TASK_ID);
    });

    it("assigns one second before the effective deadline", async () => {
      const { escrow, verifier, worker, taskId } = await loadFixture(fundedTaskFixture);
      await time.setNextBlockTimestamp((await escrow.effectiveDeadline(taskId)) - 1n);
      await escrow.connect(verifier).marketplaceAssign(taskId, worker.address);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Assigned);
    });

    it("records the worker, moves the task to Assigned and emits WorkerAssigned", async () => {
      const { escrow, verifier, worker, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(verifier).marketplaceAssign(taskId, worker.address))
        .to.emit(escrow, "WorkerAssigned")
        .withArgs(taskId, worker.address);
      const task = await escrow.getTask(taskId);
      expect(task.worker).to.equal(worker.address);
      expect(task.status).to.equal(STATUS.Assigned);
    });

    it("moves no funds", async () => {
      const { escrow, usdc, verifier, poster, worker, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(verifier).marketplaceAssign(taskId, worker.address)).to.changeTokenBalances(
        usdc,
        [escrow, poster, worker],
        [0n, 0n, 0n],
      );
    });
  });

  describe("#assignWorker", () => {
    it("reverts when the caller is not the poster", async () => {
      const { escrow, stranger, worker, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(stranger).assignWorker(taskId, worker.address)).to.be.revertedWithCustomError(
        escrow,
        "NotAgent",
      );
    });

    it("reverts when the caller is the marketplace verifier", async () => {
      const { escrow, verifier, worker, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(verifier).assignWorker(taskId, worker.address)).to.be.revertedWithCustomError(
        escrow,
        "NotAgent",
      );
    });

    it("reverts when the task is an open-submission task", async () => {
      const { escrow, poster, worker, taskId } = await loadFixture(openTaskFixture);
      await expect(escrow.connect(poster).assignWorker(taskId, worker.address)).to.be.revertedWithCustomError(
        escrow,
        "OpenTaskNotAssignable",
      );
    });

    it("reverts when the task is already Assigned", async () => {
      const { escrow, poster, stranger, taskId } = await loadFixture(assignedTaskFixture);
      await expect(escrow.connect(poster).assignWorker(taskId, stranger.address))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Assigned, STATUS.Funded);
    });

    it("reverts when the worker is the zero address", async () => {
      const { escrow, poster, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(poster).assignWorker(taskId, ethers.ZeroAddress)).to.be.revertedWithCustomError(
        escrow,
        "ZeroAddress",
      );
    });

    it("reverts when the worker is the poster", async () => {
      const { escrow, poster, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(poster).assignWorker(taskId, poster.address)).to.be.revertedWithCustomError(
        escrow,
        "SelfAssignment",
      );
    });

    it("reverts when the worker is the task's verifier agent", async () => {
      const { escrow, poster, verifierAgent, taskId } = await loadFixture(agentFundedTaskFixture);
      await expect(escrow.connect(poster).assignWorker(taskId, verifierAgent.address)).to.be.revertedWithCustomError(
        escrow,
        "SelfAssignment",
      );
    });

    it("reverts when the worker is the marketplace verifier judging the task", async () => {
      const { escrow, poster, verifier, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(poster).assignWorker(taskId, verifier.address)).to.be.revertedWithCustomError(
        escrow,
        "SelfAssignment",
      );
    });

    it("reverts when the task does not exist", async () => {
      const { escrow, poster, worker } = await loadFixture(deployEscrowFixture);
      await expect(escrow.connect(poster).assignWorker(UNKNOWN_TASK_ID, worker.address)).to.be.revertedWithCustomError(
        escrow,
        "NotAgent",
      );
    });

    it("reverts when the effective deadline is reached", async () => {
      const { escrow, poster, worker, taskId } = await loadFixture(fundedTaskFixture);
      await time.setNextBlockTimestamp(await escrow.effectiveDeadline(taskId));
      await expect(escrow.connect(poster).assignWorker(taskId, worker.address)).to.be.revertedWithCustomError(
        escrow,
        "DeadlineReached",
      );
    });

    it("records the worker, moves the task to Assigned and emits WorkerAssigned", async () => {
      const { escrow, poster, worker, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(poster).assignWorker(taskId, worker.address))
        .to.emit(escrow, "WorkerAssigned")
        .withArgs(taskId, worker.address);
      const task = await escrow.getTask(taskId);
      expect(task.worker).to.equal(worker.address);
      expect(task.status).to.equal(STATUS.Assigned);
    });
  });

  describe("#submitEvidence", () => {
    it("reverts when the caller is not the worker", async () => {
      const { escrow, stranger, taskId } = await loadFixture(assignedTaskFixture);
      await expect(escrow.connect(stranger).submitEvidence(taskId, EVIDENCE_HASH)).to.be.revertedWithCustomError(
        escrow,
        "NotWorker",
      );
    });

    it("reverts when the caller is the poster", async () => {
      const { escrow, poster, taskId } = await loadFixture(assignedTaskFixture);
      await expect(escrow.connect(poster).submitEvidence(taskId, EVIDENCE_HASH)).to.be.revertedWithCustomError(
        escrow,
        "NotWorker",
      );
    });

    it("reverts when nobody is assigned", async () => {
      const { escrow, worker, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH)).to.be.revertedWithCustomError(
        escrow,
        "NotWorker",
      );
    });

    it("reverts when evidence already awaits a verdict", async () => {
      const { escrow, worker, taskId } = await loadFixture(submittedTaskFixture);
      await expect(escrow.connect(worker).submitEvidence(taskId, SECOND_EVIDENCE_HASH))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Submitted, STATUS.Assigned);
    });

    it("reverts when the task is Disputed", async () => {
      const { escrow, worker, taskId } = await loadFixture(disputedTaskFixture);
      await expect(escrow.connect(worker).submitEvidence(taskId, SECOND_EVIDENCE_HASH))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Disputed, STATUS.Assigned);
    });

    it("reverts when the evidence hash is zero", async () => {
      const { escrow, worker, taskId } = await loadFixture(assignedTaskFixture);
      await expect(escrow.connect(worker).submitEvidence(taskId, ethers.ZeroHash)).to.be.revertedWithCustomError(
        escrow,
        "EmptyHash",
      );
    });

    it("reverts when the effective deadline is reached", async () => {
      const { escrow, worker, taskId } = await loadFixture(assignedTaskFixture);
      await time.setNextBlockTimestamp(await escrow.effectiveDeadline(taskId));
      await expect(escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH)).to.be.revertedWithCustomError(
        escrow,
        "DeadlineReached",
      );
    });

    it("reverts when a resubmission after a failed verdict comes at the effective deadline", async () => {
      const { escrow, worker, taskId } = await loadFixture(failedVerdictFixture);
      await time.setNextBlockTimestamp(await escrow.effectiveDeadline(taskId));
      await expect(escrow.connect(worker).submitEvidence(taskId, SECOND_EVIDENCE_HASH)).to.be.revertedWithCustomError(
        escrow,
        "DeadlineReached",
      );
    });

    it("reverts when the worker already used every submission", async () => {
      const { escrow, worker, taskId } = await loadFixture(exhaustedAttemptsFixture);
      expect((await escrow.getTask(taskId)).submissionAttempts).to.equal(await escrow.MAX_SUBMISSIONS());
      await expect(escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH)).to.be.revertedWithCustomError(
        escrow,
        "MaxSubmissionAttemptsReached",
      );
    });

    it("accepts a submission one second before the effective deadline", async () => {
      const { escrow, worker, taskId } = await loadFixture(assignedTaskFixture);
      await time.setNextBlockTimestamp((await escrow.effectiveDeadline(taskId)) - 1n);
      await escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Submitted);
    });

    it("stores the evidence, counts the attempt and moves the task to Submitted", async () => {
      const { escrow, worker, taskId } = await loadFixture(assignedTaskFixture);
      await expect(escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH))
        .to.emit(escrow, "EvidenceSubmitted")
        .withArgs(taskId, worker.address, EVIDENCE_HASH, 1);
      const task = await escrow.getTask(taskId);
      expect(task.status).to.equal(STATUS.Submitted);
      expect(task.evidenceHash).to.equal(EVIDENCE_HASH);
      expect(task.submissionAttempts).to.equal(1);
    });

    it("replaces the evidence and counts a second attempt after a failed verdict", async () => {
      const { escrow, worker, taskId } = await loadFixture(failedVerdictFixture);
      await expect(escrow.connect(worker).submitEvidence(taskId, SECOND_EVIDENCE_HASH))
        .to.emit(escrow, "EvidenceSubmitted")
        .withArgs(taskId, worker.address, SECOND_EVIDENCE_HASH, 2);
      const task = await escrow.getTask(taskId);
      expect(task.status).to.equal(STATUS.Submitted);
      expect(task.evidenceHash).to.equal(SECOND_EVIDENCE_HASH);
      expect(task.submissionAttempts).to.equal(2);
    });
  });

  describe("#completeVerification", () => {
    it("reverts when the caller is not a verifier", async () => {
      const { escrow, stranger, taskId } = await loadFixture(submittedTaskFixture);
      await expect(escrow.connect(stranger).completeVerification(taskId, true)).to.be.revertedWithCustomError(
        escrow,
        "NotVerifier",
      );
    });

    it("reverts when the caller is the marketplace verifier of a task with its own verifier agent", async () => {
      const { escrow, verifier, taskId } = await loadFixture(agentSubmittedTaskFixture);
      await expect(escrow.connect(verifier).completeVerification(taskId, true)).to.be.revertedWithCustomError(
        escrow,
        "NotVerifier",
      );
    });

    it("reverts when the caller is a verifier agent the task does not name", async () => {
      const { escrow, verifierAgent, taskId } = await loadFixture(submittedTaskFixture);
      await expect(escrow.connect(verifierAgent).completeVerification(taskId, true)).to.be.revertedWithCustomError(
        escrow,
        "NotVerifier",
      );
    });

    it("reverts when the worker was made the marketplace verifier after assignment", async () => {
      const { escrow, admin, worker, taskId } = await loadFixture(submittedTaskFixture);
      await escrow.connect(admin).setVerifier(worker.address);
      await expect(escrow.connect(worker).completeVerification(taskId, true)).to.be.revertedWithCustomError(
        escrow,
        "NotVerifier",
      );
    });

    it("reverts when the caller is a replaced marketplace verifier", async () => {
      const { escrow, admin, verifier, stranger, taskId } = await loadFixture(submittedTaskFixture);
      await escrow.connect(admin).setVerifier(stranger.address);
      await expect(escrow.connect(verifier).completeVerification(taskId, true)).to.be.revertedWithCustomError(
        escrow,
        "NotVerifier",
      );
    });

    it("reverts when no evidence was submitted", async () => {
      const { escrow, verifier, taskId } = await loadFixture(assignedTaskFixture);
      await expect(escrow.connect(verifier).completeVerification(taskId, true))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Assigned, STATUS.Submitted);
    });

    it("reverts when the evidence already received a failed verdict", async () => {
      const { escrow, verifier, taskId } = await loadFixture(failedVerdictFixture);
      await expect(escrow.connect(verifier).completeVerification(taskId, true))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Verified, STATUS.Submitted);
    });

    it("reverts when the task is Disputed", async () => {
      const { escrow, verifier, taskId } = await loadFixture(disputedTaskFixture);
      await expect(escrow.connect(verifier).completeVerification(taskId, true))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Disputed, STATUS.Submitted);
    });

    describe("when the verdict passes", () => {
      it("pays the worker the amount less the fee and the treasury the fee", async () => {
        const { escrow, usdc, verifier, worker, treasury, taskId, amount } = await loadFixture(submittedTaskFixture);
        const { workerPayout, fee } = await payoutSplit(escrow, amount);
        await expect(escrow.connect(verifier).completeVerification(taskId, true)).to.changeTokenBalances(
          usdc,
          [worker, treasury, escrow],
          [workerPayout, fee, -amount],
        );
      });

      it("moves the task to Completed", async () => {
        const { escrow, verifier, taskId } = await loadFixture(submittedTaskFixture);
        await escrow.connect(verifier).completeVerification(taskId, true);
        expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Completed);
      });

      it("emits VerificationCompleted then TaskCompleted", async () => {
        const { escrow, verifier, taskId, amount } = await loadFixture(submittedTaskFixture);
        const { workerPayout, fee } = await payoutSplit(escrow, amount);
        const tx = await escrow.connect(verifier).completeVerification(taskId, true);
        await expect(tx).to.emit(escrow, "VerificationCompleted").withArgs(taskId, true);
        await expect(tx).to.emit(escrow, "TaskCompleted").withArgs(taskId, workerPayout, fee);
        expect(await escrowEventNames(escrow, tx)).to.deep.equal(["VerificationCompleted", "TaskCompleted"]);
      });

      it("pays when the verdict comes after the effective deadline", async () => {
        const { escrow, usdc, verifier, worker, treasury, taskId, amount } = await loadFixture(submittedTaskFixture);
        const { workerPayout, fee } = await payoutSplit(escrow, amount);
        await time.increaseTo(await escrow.effectiveDeadline(taskId));
        await expect(escrow.connect(verifier).completeVerification(taskId, true)).to.changeTokenBalances(
          usdc,
          [worker, treasury],
          [workerPayout, fee],
        );
      });

      it("pays when the task's own verifier agent gives the verdict", async () => {
        const { escrow, usdc, verifierAgent, worker, treasury, taskId, amount } =
          await loadFixture(agentSubmittedTaskFixture);
        const { workerPayout, fee } = await payoutSplit(escrow, amount);
        await expect(escrow.connect(verifierAgent).completeVerification(taskId, true)).to.changeTokenBalances(
          usdc,
          [worker, treasury],
          [workerPayout, fee],
        );
      });

      it("pays when the marketplace verifier was replaced and the new one gives the verdict", async () => {
        const { escrow, usdc, admin, stranger, worker, taskId, amount } = await loadFixture(submittedTaskFixture);
        const { workerPayout } = await payoutSplit(escrow, amount);
        await escrow.connect(admin).setVerifier(stranger.address);
        await expect(escrow.connect(stranger).completeVerification(taskId, true)).to.changeTokenBalance(
          usdc,
          worker,
          workerPayout,
        );
      });

      it("applies the fee in force at payout, not at creation", async () => {
        const { escrow, usdc, admin, verifier, worker, treasury, taskId, amount } =
          await loadFixture(submittedTaskFixture);
        const maxFeeBps = await escrow.MAX_FEE_BPS();
        await escrow.connect(admin).setFeeBps(maxFeeBps);
        const { workerPayout, fee } = await payoutSplit(escrow, amount, maxFeeBps);
        await expect(escrow.connect(verifier).completeVerification(taskId, true)).to.changeTokenBalances(
          usdc,
          [worker, treasury],
          [workerPayout, fee],
        );
      });

      it("rounds the fee down and pays the remainder to the worker", async () => {
        const { escrow, usdc, poster, verifier, worker, treasury } = await loadFixture(deployEscrowFixture);
        // One smallest unit under the denominator: amount x feeBps / denominator is not a whole number.
        const amount = (await escrow.BPS_DENOMINATOR()) - 1n;
        await escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), amount, CATEGORY, ZONE, DAY);
        const taskId = 1n;
        await escrow.connect(verifier).marketplaceAssign(taskId, worker.address);
        await escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH);
        const { workerPayout, fee } = await payoutSplit(escrow, amount);
        expect(fee * (await escrow.BPS_DENOMINATOR())).to.be.lessThan(amount * BigInt(FEE_BPS));
        await expect(escrow.connect(verifier).completeVerification(taskId, true)).to.changeTokenBalances(
          usdc,
          [worker, treasury, escrow],
          [workerPayout, fee, -amount],
        );
      });
    });

    describe("when the verdict fails", () => {
      it("moves the task to Verified and records the failed verdict time", async () => {
        const { escrow, verifier, taskId } = await loadFixture(submittedTaskFixture);
        const tx = await escrow.connect(verifier).completeVerification(taskId, false);
        expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Verified);
        expect(await escrow.failedVerdictAt(taskId)).to.equal(await blockTimeOf(tx));
      });

      it("moves no funds", async () => {
        const { escrow, usdc, verifier, poster, worker, treasury, taskId } = await loadFixture(submittedTaskFixture);
        await expect(escrow.connect(verifier).completeVerification(taskId, false)).to.changeTokenBalances(
          usdc,
          [escrow, poster, worker, treasury],
          [0n, 0n, 0n, 0n],
        );
      });

      it("emits only VerificationCompleted", async () => {
        const { escrow, verifier, taskId } = await loadFixture(submittedTaskFixture);
        const tx = await escrow.connect(verifier).completeVerification(taskId, false);
        await expect(tx).to.emit(escrow, "VerificationCompleted").withArgs(taskId, false);
        expect(await escrowEventNames(escrow, tx)).to.deep.equal(["VerificationCompleted"]);
      });
    });
  });

  describe("#cancelTask", () => {
    it("reverts when the caller is not the poster", async () => {
      const { escrow, stranger, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(stranger).cancelTask(taskId)).to.be.revertedWithCustomError(escrow, "NotAgent");
    });

    it("reverts when a worker is assigned", async () => {
      const { escrow, poster, taskId } = await loadFixture(assignedTaskFixture);
      await expect(escrow.connect(poster).cancelTask(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Assigned, STATUS.Funded);
    });

    it("reverts when the task is already cancelled", async () => {
      const { escrow, poster, taskId } = await loadFixture(fundedTaskFixture);
      await escrow.connect(poster).cancelTask(taskId);
      await expect(escrow.connect(poster).cancelTask(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Cancelled, STATUS.Funded);
    });

    it("refunds the whole amount, moves the task to Cancelled and emits TaskCancelled", async () => {
      const { escrow, usdc, poster, treasury, taskId, amount } = await loadFixture(fundedTaskFixture);
      const tx = escrow.connect(poster).cancelTask(taskId);
      await expect(tx).to.changeTokenBalances(usdc, [poster, escrow, treasury], [amount, -amount, 0n]);
      await expect(tx).to.emit(escrow, "TaskCancelled").withArgs(taskId, amount);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Cancelled);
    });

    it("refunds after the effective deadline", async () => {
      const { escrow, usdc, poster, taskId, amount } = await loadFixture(fundedTaskFixture);
      await time.increaseTo(await escrow.effectiveDeadline(taskId));
      await expect(escrow.connect(poster).cancelTask(taskId)).to.changeTokenBalance(usdc, poster, amount);
    });
  });

  describe("#claimTimeout", () => {
    it("reverts when the caller is not the poster", async () => {
      const { escrow, worker, taskId } = await loadFixture(assignedTaskFixture);
      await time.increaseTo(await escrow.effectiveDeadline(taskId));
      await expect(escrow.connect(worker).claimTimeout(taskId)).to.be.revertedWithCustomError(escrow, "NotAgent");
    });

    it("reverts when nobody took the task, even after the deadline", async () => {
      const { escrow, poster, taskId } = await loadFixture(fundedTaskFixture);
      await time.increaseTo(await escrow.effectiveDeadline(taskId));
      await expect(escrow.connect(poster).claimTimeout(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Funded, STATUS.Assigned);
    });

    it("reverts when the task is Completed", async () => {
      const { escrow, verifier, poster, taskId } = await loadFixture(submittedTaskFixture);
      await escrow.connect(verifier).completeVerification(taskId, true);
      await time.increaseTo(await escrow.effectiveDeadline(taskId));
      await expect(escrow.connect(poster).claimTimeout(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Completed, STATUS.Assigned);
    });

    it("reverts when the task was already refunded", async () => {
      const { escrow, poster, taskId } = await loadFixture(assignedTaskFixture);
      await time.increaseTo(await escrow.effectiveDeadline(taskId));
      await escrow.connect(poster).claimTimeout(taskId);
      await expect(escrow.connect(poster).claimTimeout(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Cancelled, STATUS.Assigned);
    });

    describe("when the task is Assigned", () => {
      it("reverts one second before the effective deadline", async () => {
        const { escrow, poster, taskId } = await loadFixture(assignedTaskFixture);
        await time.setNextBlockTimestamp((await escrow.effectiveDeadline(taskId)) - 1n);
        await expect(escrow.connect(poster).claimTimeout(taskId)).to.be.revertedWithCustomError(
          escrow,
          "DeadlineNotReached",
        );
      });

      it("refunds the whole amount at the effective deadline and emits DeadlineExpired", async () => {
        const { escrow, usdc, poster, worker, taskId, amount } = await loadFixture(assignedTaskFixture);
        await time.setNextBlockTimestamp(await escrow.effectiveDeadline(taskId));
        const tx = escrow.connect(poster).claimTimeout(taskId);
        await expect(tx).to.changeTokenBalances(usdc, [poster, escrow, worker], [amount, -amount, 0n]);
        await expect(tx).to.emit(escrow, "DeadlineExpired").withArgs(taskId, amount);
        expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Cancelled);
      });
    });

    describe("when the task is Submitted", () => {
      it("reverts one second before the effective deadline", async () => {
        const { escrow, poster, taskId } = await loadFixture(submittedTaskFixture);
        await time.setNextBlockTimestamp((await escrow.effectiveDeadline(taskId)) - 1n);
        await expect(escrow.connect(poster).claimTimeout(taskId)).to.be.revertedWithCustomError(
          escrow,
          "DeadlineNotReached",
        );
      });

      it("escalates the unjudged work to Disputed instead of refunding", async () => {
        const { escrow, usdc, poster, worker, taskId } = await loadFixture(submittedTaskFixture);
        const deadline = await escrow.effectiveDeadline(taskId);
        await time.setNextBlockTimestamp(deadline);
        await expect(escrow.connect(poster).claimTimeout(taskId)).to.changeTokenBalances(
          usdc,
          [escrow, poster, worker],
          [0n, 0n, 0n],
        );
        const task = await escrow.getTask(taskId);
        expect(task.status).to.equal(STATUS.Disputed);
        expect(task.disputedAt).to.equal(deadline);
        expect(await escrow.isEscalated(taskId)).to.equal(true);
      });

      it("emits UnjudgedWorkEscalated then TaskDisputed naming the poster", async () => {
        const { escrow, poster, taskId } = await loadFixture(submittedTaskFixture);
        await time.increaseTo(await escrow.effectiveDeadline(taskId));
        const tx = await escrow.connect(poster).claimTimeout(taskId);
        await expect(tx).to.emit(escrow, "UnjudgedWorkEscalated").withArgs(taskId);
        await expect(tx).to.emit(escrow, "TaskDisputed").withArgs(taskId, poster.address);
        expect(await escrowEventNames(escrow, tx)).to.deep.equal(["UnjudgedWorkEscalated", "TaskDisputed"]);
      });
    });

    describe("when the task is Verified", () => {
      it("reverts before the effective deadline", async () => {
        const { escrow, poster, taskId } = await loadFixture(exhaustedAttemptsFixture);
        await time.setNextBlockTimestamp((await escrow.effectiveDeadline(taskId)) - 1n);
        await expect(escrow.connect(poster).claimTimeout(taskId)).to.be.revertedWithCustomError(
          escrow,
          "DeadlineNotReached",
        );
      });

      it("reverts one second before the appeal window closes", async () => {
        const { escrow, poster, taskId } = await loadFixture(failedVerdictFixture);
        const appealEnd = (await escrow.failedVerdictAt(taskId)) + (await escrow.APPEAL_WINDOW());
        expect(appealEnd).to.be.greaterThan(await escrow.effectiveDeadline(taskId));
        await time.setNextBlockTimestamp(appealEnd - 1n);
        await expect(escrow.connect(poster).claimTimeout(taskId)).to.be.revertedWithCustomError(
          escrow,
          "AppealWindowActive",
        );
      });

      it("refunds the whole amount when the appeal window closes", async () => {
        const { escrow, usdc, poster, worker, taskId, amount } = await loadFixture(failedVerdictFixture);
        const appealEnd = (await escrow.failedVerdictAt(taskId)) + (await escrow.APPEAL_WINDOW());
        await time.setNextBlockTimestamp(appealEnd);
        const tx = escrow.connect(poster).claimTimeout(taskId);
        await expect(tx).to.changeTokenBalances(usdc, [poster, escrow, worker], [amount, -amount, 0n]);
        await expect(tx).to.emit(escrow, "DeadlineExpired").withArgs(taskId, amount);
        expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Cancelled);
      });
    });

    describe("when the task is Disputed", () => {
      it("reverts before the effective deadline", async () => {
        const { escrow, poster, taskId } = await loadFixture(disputedTaskFixture);
        await time.setNextBlockTimestamp((await escrow.effectiveDeadline(taskId)) - 1n);
        await expect(escrow.connect(poster).claimTimeout(taskId)).to.be.revertedWithCustomError(
          escrow,
          "DeadlineNotReached",
        );
      });

      it("reverts one second before the dispute window closes", async () => {
        const { escrow, poster, taskId } = await loadFixture(disputedTaskFixture);
        const windowEnd = (await escrow.getTask(taskId)).disputedAt + (await escrow.DISPUTE_WINDOW());
        await time.setNextBlockTimestamp(windowEnd - 1n);
        await expect(escrow.connect(poster).claimTimeout(taskId)).to.be.revertedWithCustomError(
          escrow,
          "DisputeWindowActive",
        );
      });

      it("splits the reward when the dispute window closes without a ruling: a silent arbiter decides for neither side", async () => {
        const { escrow, usdc, poster, worker, treasury, taskId, amount } = await loadFixture(disputedTaskFixture);
        const windowEnd = (await escrow.getTask(taskId)).disputedAt + (await escrow.DISPUTE_WINDOW());
        await time.setNextBlockTimestamp(windowEnd);
        const half = amount / 2n;
        const fee = (half * BigInt(FEE_BPS)) / 10_000n;
        const tx = escrow.connect(poster).claimTimeout(taskId);
        await expect(tx).to.changeTokenBalances(usdc, [poster, escrow, worker, treasury], [0n, -fee, 0n, fee]);
        await expect(tx)
          .to.emit(escrow, "UnruledSplit")
          .withArgs(taskId, worker.address, half - fee, poster.address, amount - half, fee);
        await expect(tx).not.to.emit(escrow, "DeadlineExpired");
        expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Completed);
        const token = await usdc.getAddress();
        expect(await escrow.creditOf(token, worker.address)).to.equal(half - fee);
        expect(await escrow.creditOf(token, poster.address)).to.equal(amount - half);
      });

      it("splits when the worker's appeal is left without a ruling, and the worker may end it itself", async () => {
        const { escrow, usdc, worker, taskId, amount } = await loadFixture(appealedTaskFixture);
        const windowEnd = (await escrow.getTask(taskId)).disputedAt + (await escrow.DISPUTE_WINDOW());
        await time.setNextBlockTimestamp(windowEnd - 1n);
        await expect(escrow.connect(worker).splitUnruled(taskId)).to.be.revertedWithCustomError(
          escrow,
          "DisputeWindowActive",
        );
        await time.setNextBlockTimestamp(windowEnd);
        await expect(escrow.connect(worker).splitUnruled(taskId)).to.emit(escrow, "UnruledSplit");
        const half = amount / 2n;
        const fee = (half * BigInt(FEE_BPS)) / 10_000n;
        await expect(escrow.connect(worker).withdraw(await usdc.getAddress(), worker.address)).to.changeTokenBalance(
          usdc,
          worker,
          half - fee,
        );
      });

      it("reverts when the dispute is an escalation of unjudged work, even after the dispute window", async () => {
        const { escrow, poster, taskId } = await loadFixture(escalatedTaskFixture);
        const windowEnd = (await escrow.getTask(taskId)).disputedAt + (await escrow.DISPUTE_WINDOW());
        await time.setNextBlockTimestamp(windowEnd);
        await expect(escrow.connect(poster).claimTimeout(taskId)).to.be.revertedWithCustomError(
          escrow,
          "EscalatedForAdjudication",
        );
      });
    });
  });

  describe("#raiseDispute", () => {
    it("reverts when the caller is neither the poster nor the worker", async () => {
      const { escrow, stranger, taskId } = await loadFixture(submittedTaskFixture);
      await expect(escrow.connect(stranger).raiseDispute(taskId)).to.be.revertedWith(NOT_PARTY);
    });

    it("reverts when the caller is the verifier", async () => {
      const { escrow, verifier, taskId } = await loadFixture(submittedTaskFixture);
      await expect(escrow.connect(verifier).raiseDispute(taskId)).to.be.revertedWith(NOT_PARTY);
    });

    it("reverts when there is no work to dispute", async () => {
      const { escrow, poster, taskId } = await loadFixture(assignedTaskFixture);
      await expect(escrow.connect(poster).raiseDispute(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Assigned, STATUS.Submitted);
    });

    it("reverts when the task is already Disputed", async () => {
      const { escrow, worker, taskId } = await loadFixture(disputedTaskFixture);
      await expect(escrow.connect(worker).raiseDispute(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Disputed, STATUS.Submitted);
    });

    it("reverts when the poster disputes submitted work at the effective deadline", async () => {
      const { escrow, poster, taskId } = await loadFixture(submittedTaskFixture);
      await time.setNextBlockTimestamp(await escrow.effectiveDeadline(taskId));
      await expect(escrow.connect(poster).raiseDispute(taskId)).to.be.revertedWithCustomError(
        escrow,
        "DeadlineReached",
      );
    });

    it("reverts when the worker disputes submitted work at the effective deadline", async () => {
      const { escrow, worker, taskId } = await loadFixture(submittedTaskFixture);
      await time.setNextBlockTimestamp(await escrow.effectiveDeadline(taskId));
      await expect(escrow.connect(worker).raiseDispute(taskId)).to.be.revertedWithCustomError(
        escrow,
        "DeadlineReached",
      );
    });

    it("reverts when the poster disputes a failed verdict after the deadline, inside the appeal window", async () => {
      const { escrow, poster, taskId } = await loadFixture(failedVerdictFixture);
      await time.setNextBlockTimestamp(await escrow.effectiveDeadline(taskId));
      await expect(escrow.connect(poster).raiseDispute(taskId)).to.be.revertedWithCustomError(
        escrow,
        "DeadlineReached",
      );
    });

    it("reverts when the worker appeals after the deadline once the appeal window closed", async () => {
      const { escrow, worker, taskId } = await loadFixture(failedVerdictFixture);
      const appealEnd = (await escrow.failedVerdictAt(taskId)) + (await escrow.APPEAL_WINDOW());
      await time.setNextBlockTimestamp(appealEnd);
      await expect(escrow.connect(worker).raiseDispute(taskId)).to.be.revertedWithCustomError(
        escrow,
        "DeadlineReached",
      );
    });

    it("moves submitted work to Disputed and records who disputed and when", async () => {
      const { escrow, poster, taskId } = await loadFixture(submittedTaskFixture);
      const tx = await escrow.connect(poster).raiseDispute(taskId);
      await expect(tx).to.emit(escrow, "TaskDisputed").withArgs(taskId, poster.address);
      const task = await escrow.getTask(taskId);
      expect(task.status).to.equal(STATUS.Disputed);
      expect(task.disputedAt).to.equal(await blockTimeOf(tx));
      expect(await escrow.isEscalated(taskId)).to.equal(false);
    });

    it("lets the worker dispute submitted work before the deadline", async () => {
      const { escrow, worker, taskId } = await loadFixture(submittedTaskFixture);
      await expect(escrow.connect(worker).raiseDispute(taskId))
        .to.emit(escrow, "TaskDisputed")
        .withArgs(taskId, worker.address);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Disputed);
    });

    it("lets the poster dispute a failed verdict before the deadline", async () => {
      const { escrow, poster, taskId } = await loadFixture(failedVerdictFixture);
      await expect(escrow.connect(poster).raiseDispute(taskId))
        .to.emit(escrow, "TaskDisputed")
        .withArgs(taskId, poster.address);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Disputed);
    });

    it("lets the worker appeal a failed verdict after the deadline, in the last second of the appeal window", async () => {
      const { escrow, worker, taskId } = await loadFixture(failedVerdictFixture);
      const appealEnd = (await escrow.failedVerdictAt(taskId)) + (await escrow.APPEAL_WINDOW());
      await time.setNextBlockTimestamp(appealEnd - 1n);
      await expect(escrow.connect(worker).raiseDispute(taskId))
        .to.emit(escrow, "TaskDisputed")
        .withArgs(taskId, worker.address);
      const task = await escrow.getTask(taskId);
      expect(task.status).to.equal(STATUS.Disputed);
      expect(task.disputedAt).to.equal(appealEnd - 1n);
    });

    it("moves no funds", async () => {
      const { escrow, usdc, poster, worker, taskId } = await loadFixture(submittedTaskFixture);
      await expect(escrow.connect(poster).raiseDispute(taskId)).to.changeTokenBalances(
        usdc,
        [escrow, poster, worker],
        [0n, 0n, 0n],
      );
    });
  });

  describe("#resolveDispute", () => {
    it("reverts when the caller is not the admin", async () => {
      const { escrow, verifier, taskId } = await loadFixture(disputedTaskFixture);
      await expect(escrow.connect(verifier).resolveDispute(taskId, true)).to.be.revertedWithCustomError(
        escrow,
        "NotAdmin",
      );
    });

    it("reverts when the task is not Disputed", async () => {
      const { escrow, admin, taskId } = await loadFixture(submittedTaskFixture);
      await expect(escrow.connect(admin).resolveDispute(taskId, true))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Submitted, STATUS.Disputed);
    });

    it("reverts when the dispute was already resolved", async () => {
      const { escrow, admin, taskId } = await loadFixture(disputedTaskFixture);
      await escrow.connect(admin).resolveDispute(taskId, true);
      await expect(escrow.connect(admin).resolveDispute(taskId, false))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Completed, STATUS.Disputed);
    });

    describe("when the ruling favours the worker", () => {
      it("pays the worker the amount less the fee and the treasury the fee", async () => {
        const { escrow, usdc, admin, worker, treasury, taskId, amount } = await loadFixture(disputedTaskFixture);
        const { workerPayout, fee } = await payoutSplit(escrow, amount);
        await expect(escrow.connect(admin).resolveDispute(taskId, true)).to.changeTokenBalances(
          usdc,
          [worker, treasury, escrow],
          [workerPayout, fee, -amount],
        );
        expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Completed);
      });

      it("emits DisputeResolved then TaskCompleted", async () => {
        const { escrow, admin, taskId, amount } = await loadFixture(disputedTaskFixture);
        const { workerPayout, fee } = await payoutSplit(escrow, amount);
        const tx = await escrow.connect(admin).resolveDispute(taskId, true);
        await expect(tx).to.emit(escrow, "DisputeResolved").withArgs(taskId, true);
        await expect(tx).to.emit(escrow, "TaskCompleted").withArgs(taskId, workerPayout, fee);
        expect(await escrowEventNames(escrow, tx)).to.deep.equal(["DisputeResolved", "TaskCompleted"]);
      });

      it("pays the worker of escalated, unjudged work before the dispute window closes", async () => {
        const { escrow, usdc, admin, worker, taskId, amount } = await loadFixture(escalatedTaskFixture);
        const { workerPayout } = await payoutSplit(escrow, amount);
        await expect(escrow.connect(admin).resolveDispute(taskId, true)).to.changeTokenBalance(
          usdc,
          worker,
          workerPayout,
        );
      });

      it("pays the worker who appealed a failed verdict", async () => {
        const { escrow, usdc, admin, worker, taskId, amount } = await loadFixture(appealedTaskFixture);
        const { workerPayout } = await payoutSplit(escrow, amount);
        await expect(escrow.connect(admin).resolveDispute(taskId, true)).to.changeTokenBalance(
          usdc,
          worker,
          workerPayout,
        );
      });
    });

    describe("when the ruling favours the poster", () => {
      it("refunds the whole amount and moves the task to Cancelled", async () => {
        const { escrow, usdc, admin, poster, worker, treasury, taskId, amount } =
          await loadFixture(disputedTaskFixture);
        await expect(escrow.connect(admin).resolveDispute(taskId, false)).to.changeTokenBalances(
          usdc,
          [poster, escrow, worker, treasury],
          [amount, -amount, 0n, 0n],
        );
        expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Cancelled);
      });

      it("emits DisputeResolved then TaskCancelled", async () => {
        const { escrow, admin, taskId, amount } = await loadFixture(disputedTaskFixture);
        const tx = await escrow.connect(admin).resolveDispute(taskId, false);
        await expect(tx).to.emit(escrow, "DisputeResolved").withArgs(taskId, false);
        await expect(tx).to.emit(escrow, "TaskCancelled").withArgs(taskId, amount);
        expect(await escrowEventNames(escrow, tx)).to.deep.equal(["DisputeResolved", "TaskCancelled"]);
      });

      it("refunds the poster of escalated, unjudged work", async () => {
        const { escrow, usdc, admin, poster, taskId, amount } = await loadFixture(escalatedTaskFixture);
        await expect(escrow.connect(admin).resolveDispute(taskId, false)).to.changeTokenBalance(usdc, poster, amount);
      });
    });
  });

  describe("#escalateUnjudgedWork (the worker's recourse when its judge is silent)", () => {
    const graceEnd = async (escrow: TaskEscrow, taskId: bigint) =>
      (await escrow.effectiveDeadline(taskId)) + (await escrow.ESCALATION_GRACE());

    it("escalates a Submitted task nobody judged, ESCALATION_GRACE after the effective deadline", async () => {
      const { escrow, worker, taskId } = await loadFixture(submittedTaskFixture);
      expect(await escrow.ESCALATION_GRACE()).to.equal(3n * 86_400n);
      await time.setNextBlockTimestamp(await graceEnd(escrow, taskId));
      await expect(escrow.connect(worker).escalateUnjudgedWork(taskId))
        .to.emit(escrow, "UnjudgedWorkEscalated")
        .withArgs(taskId)
        .and.to.emit(escrow, "TaskDisputed")
        .withArgs(taskId, worker.address);
      const task = await escrow.getTask(taskId);
      expect(task.status).to.equal(STATUS.Disputed);
      expect(task.disputedAt).to.equal(BigInt(await time.latest()));
      expect(await escrow.isEscalated(taskId)).to.equal(true);
    });

    it("leads to the existing 14-day release: the worker is paid when nobody rules", async () => {
      const { escrow, usdc, worker, taskId, amount } = await loadFixture(submittedTaskFixture);
      await time.setNextBlockTimestamp(await graceEnd(escrow, taskId));
      await escrow.connect(worker).escalateUnjudgedWork(taskId);
      await expect(escrow.connect(worker).releaseUnjudgedWork(taskId)).to.be.revertedWithCustomError(
        escrow,
        "DisputeWindowActive",
      );
      await time.increase(await escrow.DISPUTE_WINDOW());
      const before = await usdc.balanceOf(worker.address);
      await escrow.connect(worker).releaseUnjudgedWork(taskId);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Completed);
      expect((await usdc.balanceOf(worker.address)) - before).to.equal(amount - (amount * BigInt(FEE_BPS)) / 10_000n);
    });

    it("reverts before the grace has passed", async () => {
      const { escrow, worker, taskId } = await loadFixture(submittedTaskFixture);
      await time.setNextBlockTimestamp((await graceEnd(escrow, taskId)) - 1n);
      await expect(escrow.connect(worker).escalateUnjudgedWork(taskId)).to.be.revertedWithCustomError(
        escrow,
        "DeadlineNotReached",
      );
    });

    it("reverts for anyone but the worker", async () => {
      const { escrow, poster, stranger, taskId } = await loadFixture(submittedTaskFixture);
      await time.setNextBlockTimestamp(await graceEnd(escrow, taskId));
      for (const caller of [poster, stranger]) {
        await expect(escrow.connect(caller).escalateUnjudgedWork(taskId)).to.be.revertedWithCustomError(
          escrow,
          "NotWorker",
        );
      }
    });

    it("reverts unless the task is Submitted (a failed verdict has its appeal path instead)", async () => {
      const { escrow, worker, taskId } = await loadFixture(failedVerdictFixture);
      await time.setNextBlockTimestamp(await graceEnd(escrow, taskId));
      await expect(escrow.connect(worker).escalateUnjudgedWork(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Verified, STATUS.Submitted);
    });

    it("reverts while paused, and a pause extends the grace", async () => {
      const { escrow, admin, worker, taskId } = await loadFixture(submittedTaskFixture);
      await escrow.connect(admin).pause();
      await expect(escrow.connect(worker).escalateUnjudgedWork(taskId)).to.be.revertedWithCustomError(
        escrow,
        "EnforcedPause",
      );
      await time.increase(86_400);
      await escrow.connect(admin).unpause();
      const end = await graceEnd(escrow, taskId);
      await time.setNextBlockTimestamp(end - 1n);
      await expect(escrow.connect(worker).escalateUnjudgedWork(taskId)).to.be.revertedWithCustomError(
        escrow,
        "DeadlineNotReached",
      );
      await time.setNextBlockTimestamp(end);
      await expect(escrow.connect(worker).escalateUnjudgedWork(taskId)).to.emit(escrow, "UnjudgedWorkEscalated");
    });
  });

  describe("#releaseUnjudgedWork", () => {
    it("reverts when the caller is not the worker", async () => {
      const { escrow, poster, taskId } = await loadFixture(escalatedTaskFixture);
      const windowEnd = (await escrow.getTask(taskId)).disputedAt + (await escrow.DISPUTE_WINDOW());
      await time.setNextBlockTimestamp(windowEnd);
      await expect(escrow.connect(poster).releaseUnjudgedWork(taskId)).to.be.revertedWithCustomError(
        escrow,
        "NotWorker",
      );
    });

    it("reverts when the task is not Disputed", async () => {
      const { escrow, worker, taskId } = await loadFixture(submittedTaskFixture);
      await expect(escrow.connect(worker).releaseUnjudgedWork(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Submitted, STATUS.Disputed);
    });

    it("reverts when the dispute was raised by a party rather than escalated", async () => {
      const { escrow, worker, taskId } = await loadFixture(disputedTaskFixture);
      const windowEnd = (await escrow.getTask(taskId)).disputedAt + (await escrow.DISPUTE_WINDOW());
      await time.setNextBlockTimestamp(windowEnd);
      await expect(escrow.connect(worker).releaseUnjudgedWork(taskId)).to.be.revertedWithCustomError(
        escrow,
        "NotEscalated",
      );
    });

    it("reverts one second before the dispute window closes", async () => {
      const { escrow, worker, taskId } = await loadFixture(escalatedTaskFixture);
      const windowEnd = (await escrow.getTask(taskId)).disputedAt + (await escrow.DISPUTE_WINDOW());
      await time.setNextBlockTimestamp(windowEnd - 1n);
      await expect(escrow.connect(worker).releaseUnjudgedWork(taskId)).to.be.revertedWithCustomError(
        escrow,
        "DisputeWindowActive",
      );
    });

    it("pays the worker and the treasury when the dispute window closes without a ruling", async () => {
      const { escrow, usdc, worker, treasury, poster, taskId, amount } = await loadFixture(escalatedTaskFixture);
      const windowEnd = (await escrow.getTask(taskId)).disputedAt + (await escrow.DISPUTE_WINDOW());
      await time.setNextBlockTimestamp(windowEnd);
      const { workerPayout, fee } = await payoutSplit(escrow, amount);
      await expect(escrow.connect(worker).releaseUnjudgedWork(taskId)).to.changeTokenBalances(
        usdc,
        [worker, treasury, escrow, poster],
        [workerPayout, fee, -amount, 0n],
      );
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Completed);
    });

    it("emits UnjudgedWorkReleased then TaskCompleted", async () => {
      const { escrow, worker, taskId, amount } = await loadFixture(escalatedTaskFixture);
      const windowEnd = (await escrow.getTask(taskId)).disputedAt + (await escrow.DISPUTE_WINDOW());
      await time.increaseTo(windowEnd);
      const { workerPayout, fee } = await payoutSplit(escrow, amount);
      const tx = await escrow.connect(worker).releaseUnjudgedWork(taskId);
      await expect(tx).to.emit(escrow, "UnjudgedWorkReleased").withArgs(taskId, workerPayout, fee);
      await expect(tx).to.emit(escrow, "TaskCompleted").withArgs(taskId, workerPayout, fee);
      expect(await escrowEventNames(escrow, tx)).to.deep.equal(["UnjudgedWorkReleased", "TaskCompleted"]);
    });

    it("reverts when the work was already released", async () => {
      const { escrow, worker, taskId } = await loadFixture(escalatedTaskFixture);
      const windowEnd = (await escrow.getTask(taskId)).disputedAt + (await escrow.DISPUTE_WINDOW());
      await time.increaseTo(windowEnd);
      await escrow.connect(worker).releaseUnjudgedWork(taskId);
      await expect(escrow.connect(worker).releaseUnjudgedWork(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Completed, STATUS.Disputed);
    });
  });

  describe("#createTask labels", () => {
    /** Base slot of the escrow's ERC-7201 namespace, and the place of the `tasks` mapping in it (TaskEscrowBase). */
    const ESCROW_STORAGE = 0x85427c6a95a65b7f061f7d28e950b0fc8007b8fa7891146463529a609c299a00n;
    const TASKS_MAPPING_OFFSET = 11n;
    const LABELS_FIELD_OFFSET = 6n;
    /** The storage word of a task's labels (the one slot of a short `bytes`, or the length of a long one). */
    async function labelsWord(escrow: TaskEscrow, taskId: bigint): Promise<bigint> {
      const coder = ethers.AbiCoder.defaultAbiCoder();
      const record = BigInt(
        ethers.keccak256(coder.encode(["uint256", "uint256"], [taskId, ESCROW_STORAGE + TASKS_MAPPING_OFFSET])),
      );
      return BigInt(await ethers.provider.getStorage(await escrow.getAddress(), record + LABELS_FIELD_OFFSET));
    }
    async function create(category: string, zone: string) {
      const base = await loadFixture(deployEscrowFixture);
      const { escrow, usdc, poster } = base;
      const taskId = await escrow.nextTaskId();
      await escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), 1_000_000n, category, zone, DAY);
      return { ...base, taskId };
    }

    it("stores nothing for the labels the API sends (general, global) and reads them back", async () => {
      const { escrow, taskId } = await create(CATEGORY, ZONE);
      expect(CATEGORY).to.equal("general");
      expect(ZONE).to.equal("global");
      const task = await escrow.getTask(taskId);
      expect([task.category, task.locationZone]).to.deep.equal([CATEGORY, ZONE]);
      expect(await labelsWord(escrow, taskId)).to.equal(0n);
    });

    for (const [category, zone] of [
      ["General", "global"],
      ["general", "Global"],
      ["general", "globa"],
      ["general", "global "],
      ["generals", "global"],
      ["general\0", "global"],
      ["global", "general"],
      ["general", ""],
      ["", "global"],
      ["", ""],
      ["general", "zone/".repeat(10)],
    ]) {
      it(`stores and reads back any other labels exactly: ${JSON.stringify([category, zone])}`, async () => {
        const { escrow, taskId } = await create(category, zone);
        const task = await escrow.getTask(taskId);
        expect([task.category, task.locationZone]).to.deep.equal([category, zone]);
        expect(await labelsWord(escrow, taskId)).to.not.equal(0n);
      });
    }

    it("counts submissions below the flag: three attempts, then MaxSubmissionAttemptsReached", async () => {
      const { escrow, verifier, worker, taskId } = await create(CATEGORY, ZONE);
      await escrow.connect(verifier).marketplaceAssign(taskId, worker.address);
      for (let attempt = 1n; attempt <= 3n; attempt++) {
        await escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH);
        expect((await escrow.getTask(taskId)).submissionAttempts).to.equal(attempt);
        await escrow.connect(verifier).completeVerification(taskId, false);
      }
      await expect(escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH)).to.be.revertedWithCustomError(
        escrow,
        "MaxSubmissionAttemptsReached",
      );
      const task = await escrow.getTask(taskId);
      expect([task.category, task.locationZone]).to.deep.equal([CATEGORY, ZONE]);
    });
  });

  describe("settled tasks", () => {
    /** Every lifecycle call a party could still try on a settled task, with the status each one requires. */
    const transitions = [
      { fn: "marketplaceAssign", required: STATUS.Funded },
      { fn: "submitEvidence", required: STATUS.Assigned },
      { fn: "completeVerification", required: STATUS.Submitted },
      { fn: "cancelTask", required: STATUS.Funded },
      { fn: "claimTimeout", required: STATUS.Assigned },
      { fn: "raiseDispute", required: STATUS.Submitted },
      { fn: "resolveDispute", required: STATUS.Disputed },
      { fn: "releaseUnjudgedWork", required: STATUS.Disputed },
    ] as const;

    /** Task 1 paid to its worker by a passing verdict. */
    async function completedTaskFixture() {
      const base = await submittedTaskFixture();
      await base.escrow.connect(base.verifier).completeVerification(base.taskId, true);
      return { ...base, terminal: STATUS.Completed as number };
    }

    /** Task 1 refunded to its poster by a timeout claim after a worker was assigned. */
    async function refundedTaskFixture() {
      const base = await assignedTaskFixture();
      await time.increaseTo(await base.escrow.effectiveDeadline(base.taskId));
      await base.escrow.connect(base.poster).claimTimeout(base.taskId);
      return { ...base, terminal: STATUS.Cancelled as number };
    }

    for (const [label, fixture] of [
      ["Completed", completedTaskFixture],
      ["Cancelled", refundedTaskFixture],
    ] as const) {
      describe(`when the task is ${label}`, () => {
        for (const { fn, required } of transitions) {
          it(`reverts ${fn} with InvalidStatus`, async () => {
            const { escrow, admin, verifier, poster, worker, stranger, taskId, terminal } = await loadFixture(fixture);
            const calls = {
              marketplaceAssign: () => escrow.connect(verifier).marketplaceAssign(taskId, stranger.address),
              submitEvidence: () => escrow.connect(worker).submitEvidence(taskId, SECOND_EVIDENCE_HASH),
              completeVerification: () => escrow.connect(verifier).completeVerification(taskId, true),
              cancelTask: () => escrow.connect(poster).cancelTask(taskId),
              claimTimeout: () => escrow.connect(poster).claimTimeout(taskId),
              raiseDispute: () => escrow.connect(worker).raiseDispute(taskId),
              resolveDispute: () => escrow.connect(admin).resolveDispute(taskId, true),
              releaseUnjudgedWork: () => escrow.connect(worker).releaseUnjudgedWork(taskId),
            };
            await expect(calls[fn]())
              .to.be.revertedWithCustomError(escrow, "InvalidStatus")
              .withArgs(terminal, required);
          });
        }

        it("holds none of the task's reward", async () => {
          const { escrow, usdc } = await loadFixture(fixture);
          expect(await usdc.balanceOf(await escrow.getAddress())).to.equal(0n);
        });
      });
    }
  });

  describe("native-currency task", () => {
    it("pays the worker and the treasury in native currency when a verdict passes", async () => {
      const { escrow, verifier, worker, treasury, taskId, amount } = await loadFixture(nativeSubmittedTaskFixture);
      const { workerPayout, fee } = await payoutSplit(escrow, amount);
      await expect(escrow.connect(verifier).completeVerification(taskId, true)).to.changeEtherBalances(
        [worker, treasury, escrow],
        [workerPayout, fee, -amount],
      );
    });

    it("refunds the poster in native currency when a ruling favours the poster", async () => {
      const { escrow, admin, poster, taskId, amount } = await loadFixture(nativeSubmittedTaskFixture);
      await escrow.connect(poster).raiseDispute(taskId);
      await expect(escrow.connect(admin).resolveDispute(taskId, false)).to.changeEtherBalances(
        [poster, escrow],
        [amount, -amount],
      );
    });
  });

  describe("across an upgrade", () => {
    it("keeps an escalation and the pause history that extends its dispute window", async () => {
      const { escrow, usdc, admin, worker, taskId, amount } = await loadFixture(escalatedTaskFixture);
      const proxy = await escrow.getAddress();
      const pausedAt = await blockTimeOf(await escrow.connect(admin).pause());
      await time.increase(DAY);
      const unpausedAt = await blockTimeOf(await escrow.connect(admin).unpause());
      await upgrades.upgradeProxy(proxy, await ethers.getContractFactory("TaskEscrow", admin), {
        redeployImplementation: "always",
      });
      expect(await escrow.isEscalated(taskId)).to.equal(true);
      const windowEnd =
        (await escrow.getTask(taskId)).disputedAt + (await escrow.DISPUTE_WINDOW()) + (unpausedAt - pausedAt);
      await time.setNextBlockTimestamp(windowEnd - 1n);
      await expect(escrow.connect(worker).releaseUnjudgedWork(taskId)).to.be.revertedWithCustomError(
        escrow,
        "DisputeWindowActive",
      );
      const { workerPayout } = await payoutSplit(escrow, amount);
      await time.setNextBlockTimestamp(windowEnd);
      await expect(escrow.connect(worker).releaseUnjudgedWork(taskId)).to.changeTokenBalance(
        usdc,
        worker,
        workerPayout,
      );
    });
  });

  describe("end-to-end paths", () => {
    it("pays the worker after a failed verdict and a passing resubmission", async () => {
      const { escrow, usdc, verifier, worker, treasury, taskId, amount } = await loadFixture(failedVerdictFixture);
      await escrow.connect(worker).submitEvidence(taskId, SECOND_EVIDENCE_HASH);
      const { workerPayout, fee } = await payoutSplit(escrow, amount);
      await expect(escrow.connect(verifier).completeVerification(taskId, true)).to.changeTokenBalances(
        usdc,
        [worker, treasury, escrow],
        [workerPayout, fee, -amount],
      );
      const task = await escrow.getTask(taskId);
      expect(task.status).to.equal(STATUS.Completed);
      expect(task.evidenceHash).to.equal(SECOND_EVIDENCE_HASH);
      expect(task.submissionAttempts).to.equal(2);
    });

    it("refunds the poster after three failed verdicts once the deadline and the appeal window pass", async () => {
      const { escrow, usdc, poster, taskId, amount } = await loadFixture(exhaustedAttemptsFixture);
      const appealEnd = (await escrow.failedVerdictAt(taskId)) + (await escrow.APPEAL_WINDOW());
      await time.setNextBlockTimestamp(appealEnd);
      await expect(escrow.connect(poster).claimTimeout(taskId)).to.changeTokenBalances(
        usdc,
        [poster, escrow],
        [amount, -amount],
      );
    });

    it("settles two tasks of one poster independently", async () => {
      const { escrow, usdc, poster, verifier, worker, stranger, taskId, amount } =
        await loadFixture(submittedTaskFixture);
      await escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), amount, CATEGORY, ZONE, DAY);
      const secondId = (await escrow.nextTaskId()) - 1n;
      await escrow.connect(verifier).marketplaceAssign(secondId, stranger.address);
      await escrow.connect(verifier).completeVerification(taskId, true);
      expect(await usdc.balanceOf(await escrow.getAddress())).to.equal(amount);
      expect((await escrow.getTask(secondId)).status).to.equal(STATUS.Assigned);
      await time.increaseTo(await escrow.effectiveDeadline(secondId));
      await expect(escrow.connect(poster).claimTimeout(secondId)).to.changeTokenBalances(
        usdc,
        [poster, escrow, worker],
        [amount, -amount, 0n],
      );
    });

    it("lets a task judged by its own verifier agent go from creation to payout", async () => {
      const { escrow, usdc, verifierAgent, worker, treasury, taskId, amount } =
        await loadFixture(agentVerifiedTaskFixture);
      await escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH);
      const { workerPayout, fee } = await payoutSplit(escrow, amount);
      await expect(escrow.connect(verifierAgent).completeVerification(taskId, true)).to.changeTokenBalances(
        usdc,
        [worker, treasury, escrow],
        [workerPayout, fee, -amount],
      );
    });
  });
});
