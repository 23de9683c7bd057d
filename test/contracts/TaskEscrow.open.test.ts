import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import {
  CATEGORY,
  DAY,
  EVIDENCE_HASH,
  FEE_BPS,
  OPEN_SALT,
  PHASE,
  STATUS,
  TASK_HASH,
  USDC,
  ZONE,
  commitOpen,
  deployEscrowFixture,
  fundedTaskFixture,
  openCommitment,
  openPhaseStarts,
} from "../helpers/fixtures";
import { escrowEventNames } from "../helpers/events";

/** A second submitter's evidence, distinct from EVIDENCE_HASH. */
const OTHER_EVIDENCE_HASH = ethers.keccak256(ethers.toUtf8Bytes('{"result":"another delivery"}'));

/** Open-submission task 1 (100 USDC, one day) in its Submission phase, nobody committed. */
async function openTaskFixture() {
  const base = await deployEscrowFixture();
  const { escrow, usdc, poster } = base;
  const amount = USDC(100);
  await escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), amount, CATEGORY, ZONE, DAY);
  const taskId = 1n;
  const bond = (amount * (await escrow.OPEN_BOND_BPS())) / (await escrow.BPS_DENOMINATOR());
  return { ...base, taskId, amount, bond, starts: await openPhaseStarts(escrow, taskId) };
}

/** Open task 1 with three commitments: `worker` (EVIDENCE_HASH), `stranger` (OTHER_EVIDENCE_HASH), `others[0]`. */
async function committedFixture() {
  const base = await openTaskFixture();
  const { escrow, worker, stranger, others, taskId } = base;
  await commitOpen(escrow, worker, taskId, EVIDENCE_HASH);
  await commitOpen(escrow, stranger, taskId, OTHER_EVIDENCE_HASH);
  await commitOpen(escrow, others[0], taskId, EVIDENCE_HASH);
  return base;
}

/** The committed task at the start of its Reveal phase. */
async function revealFixture() {
  const base = await committedFixture();
  await time.increaseTo(base.starts.reveal);
  return base;
}

/** Revealed by `stranger` first, then `worker`; `others[0]` never reveals. At the start of the Selection phase. */
async function selectionFixture() {
  const base = await revealFixture();
  const { escrow, worker, stranger, taskId } = base;
  await escrow.connect(stranger).revealOpen(taskId, OTHER_EVIDENCE_HASH, OPEN_SALT);
  await escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT);
  await time.increaseTo(base.starts.selection);
  return base;
}

/** Committed by three, revealed by `worker` alone (the others' bonds are forfeited): at the start of Selection. */
async function singleSelectionFixture() {
  const base = await revealFixture();
  const { escrow, worker, taskId } = base;
  await escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT);
  await time.increaseTo(base.starts.selection);
  return base;
}

/** As selectionFixture, at the start of the Expired phase: the poster chose nobody. */
async function expiredFixture() {
  const base = await selectionFixture();
  await time.increaseTo(base.starts.expired);
  return base;
}

/** Commitments nobody revealed, at the start of the Selection phase. */
async function unrevealedSelectionFixture() {
  const base = await committedFixture();
  await time.increaseTo(base.starts.selection);
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

  describe("#commitOpen", () => {
    it("records the commitment, emits OpenSubmissionCommitted and takes the bond", async () => {
      const { escrow, usdc, worker, taskId, bond } = await loadFixture(openTaskFixture);
      const commitment = openCommitment(await escrow.getAddress(), taskId, worker.address, EVIDENCE_HASH);
      const tx = escrow.connect(worker).commitOpen(taskId, commitment);
      await expect(tx).to.emit(escrow, "OpenSubmissionCommitted").withArgs(taskId, worker.address, commitment, bond);
      await expect(tx).to.changeTokenBalances(usdc, [worker, escrow], [-bond, bond]);
      expect(await escrow.openCommitment(taskId, worker.address)).to.equal(commitment);
    });

    it("takes OPEN_BOND_BPS of the reward as bond, 5%", async () => {
      const { escrow, taskId, amount } = await loadFixture(openTaskFixture);
      expect(await escrow.OPEN_BOND_BPS()).to.equal(500n);
      expect((await escrow.openState(taskId)).bond).to.equal(amount / 20n);
    });

    it("takes a bond of one unit when 5% of the reward rounds to zero", async () => {
      const { escrow, usdc, poster, worker } = await loadFixture(deployEscrowFixture);
      await escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), 19n, CATEGORY, ZONE, DAY);
      expect((await escrow.openState(1n)).bond).to.equal(1n);
      await expect(commitOpen(escrow, worker, 1n, EVIDENCE_HASH)).to.changeTokenBalance(usdc, worker, -1n);
    });

    it("counts each committer once, leaves the evidence hidden and the task Funded", async () => {
      const { escrow, worker, taskId } = await loadFixture(committedFixture);
      expect(await escrow.openSubmissionCount(taskId)).to.equal(3n);
      const state = await escrow.openState(taskId);
      expect([state.earliestRevealer, state.commitCount, state.revealCount]).to.deep.equal([
        ethers.ZeroAddress,
        3n,
        0n,
      ]);
      expect(await escrow.openSubmission(taskId, worker.address)).to.equal(ethers.ZeroHash);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Funded);
    });

    it("accepts a commitment one second before the deadline", async () => {
      const { escrow, worker, taskId, starts } = await loadFixture(openTaskFixture);
      await time.setNextBlockTimestamp(starts.reveal - 1n);
      await expect(commitOpen(escrow, worker, taskId, EVIDENCE_HASH)).to.emit(escrow, "OpenSubmissionCommitted");
    });

    it("takes a native task's bond as value, and refuses another value", async () => {
      const { escrow, admin, poster, worker } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).allowToken(ethers.ZeroAddress);
      const amount = ethers.parseEther("1");
      await escrow
        .connect(poster)
        .createTaskOpen(TASK_HASH, ethers.ZeroAddress, amount, CATEGORY, ZONE, DAY, { value: amount });
      const bond = amount / 20n;
      await expect(commitOpen(escrow, worker, 1n, EVIDENCE_HASH, { value: bond - 1n }))
        .to.be.revertedWithCustomError(escrow, "NativeValueMismatch")
        .withArgs(bond - 1n, bond);
      await expect(commitOpen(escrow, worker, 1n, EVIDENCE_HASH, { value: bond })).to.changeEtherBalances(
        [worker, escrow],
        [-bond, bond],
      );
    });

    it("reverts when the task is not an open-submission task", async () => {
      const { escrow, worker, taskId } = await loadFixture(fundedTaskFixture);
      await expect(commitOpen(escrow, worker, taskId, EVIDENCE_HASH)).to.be.revertedWithCustomError(
        escrow,
        "NotOpenTask",
      );
    });

    it("reverts when the task was never created", async () => {
      const { escrow, worker } = await loadFixture(openTaskFixture);
      await expect(commitOpen(escrow, worker, 99n, EVIDENCE_HASH)).to.be.revertedWithCustomError(escrow, "NotOpenTask");
    });

    it("reverts at the deadline, in the Reveal phase", async () => {
      const { escrow, worker, taskId, starts } = await loadFixture(openTaskFixture);
      await time.setNextBlockTimestamp(starts.reveal);
      await expect(commitOpen(escrow, worker, taskId, EVIDENCE_HASH))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Reveal, PHASE.Submission);
    });

    it("reverts in the Closed phase after a cancellation", async () => {
      const { escrow, poster, worker, taskId } = await loadFixture(openTaskFixture);
      await escrow.connect(poster).cancelTask(taskId);
      await expect(commitOpen(escrow, worker, taskId, EVIDENCE_HASH))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Closed, PHASE.Submission);
    });

    it("reverts when the poster commits", async () => {
      const { escrow, poster, taskId } = await loadFixture(openTaskFixture);
      await expect(commitOpen(escrow, poster, taskId, EVIDENCE_HASH)).to.be.revertedWithCustomError(
        escrow,
        "SelfAssignment",
      );
    });

    it("reverts when the commitment is zero", async () => {
      const { escrow, worker, taskId } = await loadFixture(openTaskFixture);
      await expect(escrow.connect(worker).commitOpen(taskId, ethers.ZeroHash)).to.be.revertedWithCustomError(
        escrow,
        "EmptyHash",
      );
    });

    it("reverts when the address already committed", async () => {
      const { escrow, worker, taskId } = await loadFixture(committedFixture);
      await expect(commitOpen(escrow, worker, taskId, OTHER_EVIDENCE_HASH)).to.be.revertedWithCustomError(
        escrow,
        "AlreadySubmitted",
      );
    });
  });

  describe("#revealOpen", () => {
    it("records the evidence, emits OpenSubmission and returns the bond", async () => {
      const { escrow, usdc, worker, taskId, bond } = await loadFixture(revealFixture);
      const tx = escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT);
      await expect(tx).to.emit(escrow, "OpenSubmission").withArgs(taskId, worker.address, EVIDENCE_HASH);
      await expect(tx).to.changeTokenBalances(usdc, [worker, escrow], [bond, -bond]);
      expect(await escrow.openSubmission(taskId, worker.address)).to.equal(EVIDENCE_HASH);
    });

    it("makes the first revealer the default winner, whoever committed first", async () => {
      const { escrow, worker, stranger, taskId } = await loadFixture(selectionFixture);
      const state = await escrow.openState(taskId);
      expect([state.earliestRevealer, state.commitCount, state.revealCount]).to.deep.equal([stranger.address, 3n, 2n]);
      expect(await escrow.openSubmission(taskId, worker.address)).to.equal(EVIDENCE_HASH);
    });

    it("accepts a reveal one second before the reveal window ends", async () => {
      const { escrow, worker, taskId, starts } = await loadFixture(committedFixture);
      await time.setNextBlockTimestamp(starts.selection - 1n);
      await expect(escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT)).to.emit(
        escrow,
        "OpenSubmission",
      );
    });

    it("binds the evidence to its committer: a copied commitment does not reveal for the copier", async () => {
      const { escrow, worker, stranger, taskId } = await loadFixture(openTaskFixture);
      const commitment = openCommitment(await escrow.getAddress(), taskId, worker.address, EVIDENCE_HASH);
      await escrow.connect(worker).commitOpen(taskId, commitment);
      await escrow.connect(stranger).commitOpen(taskId, commitment);
      await time.increaseTo((await openPhaseStarts(escrow, taskId)).reveal);
      await expect(escrow.connect(stranger).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT)).to.be.revertedWithCustomError(
        escrow,
        "CommitmentMismatch",
      );
      await expect(escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT))
        .to.emit(escrow, "OpenSubmission")
        .withArgs(taskId, worker.address, EVIDENCE_HASH);
    });

    it("reverts when the salt is not the committed one", async () => {
      const { escrow, worker, taskId } = await loadFixture(revealFixture);
      await expect(
        escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, ethers.id("another salt")),
      ).to.be.revertedWithCustomError(escrow, "CommitmentMismatch");
    });

    it("reverts when the evidence is not the committed one", async () => {
      const { escrow, worker, taskId } = await loadFixture(revealFixture);
      await expect(
        escrow.connect(worker).revealOpen(taskId, OTHER_EVIDENCE_HASH, OPEN_SALT),
      ).to.be.revertedWithCustomError(escrow, "CommitmentMismatch");
    });

    it("reverts when the evidence is zero", async () => {
      const { escrow, worker, taskId } = await loadFixture(revealFixture);
      await expect(escrow.connect(worker).revealOpen(taskId, ethers.ZeroHash, OPEN_SALT)).to.be.revertedWithCustomError(
        escrow,
        "EmptyHash",
      );
    });

    it("reverts when the caller made no commitment", async () => {
      const { escrow, others, taskId } = await loadFixture(revealFixture);
      await expect(
        escrow.connect(others[1]).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT),
      ).to.be.revertedWithCustomError(escrow, "NotSubmitter");
    });

    it("reverts on a second reveal", async () => {
      const { escrow, worker, taskId } = await loadFixture(revealFixture);
      await escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT);
      await expect(escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT)).to.be.revertedWithCustomError(
        escrow,
        "AlreadySubmitted",
      );
    });

    it("reverts in the Submission phase: nothing is revealed before the deadline", async () => {
      const { escrow, worker, taskId } = await loadFixture(committedFixture);
      await expect(escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Submission, PHASE.Reveal);
    });

    it("reverts in the Selection phase", async () => {
      const { escrow, others, taskId } = await loadFixture(selectionFixture);
      await expect(escrow.connect(others[0]).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Selection, PHASE.Reveal);
    });

    it("reverts when the task is not an open-submission task", async () => {
      const { escrow, worker, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT)).to.be.revertedWithCustomError(
        escrow,
        "NotOpenTask",
      );
    });
  });

  describe("#selectWinner", () => {
    it("credits the only revealed submitter the reward less the fee and the poster the unrevealed bonds", async () => {
      const { escrow, usdc, poster, treasury, worker, taskId, amount, bond } =
        await loadFixture(singleSelectionFixture);
      const fee = (amount * BigInt(FEE_BPS)) / 10_000n;
      const tx = escrow.connect(poster).selectWinner(taskId, worker.address);
      // Only the fee leaves the escrow: the winner and the poster are owed (withdraw), not pushed.
      await expect(tx).to.changeTokenBalances(usdc, [worker, treasury, poster, escrow], [0n, fee, 0n, -fee]);
      const token = await usdc.getAddress();
      expect(await escrow.creditOf(token, worker.address)).to.equal(amount - fee);
      expect(await escrow.creditOf(token, poster.address)).to.equal(2n * bond);
    });

    it("emits WinnerSelected, OpenBondsForfeited, then TaskCompleted", async () => {
      const { escrow, usdc, poster, worker, taskId, amount, bond } = await loadFixture(singleSelectionFixture);
      const fee = (amount * BigInt(FEE_BPS)) / 10_000n;
      const tx = await escrow.connect(poster).selectWinner(taskId, worker.address);
      await expect(tx).to.emit(escrow, "WinnerSelected").withArgs(taskId, worker.address);
      await expect(tx)
        .to.emit(escrow, "OpenBondsForfeited")
        .withArgs(taskId, poster.address, 2n * bond);
      await expect(tx)
        .to.emit(escrow, "TaskCompleted")
        .withArgs(taskId, amount - fee, fee);
      await expect(tx)
        .to.emit(escrow, "Credited")
        .withArgs(await usdc.getAddress(), worker.address, amount - fee);
      expect(await escrowEventNames(escrow, tx)).to.deep.equal([
        "WinnerSelected",
        "OpenBondsForfeited",
        "Credited",
        "Credited",
        "TaskCompleted",
      ]);
    });

    it("records the winner as worker with its evidence and completes the task", async () => {
      const { escrow, poster, worker, taskId } = await loadFixture(singleSelectionFixture);
      await escrow.connect(poster).selectWinner(taskId, worker.address);
      const task = await escrow.getTask(taskId);
      expect([task.worker, task.evidenceHash, task.status]).to.deep.equal([
        worker.address,
        EVIDENCE_HASH,
        BigInt(STATUS.Completed),
      ]);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Closed);
    });

    it("with two revealed submissions proposes the pick, paid once OPEN_CONTEST_WINDOW passed uncontested", async () => {
      const { escrow, usdc, poster, stranger, worker, taskId, amount } = await loadFixture(selectionFixture);
      expect((await escrow.openState(taskId)).earliestRevealer).to.equal(stranger.address);
      const tx = await escrow.connect(poster).selectWinner(taskId, worker.address);
      expect(await escrowEventNames(escrow, tx)).to.deep.equal(["OpenWinnerProposed"]);
      await expect(tx).to.emit(escrow, "OpenWinnerProposed").withArgs(taskId, worker.address);
      expect((await escrow.openVerdictState(taskId)).chosen).to.equal(worker.address);
      await expect(escrow.connect(worker).releaseOpenDefault(taskId)).to.be.revertedWithCustomError(
        escrow,
        "ContestWindow",
      );
      await time.increase(await escrow.OPEN_CONTEST_WINDOW());
      const fee = (amount * BigInt(FEE_BPS)) / 10_000n;
      const release = await escrow.connect(worker).releaseOpenDefault(taskId);
      await expect(release).to.emit(escrow, "WinnerSelected").withArgs(taskId, worker.address);
      await expect(release).not.to.emit(escrow, "OpenDefaultReleased");
      expect(await escrow.creditOf(await usdc.getAddress(), worker.address)).to.equal(amount - fee);
    });

    it("accepts a winner one second before the selection window ends", async () => {
      const { escrow, poster, worker, taskId, starts } = await loadFixture(singleSelectionFixture);
      await time.setNextBlockTimestamp(starts.expired - 1n);
      await expect(escrow.connect(poster).selectWinner(taskId, worker.address)).to.emit(escrow, "WinnerSelected");
    });

    it("reverts on a second pick", async () => {
      const { escrow, poster, worker, stranger, taskId } = await loadFixture(selectionFixture);
      await escrow.connect(poster).selectWinner(taskId, worker.address);
      await expect(escrow.connect(poster).selectWinner(taskId, stranger.address)).to.be.revertedWithCustomError(
        escrow,
        "AlreadySubmitted",
      );
    });

    it("reverts when the winner committed but never revealed", async () => {
      const { escrow, poster, others, taskId } = await loadFixture(selectionFixture);
      await expect(escrow.connect(poster).selectWinner(taskId, others[0].address)).to.be.revertedWithCustomError(
        escrow,
        "NotSubmitter",
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

    it("reverts in the Reveal phase, while submissions may still be revealed", async () => {
      const { escrow, poster, worker, taskId } = await loadFixture(revealFixture);
      await escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT);
      await expect(escrow.connect(poster).selectWinner(taskId, worker.address))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Reveal, PHASE.Selection);
    });

    it("reverts in the Expired phase", async () => {
      const { escrow, poster, worker, taskId } = await loadFixture(expiredFixture);
      await expect(escrow.connect(poster).selectWinner(taskId, worker.address))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Expired, PHASE.Selection);
    });

    it("reverts after a winner was paid", async () => {
      const { escrow, poster, worker, stranger, taskId } = await loadFixture(singleSelectionFixture);
      await escrow.connect(poster).selectWinner(taskId, worker.address);
      await expect(escrow.connect(poster).selectWinner(taskId, stranger.address))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Completed, STATUS.Funded);
    });
  });

  describe("#releaseOpenDefault", () => {
    it("credits the only revealed submission once the poster let the selection window pass", async () => {
      const { escrow, usdc, poster, treasury, worker, others, taskId, amount, bond, starts } =
        await loadFixture(singleSelectionFixture);
      await time.increaseTo(starts.expired);
      const fee = (amount * BigInt(FEE_BPS)) / 10_000n;
      const tx = escrow.connect(others[2]).releaseOpenDefault(taskId);
      await expect(tx).to.changeTokenBalances(usdc, [worker, treasury, poster, escrow], [0n, fee, 0n, -fee]);
      // The silent poster's forfeited bonds go to the paid submitter.
      await expect(tx)
        .to.emit(escrow, "OpenBondsForfeited")
        .withArgs(taskId, worker.address, 2n * bond);
      await expect(tx).to.emit(escrow, "OpenDefaultReleased").withArgs(taskId, worker.address);
      await expect(tx).to.emit(escrow, "WinnerSelected").withArgs(taskId, worker.address);
      expect(await escrow.creditOf(await usdc.getAddress(), worker.address)).to.equal(amount - fee + 2n * bond);
      const task = await escrow.getTask(taskId);
      expect([task.worker, task.evidenceHash, task.status]).to.deep.equal([
        worker.address,
        EVIDENCE_HASH,
        BigInt(STATUS.Completed),
      ]);
    });

    it("emits OpenDefaultReleased before WinnerSelected, and no OpenBondsForfeited when every commitment was revealed", async () => {
      const { escrow, worker, taskId, starts } = await loadFixture(openTaskFixture);
      await commitOpen(escrow, worker, taskId, EVIDENCE_HASH);
      await time.increaseTo(starts.reveal);
      await escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT);
      await time.increaseTo(starts.expired);
      const tx = await escrow.connect(worker).releaseOpenDefault(taskId);
      expect(await escrowEventNames(escrow, tx)).to.deep.equal([
        "OpenDefaultReleased",
        "WinnerSelected",
        "Credited",
        "TaskCompleted",
      ]);
    });

    it("sends two revealed submissions the poster did not pick to the judge instead of paying the earliest", async () => {
      const { escrow, usdc, stranger, others, taskId } = await loadFixture(expiredFixture);
      const tx = await escrow.connect(others[2]).releaseOpenDefault(taskId);
      await expect(tx).to.emit(escrow, "TaskDisputed").withArgs(taskId, others[2].address);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Disputed);
      expect((await escrow.openVerdictState(taskId)).challenger).to.equal(stranger.address);
      expect(await escrow.creditOf(await usdc.getAddress(), stranger.address)).to.equal(0n);
    });

    it("reverts in the Selection phase: the poster chooses first", async () => {
      const { escrow, stranger, taskId } = await loadFixture(selectionFixture);
      await expect(escrow.connect(stranger).releaseOpenDefault(taskId))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Selection, PHASE.Expired);
    });

    it("reverts when no submission was revealed", async () => {
      const { escrow, worker, taskId, starts } = await loadFixture(committedFixture);
      await time.increaseTo(starts.expired);
      await expect(escrow.connect(worker).releaseOpenDefault(taskId)).to.be.revertedWithCustomError(
        escrow,
        "NoRevealedSubmission",
      );
    });

    it("reverts after the default payout", async () => {
      const { escrow, worker, taskId, starts } = await loadFixture(singleSelectionFixture);
      await time.increaseTo(starts.expired);
      await escrow.connect(worker).releaseOpenDefault(taskId);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Closed);
      await expect(escrow.connect(worker).releaseOpenDefault(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Completed, STATUS.Funded);
    });

    it("reverts when the task is not an open-submission task", async () => {
      const { escrow, worker, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(worker).releaseOpenDefault(taskId)).to.be.revertedWithCustomError(
        escrow,
        "NotOpenTask",
      );
    });
  });

  describe("#reclaimOpen", () => {
    it("refunds the poster from the deadline when nobody committed", async () => {
      const { escrow, usdc, poster, taskId, amount, starts } = await loadFixture(openTaskFixture);
      await time.increaseTo(starts.reveal);
      const tx = escrow.connect(poster).reclaimOpen(taskId);
      await expect(tx).to.emit(escrow, "DeadlineExpired").withArgs(taskId, amount);
      await expect(tx).to.changeTokenBalances(usdc, [poster, escrow], [amount, -amount]);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Cancelled);
    });

    it("refunds the poster and credits it the bonds when commitments were never revealed", async () => {
      const { escrow, usdc, poster, taskId, amount, bond } = await loadFixture(unrevealedSelectionFixture);
      const tx = escrow.connect(poster).reclaimOpen(taskId);
      await expect(tx)
        .to.emit(escrow, "OpenBondsForfeited")
        .withArgs(taskId, poster.address, 3n * bond);
      await expect(tx).to.emit(escrow, "DeadlineExpired").withArgs(taskId, amount);
      await expect(tx).to.changeTokenBalances(usdc, [poster, escrow], [amount, -amount]);
      await expect(escrow.connect(poster).withdraw(await usdc.getAddress(), poster.address)).to.changeTokenBalances(
        usdc,
        [poster, escrow],
        [3n * bond, -3n * bond],
      );
    });

    it("refuses while a revealed submission awaits the choice: the poster cannot take everything back", async () => {
      const { escrow, poster, taskId } = await loadFixture(selectionFixture);
      await expect(escrow.connect(poster).reclaimOpen(taskId)).to.be.revertedWithCustomError(
        escrow,
        "OpenTaskHasSubmissions",
      );
    });

    it("refuses after the selection window too: a revealed submission is paid or judged instead", async () => {
      const { escrow, poster, taskId } = await loadFixture(expiredFixture);
      await expect(escrow.connect(poster).reclaimOpen(taskId)).to.be.revertedWithCustomError(
        escrow,
        "OpenTaskHasSubmissions",
      );
    });

    it("reverts in the Reveal phase when commitments may still be revealed", async () => {
      const { escrow, poster, taskId } = await loadFixture(revealFixture);
      await expect(escrow.connect(poster).reclaimOpen(taskId))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Reveal, PHASE.Selection);
    });

    it("reverts in the Submission phase", async () => {
      const { escrow, poster, taskId } = await loadFixture(openTaskFixture);
      await expect(escrow.connect(poster).reclaimOpen(taskId))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Submission, PHASE.Reveal);
    });

    it("reverts in the Closed phase after a reclaim", async () => {
      const { escrow, poster, taskId, starts } = await loadFixture(openTaskFixture);
      await time.increaseTo(starts.reveal);
      await escrow.connect(poster).reclaimOpen(taskId);
      await expect(escrow.connect(poster).reclaimOpen(taskId))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Closed, PHASE.Reveal);
    });

    it("reverts when the caller is not the poster", async () => {
      const { escrow, worker, taskId } = await loadFixture(unrevealedSelectionFixture);
      await expect(escrow.connect(worker).reclaimOpen(taskId)).to.be.revertedWithCustomError(escrow, "NotAgent");
    });

    it("reverts when the task is not an open-submission task", async () => {
      const { escrow, poster, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.connect(poster).reclaimOpen(taskId)).to.be.revertedWithCustomError(escrow, "NotOpenTask");
    });
  });

  describe("native currency", () => {
    /** A native open task of 1 ether: `worker` and `stranger` committed (bond 0.05 ether each). */
    async function nativeCommittedFixture() {
      const base = await deployEscrowFixture();
      const { escrow, admin, poster, worker, stranger } = base;
      await escrow.connect(admin).allowToken(ethers.ZeroAddress);
      const amount = ethers.parseEther("1");
      await escrow
        .connect(poster)
        .createTaskOpen(TASK_HASH, ethers.ZeroAddress, amount, CATEGORY, ZONE, DAY, { value: amount });
      const bond = amount / 20n;
      await commitOpen(escrow, worker, 1n, EVIDENCE_HASH, { value: bond });
      await commitOpen(escrow, stranger, 1n, OTHER_EVIDENCE_HASH, { value: bond });
      return { ...base, taskId: 1n, amount, bond, starts: await openPhaseStarts(escrow, 1n) };
    }

    it("returns a revealed commitment's bond; the payout and the other's forfeited bond are withdrawn", async () => {
      const { escrow, poster, worker, taskId, amount, bond, starts } = await loadFixture(nativeCommittedFixture);
      await time.increaseTo(starts.reveal);
      await expect(escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT)).to.changeEtherBalances(
        [worker, escrow],
        [bond, -bond],
      );
      await time.increaseTo(starts.selection);
      const fee = (amount * BigInt(FEE_BPS)) / 10_000n;
      await escrow.connect(poster).selectWinner(taskId, worker.address);
      await expect(escrow.connect(worker).withdraw(ethers.ZeroAddress, worker.address)).to.changeEtherBalances(
        [worker, escrow],
        [amount - fee, -(amount - fee)],
      );
      await expect(escrow.connect(poster).withdraw(ethers.ZeroAddress, poster.address)).to.changeEtherBalances(
        [poster, escrow],
        [bond, -bond],
      );
      expect(await ethers.provider.getBalance(await escrow.getAddress())).to.equal(0n);
    });

    it("refunds the reward and credits both forfeited bonds once expired without a reveal", async () => {
      const { escrow, poster, taskId, amount, bond, starts } = await loadFixture(nativeCommittedFixture);
      await time.increaseTo(starts.expired);
      await expect(escrow.connect(poster).reclaimOpen(taskId)).to.changeEtherBalances(
        [poster, escrow],
        [amount, -amount],
      );
      expect(await escrow.creditOf(ethers.ZeroAddress, poster.address)).to.equal(2n * bond);
      await expect(escrow.connect(poster).reclaimOpen(taskId))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Closed, PHASE.Selection);
    });
  });

  describe("a poster that refuses payments", () => {
    it("cannot block the default payout: the forfeited bonds go to the paid submitter", async () => {
      const { escrow, admin, poster, worker, stranger } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).allowToken(ethers.ZeroAddress);
      const posterContract = await ethers.deployContract("ReentrantReceiver");
      const amount = ethers.parseEther("1");
      const bond = amount / 20n;
      await posterContract
        .connect(poster)
        .execute(
          await escrow.getAddress(),
          escrow.interface.encodeFunctionData("createTaskOpen", [
            TASK_HASH,
            ethers.ZeroAddress,
            amount,
            CATEGORY,
            ZONE,
            DAY,
          ]),
          { value: amount },
        );
      await commitOpen(escrow, worker, 1n, EVIDENCE_HASH, { value: bond });
      await commitOpen(escrow, stranger, 1n, OTHER_EVIDENCE_HASH, { value: bond });
      const starts = await openPhaseStarts(escrow, 1n);
      await time.increaseTo(starts.reveal);
      await escrow.connect(worker).revealOpen(1n, EVIDENCE_HASH, OPEN_SALT);
      await posterContract.setMode(1, ethers.ZeroAddress, "0x"); // rejects every payment from now on
      await time.increaseTo(starts.expired);
      const fee = (amount * BigInt(FEE_BPS)) / 10_000n;
      await escrow.connect(worker).releaseOpenDefault(1n);
      await expect(escrow.connect(worker).withdraw(ethers.ZeroAddress, worker.address)).to.changeEtherBalances(
        [worker, posterContract, escrow],
        [amount - fee + bond, 0n, -(amount - fee + bond)],
      );
    });
  });

  describe("griefing", () => {
    it("costs a junk committer its bond, owed to the poster, and frees the reward at the end of the reveal window", async () => {
      const { escrow, usdc, poster, stranger, taskId, amount, bond, starts } = await loadFixture(openTaskFixture);
      await commitOpen(escrow, stranger, taskId, ethers.id("junk"));
      await expect(escrow.connect(poster).cancelTask(taskId)).to.be.revertedWithCustomError(
        escrow,
        "OpenTaskHasSubmissions",
      );
      await time.increaseTo(starts.selection);
      await expect(escrow.connect(poster).reclaimOpen(taskId)).to.changeTokenBalances(
        usdc,
        [poster, stranger, escrow],
        [amount, 0n, -amount],
      );
      expect(await escrow.creditOf(await usdc.getAddress(), poster.address)).to.equal(bond);
    });
  });

  describe("#openPhase", () => {
    it("reverts when the task is not an open-submission task", async () => {
      const { escrow, taskId } = await loadFixture(fundedTaskFixture);
      await expect(escrow.openPhase(taskId)).to.be.revertedWithCustomError(escrow, "NotOpenTask");
    });

    it("is Submission one second before the deadline, Reveal from it", async () => {
      const { escrow, taskId, starts } = await loadFixture(openTaskFixture);
      await time.increaseTo(starts.reveal - 1n);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Submission);
      await time.increaseTo(starts.reveal);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Reveal);
    });

    it("is Reveal one second before the reveal window ends, Selection from its end", async () => {
      const { escrow, taskId, starts } = await loadFixture(openTaskFixture);
      expect(starts.selection - starts.reveal).to.equal(BigInt(DAY));
      await time.increaseTo(starts.selection - 1n);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Reveal);
      await time.increaseTo(starts.selection);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Selection);
    });

    it("is Selection one second before the selection window ends, Expired from its end", async () => {
      const { escrow, taskId, starts } = await loadFixture(openTaskFixture);
      await time.increaseTo(starts.expired - 1n);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Selection);
      await time.increaseTo(starts.expired);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Expired);
    });

    it("is Closed after a winner was paid", async () => {
      const { escrow, worker, taskId, starts } = await loadFixture(singleSelectionFixture);
      await time.increaseTo(starts.expired);
      await escrow.connect(worker).releaseOpenDefault(taskId);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Closed);
    });

    it("is Closed after a cancellation, even before the deadline", async () => {
      const { escrow, poster, taskId } = await loadFixture(openTaskFixture);
      await escrow.connect(poster).cancelTask(taskId);
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Closed);
    });
  });

  describe("#openSubmission, #openCommitment", () => {
    it("are zero for an address that did not commit", async () => {
      const { escrow, others, taskId } = await loadFixture(selectionFixture);
      expect(await escrow.openSubmission(taskId, others[3].address)).to.equal(ethers.ZeroHash);
      expect(await escrow.openCommitment(taskId, others[3].address)).to.equal(ethers.ZeroHash);
    });
  });

  describe("#isOpenTask", () => {
    it("is false for a single-worker task", async () => {
      const { escrow, taskId } = await loadFixture(fundedTaskFixture);
      expect(await escrow.isOpenTask(taskId)).to.equal(false);
    });
  });

  describe("#cancelTask", () => {
    it("refunds an open task nobody committed to", async () => {
      const { escrow, poster, usdc, taskId, amount } = await loadFixture(openTaskFixture);
      const tx = escrow.connect(poster).cancelTask(taskId);
      await expect(tx).to.emit(escrow, "TaskCancelled").withArgs(taskId, amount);
      await expect(tx).to.changeTokenBalances(usdc, [poster, escrow], [amount, -amount]);
    });

    it("reverts when the open task has commitments", async () => {
      const { escrow, poster, taskId } = await loadFixture(committedFixture);
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
      const { escrow, worker, taskId } = await loadFixture(selectionFixture);
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
      const { escrow, poster, taskId } = await loadFixture(selectionFixture);
      await expect(escrow.connect(poster).raiseDispute(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Funded, STATUS.Submitted);
    });
  });
});
