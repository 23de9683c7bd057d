/**
 * Proofs of concept of the contract findings of the second outside audit (open submissions, payouts that cannot be
 * received, phases, ordering, hooks, events, the silent arbiter). Each test failed on the escrow before the fixes.
 */
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
  openPhaseStarts,
} from "../helpers/fixtures";
import { escrowEventNames } from "../helpers/events";

const JUNK_HASH = ethers.id("a random hash, not a delivery");
const SYBIL_HASH = ethers.id("the poster's second address commits blind");

/** Open task 1 (100 USDC, one day) by `poster`. */
async function openTaskFixture() {
  const base = await deployEscrowFixture();
  const { escrow, usdc, poster } = base;
  const amount = USDC(100);
  await escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), amount, CATEGORY, ZONE, DAY);
  return { ...base, taskId: 1n, amount, token: await usdc.getAddress(), starts: await openPhaseStarts(escrow, 1n) };
}

/** One revealed entry, a random hash by `stranger`, at the start of the Selection phase. */
async function worthlessEntryFixture() {
  const base = await openTaskFixture();
  const { escrow, stranger, taskId, starts } = base;
  await commitOpen(escrow, stranger, taskId, JUNK_HASH);
  await time.increaseTo(starts.reveal);
  await escrow.connect(stranger).revealOpen(taskId, JUNK_HASH, OPEN_SALT);
  await time.increaseTo(starts.selection);
  return base;
}

/**
 * The poster's second address (`others[1]`) and an honest `worker` both commit; the second address reveals first, then
 * the worker: at the start of the Selection phase.
 */
async function sybilFixture() {
  const base = await openTaskFixture();
  const { escrow, worker, others, taskId, starts } = base;
  const sybil = others[1];
  await commitOpen(escrow, sybil, taskId, SYBIL_HASH);
  await commitOpen(escrow, worker, taskId, EVIDENCE_HASH);
  await time.increaseTo(starts.reveal);
  await escrow.connect(sybil).revealOpen(taskId, SYBIL_HASH, OPEN_SALT);
  await escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT);
  await time.increaseTo(starts.selection);
  return { ...base, sybil };
}

describe("TaskEscrow", () => {
  describe("N-1: fair ending of open submissions", () => {
    it("a worthless revealed entry goes to the judge within the selection window, and the judge refunds the poster", async () => {
      const { escrow, usdc, poster, verifier, stranger, taskId, amount, token } =
        await loadFixture(worthlessEntryFixture);
      await expect(escrow.connect(poster).contestOpen(taskId))
        .to.emit(escrow, "TaskDisputed")
        .withArgs(taskId, poster.address);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Disputed);
      // Silence no longer pays it: the default release refuses a disputed task.
      await time.increaseTo((await openPhaseStarts(escrow, taskId)).expired);
      await expect(escrow.connect(stranger).releaseOpenDefault(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Disputed, STATUS.Funded);
      const tx = await escrow.connect(verifier).judgeOpen(taskId, ethers.ZeroAddress);
      expect(await escrowEventNames(escrow, tx)).to.deep.equal(["OpenJudged", "Credited", "TaskCancelled"]);
      expect(await escrow.creditOf(token, poster.address)).to.equal(amount);
      expect(await escrow.creditOf(token, stranger.address)).to.equal(0n);
      await expect(escrow.connect(poster).withdraw(token, poster.address)).to.changeTokenBalance(usdc, poster, amount);
    });

    it("the admin may judge as arbiter, and nobody else may", async () => {
      const { escrow, admin, poster, stranger, taskId } = await loadFixture(worthlessEntryFixture);
      await escrow.connect(poster).contestOpen(taskId);
      for (const signer of [poster, stranger]) {
        await expect(escrow.connect(signer).judgeOpen(taskId, stranger.address)).to.be.revertedWithCustomError(
          escrow,
          "NotVerifier",
        );
      }
      await expect(escrow.connect(admin).judgeOpen(taskId, stranger.address))
        .to.emit(escrow, "WinnerSelected")
        .withArgs(taskId, stranger.address);
    });

    it("the poster's dispute is refused outside the selection window and when nothing was revealed", async () => {
      const { escrow, poster, stranger, taskId, starts } = await loadFixture(openTaskFixture);
      await commitOpen(escrow, stranger, taskId, JUNK_HASH);
      await time.increaseTo(starts.reveal);
      await escrow.connect(stranger).revealOpen(taskId, JUNK_HASH, OPEN_SALT);
      await expect(escrow.connect(poster).contestOpen(taskId))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Reveal, PHASE.Selection);
      await time.increaseTo(starts.expired);
      await expect(escrow.connect(poster).contestOpen(taskId))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Expired, PHASE.Selection);
    });

    it("the poster's second address cannot take honest work: the honest revealer contests the pick and the judge pays it", async () => {
      const { escrow, usdc, poster, verifier, worker, sybil, taskId, amount, token } = await loadFixture(sybilFixture);
      // The pick of the second address pays nothing yet.
      await expect(escrow.connect(poster).selectWinner(taskId, sybil.address)).to.changeTokenBalances(
        usdc,
        [sybil, escrow],
        [0n, 0n],
      );
      await expect(escrow.connect(worker).contestOpen(taskId))
        .to.emit(escrow, "TaskDisputed")
        .withArgs(taskId, worker.address);
      await expect(escrow.connect(sybil).releaseOpenDefault(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS.Disputed, STATUS.Funded);
      await escrow.connect(verifier).judgeOpen(taskId, worker.address);
      const fee = (amount * BigInt(FEE_BPS)) / 10_000n;
      expect(await escrow.creditOf(token, worker.address)).to.equal(amount - fee);
      expect(await escrow.creditOf(token, sybil.address)).to.equal(0n);
      expect((await escrow.getTask(taskId)).worker).to.equal(worker.address);
    });

    it("the second address that revealed first is not paid by the poster's silence: the judge picks", async () => {
      const { escrow, verifier, worker, sybil, taskId, starts, token } = await loadFixture(sybilFixture);
      await time.increaseTo(starts.expired);
      await escrow.connect(sybil).releaseOpenDefault(taskId);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Disputed);
      expect(await escrow.creditOf(token, sybil.address)).to.equal(0n);
      await escrow.connect(verifier).judgeOpen(taskId, worker.address);
      expect((await escrow.getTask(taskId)).worker).to.equal(worker.address);
    });

    it("a contest comes only from another revealed submitter, within OPEN_CONTEST_WINDOW of the pick", async () => {
      const { escrow, poster, worker, sybil, stranger, taskId } = await loadFixture(sybilFixture);
      await escrow.connect(poster).selectWinner(taskId, sybil.address);
      for (const signer of [sybil, stranger]) {
        await expect(escrow.connect(signer).contestOpen(taskId)).to.be.revertedWithCustomError(escrow, "NotSubmitter");
      }
      const { chosenAt } = await escrow.openVerdictState(taskId);
      await time.setNextBlockTimestamp(chosenAt + (await escrow.OPEN_CONTEST_WINDOW()));
      await expect(escrow.connect(worker).contestOpen(taskId)).to.be.revertedWithCustomError(escrow, "ContestWindow");
    });

    it("a judge silent for DISPUTE_WINDOW decides for neither side: the pick and the contester split the reward", async () => {
      const { escrow, usdc, poster, worker, sybil, stranger, treasury, taskId, amount, token } =
        await loadFixture(sybilFixture);
      await escrow.connect(poster).selectWinner(taskId, sybil.address);
      await escrow.connect(worker).contestOpen(taskId);
      const { disputedAt } = await escrow.getTask(taskId);
      await time.setNextBlockTimestamp(disputedAt + (await escrow.DISPUTE_WINDOW()) - 1n);
      await expect(escrow.connect(stranger).splitUnruled(taskId)).to.be.revertedWithCustomError(
        escrow,
        "DisputeWindowActive",
      );
      const half = amount / 2n;
      const fee = (half * BigInt(FEE_BPS)) / 10_000n;
      await time.setNextBlockTimestamp(disputedAt + (await escrow.DISPUTE_WINDOW()));
      await expect(escrow.connect(stranger).splitUnruled(taskId))
        .to.emit(escrow, "UnruledSplit")
        .withArgs(taskId, worker.address, half - fee, sybil.address, half - fee, 2n * fee);
      expect(await escrow.creditOf(token, worker.address)).to.equal(half - fee);
      expect(await usdc.balanceOf(treasury.address)).to.equal(2n * fee);
    });
  });

  describe("N-2: a revealer that cannot receive never freezes the reward", () => {
    /** A native open task whose only revealed entry is a contract that rejects payments. */
    async function rejectingRevealerFixture() {
      const base = await deployEscrowFixture();
      const { escrow, admin, poster } = base;
      await escrow.connect(admin).allowToken(ethers.ZeroAddress);
      const amount = ethers.parseEther("1");
      const bond = amount / 20n;
      await escrow
        .connect(poster)
        .createTaskOpen(TASK_HASH, ethers.ZeroAddress, amount, CATEGORY, ZONE, DAY, { value: amount });
      const receiver = await ethers.deployContract("ReentrantReceiver");
      const receiverAddress = await receiver.getAddress();
      const escrowAddress = await escrow.getAddress();
      const commitment = ethers.keccak256(
        ethers.AbiCoder.defaultAbiCoder().encode(
          ["address", "uint256", "address", "bytes32", "bytes32"],
          [escrowAddress, 1n, receiverAddress, EVIDENCE_HASH, OPEN_SALT],
        ),
      );
      await receiver.execute(escrowAddress, escrow.interface.encodeFunctionData("commitOpen", [1n, commitment]), {
        value: bond,
      });
      const starts = await openPhaseStarts(escrow, 1n);
      await time.increaseTo(starts.reveal);
      await receiver.execute(
        escrowAddress,
        escrow.interface.encodeFunctionData("revealOpen", [1n, EVIDENCE_HASH, OPEN_SALT]),
      );
      await receiver.setMode(1, ethers.ZeroAddress, "0x"); // rejects every payment from now on
      return { ...base, receiver, receiverAddress, escrowAddress, amount, starts };
    }

    it("the default release and the poster's pick succeed, and the revealer withdraws to an address that receives", async () => {
      const { escrow, poster, stranger, receiver, receiverAddress, escrowAddress, amount, starts } =
        await loadFixture(rejectingRevealerFixture);
      await time.increaseTo(starts.selection);
      await escrow.connect(poster).selectWinner(1n, receiverAddress);
      const fee = (amount * BigInt(FEE_BPS)) / 10_000n;
      expect(await escrow.creditOf(ethers.ZeroAddress, receiverAddress)).to.equal(amount - fee);
      await expect(
        receiver.execute(
          escrowAddress,
          escrow.interface.encodeFunctionData("withdraw", [ethers.ZeroAddress, stranger.address]),
        ),
      ).to.changeEtherBalances([stranger, escrow], [amount - fee, -(amount - fee)]);
      expect(await ethers.provider.getBalance(escrowAddress)).to.equal(0n);
    });

    it("releaseOpenDefault pays into the credit of a revealer that rejects payments", async () => {
      const { escrow, stranger, receiverAddress, amount, starts } = await loadFixture(rejectingRevealerFixture);
      await time.increaseTo(starts.expired);
      await escrow.connect(stranger).releaseOpenDefault(1n);
      const fee = (amount * BigInt(FEE_BPS)) / 10_000n;
      expect(await escrow.creditOf(ethers.ZeroAddress, receiverAddress)).to.equal(amount - fee);
    });

    it("a USDC-blacklisted winner is credited and withdraws elsewhere", async () => {
      const { escrow, admin, poster, worker, stranger } = await loadFixture(deployEscrowFixture);
      const token = await ethers.deployContract("BlacklistToken");
      const tokenAddress = await token.getAddress();
      await escrow.connect(admin).allowToken(tokenAddress);
      const amount = USDC(100);
      for (const account of [poster, worker]) {
        await token.mint(account.address, amount);
        await token.connect(account).approve(await escrow.getAddress(), ethers.MaxUint256);
      }
      await escrow.connect(poster).createTaskOpen(TASK_HASH, tokenAddress, amount, CATEGORY, ZONE, DAY);
      await commitOpen(escrow, worker, 1n, EVIDENCE_HASH);
      const starts = await openPhaseStarts(escrow, 1n);
      await time.increaseTo(starts.reveal);
      await escrow.connect(worker).revealOpen(1n, EVIDENCE_HASH, OPEN_SALT);
      await token.setBlacklisted(worker.address, true);
      await time.increaseTo(starts.expired);
      await escrow.connect(stranger).releaseOpenDefault(1n);
      const fee = (amount * BigInt(FEE_BPS)) / 10_000n;
      await expect(escrow.connect(worker).withdraw(tokenAddress, worker.address)).to.be.reverted;
      await expect(escrow.connect(worker).withdraw(tokenAddress, stranger.address)).to.changeTokenBalance(
        token,
        stranger,
        amount - fee,
      );
    });

    it("withdraw refuses a zero recipient and an account owed nothing", async () => {
      const { escrow, worker, token } = await loadFixture(openTaskFixture);
      await expect(escrow.connect(worker).withdraw(token, ethers.ZeroAddress)).to.be.revertedWithCustomError(
        escrow,
        "ZeroAddress",
      );
      await expect(escrow.connect(worker).withdraw(token, worker.address)).to.be.revertedWithCustomError(
        escrow,
        "NothingOwed",
      );
    });

    it("what is owed counts as held: the sweep never takes a credit", async () => {
      const { escrow, usdc, admin, poster, worker, stranger, taskId, starts, token } =
        await loadFixture(openTaskFixture);
      await commitOpen(escrow, worker, taskId, EVIDENCE_HASH);
      await time.increaseTo(starts.reveal);
      await escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT);
      await time.increaseTo(starts.selection);
      await escrow.connect(poster).selectWinner(taskId, worker.address);
      await usdc.connect(stranger).transfer(await escrow.getAddress(), 7n);
      await expect(escrow.connect(admin).sweepSurplus(token, admin.address)).to.changeTokenBalance(usdc, admin, 7n);
    });
  });

  describe("N-3: phases never move backwards", () => {
    it("backdating a pause after reveals keeps the task in Reveal: no commitment after evidence was shown", async () => {
      const { escrow, admin, worker, stranger, taskId, starts } = await loadFixture(openTaskFixture);
      await commitOpen(escrow, worker, taskId, EVIDENCE_HASH);
      await time.increaseTo(starts.reveal + 3600n);
      await escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT);
      await escrow.connect(admin).pause();
      const pausedAt = BigInt(await time.latest());
      await escrow.connect(admin).recordPauseStart(pausedAt - DAY_BIGINT);
      await escrow.connect(admin).unpause();
      // The effective deadline moved past now, yet the phase stays Reveal.
      expect(await escrow.effectiveDeadline(taskId)).to.be.greaterThan(BigInt(await time.latest()));
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Reveal);
      await expect(commitOpen(escrow, stranger, taskId, EVIDENCE_HASH))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Reveal, PHASE.Submission);
    });

    it("a pick keeps the task in Selection even when a backdated pause moves the windows back", async () => {
      const { escrow, admin, poster, worker, sybil, taskId } = await loadFixture(sybilFixture);
      await escrow.connect(poster).selectWinner(taskId, worker.address);
      await escrow.connect(admin).pause();
      await escrow.connect(admin).recordPauseStart(BigInt(await time.latest()) - DAY_BIGINT);
      await escrow.connect(admin).unpause();
      expect(await escrow.openPhase(taskId)).to.equal(PHASE.Selection);
      await expect(escrow.connect(sybil).revealOpen(taskId, SYBIL_HASH, OPEN_SALT))
        .to.be.revertedWithCustomError(escrow, "WrongPhase")
        .withArgs(PHASE.Selection, PHASE.Reveal);
    });
  });

  describe("N-4: status first, then transfers", () => {
    it("a payout sends nothing to the winner or the bond recipient: its one transfer, the fee, follows the status", async () => {
      const { escrow, usdc, poster, worker, stranger, treasury, taskId, amount, starts } =
        await loadFixture(openTaskFixture);
      await commitOpen(escrow, worker, taskId, EVIDENCE_HASH);
      await commitOpen(escrow, stranger, taskId, JUNK_HASH);
      await time.increaseTo(starts.reveal);
      await escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT);
      await time.increaseTo(starts.selection);
      const fee = (amount * BigInt(FEE_BPS)) / 10_000n;
      await expect(escrow.connect(poster).selectWinner(taskId, worker.address)).to.changeTokenBalances(
        usdc,
        [worker, poster, treasury, escrow],
        [0n, 0n, fee, -fee],
      );
    });
  });

  describe("N-5: state before hooks", () => {
    it("the task registry hears of an open task that already reads as open", async () => {
      const { escrow, admin, poster, usdc } = await loadFixture(deployEscrowFixture);
      const probe = await ethers.deployContract("OpenTaskProbe");
      await escrow.connect(admin).setTaskRegistry(await probe.getAddress());
      await escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), USDC(1), CATEGORY, ZONE, DAY);
      expect(await probe.sawOpen(1n)).to.equal(true);
    });
  });

  describe("N-6: events", () => {
    it("releaseSettled emits HeldReleased for each task it releases", async () => {
      const { escrow, admin, poster, taskId, amount } = await loadFixture(fundedTaskFixture);
      await escrow.connect(admin).reconcileHeld(10);
      await escrow.connect(poster).cancelTask(taskId);
      await expect(escrow.connect(admin).releaseSettled([taskId]))
        .to.emit(escrow, "HeldReleased")
        .withArgs(taskId, amount);
    });
  });

  describe("silent arbiter (L-3)", () => {
    it("resolveDispute and the single-worker timeout refuse an open task's dispute", async () => {
      const { escrow, admin, poster, stranger, taskId } = await loadFixture(worthlessEntryFixture);
      await escrow.connect(poster).contestOpen(taskId);
      await expect(escrow.connect(admin).resolveDispute(taskId, true)).to.be.revertedWithCustomError(
        escrow,
        "OpenTask",
      );
      const { disputedAt } = await escrow.getTask(taskId);
      await time.increaseTo(disputedAt + (await escrow.DISPUTE_WINDOW()));
      await expect(escrow.connect(poster).claimTimeout(taskId)).to.be.revertedWithCustomError(escrow, "OpenTask");
      await expect(escrow.connect(stranger).splitUnruled(taskId)).to.emit(escrow, "UnruledSplit");
    });
  });

  describe("paths the coverage report found untested", () => {
    it("createTaskWithVerifier reverts SelfAssignment when the poster names itself", async () => {
      const { escrow, usdc, poster } = await loadFixture(deployEscrowFixture);
      await expect(
        escrow
          .connect(poster)
          .createTaskWithVerifier(TASK_HASH, await usdc.getAddress(), USDC(1), CATEGORY, ZONE, DAY, poster.address),
      ).to.be.revertedWithCustomError(escrow, "SelfAssignment");
    });

    it("createTask reverts LabelTooLong for a category over 65,535 bytes", async () => {
      const { escrow, usdc, poster } = await loadFixture(deployEscrowFixture);
      const token = await usdc.getAddress();
      await expect(
        escrow.connect(poster).createTask(TASK_HASH, token, USDC(1), "c".repeat(65_536), ZONE, DAY),
      ).to.be.revertedWithCustomError(escrow, "LabelTooLong");
    });

    it("a creation without the gas a set hook needs reverts InsufficientGasForHook", async () => {
      const { escrow, usdc, admin, poster } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).setTaskRegistry(await (await ethers.deployContract("MockTaskRegistry")).getAddress());
      const token = await usdc.getAddress();
      await expect(
        escrow.connect(poster).createTask(TASK_HASH, token, USDC(1), CATEGORY, ZONE, DAY, { gasLimit: 200_000 }),
      ).to.be.revertedWithCustomError(escrow, "InsufficientGasForHook");
    });

    it("effectiveDeadline and isTaskExpired of an unknown id are 0 and false", async () => {
      const { escrow } = await loadFixture(deployEscrowFixture);
      expect(await escrow.effectiveDeadline(99n)).to.equal(0n);
      expect(await escrow.isTaskExpired(99n)).to.equal(false);
    });
  });
});

const DAY_BIGINT = BigInt(DAY);
