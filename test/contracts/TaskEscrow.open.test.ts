import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import {
  CATEGORY,
  DAY,
  EVIDENCE_HASH,
  FEE_BPS,
  PHASE,
  STATUS,
  TASK_HASH,
  USDC,
  ZONE,
  deployEscrowFixture,
  fundedTaskFixture,
} from "../helpers/fixtures";
import { escrowEventNames } from "../helpers/events";

/** A second submitter's evidence, distinct from EVIDENCE_HASH. */
const OTHER_EVIDENCE_HASH = ethers.keccak256(ethers.toUtf8Bytes('{"result":"another delivery"}'));

/** Open-submission task 1 (100 USDC, one day) in its Submission phase, nobody submitted. */
async function openTaskFixture() {
  const base = await deployEscrowFixture();
  const { escrow, usdc, poster } = base;
  const amount = USDC(100);
  await escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), amount, CATEGORY, ZONE, DAY);
  const { deadline } = await escrow.getTask(1n);
  return { ...base, taskId: 1n, amount, deadline };
}

/** Open task 1 with two submissions: `worker` (EVIDENCE_HASH) and `stranger` (OTHER_EVIDENCE_HASH). */
async function submittedOpenTaskFixture() {
  const base = await openTaskFixture();
  await base.escrow.connect(base.worker).submitOpen(base.taskId, EVIDENCE_HASH);
  await base.escrow.connect(base.stranger).submitOpen(base.taskId, OTHER_EVIDENCE_HASH);
  return base;
}

/** Open task 1 with two submissions, at the start of its Selection phase. */
async function selectionFixture() {
  const base = await submittedOpenTaskFixture();
  await time.increaseTo(base.deadline);
  return base;
}

/** Open task 1 without submissions, at the start of its Selection phase. */
async function emptySelectionFixture() {
  const base = await openTaskFixture();
  await time.increaseTo(base.deadline);
  return base;
}

/** Open task 1 with two submissions, at the start of its Expired phase. */
async function expiredFixture() {
  const base = await submittedOpenTaskFixture();
  await time.increaseTo(base.deadline + (await base.escrow.OPEN_SELECTION_WINDOW()));
  return base;
}

describe("TaskEscrow", () => {
  describe("#createTaskOpen", () => {
    it("emits TaskCreated with all arguments, then OpenTaskCreated", async () => {
      const { escrow, poster, usdc } = await loadFixture(deployEscrowFixture);
      const token = await usdc.getAddress();
      const amount = USDC(100);
      const tx = await escrow.connect(poster).createTaskOpen(TASK_HASH, token, amount, CATEGORY, ZONE, DAY);
      const block = await ethers.provider.getBlock((await tx.wait())!.blockNumber);
      await expect(tx)
        .to.emit(escrow, "TaskCreated")
        .withArgs(1n, poster.address, token, amount, TASK_HASH, CATEGORY, ZONE, block!.timestamp + DAY);
      await expect(tx).to.emit(escrow, "OpenTaskCreated").withArgs(1n);
      expect(await escrowEventNames(escrow, tx)).to.deep.equal(["TaskCreated", "OpenTaskCreated"]);
    });

    it("pulls the reward into the escrow", async () => {
      const { escrow, poster, usdc } = await loadFixture(deployEscrowFixture);
      const amount = USDC(100);
      await expect(
        escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), amount, CATEGORY, ZONE, DAY),
      ).to.changeTokenBalances(usdc, [poster, escrow], [-amount, amount]);
    });

    it("records a Funded open task with no worker", async () => {
      const { escrow, poster, taskId, amount } = await loadFixture(openTaskFixture);
      const task = await escrow.getTask(taskId);
      expect(task.poster).to.equal(poster.address);
      expect(task.worker).to.equal(ethers.ZeroAddress);
      expect(task.amount).to.equal(amount);
      expect(task.status).to.equal(STATUS.Funded);
      expect(await escrow.isOpenTask(taskId)).to.equal(true);
      expect(await escrow.openSubmissionCount(taskId)).to.equal(0n);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Submission);
    });

    it("funds a native-currency open task with the exact value", async () => {
      const { escrow, admin, poster } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).allowToken(ethers.ZeroAddress);
      const amount = ethers.parseEther("1");
      await expect(
        escrow
          .connect(poster)
          .createTaskOpen(TASK_HASH, ethers.ZeroAddress, amount, CATEGORY, ZONE, DAY, { value: amount }),
      ).to.changeEtherBalances([poster, escrow], [-amount, amount]);
    });

    it("reverts when a native-currency open task is sent another value", async () => {
      const { escrow, admin, poster } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).allowToken(ethers.ZeroAddress);
      const amount = ethers.parseEther("1");
      await expect(
        escrow
          .connect(poster)
          .createTaskOpen(TASK_HASH, ethers.ZeroAddress, amount, CATEGORY, ZONE, DAY, { value: amount - 1n }),
      )
        .to.be.revertedWithCustomError(escrow, "NativeValueMismatch")
        .withArgs(amount - 1n, amount);
    });

    it("reverts when native value is sent with an ERC-20 open task", async () => {
      const { escrow, poster, usdc } = await loadFixture(deployEscrowFixture);
      const amount = USDC(100);
      await expect(
        escrow
          .connect(poster)
          .createTaskOpen(TASK_HASH, await usdc.getAddress(), amount, CATEGORY, ZONE, DAY, { value: 1n }),
      ).to.be.revertedWithCustomError(escrow, "ZeroAmount");
    });

    it("reverts when the amount is zero", async () => {
      const { escrow, poster, usdc } = await loadFixture(deployEscrowFixture);
      await expect(
        escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), 0, CATEGORY, ZONE, DAY),
      ).to.be.revertedWithCustomError(escrow, "ZeroAmount");
    });

    it("reverts when the amount does not fit 96 bits", async () => {
      const { escrow, poster, usdc } = await loadFixture(deployEscrowFixture);
      const tooLarge = 2n ** 96n;
      await expect(
        escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), tooLarge, CATEGORY, ZONE, DAY),
      ).to.be.revertedWithCustomError(escrow, "AmountTooLarge");
    });

    it("reverts when the task hash is zero", async () => {
      const { escrow, poster, usdc } = await loadFixture(deployEscrowFixture);
      await expect(
        escrow.connect(poster).createTaskOpen(ethers.ZeroHash, await usdc.getAddress(), USDC(100), CATEGORY, ZONE, DAY),
      ).to.be.revertedWithCustomError(escrow, "EmptyHash");
    });

    it("reverts when the token is not allowed", async () => {
      const { escrow, poster } = await loadFixture(deployEscrowFixture);
      await expect(
        escrow.connect(poster).createTaskOpen(TASK_HASH, ethers.ZeroAddress, USDC(100), CATEGORY, ZONE, DAY),
      ).to.be.revertedWithCustomError(escrow, "TokenNotAllowed");
    });

    it("reverts when the duration is under MIN_DURATION", async () => {
      const { escrow, poster, usdc } = await loadFixture(deployEscrowFixture);
      const tooShort = (await escrow.MIN_DURATION()) - 1n;
      await expect(
        escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), USDC(100), CATEGORY, ZONE, tooShort),
      ).to.be.revertedWithCustomError(escrow, "InvalidDeadline");
    });

    it("reverts when the duration is over MAX_DURATION", async () => {
      const { escrow, poster, usdc } = await loadFixture(deployEscrowFixture);
      const tooLong = (await escrow.MAX_DURATION()) + 1n;
      await expect(
        escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), USDC(100), CATEGORY, ZONE, tooLong),
      ).to.be.revertedWithCustomError(escrow, "InvalidDeadline");
    });
  });

  describe("#submitOpen", () => {
    it("records the submission and emits OpenSubmission", async () => {
      const { escrow, worker, taskId } = await loadFixture(openTaskFixture);
      await expect(escrow.connect(worker).submitOpen(taskId, EVIDENCE_HASH))
        .to.emit(escrow, "OpenSubmission")
        .withArgs(taskId, worker.address, EVIDENCE_HASH);
      expect(await escrow.openSubmission(taskId, worker.address)).to.equal(EVIDENCE_HASH);
      expect(await escrow.openSubmissionCount(taskId)).to.equal(1n);
    });

    it("counts one submission per submitter", async () => {
      const { escrow, worker, stranger, taskId } = await loadFixture(submittedOpenTaskFixture);
      expect(await escrow.openSubmissionCount(taskId)).to.equal(2n);
      expect(await escrow.openSubmission(taskId, worker.address)).to.equal(EVIDENCE_HASH);
      expect(await escrow.openSubmission(taskId, stranger.address)).to.equal(OTHER_EVIDENCE_HASH);
    });

    it("leaves the task Funded and unassigned", async () => {
      const { escrow, taskId } = await loadFixture(submittedOpenTaskFixture);
      const task = await escrow.getTask(taskId);
      expect(task.status).to.equal(STATUS.Funded);
      expect(task.worker).to.equal(ethers.ZeroAddress);
    });

    it("accepts a submission one second before the deadline", async () => {
      const { escrow, worker, taskId, deadline } = await loadFixture(openTaskFixture);
      await time.setNextBlockTimestamp(deadline - 1n);
      await expect(escrow.connect(worker).submitOpen(taskId, EVIDENCE_HASH))
        .to.emit(escrow, "OpenSubmission")
        .withArgs(taskId, worker.address, EVIDENCE_HASH);
    });

    it("reverts when the task is not an open-submission task", async () => {
      const { escrow, worker, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(worker).submitOpen(taskId, EVIDENCE_HASH)).to.be.revertedWithCustomError(
        escrow,
        "NotOpenTask",
      );
    });

    it("reverts when the task was never created", async () => {
      const { escrow, worker, taskId } = await loadFixture(openTaskFixture);
      await expect(escrow.connect(worker).submitOpen(taskId + 1n, EVIDENCE_HASH)).to.be.revertedWithCustomError(
        escrow,
        "NotOpenTask",
      );
    });

    it("reverts at the deadline, in the Selection phase", async () => {
      const { escrow, worker, taskId, deadline } = await loadFixture(openTaskFixture);
      await time.setNextBlockTimestamp(deadline);
      await expect(escrow.connect(worker).submitOpen(taskId, EVIDENCE_HASH))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Selection, PHASE.Submission);
    });

    it("reverts in the Expired phase", async () => {
      const { escrow, others, taskId } = await loadFixture(expiredFixture);
      await expect(escrow.connect(others[0]).submitOpen(taskId, EVIDENCE_HASH))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Expired, PHASE.Submission);
    });

    it("reverts in the Closed phase after a cancellation", async () => {
      const { escrow, poster, worker, taskId } = await loadFixture(openTaskFixture);
      await escrow.connect(poster).cancelTask(taskId);
      await expect(escrow.connect(worker).submitOpen(taskId, EVIDENCE_HASH))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Closed, PHASE.Submission);
    });

    it("reverts when the poster submits", async () => {
      const { escrow, poster, taskId } = await loadFixture(openTaskFixture);
      await expect(escrow.connect(poster).submitOpen(taskId, EVIDENCE_HASH)).to.be.revertedWithCustomError(
        escrow,
        "SelfAssignment",
      );
    });

    it("reverts when the evidence hash is zero", async () => {
      const { escrow, worker, taskId } = await loadFixture(openTaskFixture);
      await expect(escrow.connect(worker).submitOpen(taskId, ethers.ZeroHash)).to.be.revertedWithCustomError(
        escrow,
        "EmptyHash",
      );
    });

    it("reverts when the submitter already submitted", async () => {
      const { escrow, worker, taskId } = await loadFixture(submittedOpenTaskFixture);
      await expect(escrow.connect(worker).submitOpen(taskId, OTHER_EVIDENCE_HASH)).to.be.revertedWithCustomError(
        escrow,
        "AlreadySubmitted",
      );
    });
  });

  describe("#selectWinner", () => {
    it("pays the winner the reward less the fee and the treasury the fee", async () => {
      const { escrow, poster, worker, stranger, treasury, usdc, taskId, amount } = await loadFixture(selectionFixture);
      const fee = (amount * BigInt(FEE_BPS)) / (await escrow.BPS_DENOMINATOR());
      await expect(escrow.connect(poster).selectWinner(taskId, worker.address)).to.changeTokenBalances(
        usdc,
        [worker, treasury, stranger, poster, escrow],
        [amount - fee, fee, 0, 0, -amount],
      );
    });

    it("emits WinnerSelected then TaskCompleted with their arguments", async () => {
      const { escrow, poster, worker, taskId, amount } = await loadFixture(selectionFixture);
      const fee = (amount * BigInt(FEE_BPS)) / (await escrow.BPS_DENOMINATOR());
      const tx = await escrow.connect(poster).selectWinner(taskId, worker.address);
      await expect(tx).to.emit(escrow, "WinnerSelected").withArgs(taskId, worker.address);
      await expect(tx)
        .to.emit(escrow, "TaskCompleted")
        .withArgs(taskId, amount - fee, fee);
      expect(await escrowEventNames(escrow, tx)).to.deep.equal(["WinnerSelected", "TaskCompleted"]);
    });

    it("records the winner as worker with its evidence and completes the task", async () => {
      const { escrow, poster, stranger, taskId } = await loadFixture(selectionFixture);
      await escrow.connect(poster).selectWinner(taskId, stranger.address);
      const task = await escrow.getTask(taskId);
      expect(task.worker).to.equal(stranger.address);
      expect(task.evidenceHash).to.equal(OTHER_EVIDENCE_HASH);
      expect(task.status).to.equal(STATUS.Completed);
    });

    it("accepts a winner one second before the selection window ends", async () => {
      const { escrow, poster, worker, taskId, deadline } = await loadFixture(submittedOpenTaskFixture);
      await time.setNextBlockTimestamp(deadline + (await escrow.OPEN_SELECTION_WINDOW()) - 1n);
      await expect(escrow.connect(poster).selectWinner(taskId, worker.address))
        .to.emit(escrow, "WinnerSelected")
        .withArgs(taskId, worker.address);
    });

    it("pays only the chosen submitter", async () => {
      const { escrow, poster, worker, stranger, usdc, taskId, amount } = await loadFixture(selectionFixture);
      const fee = (amount * BigInt(FEE_BPS)) / (await escrow.BPS_DENOMINATOR());
      await expect(escrow.connect(poster).selectWinner(taskId, stranger.address)).to.changeTokenBalances(
        usdc,
        [stranger, worker],
        [amount - fee, 0],
      );
    });

    it("reverts when the caller is not the poster", async () => {
      const { escrow, worker, taskId } = await loadFixture(selectionFixture);
      await expect(escrow.connect(worker).selectWinner(taskId, worker.address)).to.be.revertedWithCustomError(
        escrow,
        "NotAgent",
      );
    });

    it("reverts when the task is not an open-submission task", async () => {
      const { escrow, poster, worker, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(poster).selectWinner(taskId, worker.address)).to.be.revertedWithCustomError(
        escrow,
        "NotOpenTask",
      );
    });

    it("reverts in the Submission phase", async () => {
      const { escrow, poster, worker, taskId } = await loadFixture(submittedOpenTaskFixture);
      await expect(escrow.connect(poster).selectWinner(taskId, worker.address))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Submission, PHASE.Selection);
    });

    it("reverts in the Expired phase", async () => {
      const { escrow, poster, worker, taskId } = await loadFixture(expiredFixture);
      await expect(escrow.connect(poster).selectWinner(taskId, worker.address))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Expired, PHASE.Selection);
    });

    it("reverts in the Closed phase after a winner was paid", async () => {
      const { escrow, poster, worker, stranger, taskId } = await loadFixture(selectionFixture);
      await escrow.connect(poster).selectWinner(taskId, worker.address);
      await expect(escrow.connect(poster).selectWinner(taskId, stranger.address))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Closed, PHASE.Selection);
    });

    it("reverts when the winner did not submit", async () => {
      const { escrow, poster, others, taskId } = await loadFixture(selectionFixture);
      await expect(escrow.connect(poster).selectWinner(taskId, others[0].address)).to.be.revertedWithCustomError(
        escrow,
        "NotSubmitter",
      );
    });
  });

  describe("#reclaimOpen", () => {
    it("refunds the poster in the Expired phase and emits DeadlineExpired", async () => {
      const { escrow, poster, usdc, taskId, amount } = await loadFixture(expiredFixture);
      const tx = escrow.connect(poster).reclaimOpen(taskId);
      await expect(tx).to.emit(escrow, "DeadlineExpired").withArgs(taskId, amount);
      await expect(tx).to.changeTokenBalances(usdc, [poster, escrow], [amount, -amount]);
    });

    it("refunds the poster in the Selection phase when nobody submitted", async () => {
      const { escrow, poster, usdc, taskId, amount } = await loadFixture(emptySelectionFixture);
      const tx = escrow.connect(poster).reclaimOpen(taskId);
      await expect(tx).to.emit(escrow, "DeadlineExpired").withArgs(taskId, amount);
      await expect(tx).to.changeTokenBalances(usdc, [poster, escrow], [amount, -amount]);
    });

    it("marks the task Cancelled", async () => {
      const { escrow, poster, taskId } = await loadFixture(expiredFixture);
      await escrow.connect(poster).reclaimOpen(taskId);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Cancelled);
    });

    it("reverts when the caller is not the poster", async () => {
      const { escrow, worker, taskId } = await loadFixture(expiredFixture);
      await expect(escrow.connect(worker).reclaimOpen(taskId)).to.be.revertedWithCustomError(escrow, "NotAgent");
    });

    it("reverts when the task is not an open-submission task", async () => {
      const { escrow, poster, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(poster).reclaimOpen(taskId)).to.be.revertedWithCustomError(escrow, "NotOpenTask");
    });

    it("reverts in the Submission phase", async () => {
      const { escrow, poster, taskId } = await loadFixture(openTaskFixture);
      await expect(escrow.connect(poster).reclaimOpen(taskId))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Submission, PHASE.Expired);
    });

    it("reverts in the Selection phase when somebody submitted", async () => {
      const { escrow, poster, taskId } = await loadFixture(selectionFixture);
      await expect(escrow.connect(poster).reclaimOpen(taskId))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Selection, PHASE.Expired);
    });

    it("reverts in the Closed phase after a reclaim", async () => {
      const { escrow, poster, taskId } = await loadFixture(expiredFixture);
      await escrow.connect(poster).reclaimOpen(taskId);
      await expect(escrow.connect(poster).reclaimOpen(taskId))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Closed, PHASE.Expired);
    });
  });

  describe("#openPhase", () => {
    it("reverts when the task is not an open-submission task", async () => {
      const { escrow, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.openPhase(taskId)).to.be.revertedWithCustomError(escrow, "NotOpenTask");
    });

    it("is Submission one second before the deadline", async () => {
      const { escrow, taskId, deadline } = await loadFixture(openTaskFixture);
      await time.increaseTo(deadline - 1n);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Submission);
    });

    it("is Selection from the deadline", async () => {
      const { escrow, taskId, deadline } = await loadFixture(openTaskFixture);
      await time.increaseTo(deadline);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Selection);
    });

    it("is Selection one second before the selection window ends", async () => {
      const { escrow, taskId, deadline } = await loadFixture(openTaskFixture);
      await time.increaseTo(deadline + (await escrow.OPEN_SELECTION_WINDOW()) - 1n);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Selection);
    });

    it("is Expired from the end of the selection window", async () => {
      const { escrow, taskId, deadline } = await loadFixture(openTaskFixture);
      await time.increaseTo(deadline + (await escrow.OPEN_SELECTION_WINDOW()));
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Expired);
    });

    it("is Closed after a winner was paid", async () => {
      const { escrow, poster, worker, taskId } = await loadFixture(selectionFixture);
      await escrow.connect(poster).selectWinner(taskId, worker.address);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Closed);
    });

    it("is Closed after a reclaim", async () => {
      const { escrow, poster, taskId } = await loadFixture(expiredFixture);
      await escrow.connect(poster).reclaimOpen(taskId);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Closed);
    });

    it("is Closed after a cancellation, even before the deadline", async () => {
      const { escrow, poster, taskId } = await loadFixture(openTaskFixture);
      await escrow.connect(poster).cancelTask(taskId);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Closed);
    });
  });

  describe("#openSubmission", () => {
    it("is zero for an address that did not submit", async () => {
      const { escrow, others, taskId } = await loadFixture(submittedOpenTaskFixture);
      expect(await escrow.openSubmission(taskId, others[0].address)).to.equal(ethers.ZeroHash);
    });
  });

  describe("#isOpenTask", () => {
    it("is false for a single-worker task", async () => {
      const { escrow, taskId } = await loadFixture(fundedTaskFixture);
      expect(await escrow.isOpenTask(taskId)).to.equal(false);
    });
  });

  describe("#cancelTask", () => {
    it("refunds an open task nobody submitted to", async () => {
      const { escrow, poster, usdc, taskId, amount } = await loadFixture(openTaskFixture);
      const tx = escrow.connect(poster).cancelTask(taskId);
      await expect(tx).to.emit(escrow, "TaskCancelled").withArgs(taskId, amount);
      await expect(tx).to.changeTokenBalances(usdc, [poster, escrow], [amount, -amount]);
    });

    it("reverts when the open task has submissions", async () => {
      const { escrow, poster, taskId } = await loadFixture(submittedOpenTaskFixture);
      await expect(escrow.connect(poster).cancelTask(taskId)).to.be.revertedWithCustomError(
        escrow,
        "OpenTaskHasSubmissions",
      );
    });
  });

  describe("#marketplaceAssign", () => {
    it("reverts on an open-submission task", async () => {
      const { escrow, verifier, worker, taskId } = await loadFixture(openTaskFixture);
      await expect(escrow.connect(verifier).marketplaceAssign(taskId, worker.address)).to.be.revertedWithCustomError(
        escrow,
        "OpenTaskNotAssignable",
      );
    });
  });

  describe("#assignWorker", () => {
    it("reverts on an open-submission task", async () => {
      const { escrow, poster, worker, taskId } = await loadFixture(openTaskFixture);
      await expect(escrow.connect(poster).assignWorker(taskId, worker.address)).to.be.revertedWithCustomError(
        escrow,
        "OpenTaskNotAssignable",
      );
    });
  });

  describe("single-worker functions on an open task", () => {
    it("#submitEvidence reverts NotWorker for a submitter", async () => {
      const { escrow, worker, taskId } = await loadFixture(submittedOpenTaskFixture);
      await expect(escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH)).to.be.revertedWithCustomError(
        escrow,
        "NotWorker",
      );
    });

    it("#claimTimeout reverts InvalidStatus after the deadline: the poster reclaims instead", async () => {
      const { escrow, poster, taskId } = await loadFixture(expiredFixture);
      await expect(escrow.connect(poster).claimTimeout(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Funded, STATUS.Assigned);
    });

    it("#raiseDispute reverts InvalidStatus for the poster", async () => {
      const { escrow, poster, taskId } = await loadFixture(submittedOpenTaskFixture);
      await expect(escrow.connect(poster).raiseDispute(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Funded, STATUS.Submitted);
    });
  });
});
