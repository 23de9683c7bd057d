/**
 * The escrow against hostile tokens and recipients: a token that re-enters the escrow from transfer/transferFrom, a
 * fee-on-transfer token, a token that returns false, a blacklisting token, and contract accounts that reject or
 * re-enter native-currency payments. Each hostile token is allowlisted by the admin like any other.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import {
  CATEGORY,
  DAY,
  EVIDENCE_HASH,
  FEE_BPS,
  STATUS,
  TASK_HASH,
  USDC,
  ZONE,
  deployEscrowFixture,
} from "../helpers/fixtures";

/** ReentrantToken.Hook */
const HOOK = { None: 0, TransferFrom: 1, Transfer: 2 } as const;
/** ReentrantReceiver.Mode */
const MODE = { Accept: 0, Reject: 1, Reenter: 2, ReenterAndBubble: 3 } as const;
/** Tasks each fixture funds, and a balance that covers them many times over. */
const REWARD = USDC(100);
const BALANCE = USDC(10_000);
const NATIVE_REWARD = ethers.parseEther("1");

/*//////////////////////////////////////////////////////////////
                               FIXTURES
//////////////////////////////////////////////////////////////*/

/** A ReentrantToken, allowlisted; the poster and the token itself hold it and approved the escrow. */
async function reentrantTokenFixture() {
  const base = await deployEscrowFixture();
  const { escrow, admin, poster } = base;
  const token = await ethers.deployContract("ReentrantToken");
  const tokenAddress = await token.getAddress();
  const escrowAddress = await escrow.getAddress();
  await escrow.connect(admin).allowToken(tokenAddress);
  await token.mint(poster.address, BALANCE);
  await token.connect(poster).approve(escrowAddress, ethers.MaxUint256);
  // The token can post tasks itself, so that its re-entrant calls come from a poster the escrow would accept.
  await token.mint(tokenAddress, BALANCE);
  await token.execute(tokenAddress, token.interface.encodeFunctionData("approve", [escrowAddress, ethers.MaxUint256]));
  const createTaskCall = escrow.interface.encodeFunctionData("createTask", [
    TASK_HASH,
    tokenAddress,
    REWARD,
    CATEGORY,
    ZONE,
    DAY,
  ]);
  return { ...base, token, tokenAddress, escrowAddress, createTaskCall, amount: REWARD };
}

/** Task 1 posted by the ReentrantToken itself (Funded). */
async function tokenPostedTaskFixture() {
  const base = await reentrantTokenFixture();
  await base.token.execute(base.escrowAddress, base.createTaskCall);
  return { ...base, taskId: 1n };
}

/** Task 1 posted in the ReentrantToken by the poster, assigned to the worker and submitted. */
async function reentrantSubmittedFixture() {
  const base = await reentrantTokenFixture();
  const { escrow, poster, verifier, worker, tokenAddress, amount } = base;
  await escrow.connect(poster).createTask(TASK_HASH, tokenAddress, amount, CATEGORY, ZONE, DAY);
  await escrow.connect(verifier).marketplaceAssign(1n, worker.address);
  await escrow.connect(worker).submitEvidence(1n, EVIDENCE_HASH);
  return { ...base, taskId: 1n };
}

/** A FeeOnTransferToken, allowlisted, held and approved by the poster. */
async function feeOnTransferFixture() {
  const base = await deployEscrowFixture();
  const { escrow, admin, poster } = base;
  const token = await ethers.deployContract("FeeOnTransferToken");
  const tokenAddress = await token.getAddress();
  await escrow.connect(admin).allowToken(tokenAddress);
  await token.mint(poster.address, BALANCE);
  await token.connect(poster).approve(await escrow.getAddress(), ethers.MaxUint256);
  const amount = REWARD;
  const received = amount - (amount * (await token.TRANSFER_FEE_BPS())) / (await token.BPS_DENOMINATOR());
  return { ...base, token, tokenAddress, amount, received };
}

/** A ReturnsFalseToken, allowlisted; task 1 Funded, task 2 Submitted by the worker, both posted by the poster. */
async function returnsFalseFixture() {
  const base = await deployEscrowFixture();
  const { escrow, admin, poster, verifier, worker } = base;
  const token = await ethers.deployContract("ReturnsFalseToken");
  const tokenAddress = await token.getAddress();
  await escrow.connect(admin).allowToken(tokenAddress);
  await token.mint(poster.address, BALANCE);
  await token.connect(poster).approve(await escrow.getAddress(), ethers.MaxUint256);
  const amount = REWARD;
  await escrow.connect(poster).createTask(TASK_HASH, tokenAddress, amount, CATEGORY, ZONE, DAY);
  await escrow.connect(poster).createTask(TASK_HASH, tokenAddress, amount, CATEGORY, ZONE, DAY);
  await escrow.connect(verifier).marketplaceAssign(2n, worker.address);
  await escrow.connect(worker).submitEvidence(2n, EVIDENCE_HASH);
  return { ...base, token, tokenAddress, amount, fundedTaskId: 1n, submittedTaskId: 2n };
}

/**
 * A BlacklistToken, allowlisted; the poster funded task 1 (worker) and task 2 (stranger), both Submitted; then the
 * worker was blacklisted.
 */
async function blacklistFixture() {
  const base = await deployEscrowFixture();
  const { escrow, admin, poster, verifier, worker, stranger } = base;
  const token = await ethers.deployContract("BlacklistToken");
  const tokenAddress = await token.getAddress();
  await escrow.connect(admin).allowToken(tokenAddress);
  await token.mint(poster.address, BALANCE);
  await token.connect(poster).approve(await escrow.getAddress(), ethers.MaxUint256);
  const amount = REWARD;
  for (const [taskId, taskWorker] of [
    [1n, worker],
    [2n, stranger],
  ] as const) {
    await escrow.connect(poster).createTask(TASK_HASH, tokenAddress, amount, CATEGORY, ZONE, DAY);
    await escrow.connect(verifier).marketplaceAssign(taskId, taskWorker.address);
    await escrow.connect(taskWorker).submitEvidence(taskId, EVIDENCE_HASH);
  }
  await token.setBlacklisted(worker.address, true);
  const bps = await escrow.BPS_DENOMINATOR();
  const fee = (amount * BigInt(FEE_BPS)) / bps;
  return { ...base, token, tokenAddress, amount, fee, payout: amount - fee, blockedTaskId: 1n, otherTaskId: 2n };
}

/** Task 1 escalated: the blacklisted worker's evidence was never judged and the poster claimed the timeout. */
async function blacklistEscalatedFixture() {
  const base = await blacklistFixture();
  const { escrow, poster, blockedTaskId } = base;
  await time.increaseTo(await escrow.effectiveDeadline(blockedTaskId));
  await escrow.connect(poster).claimTimeout(blockedTaskId);
  return base;
}

/**
 * Native currency allowlisted. Task 1 (Funded) is posted by `posterContract`; task 2 is posted by the poster, assigned
 * to `workerContract` and submitted by it. Both contracts accept payments until a test changes their mode.
 */
async function nativeFixture() {
  const base = await deployEscrowFixture();
  const { escrow, admin, poster, verifier } = base;
  await escrow.connect(admin).allowToken(ethers.ZeroAddress);
  const escrowAddress = await escrow.getAddress();
  const posterContract = await ethers.deployContract("ReentrantReceiver");
  const workerContract = await ethers.deployContract("ReentrantReceiver");
  const amount = NATIVE_REWARD;
  await posterContract
    .connect(poster)
    .execute(
      escrowAddress,
      escrow.interface.encodeFunctionData("createTask", [TASK_HASH, ethers.ZeroAddress, amount, CATEGORY, ZONE, DAY]),
      { value: amount },
    );
  await escrow
    .connect(poster)
    .createTask(TASK_HASH, ethers.ZeroAddress, amount, CATEGORY, ZONE, DAY, { value: amount });
  await escrow.connect(verifier).marketplaceAssign(2n, await workerContract.getAddress());
  await workerContract.execute(
    escrowAddress,
    escrow.interface.encodeFunctionData("submitEvidence", [2n, EVIDENCE_HASH]),
  );
  const fee = (amount * BigInt(FEE_BPS)) / (await escrow.BPS_DENOMINATOR());
  return {
    ...base,
    escrowAddress,
    posterContract,
    workerContract,
    amount,
    fee,
    payout: amount - fee,
    posterTaskId: 1n,
    workerTaskId: 2n,
  };
}

/*//////////////////////////////////////////////////////////////
                                 TESTS
//////////////////////////////////////////////////////////////*/

describe("TaskEscrow", () => {
  describe("with a re-entrant token", () => {
    describe("#createTask", () => {
      it("reverts with ReentrancyGuardReentrantCall when transferFrom re-enters createTask", async () => {
        const { escrow, token, escrowAddress, poster, tokenAddress, createTaskCall, amount } =
          await loadFixture(reentrantTokenFixture);
        await token.arm(HOOK.TransferFrom, escrowAddress, createTaskCall);
        await expect(
          escrow.connect(poster).createTask(TASK_HASH, tokenAddress, amount, CATEGORY, ZONE, DAY),
        ).to.be.revertedWithCustomError(escrow, "ReentrancyGuardReentrantCall");
        expect(await escrow.nextTaskId()).to.equal(1n);
        expect(await token.balanceOf(escrowAddress)).to.equal(0n);
      });
    });

    describe("#createTasks", () => {
      it("reverts with ReentrancyGuardReentrantCall when transferFrom re-enters createTasks", async () => {
        const { escrow, token, escrowAddress, poster, tokenAddress, amount } = await loadFixture(reentrantTokenFixture);
        const batch = [
          {
            taskHash: TASK_HASH,
            amount,
            category: CATEGORY,
            locationZone: ZONE,
            duration: DAY,
            verifierAgent: ethers.ZeroAddress,
          },
        ];
        await token.arm(
          HOOK.TransferFrom,
          escrowAddress,
          escrow.interface.encodeFunctionData("createTasks", [tokenAddress, batch]),
        );
        await expect(escrow.connect(poster).createTasks(tokenAddress, batch)).to.be.revertedWithCustomError(
          escrow,
          "ReentrancyGuardReentrantCall",
        );
        expect(await escrow.nextTaskId()).to.equal(1n);
      });
    });

    describe("#cancelTask", () => {
      it("reverts with ReentrancyGuardReentrantCall when the refund transfer re-enters cancelTask", async () => {
        const { escrow, token, escrowAddress, taskId, amount } = await loadFixture(tokenPostedTaskFixture);
        const cancel = escrow.interface.encodeFunctionData("cancelTask", [taskId]);
        await token.arm(HOOK.Transfer, escrowAddress, cancel);
        await expect(token.execute(escrowAddress, cancel)).to.be.revertedWithCustomError(
          escrow,
          "ReentrancyGuardReentrantCall",
        );
        expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Funded);
        expect(await token.balanceOf(escrowAddress)).to.equal(amount);
      });
    });

    describe("#claimTimeout", () => {
      it("reverts with ReentrancyGuardReentrantCall when the timeout refund re-enters claimTimeout", async () => {
        const { escrow, token, escrowAddress, verifier, worker, taskId, amount } =
          await loadFixture(tokenPostedTaskFixture);
        await escrow.connect(verifier).marketplaceAssign(taskId, worker.address);
        await time.increaseTo(await escrow.effectiveDeadline(taskId));
        const claim = escrow.interface.encodeFunctionData("claimTimeout", [taskId]);
        await token.arm(HOOK.Transfer, escrowAddress, claim);
        await expect(token.execute(escrowAddress, claim)).to.be.revertedWithCustomError(
          escrow,
          "ReentrancyGuardReentrantCall",
        );
        expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Assigned);
        expect(await token.balanceOf(escrowAddress)).to.equal(amount);
      });
    });

    describe("#completeVerification", () => {
      it("reverts with ReentrancyGuardReentrantCall when the payout transfer re-enters cancelTask of another task", async () => {
        const { escrow, token, escrowAddress, verifier, taskId, createTaskCall, amount } =
          await loadFixture(reentrantSubmittedFixture);
        await token.execute(escrowAddress, createTaskCall);
        const tokenTaskId = taskId + 1n;
        await token.arm(HOOK.Transfer, escrowAddress, escrow.interface.encodeFunctionData("cancelTask", [tokenTaskId]));
        await expect(escrow.connect(verifier).completeVerification(taskId, true)).to.be.revertedWithCustomError(
          escrow,
          "ReentrancyGuardReentrantCall",
        );
        expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Submitted);
        expect((await escrow.getTask(tokenTaskId)).status).to.equal(STATUS.Funded);
        expect(await token.balanceOf(escrowAddress)).to.equal(amount * 2n);
      });
    });

    describe("#resolveDispute", () => {
      it("reverts with ReentrancyGuardReentrantCall when the ruling's refund re-enters cancelTask of another task", async () => {
        const { escrow, token, escrowAddress, admin, poster, taskId, createTaskCall } =
          await loadFixture(reentrantSubmittedFixture);
        await escrow.connect(poster).raiseDispute(taskId);
        await token.execute(escrowAddress, createTaskCall);
        await token.arm(HOOK.Transfer, escrowAddress, escrow.interface.encodeFunctionData("cancelTask", [taskId + 1n]));
        await expect(escrow.connect(admin).resolveDispute(taskId, false)).to.be.revertedWithCustomError(
          escrow,
          "ReentrancyGuardReentrantCall",
        );
        expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Disputed);
      });
    });

    describe("#releaseUnjudgedWork", () => {
      it("reverts with ReentrancyGuardReentrantCall when the release payout re-enters cancelTask of another task", async () => {
        const { escrow, token, escrowAddress, poster, worker, taskId, createTaskCall } =
          await loadFixture(reentrantSubmittedFixture);
        await time.increaseTo(await escrow.effectiveDeadline(taskId));
        await escrow.connect(poster).claimTimeout(taskId);
        await time.increase(await escrow.DISPUTE_WINDOW());
        await token.execute(escrowAddress, createTaskCall);
        await token.arm(HOOK.Transfer, escrowAddress, escrow.interface.encodeFunctionData("cancelTask", [taskId + 1n]));
        await expect(escrow.connect(worker).releaseUnjudgedWork(taskId)).to.be.revertedWithCustomError(
          escrow,
          "ReentrancyGuardReentrantCall",
        );
        expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Disputed);
        expect(await escrow.isEscalated(taskId)).to.equal(true);
      });
    });
  });

  describe("with a fee-on-transfer token", () => {
    describe("#createTask", () => {
      it("reverts with TransferAmountMismatch(received, expected) and records no task", async () => {
        const { escrow, poster, tokenAddress, amount, received } = await loadFixture(feeOnTransferFixture);
        await expect(escrow.connect(poster).createTask(TASK_HASH, tokenAddress, amount, CATEGORY, ZONE, DAY))
          .to.be.revertedWithCustomError(escrow, "TransferAmountMismatch")
          .withArgs(received, amount);
        expect(await escrow.nextTaskId()).to.equal(1n);
        expect((await escrow.getTask(1n)).poster).to.equal(ethers.ZeroAddress);
      });
    });

    describe("#createTaskWithVerifier", () => {
      it("reverts with TransferAmountMismatch(received, expected) and records no task", async () => {
        const { escrow, poster, verifierAgent, tokenAddress, amount, received } =
          await loadFixture(feeOnTransferFixture);
        await expect(
          escrow
            .connect(poster)
            .createTaskWithVerifier(TASK_HASH, tokenAddress, amount, CATEGORY, ZONE, DAY, verifierAgent.address),
        )
          .to.be.revertedWithCustomError(escrow, "TransferAmountMismatch")
          .withArgs(received, amount);
        expect(await escrow.nextTaskId()).to.equal(1n);
        expect(await escrow.taskVerifier(1n)).to.equal(ethers.ZeroAddress);
      });
    });

    describe("#createTasks", () => {
      it("reverts with TransferAmountMismatch for the batch total and records no task", async () => {
        const { escrow, token, poster, tokenAddress, amount } = await loadFixture(feeOnTransferFixture);
        const task = {
          taskHash: TASK_HASH,
          amount,
          category: CATEGORY,
          locationZone: ZONE,
          duration: DAY,
          verifierAgent: ethers.ZeroAddress,
        };
        const total = amount * 2n;
        const received = total - (total * (await token.TRANSFER_FEE_BPS())) / (await token.BPS_DENOMINATOR());
        await expect(escrow.connect(poster).createTasks(tokenAddress, [task, task]))
          .to.be.revertedWithCustomError(escrow, "TransferAmountMismatch")
          .withArgs(received, total);
        expect(await escrow.nextTaskId()).to.equal(1n);
      });
    });
  });

  describe("with a token that returns false", () => {
    describe("#createTask", () => {
      it("reverts with SafeERC20FailedOperation(token) when transferFrom returns false, recording no task", async () => {
        const { escrow, token, poster, tokenAddress, amount } = await loadFixture(returnsFalseFixture);
        await token.setFailures(false, true);
        const nextTaskId = await escrow.nextTaskId();
        await expect(escrow.connect(poster).createTask(TASK_HASH, tokenAddress, amount, CATEGORY, ZONE, DAY))
          .to.be.revertedWithCustomError(escrow, "SafeERC20FailedOperation")
          .withArgs(tokenAddress);
        expect(await escrow.nextTaskId()).to.equal(nextTaskId);
      });
    });

    describe("#createTasks", () => {
      it("reverts with SafeERC20FailedOperation(token) when transferFrom returns false", async () => {
        const { escrow, token, poster, tokenAddress, amount } = await loadFixture(returnsFalseFixture);
        await token.setFailures(false, true);
        const task = {
          taskHash: TASK_HASH,
          amount,
          category: CATEGORY,
          locationZone: ZONE,
          duration: DAY,
          verifierAgent: ethers.ZeroAddress,
        };
        await expect(escrow.connect(poster).createTasks(tokenAddress, [task]))
          .to.be.revertedWithCustomError(escrow, "SafeERC20FailedOperation")
          .withArgs(tokenAddress);
      });
    });

    describe("#completeVerification", () => {
      it("reverts with SafeERC20FailedOperation(token) when the payout transfer returns false, leaving the task Submitted", async () => {
        const { escrow, token, verifier, tokenAddress, submittedTaskId, amount } =
          await loadFixture(returnsFalseFixture);
        await token.setFailures(true, false);
        await expect(escrow.connect(verifier).completeVerification(submittedTaskId, true))
          .to.be.revertedWithCustomError(escrow, "SafeERC20FailedOperation")
          .withArgs(tokenAddress);
        expect((await escrow.getTask(submittedTaskId)).status).to.equal(STATUS.Submitted);
        expect(await token.balanceOf(await escrow.getAddress())).to.equal(amount * 2n);
      });
    });

    describe("#cancelTask", () => {
      it("reverts with SafeERC20FailedOperation(token) when the refund transfer returns false, leaving the task Funded", async () => {
        const { escrow, token, poster, tokenAddress, fundedTaskId } = await loadFixture(returnsFalseFixture);
        await token.setFailures(true, false);
        await expect(escrow.connect(poster).cancelTask(fundedTaskId))
          .to.be.revertedWithCustomError(escrow, "SafeERC20FailedOperation")
          .withArgs(tokenAddress);
        expect((await escrow.getTask(fundedTaskId)).status).to.equal(STATUS.Funded);
      });
    });
  });

  describe("with a blacklisting token", () => {
    describe("#completeVerification", () => {
      it("reverts when the worker is blacklisted, leaving the task Submitted and the rewards in escrow", async () => {
        const { escrow, token, verifier, worker, blockedTaskId, amount } = await loadFixture(blacklistFixture);
        await expect(escrow.connect(verifier).completeVerification(blockedTaskId, true))
          .to.be.revertedWithCustomError(token, "AccountBlacklisted")
          .withArgs(worker.address);
        const task = await escrow.getTask(blockedTaskId);
        expect(task.status).to.equal(STATUS.Submitted);
        expect(task.worker).to.equal(worker.address);
        expect(await token.balanceOf(await escrow.getAddress())).to.equal(amount * 2n);
      });

      it("still pays another task in the same token after a blocked payout", async () => {
        const { escrow, token, verifier, stranger, treasury, blockedTaskId, otherTaskId, amount, payout, fee } =
          await loadFixture(blacklistFixture);
        await expect(escrow.connect(verifier).completeVerification(blockedTaskId, true)).to.be.revertedWithCustomError(
          token,
          "AccountBlacklisted",
        );
        await expect(escrow.connect(verifier).completeVerification(otherTaskId, true)).to.changeTokenBalances(
          token,
          [stranger, treasury, escrow],
          [payout, fee, -amount],
        );
        expect((await escrow.getTask(otherTaskId)).status).to.equal(STATUS.Completed);
        expect((await escrow.getTask(blockedTaskId)).status).to.equal(STATUS.Submitted);
      });

      it("reverts every payout while the treasury is blacklisted, until the admin moves the treasury", async () => {
        const { escrow, token, admin, verifier, treasury, stranger, others, otherTaskId, amount, payout, fee } =
          await loadFixture(blacklistFixture);
        await token.setBlacklisted(treasury.address, true);
        await expect(escrow.connect(verifier).completeVerification(otherTaskId, true))
          .to.be.revertedWithCustomError(token, "AccountBlacklisted")
          .withArgs(treasury.address);
        const newTreasury = others[0];
        await escrow.connect(admin).setTreasury(newTreasury.address);
        await expect(escrow.connect(verifier).completeVerification(otherTaskId, true)).to.changeTokenBalances(
          token,
          [stranger, newTreasury, escrow],
          [payout, fee, -amount],
        );
      });
    });

    describe("#releaseUnjudgedWork", () => {
      it("reverts when the worker is blacklisted, leaving the task escalated", async () => {
        const { escrow, token, worker, blockedTaskId } = await loadFixture(blacklistEscalatedFixture);
        await time.increase(await escrow.DISPUTE_WINDOW());
        await expect(escrow.connect(worker).releaseUnjudgedWork(blockedTaskId))
          .to.be.revertedWithCustomError(token, "AccountBlacklisted")
          .withArgs(worker.address);
        expect((await escrow.getTask(blockedTaskId)).status).to.equal(STATUS.Disputed);
        expect(await escrow.isEscalated(blockedTaskId)).to.equal(true);
      });
    });

    describe("#resolveDispute", () => {
      it("reverts a ruling for a blacklisted worker, leaving the task Disputed", async () => {
        const { escrow, token, admin, worker, blockedTaskId } = await loadFixture(blacklistEscalatedFixture);
        await expect(escrow.connect(admin).resolveDispute(blockedTaskId, true))
          .to.be.revertedWithCustomError(token, "AccountBlacklisted")
          .withArgs(worker.address);
        expect((await escrow.getTask(blockedTaskId)).status).to.equal(STATUS.Disputed);
      });

      it("refunds the poster on a ruling for the poster after the escalation of the blacklisted worker's work", async () => {
        const { escrow, token, admin, poster, blockedTaskId, amount } = await loadFixture(blacklistEscalatedFixture);
        const tx = escrow.connect(admin).resolveDispute(blockedTaskId, false);
        await expect(tx).to.changeTokenBalances(token, [poster, escrow], [amount, -amount]);
        await expect(tx).to.emit(escrow, "TaskCancelled").withArgs(blockedTaskId, amount);
        expect((await escrow.getTask(blockedTaskId)).status).to.equal(STATUS.Cancelled);
      });

      it("refunds the poster on a ruling for the poster after a dispute raised before the deadline", async () => {
        const { escrow, token, admin, poster, blockedTaskId, amount } = await loadFixture(blacklistFixture);
        await escrow.connect(poster).raiseDispute(blockedTaskId);
        const tx = escrow.connect(admin).resolveDispute(blockedTaskId, false);
        await expect(tx).to.changeTokenBalances(token, [poster, escrow], [amount, -amount]);
        await expect(tx).to.emit(escrow, "TaskCancelled").withArgs(blockedTaskId, amount);
      });
    });

    describe("#cancelTask", () => {
      it("reverts when the poster is blacklisted, leaving the task Funded and the reward in escrow", async () => {
        const { escrow, token, poster, tokenAddress, amount } = await loadFixture(blacklistFixture);
        await escrow.connect(poster).createTask(TASK_HASH, tokenAddress, amount, CATEGORY, ZONE, DAY);
        const taskId = (await escrow.nextTaskId()) - 1n;
        await token.setBlacklisted(poster.address, true);
        await expect(escrow.connect(poster).cancelTask(taskId))
          .to.be.revertedWithCustomError(token, "AccountBlacklisted")
          .withArgs(poster.address);
        expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Funded);
        expect(await token.balanceOf(await escrow.getAddress())).to.equal(amount * 3n);
      });
    });
  });

  describe("with native currency", () => {
    describe("#completeVerification", () => {
      it("reverts with NativeTransferFailed(worker) when the worker contract rejects the payout, leaving the task Submitted", async () => {
        const { escrow, escrowAddress, verifier, workerContract, workerTaskId, amount } =
          await loadFixture(nativeFixture);
        await workerContract.setMode(MODE.Reject, ethers.ZeroAddress, "0x");
        await expect(escrow.connect(verifier).completeVerification(workerTaskId, true))
          .to.be.revertedWithCustomError(escrow, "NativeTransferFailed")
          .withArgs(await workerContract.getAddress());
        expect((await escrow.getTask(workerTaskId)).status).to.equal(STATUS.Submitted);
        expect(await ethers.provider.getBalance(escrowAddress)).to.equal(amount * 2n);
      });

      it("pays a worker contract that re-enters the escrow on the payout once, its re-entry refused by the guard", async () => {
        const { escrow, escrowAddress, verifier, treasury, workerContract, workerTaskId, amount, payout, fee } =
          await loadFixture(nativeFixture);
        await workerContract.setMode(
          MODE.Reenter,
          escrowAddress,
          escrow.interface.encodeFunctionData("raiseDispute", [workerTaskId]),
        );
        const tx = escrow.connect(verifier).completeVerification(workerTaskId, true);
        await expect(tx).to.changeEtherBalances([workerContract, treasury, escrow], [payout, fee, -amount]);
        await expect(tx).to.emit(escrow, "TaskCompleted").withArgs(workerTaskId, payout, fee);
        expect(await workerContract.reentryAttempts()).to.equal(1n);
        expect(await workerContract.reentrySuccesses()).to.equal(0n);
        expect(await workerContract.lastReentryError()).to.equal(
          escrow.interface.getError("ReentrancyGuardReentrantCall")!.selector,
        );
        expect((await escrow.getTask(workerTaskId)).status).to.equal(STATUS.Completed);
      });
    });

    describe("#cancelTask", () => {
      it("reverts with NativeTransferFailed(poster) when the poster contract rejects the refund, leaving the task Funded", async () => {
        const { escrow, escrowAddress, posterContract, posterTaskId, amount } = await loadFixture(nativeFixture);
        await posterContract.setMode(MODE.Reject, ethers.ZeroAddress, "0x");
        await expect(
          posterContract.execute(escrowAddress, escrow.interface.encodeFunctionData("cancelTask", [posterTaskId])),
        )
          .to.be.revertedWithCustomError(escrow, "NativeTransferFailed")
          .withArgs(await posterContract.getAddress());
        expect((await escrow.getTask(posterTaskId)).status).to.equal(STATUS.Funded);
        expect(await ethers.provider.getBalance(escrowAddress)).to.equal(amount * 2n);
      });

      it("refunds a poster contract that re-enters cancelTask on the refund once, its re-entry refused by the guard", async () => {
        const { escrow, escrowAddress, posterContract, posterTaskId, amount } = await loadFixture(nativeFixture);
        const cancel = escrow.interface.encodeFunctionData("cancelTask", [posterTaskId]);
        await posterContract.setMode(MODE.Reenter, escrowAddress, cancel);
        const tx = posterContract.execute(escrowAddress, cancel);
        await expect(tx).to.changeEtherBalances([posterContract, escrow], [amount, -amount]);
        await expect(tx).to.emit(escrow, "TaskCancelled").withArgs(posterTaskId, amount);
        expect(await posterContract.reentryAttempts()).to.equal(1n);
        expect(await posterContract.reentrySuccesses()).to.equal(0n);
        expect(await posterContract.lastReentryError()).to.equal(
          escrow.interface.getError("ReentrancyGuardReentrantCall")!.selector,
        );
        expect((await escrow.getTask(posterTaskId)).status).to.equal(STATUS.Cancelled);
      });

      it("reverts with NativeTransferFailed(poster) when the poster contract re-enters cancelTask and reverts with the guard's error, leaving the task Funded", async () => {
        const { escrow, escrowAddress, posterContract, posterTaskId, amount } = await loadFixture(nativeFixture);
        const cancel = escrow.interface.encodeFunctionData("cancelTask", [posterTaskId]);
        await posterContract.setMode(MODE.ReenterAndBubble, escrowAddress, cancel);
        await expect(posterContract.execute(escrowAddress, cancel))
          .to.be.revertedWithCustomError(escrow, "NativeTransferFailed")
          .withArgs(await posterContract.getAddress());
        expect((await escrow.getTask(posterTaskId)).status).to.equal(STATUS.Funded);
        expect(await ethers.provider.getBalance(escrowAddress)).to.equal(amount * 2n);
      });
    });

    describe("#claimTimeout", () => {
      it("refunds a poster contract that re-enters claimTimeout on the timeout refund once, its re-entry refused by the guard", async () => {
        const { escrow, escrowAddress, verifier, worker, posterContract, posterTaskId, amount } =
          await loadFixture(nativeFixture);
        await escrow.connect(verifier).marketplaceAssign(posterTaskId, worker.address);
        await time.increaseTo(await escrow.effectiveDeadline(posterTaskId));
        const claim = escrow.interface.encodeFunctionData("claimTimeout", [posterTaskId]);
        await posterContract.setMode(MODE.Reenter, escrowAddress, claim);
        const tx = posterContract.execute(escrowAddress, claim);
        await expect(tx).to.changeEtherBalances([posterContract, escrow], [amount, -amount]);
        await expect(tx).to.emit(escrow, "DeadlineExpired").withArgs(posterTaskId, amount);
        expect(await posterContract.reentrySuccesses()).to.equal(0n);
        expect(await posterContract.lastReentryError()).to.equal(
          escrow.interface.getError("ReentrancyGuardReentrantCall")!.selector,
        );
      });
    });

    describe("#resolveDispute", () => {
      it("reverts with NativeTransferFailed(worker) on a ruling for a rejecting worker contract, leaving the task Disputed", async () => {
        const { escrow, admin, poster, workerContract, workerTaskId } = await loadFixture(nativeFixture);
        await escrow.connect(poster).raiseDispute(workerTaskId);
        await workerContract.setMode(MODE.Reject, ethers.ZeroAddress, "0x");
        await expect(escrow.connect(admin).resolveDispute(workerTaskId, true))
          .to.be.revertedWithCustomError(escrow, "NativeTransferFailed")
          .withArgs(await workerContract.getAddress());
        expect((await escrow.getTask(workerTaskId)).status).to.equal(STATUS.Disputed);
      });

      it("refunds the poster on a ruling for the poster after a ruling for a rejecting worker contract failed", async () => {
        const { escrow, admin, poster, workerContract, workerTaskId, amount } = await loadFixture(nativeFixture);
        await escrow.connect(poster).raiseDispute(workerTaskId);
        await workerContract.setMode(MODE.Reject, ethers.ZeroAddress, "0x");
        await expect(escrow.connect(admin).resolveDispute(workerTaskId, true)).to.be.revertedWithCustomError(
          escrow,
          "NativeTransferFailed",
        );
        const tx = escrow.connect(admin).resolveDispute(workerTaskId, false);
        await expect(tx).to.changeEtherBalances([poster, escrow], [amount, -amount]);
        await expect(tx).to.emit(escrow, "TaskCancelled").withArgs(workerTaskId, amount);
      });
    });
  });
});
