import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { TaskEscrow } from "../../typechain-types";
import {
  CATEGORY,
  DAY,
  EVIDENCE_HASH,
  FEE_BPS,
  HOUR,
  OPEN_SALT,
  PHASE,
  TASK_HASH,
  USDC,
  ZONE,
  assignedTaskFixture,
  commitOpen,
  deployEscrowFixture,
  disputedTaskFixture,
  escalatedTaskFixture,
  failedVerdictFixture,
  fundedTaskFixture,
  openPhaseStarts,
  submittedTaskFixture,
} from "../helpers/fixtures";

/** Length of the pause most tests insert: long enough to tell apart from a one-block drift. */
const PAUSE_LENGTH = BigInt(2 * HOUR);
const ONE_HOUR = BigInt(HOUR);

type Signer = Awaited<ReturnType<typeof ethers.getSigners>>[number];

/** Pauses at exactly `start` and unpauses at exactly `start + length`. */
async function pauseBetween(escrow: TaskEscrow, admin: Signer, start: bigint, length: bigint) {
  await time.setNextBlockTimestamp(start);
  await escrow.connect(admin).pause();
  await time.setNextBlockTimestamp(start + length);
  await escrow.connect(admin).unpause();
}

/** Pauses at exactly `timestamp`. */
async function pauseAt(escrow: TaskEscrow, admin: Signer, timestamp: bigint) {
  await time.setNextBlockTimestamp(timestamp);
  await escrow.connect(admin).pause();
}

/** Open-submission task 1 (100 USDC, one day) in its Submission phase. */
async function openTaskFixture() {
  const base = await deployEscrowFixture();
  const { escrow, usdc, poster } = base;
  await escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), USDC(100), CATEGORY, ZONE, DAY);
  const { createdAt, deadline } = await escrow.getTask(1n);
  return { ...base, taskId: 1n, createdAt, deadline };
}

/** Open task 1 with the worker's submission committed and revealed, in its Selection phase. */
async function openSelectionFixture() {
  const base = await openTaskFixture();
  const { escrow, worker, taskId } = base;
  await commitOpen(escrow, worker, taskId, EVIDENCE_HASH);
  await time.increaseTo(base.deadline);
  await escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT);
  await time.increaseTo((await openPhaseStarts(escrow, taskId)).selection);
  return base;
}

/**
 * Two finished pauses, [start0, end0] and [start1, end1], one and three hours long, after a fresh deployment.
 * Between them the escrow ran for two hours.
 */
async function twoPausesFixture() {
  const base = await deployEscrowFixture();
  const origin = BigInt(await time.latest());
  const pauses = [
    { start: origin + ONE_HOUR, end: origin + 2n * ONE_HOUR },
    { start: origin + 4n * ONE_HOUR, end: origin + 7n * ONE_HOUR },
  ];
  for (const { start, end } of pauses) await pauseBetween(base.escrow, base.admin, start, end - start);
  return { ...base, pauses };
}

describe("TaskEscrow", () => {
  describe("#pause", () => {
    it("emits Paused with the admin and records the start", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      const start = BigInt(await time.latest()) + ONE_HOUR;
      await time.setNextBlockTimestamp(start);
      await expect(escrow.connect(admin).pause()).to.emit(escrow, "Paused").withArgs(admin.address);
      expect(await escrow.paused()).to.equal(true);
      expect(await escrow.pauseStartedAt()).to.equal(start);
    });

    it("reverts when the escrow is already paused", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).pause();
      await expect(escrow.connect(admin).pause()).to.be.revertedWithCustomError(escrow, "EnforcedPause");
    });

    it("reverts when the caller is not the admin", async () => {
      const { escrow, stranger } = await loadFixture(deployEscrowFixture);
      await expect(escrow.connect(stranger).pause()).to.be.revertedWithCustomError(escrow, "NotAdmin");
    });
  });

  describe("#unpause", () => {
    it("emits Unpaused with the admin and clears the running pause", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).pause();
      await expect(escrow.connect(admin).unpause()).to.emit(escrow, "Unpaused").withArgs(admin.address);
      expect(await escrow.paused()).to.equal(false);
      expect(await escrow.pauseStartedAt()).to.equal(0n);
    });

    it("adds the length of the pause to totalPausedSeconds", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      const start = BigInt(await time.latest()) + ONE_HOUR;
      await pauseBetween(escrow, admin, start, PAUSE_LENGTH);
      expect(await escrow.totalPausedSeconds()).to.equal(PAUSE_LENGTH);
    });

    it("reverts when the escrow is not paused", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      await expect(escrow.connect(admin).unpause()).to.be.revertedWithCustomError(escrow, "ExpectedPause");
    });

    it("reverts when the caller is not the admin", async () => {
      const { escrow, admin, stranger } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).pause();
      await expect(escrow.connect(stranger).unpause()).to.be.revertedWithCustomError(escrow, "NotAdmin");
    });
  });

  describe("while paused", () => {
    describe("#createTask", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, poster, usdc } = await loadFixture(deployEscrowFixture);
        await escrow.connect(admin).pause();
        await expect(
          escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), USDC(100), CATEGORY, ZONE, DAY),
        ).to.be.revertedWithCustomError(escrow, "EnforcedPause");
      });
    });

    describe("#createTaskWithVerifier", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, poster, verifierAgent, usdc } = await loadFixture(deployEscrowFixture);
        await escrow.connect(admin).pause();
        await expect(
          escrow
            .connect(poster)
            .createTaskWithVerifier(
              TASK_HASH,
              await usdc.getAddress(),
              USDC(100),
              CATEGORY,
              ZONE,
              DAY,
              verifierAgent.address,
            ),
        ).to.be.revertedWithCustomError(escrow, "EnforcedPause");
      });
    });

    describe("#createTasks", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, poster, usdc } = await loadFixture(deployEscrowFixture);
        await escrow.connect(admin).pause();
        const task = {
          taskHash: TASK_HASH,
          amount: USDC(100),
          category: CATEGORY,
          locationZone: ZONE,
          duration: DAY,
          verifierAgent: ethers.ZeroAddress,
        };
        await expect(
          escrow.connect(poster).createTasks(await usdc.getAddress(), [task, task]),
        ).to.be.revertedWithCustomError(escrow, "EnforcedPause");
      });
    });

    describe("#createTaskOpen", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, poster, usdc } = await loadFixture(deployEscrowFixture);
        await escrow.connect(admin).pause();
        await expect(
          escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), USDC(100), CATEGORY, ZONE, DAY),
        ).to.be.revertedWithCustomError(escrow, "EnforcedPause");
      });
    });

    describe("#marketplaceAssign", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, verifier, worker, taskId } = await loadFixture(fundedTaskFixture);
        await escrow.connect(admin).pause();
        await expect(escrow.connect(verifier).marketplaceAssign(taskId, worker.address)).to.be.revertedWithCustomError(
          escrow,
          "EnforcedPause",
        );
      });
    });

    describe("#assignWorker", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, poster, worker, taskId } = await loadFixture(fundedTaskFixture);
        await escrow.connect(admin).pause();
        await expect(escrow.connect(poster).assignWorker(taskId, worker.address)).to.be.revertedWithCustomError(
          escrow,
          "EnforcedPause",
        );
      });
    });

    describe("#submitEvidence", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, worker, taskId } = await loadFixture(assignedTaskFixture);
        await escrow.connect(admin).pause();
        await expect(escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH)).to.be.revertedWithCustomError(
          escrow,
          "EnforcedPause",
        );
      });
    });

    describe("#completeVerification", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, verifier, taskId } = await loadFixture(submittedTaskFixture);
        await escrow.connect(admin).pause();
        await expect(escrow.connect(verifier).completeVerification(taskId, true)).to.be.revertedWithCustomError(
          escrow,
          "EnforcedPause",
        );
      });
    });

    describe("#completeVerificationWithTEE", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, verifier, taskId } = await loadFixture(submittedTaskFixture);
        const teeWallet = new ethers.Wallet(ethers.id("test TEE signer"));
        await escrow.connect(admin).setTeeSigner(teeWallet.address);
        const payload = await escrow.teeVerdictPayload(taskId, true);
        const signature = await teeWallet.signMessage(ethers.getBytes(payload));
        await escrow.connect(admin).pause();
        await expect(
          escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, signature),
        ).to.be.revertedWithCustomError(escrow, "EnforcedPause");
      });
    });

    describe("#cancelTask", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, poster, taskId } = await loadFixture(fundedTaskFixture);
        await escrow.connect(admin).pause();
        await expect(escrow.connect(poster).cancelTask(taskId)).to.be.revertedWithCustomError(escrow, "EnforcedPause");
      });
    });

    describe("#claimTimeout", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, poster, taskId } = await loadFixture(assignedTaskFixture);
        await time.increaseTo(await escrow.effectiveDeadline(taskId));
        await escrow.connect(admin).pause();
        await expect(escrow.connect(poster).claimTimeout(taskId)).to.be.revertedWithCustomError(
          escrow,
          "EnforcedPause",
        );
      });
    });

    describe("#raiseDispute", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, poster, taskId } = await loadFixture(submittedTaskFixture);
        await escrow.connect(admin).pause();
        await expect(escrow.connect(poster).raiseDispute(taskId)).to.be.revertedWithCustomError(
          escrow,
          "EnforcedPause",
        );
      });
    });

    describe("#releaseUnjudgedWork", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, worker, taskId } = await loadFixture(escalatedTaskFixture);
        await time.increase(await escrow.DISPUTE_WINDOW());
        await escrow.connect(admin).pause();
        await expect(escrow.connect(worker).releaseUnjudgedWork(taskId)).to.be.revertedWithCustomError(
          escrow,
          "EnforcedPause",
        );
      });
    });

    describe("#commitOpen", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, worker, taskId } = await loadFixture(openTaskFixture);
        await escrow.connect(admin).pause();
        await expect(commitOpen(escrow, worker, taskId, EVIDENCE_HASH)).to.be.revertedWithCustomError(
          escrow,
          "EnforcedPause",
        );
      });
    });

    describe("#revealOpen", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, worker, taskId, deadline } = await loadFixture(openTaskFixture);
        await commitOpen(escrow, worker, taskId, EVIDENCE_HASH);
        await time.increaseTo(deadline);
        await escrow.connect(admin).pause();
        await expect(escrow.connect(worker).revealOpen(taskId, EVIDENCE_HASH, OPEN_SALT)).to.be.revertedWithCustomError(
          escrow,
          "EnforcedPause",
        );
      });
    });

    describe("#releaseOpenDefault", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, worker, taskId } = await loadFixture(openSelectionFixture);
        await time.increaseTo((await openPhaseStarts(escrow, taskId)).expired);
        await escrow.connect(admin).pause();
        await expect(escrow.connect(worker).releaseOpenDefault(taskId)).to.be.revertedWithCustomError(
          escrow,
          "EnforcedPause",
        );
      });
    });

    describe("#selectWinner", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, poster, worker, taskId } = await loadFixture(openSelectionFixture);
        await escrow.connect(admin).pause();
        await expect(escrow.connect(poster).selectWinner(taskId, worker.address)).to.be.revertedWithCustomError(
          escrow,
          "EnforcedPause",
        );
      });
    });

    describe("#reclaimOpen", () => {
      it("reverts with EnforcedPause", async () => {
        const { escrow, admin, poster, taskId, deadline } = await loadFixture(openTaskFixture);
        await time.increaseTo(deadline + (await escrow.OPEN_SELECTION_WINDOW()));
        await escrow.connect(admin).pause();
        await expect(escrow.connect(poster).reclaimOpen(taskId)).to.be.revertedWithCustomError(escrow, "EnforcedPause");
      });
    });

    describe("#resolveDispute", () => {
      it("pays the worker on a ruling for the worker", async () => {
        const { escrow, admin, worker, treasury, usdc, taskId, amount } = await loadFixture(disputedTaskFixture);
        await escrow.connect(admin).pause();
        const fee = (amount * BigInt(FEE_BPS)) / (await escrow.BPS_DENOMINATOR());
        const tx = escrow.connect(admin).resolveDispute(taskId, true);
        await expect(tx).to.emit(escrow, "DisputeResolved").withArgs(taskId, true);
        await expect(tx).to.changeTokenBalances(usdc, [worker, treasury], [amount - fee, fee]);
      });

      it("refunds the poster on a ruling for the poster", async () => {
        const { escrow, admin, poster, usdc, taskId, amount } = await loadFixture(disputedTaskFixture);
        await escrow.connect(admin).pause();
        const tx = escrow.connect(admin).resolveDispute(taskId, false);
        await expect(tx).to.emit(escrow, "TaskCancelled").withArgs(taskId, amount);
        await expect(tx).to.changeTokenBalances(usdc, [poster], [amount]);
      });
    });

    describe("admin functions", () => {
      interface Context {
        escrow: TaskEscrow;
        admin: Signer;
        stranger: Signer;
        treasury: Signer;
        verifier: Signer;
        token: string;
      }
      /** Each admin setter, asserted through its event and arguments. Any contract will do as a hook: the token is one. */
      const SETTERS: Array<[string, (c: Context) => Promise<unknown>]> = [
        [
          "setFeeBps",
          ({ escrow, admin }) =>
            expect(escrow.connect(admin).setFeeBps(0)).to.emit(escrow, "FeeBpsUpdated").withArgs(FEE_BPS, 0),
        ],
        [
          "setTreasury",
          ({ escrow, admin, treasury, stranger }) =>
            expect(escrow.connect(admin).setTreasury(stranger.address))
              .to.emit(escrow, "TreasuryUpdated")
              .withArgs(treasury.address, stranger.address),
        ],
        [
          "setVerifier",
          ({ escrow, admin, verifier, stranger }) =>
            expect(escrow.connect(admin).setVerifier(stranger.address))
              .to.emit(escrow, "VerifierUpdated")
              .withArgs(verifier.address, stranger.address),
        ],
        [
          "allowToken",
          ({ escrow, admin }) =>
            expect(escrow.connect(admin).allowToken(ethers.ZeroAddress))
              .to.emit(escrow, "TokenAllowed")
              .withArgs(ethers.ZeroAddress),
        ],
        [
          "disallowToken",
          ({ escrow, admin, token }) =>
            expect(escrow.connect(admin).disallowToken(token)).to.emit(escrow, "TokenDisallowed").withArgs(token),
        ],
        [
          "setReputationContract",
          ({ escrow, admin, token }) =>
            expect(escrow.connect(admin).setReputationContract(token))
              .to.emit(escrow, "ReputationContractUpdated")
              .withArgs(ethers.ZeroAddress, token),
        ],
        [
          "setTaskRegistry",
          ({ escrow, admin, token }) =>
            expect(escrow.connect(admin).setTaskRegistry(token))
              .to.emit(escrow, "TaskRegistryUpdated")
              .withArgs(ethers.ZeroAddress, token),
        ],
        [
          "setTeeSigner",
          ({ escrow, admin, stranger }) =>
            expect(escrow.connect(admin).setTeeSigner(stranger.address))
              .to.emit(escrow, "TeeSignerUpdated")
              .withArgs(ethers.ZeroAddress, stranger.address),
        ],
        [
          "setMinRatedAmount",
          ({ escrow, admin, token }) =>
            expect(escrow.connect(admin).setMinRatedAmount(token, USDC(1)))
              .to.emit(escrow, "MinRatedAmountUpdated")
              .withArgs(token, USDC(1)),
        ],
        [
          "proposeAdmin",
          ({ escrow, admin, stranger }) =>
            expect(escrow.connect(admin).proposeAdmin(stranger.address))
              .to.emit(escrow, "AdminTransferProposed")
              .withArgs(admin.address, stranger.address),
        ],
      ];

      for (const [name, call] of SETTERS) {
        it(`#${name} still works`, async () => {
          const { escrow, admin, stranger, treasury, verifier, usdc } = await loadFixture(deployEscrowFixture);
          await escrow.connect(admin).pause();
          await call({ escrow, admin, stranger, treasury, verifier, token: await usdc.getAddress() });
        });
      }

      it("#acceptAdmin still works", async () => {
        const { escrow, admin, stranger } = await loadFixture(deployEscrowFixture);
        await escrow.connect(admin).proposeAdmin(stranger.address);
        await escrow.connect(admin).pause();
        await expect(escrow.connect(stranger).acceptAdmin())
          .to.emit(escrow, "AdminTransferCompleted")
          .withArgs(admin.address, stranger.address);
      });
    });
  });

  describe("#effectiveDeadline", () => {
    it("adds exactly the seconds of a pause after creation", async () => {
      const { escrow, admin, taskId } = await loadFixture(assignedTaskFixture);
      const { createdAt, deadline } = await escrow.getTask(taskId);
      await pauseBetween(escrow, admin, createdAt + ONE_HOUR, PAUSE_LENGTH);
      expect(await escrow.effectiveDeadline(taskId)).to.equal(deadline + PAUSE_LENGTH);
    });

    it("adds the seconds elapsed in the running pause", async () => {
      const { escrow, admin, taskId } = await loadFixture(assignedTaskFixture);
      const { createdAt, deadline } = await escrow.getTask(taskId);
      const start = createdAt + ONE_HOUR;
      await pauseAt(escrow, admin, start);
      await time.increaseTo(start + PAUSE_LENGTH);
      expect(await escrow.effectiveDeadline(taskId)).to.equal(deadline + PAUSE_LENGTH);
    });

    it("adds up several pauses", async () => {
      const { escrow, admin, taskId } = await loadFixture(assignedTaskFixture);
      const { createdAt, deadline } = await escrow.getTask(taskId);
      await pauseBetween(escrow, admin, createdAt + ONE_HOUR, ONE_HOUR);
      await pauseBetween(escrow, admin, createdAt + 4n * ONE_HOUR, PAUSE_LENGTH);
      expect(await escrow.effectiveDeadline(taskId)).to.equal(deadline + ONE_HOUR + PAUSE_LENGTH);
    });

    it("ignores a pause that ended before the task was created", async () => {
      const { escrow, admin, poster, usdc } = await loadFixture(deployEscrowFixture);
      await pauseBetween(escrow, admin, BigInt(await time.latest()) + ONE_HOUR, PAUSE_LENGTH);
      await escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), USDC(100), CATEGORY, ZONE, DAY);
      const { deadline } = await escrow.getTask(1n);
      expect(await escrow.effectiveDeadline(1n)).to.equal(deadline);
    });

    it("keeps isTaskExpired false until the extended deadline", async () => {
      const { escrow, admin, taskId } = await loadFixture(assignedTaskFixture);
      const { createdAt, deadline } = await escrow.getTask(taskId);
      await pauseBetween(escrow, admin, createdAt + ONE_HOUR, PAUSE_LENGTH);
      await time.increaseTo(deadline + PAUSE_LENGTH - 1n);
      expect(await escrow.isTaskExpired(taskId)).to.equal(false);
      await time.increaseTo(deadline + PAUSE_LENGTH);
      expect(await escrow.isTaskExpired(taskId)).to.equal(true);
    });
  });

  describe("after a pause", () => {
    describe("#submitEvidence", () => {
      it("accepts evidence one second before the extended deadline", async () => {
        const { escrow, admin, worker, taskId } = await loadFixture(assignedTaskFixture);
        const { createdAt, deadline } = await escrow.getTask(taskId);
        await pauseBetween(escrow, admin, createdAt + ONE_HOUR, PAUSE_LENGTH);
        await time.setNextBlockTimestamp(deadline + PAUSE_LENGTH - 1n);
        await expect(escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH))
          .to.emit(escrow, "EvidenceSubmitted")
          .withArgs(taskId, worker.address, EVIDENCE_HASH, 1);
      });

      it("reverts at the extended deadline", async () => {
        const { escrow, admin, worker, taskId } = await loadFixture(assignedTaskFixture);
        const { createdAt, deadline } = await escrow.getTask(taskId);
        await pauseBetween(escrow, admin, createdAt + ONE_HOUR, PAUSE_LENGTH);
        await time.setNextBlockTimestamp(deadline + PAUSE_LENGTH);
        await expect(escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH)).to.be.revertedWithCustomError(
          escrow,
          "DeadlineReached",
        );
      });
    });

    describe("#claimTimeout", () => {
      it("reverts one second before the extended deadline", async () => {
        const { escrow, admin, poster, taskId } = await loadFixture(assignedTaskFixture);
        const { createdAt, deadline } = await escrow.getTask(taskId);
        await pauseBetween(escrow, admin, createdAt + ONE_HOUR, PAUSE_LENGTH);
        await time.setNextBlockTimestamp(deadline + PAUSE_LENGTH - 1n);
        await expect(escrow.connect(poster).claimTimeout(taskId)).to.be.revertedWithCustomError(
          escrow,
          "DeadlineNotReached",
        );
      });

      it("refunds an assigned task at the extended deadline", async () => {
        const { escrow, admin, poster, taskId, amount } = await loadFixture(assignedTaskFixture);
        const { createdAt, deadline } = await escrow.getTask(taskId);
        await pauseBetween(escrow, admin, createdAt + ONE_HOUR, PAUSE_LENGTH);
        await time.setNextBlockTimestamp(deadline + PAUSE_LENGTH);
        await expect(escrow.connect(poster).claimTimeout(taskId))
          .to.emit(escrow, "DeadlineExpired")
          .withArgs(taskId, amount);
      });

      it("reverts one second before the appeal window extended by the pause", async () => {
        const { escrow, admin, poster, taskId } = await loadFixture(failedVerdictFixture);
        const failedAt = await escrow.failedVerdictAt(taskId);
        await pauseBetween(escrow, admin, failedAt + ONE_HOUR, PAUSE_LENGTH);
        await time.setNextBlockTimestamp(failedAt + (await escrow.APPEAL_WINDOW()) + PAUSE_LENGTH - 1n);
        await expect(escrow.connect(poster).claimTimeout(taskId)).to.be.revertedWithCustomError(
          escrow,
          "AppealWindowActive",
        );
      });

      it("refunds a failed task once the appeal window extended by the pause has passed", async () => {
        const { escrow, admin, poster, usdc, taskId, amount } = await loadFixture(failedVerdictFixture);
        const failedAt = await escrow.failedVerdictAt(taskId);
        await pauseBetween(escrow, admin, failedAt + ONE_HOUR, PAUSE_LENGTH);
        await time.setNextBlockTimestamp(failedAt + (await escrow.APPEAL_WINDOW()) + PAUSE_LENGTH);
        await expect(escrow.connect(poster).claimTimeout(taskId)).to.changeTokenBalances(usdc, [poster], [amount]);
      });

      it("reverts one second before the dispute window extended by the pause", async () => {
        const { escrow, admin, poster, taskId } = await loadFixture(disputedTaskFixture);
        const { disputedAt } = await escrow.getTask(taskId);
        await pauseBetween(escrow, admin, disputedAt + ONE_HOUR, PAUSE_LENGTH);
        await time.setNextBlockTimestamp(disputedAt + (await escrow.DISPUTE_WINDOW()) + PAUSE_LENGTH - 1n);
        await expect(escrow.connect(poster).claimTimeout(taskId)).to.be.revertedWithCustomError(
          escrow,
          "DisputeWindowActive",
        );
      });

      it("splits a disputed task once the dispute window extended by the pause has passed", async () => {
        const { escrow, admin, poster, usdc, taskId, amount } = await loadFixture(disputedTaskFixture);
        const { disputedAt } = await escrow.getTask(taskId);
        await pauseBetween(escrow, admin, disputedAt + ONE_HOUR, PAUSE_LENGTH);
        await time.setNextBlockTimestamp(disputedAt + (await escrow.DISPUTE_WINDOW()) + PAUSE_LENGTH);
        await escrow.connect(poster).claimTimeout(taskId);
        expect(await escrow.creditOf(await usdc.getAddress(), poster.address)).to.equal(amount - amount / 2n);
      });
    });

    describe("#raiseDispute", () => {
      it("lets the worker appeal one second before the appeal window extended by the pause ends", async () => {
        const { escrow, admin, worker, taskId } = await loadFixture(failedVerdictFixture);
        const failedAt = await escrow.failedVerdictAt(taskId);
        await pauseBetween(escrow, admin, failedAt + ONE_HOUR, PAUSE_LENGTH);
        await time.setNextBlockTimestamp(failedAt + (await escrow.APPEAL_WINDOW()) + PAUSE_LENGTH - 1n);
        await expect(escrow.connect(worker).raiseDispute(taskId))
          .to.emit(escrow, "TaskDisputed")
          .withArgs(taskId, worker.address);
      });

      it("refuses the worker's appeal at the end of the extended appeal window", async () => {
        const { escrow, admin, worker, taskId } = await loadFixture(failedVerdictFixture);
        const failedAt = await escrow.failedVerdictAt(taskId);
        await pauseBetween(escrow, admin, failedAt + ONE_HOUR, PAUSE_LENGTH);
        await time.setNextBlockTimestamp(failedAt + (await escrow.APPEAL_WINDOW()) + PAUSE_LENGTH);
        await expect(escrow.connect(worker).raiseDispute(taskId)).to.be.revertedWithCustomError(
          escrow,
          "DeadlineReached",
        );
      });
    });

    describe("#releaseUnjudgedWork", () => {
      it("reverts one second before the dispute window extended by the pause", async () => {
        const { escrow, admin, worker, taskId } = await loadFixture(escalatedTaskFixture);
        const { disputedAt } = await escrow.getTask(taskId);
        await pauseBetween(escrow, admin, disputedAt + ONE_HOUR, PAUSE_LENGTH);
        await time.setNextBlockTimestamp(disputedAt + (await escrow.DISPUTE_WINDOW()) + PAUSE_LENGTH - 1n);
        await expect(escrow.connect(worker).releaseUnjudgedWork(taskId)).to.be.revertedWithCustomError(
          escrow,
          "DisputeWindowActive",
        );
      });

      it("releases the work once the dispute window extended by the pause has passed", async () => {
        const { escrow, admin, worker, taskId, amount } = await loadFixture(escalatedTaskFixture);
        const { disputedAt } = await escrow.getTask(taskId);
        await pauseBetween(escrow, admin, disputedAt + ONE_HOUR, PAUSE_LENGTH);
        await time.setNextBlockTimestamp(disputedAt + (await escrow.DISPUTE_WINDOW()) + PAUSE_LENGTH);
        const fee = (amount * BigInt(FEE_BPS)) / (await escrow.BPS_DENOMINATOR());
        await expect(escrow.connect(worker).releaseUnjudgedWork(taskId))
          .to.emit(escrow, "UnjudgedWorkReleased")
          .withArgs(taskId, amount - fee, fee);
      });
    });

    describe("#openPhase", () => {
      it("moves from Submission to Reveal exactly at the extended deadline", async () => {
        const { escrow, admin, taskId, createdAt, deadline } = await loadFixture(openTaskFixture);
        await pauseBetween(escrow, admin, createdAt + ONE_HOUR, PAUSE_LENGTH);
        await time.increaseTo(deadline + PAUSE_LENGTH - 1n);
        expect(await escrow.openPhase(taskId)).to.equal(PHASE.Submission);
        await time.increaseTo(deadline + PAUSE_LENGTH);
        expect(await escrow.openPhase(taskId)).to.equal(PHASE.Reveal);
      });

      it("moves from Selection to Expired exactly at the windows after the extended deadline", async () => {
        const { escrow, admin, taskId, createdAt, deadline } = await loadFixture(openTaskFixture);
        await pauseBetween(escrow, admin, createdAt + ONE_HOUR, PAUSE_LENGTH);
        const expiry =
          deadline + PAUSE_LENGTH + (await escrow.OPEN_REVEAL_WINDOW()) + (await escrow.OPEN_SELECTION_WINDOW());
        await time.increaseTo(expiry - 1n);
        expect(await escrow.openPhase(taskId)).to.equal(PHASE.Selection);
        await time.increaseTo(expiry);
        expect(await escrow.openPhase(taskId)).to.equal(PHASE.Expired);
      });

      it("extends the windows by a pause inside them", async () => {
        const { escrow, admin, taskId, deadline } = await loadFixture(openTaskFixture);
        await pauseBetween(escrow, admin, deadline + ONE_HOUR, PAUSE_LENGTH);
        const expiry =
          deadline + PAUSE_LENGTH + (await escrow.OPEN_REVEAL_WINDOW()) + (await escrow.OPEN_SELECTION_WINDOW());
        await time.increaseTo(expiry - 1n);
        expect(await escrow.openPhase(taskId)).to.equal(PHASE.Selection);
        await time.increaseTo(expiry);
        expect(await escrow.openPhase(taskId)).to.equal(PHASE.Expired);
      });

      it("stays in Submission during a pause that began in Submission", async () => {
        const { escrow, admin, taskId, deadline } = await loadFixture(openTaskFixture);
        await pauseAt(escrow, admin, deadline - ONE_HOUR);
        await time.increaseTo(deadline + PAUSE_LENGTH);
        expect(await escrow.openPhase(taskId)).to.equal(PHASE.Submission);
      });
    });

    describe("#commitOpen", () => {
      it("accepts a commitment one second before the extended deadline", async () => {
        const { escrow, admin, worker, taskId, createdAt, deadline } = await loadFixture(openTaskFixture);
        await pauseBetween(escrow, admin, createdAt + ONE_HOUR, PAUSE_LENGTH);
        await time.setNextBlockTimestamp(deadline + PAUSE_LENGTH - 1n);
        await expect(commitOpen(escrow, worker, taskId, EVIDENCE_HASH)).to.emit(escrow, "OpenSubmissionCommitted");
      });
    });

    describe("#reclaimOpen", () => {
      it("refuses a reclaim with unrevealed commitments one second before the extended reveal window ends", async () => {
        const { escrow, admin, poster, worker, taskId, createdAt, deadline } = await loadFixture(openTaskFixture);
        await commitOpen(escrow, worker, taskId, EVIDENCE_HASH);
        await pauseBetween(escrow, admin, createdAt + ONE_HOUR, PAUSE_LENGTH);
        await time.setNextBlockTimestamp(deadline + PAUSE_LENGTH + (await escrow.OPEN_REVEAL_WINDOW()) - 1n);
        await expect(escrow.connect(poster).reclaimOpen(taskId))
          .to.be.revertedWithCustomError(escrow, "WrongPhase")
          .withArgs(PHASE.Reveal, PHASE.Selection);
      });
    });
  });

  describe("#totalPausedSeconds", () => {
    it("is zero before any pause", async () => {
      const { escrow } = await loadFixture(deployEscrowFixture);
      expect(await escrow.totalPausedSeconds()).to.equal(0n);
    });

    it("sums the finished pauses", async () => {
      const { escrow, pauses } = await loadFixture(twoPausesFixture);
      const sum = pauses.reduce((total, { start, end }) => total + end - start, 0n);
      expect(await escrow.totalPausedSeconds()).to.equal(sum);
    });

    it("includes the seconds elapsed in the running pause", async () => {
      const { escrow, admin, pauses } = await loadFixture(twoPausesFixture);
      const finished = pauses.reduce((total, { start, end }) => total + end - start, 0n);
      const start = pauses[1].end + ONE_HOUR;
      await pauseAt(escrow, admin, start);
      await time.increaseTo(start + PAUSE_LENGTH);
      expect(await escrow.totalPausedSeconds()).to.equal(finished + PAUSE_LENGTH);
    });
  });

  describe("#pauseStartedAt", () => {
    it("is zero while the escrow runs", async () => {
      const { escrow } = await loadFixture(twoPausesFixture);
      expect(await escrow.pauseStartedAt()).to.equal(0n);
    });

    it("is the start of the running pause", async () => {
      const { escrow, admin, pauses } = await loadFixture(twoPausesFixture);
      const start = pauses[1].end + ONE_HOUR;
      await pauseAt(escrow, admin, start);
      expect(await escrow.pauseStartedAt()).to.equal(start);
    });
  });

  describe("#pausedSecondsSince", () => {
    it("counts every pause after a time before the first", async () => {
      const { escrow, pauses } = await loadFixture(twoPausesFixture);
      const [first, second] = pauses;
      expect(await escrow.pausedSecondsSince(first.start - 1n)).to.equal(
        first.end - first.start + (second.end - second.start),
      );
    });

    it("counts the rest of a pause from a time inside it", async () => {
      const { escrow, pauses } = await loadFixture(twoPausesFixture);
      const [first, second] = pauses;
      const inside = first.start + (first.end - first.start) / 2n;
      expect(await escrow.pausedSecondsSince(inside)).to.equal(first.end - inside + (second.end - second.start));
    });

    it("skips a pause that ended before the time", async () => {
      const { escrow, pauses } = await loadFixture(twoPausesFixture);
      const [first, second] = pauses;
      expect(await escrow.pausedSecondsSince(first.end)).to.equal(second.end - second.start);
    });

    it("is zero after the last pause ended", async () => {
      const { escrow, pauses } = await loadFixture(twoPausesFixture);
      expect(await escrow.pausedSecondsSince(pauses[1].end)).to.equal(0n);
    });

    it("counts the running pause up to now", async () => {
      const { escrow, admin, pauses } = await loadFixture(twoPausesFixture);
      const start = pauses[1].end + ONE_HOUR;
      await pauseAt(escrow, admin, start);
      await time.increaseTo(start + PAUSE_LENGTH);
      expect(await escrow.pausedSecondsSince(start + ONE_HOUR)).to.equal(PAUSE_LENGTH - ONE_HOUR);
    });
  });

  describe("#recordPauseStart", () => {
    it("reverts when the escrow is not paused", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      await expect(escrow.connect(admin).recordPauseStart(BigInt(await time.latest()))).to.be.revertedWithCustomError(
        escrow,
        "ExpectedPause",
      );
    });

    it("reverts when the caller is not the admin", async () => {
      const { escrow, admin, stranger } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).pause();
      await expect(
        escrow.connect(stranger).recordPauseStart(BigInt(await time.latest())),
      ).to.be.revertedWithCustomError(escrow, "NotAdmin");
    });

    it("reverts when the start is zero", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).pause();
      await expect(escrow.connect(admin).recordPauseStart(0)).to.be.revertedWithCustomError(
        escrow,
        "InvalidPauseStart",
      );
    });

    it("reverts when the start is after the block time", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).pause();
      const now = BigInt(await time.latest()) + ONE_HOUR;
      await time.setNextBlockTimestamp(now);
      await expect(escrow.connect(admin).recordPauseStart(now + 1n)).to.be.revertedWithCustomError(
        escrow,
        "InvalidPauseStart",
      );
    });

    it("accepts the time of the pause transaction as start", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).pause();
      const pausedAt = BigInt(await time.latest());
      await time.increase(ONE_HOUR);
      await expect(escrow.connect(admin).recordPauseStart(pausedAt))
        .to.emit(escrow, "PauseStartRecorded")
        .withArgs(pausedAt);
    });

    it("reverts when the start is after the pause transaction", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).pause();
      const pausedAt = BigInt(await time.latest());
      await time.increase(ONE_HOUR);
      await expect(escrow.connect(admin).recordPauseStart(pausedAt + 1n)).to.be.revertedWithCustomError(
        escrow,
        "InvalidPauseStart",
      );
    });

    it("moves a start recorded too early forward again, up to the pause transaction", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      await time.increase(ONE_HOUR);
      await escrow.connect(admin).pause();
      const pausedAt = BigInt(await time.latest());
      await escrow.connect(admin).recordPauseStart(pausedAt - ONE_HOUR);
      await escrow.connect(admin).recordPauseStart(pausedAt - 60n);
      expect(await escrow.pauseStartedAt()).to.equal(pausedAt - 60n);
    });

    it("reverts a start more than MAX_PAUSE_BACKDATE before the pause transaction: recordPauseStart(1)", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      await time.increase(10n * 86_400n);
      await escrow.connect(admin).pause();
      const pausedAt = BigInt(await time.latest());
      const bound = await escrow.MAX_PAUSE_BACKDATE();
      expect(bound).to.equal(86_400n);
      await expect(escrow.connect(admin).recordPauseStart(1)).to.be.revertedWithCustomError(
        escrow,
        "InvalidPauseStart",
      );
      await expect(escrow.connect(admin).recordPauseStart(pausedAt - bound - 1n)).to.be.revertedWithCustomError(
        escrow,
        "InvalidPauseStart",
      );
      await expect(escrow.connect(admin).recordPauseStart(pausedAt - bound))
        .to.emit(escrow, "PauseStartRecorded")
        .withArgs(pausedAt - bound);
      expect(await escrow.pauseStartedAt()).to.equal(pausedAt - bound);
    });

    it("reverts when the start is before the end of the previous pause", async () => {
      const { escrow, admin, pauses } = await loadFixture(twoPausesFixture);
      await escrow.connect(admin).pause();
      await expect(escrow.connect(admin).recordPauseStart(pauses[1].end - 1n)).to.be.revertedWithCustomError(
        escrow,
        "InvalidPauseStart",
      );
    });

    it("accepts the end of the previous pause as start", async () => {
      const { escrow, admin, pauses } = await loadFixture(twoPausesFixture);
      await escrow.connect(admin).pause();
      await expect(escrow.connect(admin).recordPauseStart(pauses[1].end))
        .to.emit(escrow, "PauseStartRecorded")
        .withArgs(pauses[1].end);
    });

    it("emits PauseStartRecorded and moves the start of the running pause", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      const pausedAt = BigInt(await time.latest()) + 2n * ONE_HOUR;
      await pauseAt(escrow, admin, pausedAt);
      const incident = pausedAt - ONE_HOUR;
      await expect(escrow.connect(admin).recordPauseStart(incident))
        .to.emit(escrow, "PauseStartRecorded")
        .withArgs(incident);
      expect(await escrow.pauseStartedAt()).to.equal(incident);
    });

    it("counts the pause from the recorded start in totalPausedSeconds", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      const pausedAt = BigInt(await time.latest()) + 2n * ONE_HOUR;
      await pauseAt(escrow, admin, pausedAt);
      const incident = pausedAt - ONE_HOUR;
      await escrow.connect(admin).recordPauseStart(incident);
      await time.setNextBlockTimestamp(pausedAt + PAUSE_LENGTH);
      await escrow.connect(admin).unpause();
      expect(await escrow.totalPausedSeconds()).to.equal(pausedAt + PAUSE_LENGTH - incident);
    });

    it("extends the deadline from the recorded start", async () => {
      const { escrow, admin, taskId } = await loadFixture(assignedTaskFixture);
      const { createdAt, deadline } = await escrow.getTask(taskId);
      const pausedAt = createdAt + 2n * ONE_HOUR;
      await pauseAt(escrow, admin, pausedAt);
      const incident = createdAt + ONE_HOUR;
      await escrow.connect(admin).recordPauseStart(incident);
      const unpausedAt = pausedAt + PAUSE_LENGTH;
      await time.setNextBlockTimestamp(unpausedAt);
      await escrow.connect(admin).unpause();
      expect(await escrow.effectiveDeadline(taskId)).to.equal(deadline + unpausedAt - incident);
    });

    it("extends the deadline only from the task's creation when the recorded start precedes it", async () => {
      const { escrow, admin, taskId } = await loadFixture(assignedTaskFixture);
      const { createdAt, deadline } = await escrow.getTask(taskId);
      const pausedAt = createdAt + ONE_HOUR;
      await pauseAt(escrow, admin, pausedAt);
      await escrow.connect(admin).recordPauseStart(createdAt - ONE_HOUR);
      const unpausedAt = pausedAt + PAUSE_LENGTH;
      await time.setNextBlockTimestamp(unpausedAt);
      await escrow.connect(admin).unpause();
      expect(await escrow.effectiveDeadline(taskId)).to.equal(deadline + unpausedAt - createdAt);
    });

    it("gives the worker back the time between the recorded start and the deadline", async () => {
      const { escrow, admin, worker, taskId } = await loadFixture(assignedTaskFixture);
      const { deadline } = await escrow.getTask(taskId);
      // The incident began an hour before the deadline; the pause only landed an hour after it.
      const incident = deadline - ONE_HOUR;
      const pausedAt = deadline + ONE_HOUR;
      await pauseAt(escrow, admin, pausedAt);
      await escrow.connect(admin).recordPauseStart(incident);
      const unpausedAt = pausedAt + PAUSE_LENGTH;
      await time.setNextBlockTimestamp(unpausedAt);
      await escrow.connect(admin).unpause();
      await time.setNextBlockTimestamp(unpausedAt + ONE_HOUR - 1n);
      await expect(escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH))
        .to.emit(escrow, "EvidenceSubmitted")
        .withArgs(taskId, worker.address, EVIDENCE_HASH, 1);
    });
  });
});
