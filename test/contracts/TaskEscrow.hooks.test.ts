import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import {
  CATEGORY,
  DAY,
  EVIDENCE_HASH,
  FEE_BPS,
  OPEN_SALT,
  STATUS,
  TASK_HASH,
  USDC,
  ZONE,
  commitOpen,
  deployEscrowFixture,
  openPhaseStarts,
} from "../helpers/fixtures";
import {
  hookedAssignedFixture,
  hookedDisputedFixture,
  hookedEscalatedFixture,
  hookedEscrowFixture,
  hookedFailedVerdictFixture,
  hookedFundedFixture,
  hookedSubmittedFixture,
  hostileHookFixture,
} from "../helpers/hooks";

describe("WorkerReputation", () => {
  describe("#recordCompleted", () => {
    it("reverts when the caller is not the escrow", async () => {
      const { reputation, stranger, worker, usdc } = await loadFixture(hookedEscrowFixture);
      await expect(
        reputation.connect(stranger).recordCompleted(worker.address, 1n, await usdc.getAddress(), USDC(100)),
      ).to.be.revertedWithCustomError(reputation, "NotEscrow");
    });
  });

  describe("#recordFailed", () => {
    it("reverts when the caller is not the escrow", async () => {
      const { reputation, stranger, worker, usdc } = await loadFixture(hookedEscrowFixture);
      await expect(
        reputation.connect(stranger).recordFailed(worker.address, 1n, await usdc.getAddress(), USDC(100)),
      ).to.be.revertedWithCustomError(reputation, "NotEscrow");
    });
  });

  describe("#escrow", () => {
    it("is the escrow it was deployed for", async () => {
      const { reputation, escrow } = await loadFixture(hookedEscrowFixture);
      expect(await reputation.escrow()).to.equal(await escrow.getAddress());
    });
  });
});

describe("TaskEscrow", () => {
  describe("#setReputationContract", () => {
    it("reverts when the address has no code", async () => {
      const { escrow, admin, stranger } = await loadFixture(deployEscrowFixture);
      await expect(escrow.connect(admin).setReputationContract(stranger.address))
        .to.be.revertedWithCustomError(escrow, "NotAContract")
        .withArgs(stranger.address);
    });
  });

  describe("#setTaskRegistry", () => {
    it("reverts when the address has no code", async () => {
      const { escrow, admin, stranger } = await loadFixture(deployEscrowFixture);
      await expect(escrow.connect(admin).setTaskRegistry(stranger.address))
        .to.be.revertedWithCustomError(escrow, "NotAContract")
        .withArgs(stranger.address);
    });
  });

  describe("reputation reports", () => {
    describe("#completeVerification", () => {
      it("records completed work when the work passes", async () => {
        const { usdc, escrow, reputation, verifier, worker, taskId, amount } =
          await loadFixture(hookedSubmittedFixture);
        await expect(escrow.connect(verifier).completeVerification(taskId, true))
          .to.emit(reputation, "OutcomeRecorded")
          .withArgs(worker.address, taskId, true, amount);
        expect(await reputation.reputationOf(worker.address)).to.deep.equal([1n, 0n]);
        expect(await reputation.rewardVolume(worker.address, await usdc.getAddress())).to.equal(amount);
      });

      it("records nothing when the work fails, since the task is not settled", async () => {
        const { escrow, reputation, verifier, taskId } = await loadFixture(hookedSubmittedFixture);
        await expect(escrow.connect(verifier).completeVerification(taskId, false)).not.to.emit(
          reputation,
          "OutcomeRecorded",
        );
      });
    });

    describe("#completeVerificationWithTEE", () => {
      it("records completed work when the signed verdict passes", async () => {
        const { escrow, reputation, admin, verifier, worker, taskId, amount } =
          await loadFixture(hookedSubmittedFixture);
        const teeWallet = new ethers.Wallet(ethers.id("test TEE signer"));
        await escrow.connect(admin).setTeeSigner(teeWallet.address);
        const payload = await escrow.teeVerdictPayload(taskId, true);
        const signature = await teeWallet.signMessage(ethers.getBytes(payload));
        await expect(escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, signature))
          .to.emit(reputation, "OutcomeRecorded")
          .withArgs(worker.address, taskId, true, amount);
      });
    });

    describe("#resolveDispute", () => {
      it("records completed work on a ruling for the worker", async () => {
        const { usdc, escrow, reputation, admin, worker, taskId, amount } = await loadFixture(hookedDisputedFixture);
        await expect(escrow.connect(admin).resolveDispute(taskId, true))
          .to.emit(reputation, "OutcomeRecorded")
          .withArgs(worker.address, taskId, true, amount);
        expect(await reputation.reputationOf(worker.address)).to.deep.equal([1n, 0n]);
        expect(await reputation.rewardVolume(worker.address, await usdc.getAddress())).to.equal(amount);
      });

      it("records failed work on a ruling for the poster", async () => {
        const { usdc, escrow, reputation, admin, worker, taskId, amount } = await loadFixture(hookedDisputedFixture);
        await expect(escrow.connect(admin).resolveDispute(taskId, false))
          .to.emit(reputation, "OutcomeRecorded")
          .withArgs(worker.address, taskId, false, amount);
        expect(await reputation.reputationOf(worker.address)).to.deep.equal([0n, 1n]);
        expect(await reputation.rewardVolume(worker.address, await usdc.getAddress())).to.equal(0n);
      });
    });

    describe("#releaseUnjudgedWork", () => {
      it("records completed work when escalated work is released", async () => {
        const { escrow, reputation, worker, taskId, amount } = await loadFixture(hookedEscalatedFixture);
        await time.increase(await escrow.DISPUTE_WINDOW());
        await expect(escrow.connect(worker).releaseUnjudgedWork(taskId))
          .to.emit(reputation, "OutcomeRecorded")
          .withArgs(worker.address, taskId, true, amount);
      });
    });

    describe("#claimTimeout", () => {
      it("records nothing when an assigned task times out undelivered (no free poisoning)", async () => {
        const { escrow, reputation, poster, worker, taskId } = await loadFixture(hookedAssignedFixture);
        await time.increaseTo(await escrow.effectiveDeadline(taskId));
        await expect(escrow.connect(poster).claimTimeout(taskId)).not.to.emit(reputation, "OutcomeRecorded");
        expect(await reputation.reputationOf(worker.address)).to.deep.equal([0n, 0n]);
      });

      it("cannot be used to poison a victim: three assignWorker + claimTimeout rounds rate nothing", async () => {
        const { escrow, reputation, usdc, poster, stranger } = await loadFixture(hookedFundedFixture);
        const before = await usdc.balanceOf(poster.address);
        for (let round = 0; round < 3; round++) {
          const hash = ethers.keccak256(ethers.toUtf8Bytes(`poison ${round}`));
          await escrow.connect(poster).createTask(hash, await usdc.getAddress(), USDC(100), "general", "global", 3600);
          const id = (await escrow.nextTaskId()) - 1n;
          await escrow.connect(poster).assignWorker(id, stranger.address);
          await time.increaseTo(await escrow.effectiveDeadline(id));
          await escrow.connect(poster).claimTimeout(id);
        }
        expect(await reputation.reputationOf(stranger.address)).to.deep.equal([0n, 0n]);
        expect(await usdc.balanceOf(poster.address)).to.equal(before);
      });

      it("records failed work when a failed verdict is left standing past the appeal window", async () => {
        const { escrow, reputation, poster, worker, taskId, amount } = await loadFixture(hookedFailedVerdictFixture);
        await time.increaseTo((await escrow.failedVerdictAt(taskId)) + (await escrow.APPEAL_WINDOW()));
        await expect(escrow.connect(poster).claimTimeout(taskId))
          .to.emit(reputation, "OutcomeRecorded")
          .withArgs(worker.address, taskId, false, amount);
      });

      it("records nothing when a dispute lapses without a ruling (neither side was judged)", async () => {
        const { escrow, reputation, poster, worker, taskId } = await loadFixture(hookedDisputedFixture);
        await time.increase(await escrow.DISPUTE_WINDOW());
        await expect(escrow.connect(poster).claimTimeout(taskId)).not.to.emit(reputation, "OutcomeRecorded");
        expect(await reputation.reputationOf(worker.address)).to.deep.equal([0n, 0n]);
      });

      it("records nothing when it escalates submitted work", async () => {
        const { escrow, reputation, poster, taskId } = await loadFixture(hookedSubmittedFixture);
        await time.increaseTo(await escrow.effectiveDeadline(taskId));
        await expect(escrow.connect(poster).claimTimeout(taskId)).not.to.emit(reputation, "OutcomeRecorded");
      });
    });

    describe("#cancelTask", () => {
      it("records nothing for a task nobody took", async () => {
        const { escrow, reputation, poster, taskId } = await loadFixture(hookedFundedFixture);
        await expect(escrow.connect(poster).cancelTask(taskId)).not.to.emit(reputation, "OutcomeRecorded");
      });
    });

    describe("#selectWinner", () => {
      it("records completed work for the winner of an open task", async () => {
        const { escrow, reputation, poster, worker, usdc } = await loadFixture(hookedEscrowFixture);
        const amount = USDC(100);
        await escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), amount, CATEGORY, ZONE, DAY);
        await commitOpen(escrow, worker, 1n, EVIDENCE_HASH);
        await time.increaseTo(await escrow.effectiveDeadline(1n));
        await escrow.connect(worker).revealOpen(1n, EVIDENCE_HASH, OPEN_SALT);
        await time.increaseTo((await openPhaseStarts(escrow, 1n)).selection);
        await expect(escrow.connect(poster).selectWinner(1n, worker.address))
          .to.emit(reputation, "OutcomeRecorded")
          .withArgs(worker.address, 1n, true, amount);
      });
    });

    describe("#reclaimOpen", () => {
      it("records nothing for an open task, which has no worker", async () => {
        const { escrow, reputation, poster, worker, usdc } = await loadFixture(hookedEscrowFixture);
        await escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), USDC(100), CATEGORY, ZONE, DAY);
        await commitOpen(escrow, worker, 1n, EVIDENCE_HASH);
        await time.increaseTo((await openPhaseStarts(escrow, 1n)).selection);
        await expect(escrow.connect(poster).reclaimOpen(1n)).not.to.emit(reputation, "OutcomeRecorded");
      });
    });

    describe("#setMinRatedAmount", () => {
      it("keeps a task under the token's minimum from being rated", async () => {
        const { escrow, reputation, admin, verifier, worker, usdc, taskId, amount } =
          await loadFixture(hookedSubmittedFixture);
        await escrow.connect(admin).setMinRatedAmount(await usdc.getAddress(), amount + 1n);
        await expect(escrow.connect(verifier).completeVerification(taskId, true)).not.to.emit(
          reputation,
          "OutcomeRecorded",
        );
        expect(await reputation.reputationOf(worker.address)).to.deep.equal([0n, 0n]);
        expect(await reputation.rewardVolume(worker.address, await usdc.getAddress())).to.equal(0n);
      });

      it("keeps a refunded task under the minimum from being rated", async () => {
        const { escrow, reputation, admin, poster, usdc, taskId, amount } = await loadFixture(hookedAssignedFixture);
        await escrow.connect(admin).setMinRatedAmount(await usdc.getAddress(), amount + 1n);
        await time.increaseTo(await escrow.effectiveDeadline(taskId));
        await expect(escrow.connect(poster).claimTimeout(taskId)).not.to.emit(reputation, "OutcomeRecorded");
      });

      it("rates a task whose reward equals the minimum", async () => {
        const { escrow, reputation, admin, verifier, worker, usdc, taskId, amount } =
          await loadFixture(hookedSubmittedFixture);
        await escrow.connect(admin).setMinRatedAmount(await usdc.getAddress(), amount);
        await expect(escrow.connect(verifier).completeVerification(taskId, true))
          .to.emit(reputation, "OutcomeRecorded")
          .withArgs(worker.address, taskId, true, amount);
      });

      it("applies another token's minimum to that token only", async () => {
        const { escrow, reputation, admin, verifier, worker, taskId, amount } =
          await loadFixture(hookedSubmittedFixture);
        await escrow.connect(admin).setMinRatedAmount(ethers.ZeroAddress, amount + 1n);
        await expect(escrow.connect(verifier).completeVerification(taskId, true))
          .to.emit(reputation, "OutcomeRecorded")
          .withArgs(worker.address, taskId, true, amount);
      });

      it("still settles and reports to the registry a task under the minimum", async () => {
        const { escrow, registry, admin, verifier, worker, usdc, taskId, amount } =
          await loadFixture(hookedSubmittedFixture);
        await escrow.connect(admin).setMinRatedAmount(await usdc.getAddress(), amount + 1n);
        await expect(escrow.connect(verifier).completeVerification(taskId, true))
          .to.emit(registry, "TaskSettledReported")
          .withArgs(await escrow.getAddress(), taskId, STATUS.Completed, worker.address);
      });
    });

    it("adds up the outcomes of several tasks of one worker", async () => {
      const { escrow, reputation, poster, verifier, worker, usdc, taskId, amount } =
        await loadFixture(hookedSubmittedFixture);
      await escrow.connect(verifier).completeVerification(taskId, true);
      const secondAmount = USDC(40);
      await escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), secondAmount, CATEGORY, ZONE, DAY);
      await escrow.connect(verifier).marketplaceAssign(taskId + 1n, worker.address);
      await escrow.connect(worker).submitEvidence(taskId + 1n, EVIDENCE_HASH);
      await escrow.connect(verifier).completeVerification(taskId + 1n, true);
      expect(await reputation.reputationOf(worker.address)).to.deep.equal([2n, 0n]);
      expect(await reputation.rewardVolume(worker.address, await usdc.getAddress())).to.equal(amount + secondAmount);
    });
  });

  describe("task registry reports", () => {
    describe("#createTask", () => {
      it("reports the creation with the poster and the task hash", async () => {
        const { escrow, registry, poster, usdc } = await loadFixture(hookedEscrowFixture);
        await expect(
          escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), USDC(100), CATEGORY, ZONE, DAY),
        )
          .to.emit(registry, "TaskCreatedReported")
          .withArgs(await escrow.getAddress(), 1n, poster.address, TASK_HASH);
      });
    });

    describe("#createTaskWithVerifier", () => {
      it("reports the creation with the poster and the task hash", async () => {
        const { escrow, registry, poster, verifierAgent, usdc } = await loadFixture(hookedEscrowFixture);
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
        )
          .to.emit(registry, "TaskCreatedReported")
          .withArgs(await escrow.getAddress(), 1n, poster.address, TASK_HASH);
      });
    });

    describe("#createTasks", () => {
      it("reports every task of a batch", async () => {
        const { escrow, registry, poster, usdc } = await loadFixture(hookedEscrowFixture);
        const secondHash = ethers.sha256(ethers.toUtf8Bytes("brief: a second task"));
        const task = {
          taskHash: TASK_HASH,
          amount: USDC(100),
          category: CATEGORY,
          locationZone: ZONE,
          duration: DAY,
          verifierAgent: ethers.ZeroAddress,
        };
        const tx = escrow
          .connect(poster)
          .createTasks(await usdc.getAddress(), [task, { ...task, taskHash: secondHash }]);
        const escrowAddress = await escrow.getAddress();
        await expect(tx)
          .to.emit(registry, "TaskCreatedReported")
          .withArgs(escrowAddress, 1n, poster.address, TASK_HASH);
        await expect(tx)
          .to.emit(registry, "TaskCreatedReported")
          .withArgs(escrowAddress, 2n, poster.address, secondHash);
      });
    });

    describe("#createTaskOpen", () => {
      it("reports the creation with the poster and the task hash", async () => {
        const { escrow, registry, poster, usdc } = await loadFixture(hookedEscrowFixture);
        await expect(
          escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), USDC(100), CATEGORY, ZONE, DAY),
        )
          .to.emit(registry, "TaskCreatedReported")
          .withArgs(await escrow.getAddress(), 1n, poster.address, TASK_HASH);
      });
    });

    describe("#completeVerification", () => {
      it("reports the settlement as Completed with the worker", async () => {
        const { escrow, registry, verifier, worker, taskId } = await loadFixture(hookedSubmittedFixture);
        await expect(escrow.connect(verifier).completeVerification(taskId, true))
          .to.emit(registry, "TaskSettledReported")
          .withArgs(await escrow.getAddress(), taskId, STATUS.Completed, worker.address);
        const settlement = await registry.settlementOf(taskId);
        expect(settlement.status).to.equal(STATUS.Completed);
        expect(settlement.worker).to.equal(worker.address);
      });

      it("reports nothing on a failed verdict", async () => {
        const { escrow, registry, verifier, taskId } = await loadFixture(hookedSubmittedFixture);
        await expect(escrow.connect(verifier).completeVerification(taskId, false)).not.to.emit(
          registry,
          "TaskSettledReported",
        );
      });
    });

    describe("#claimTimeout", () => {
      it("reports the refund as Cancelled with the worker", async () => {
        const { escrow, registry, poster, worker, taskId } = await loadFixture(hookedAssignedFixture);
        await time.increaseTo(await escrow.effectiveDeadline(taskId));
        await expect(escrow.connect(poster).claimTimeout(taskId))
          .to.emit(registry, "TaskSettledReported")
          .withArgs(await escrow.getAddress(), taskId, STATUS.Cancelled, worker.address);
      });

      it("reports nothing when it escalates submitted work", async () => {
        const { escrow, registry, poster, taskId } = await loadFixture(hookedSubmittedFixture);
        await time.increaseTo(await escrow.effectiveDeadline(taskId));
        await expect(escrow.connect(poster).claimTimeout(taskId)).not.to.emit(registry, "TaskSettledReported");
      });
    });

    describe("#resolveDispute", () => {
      it("reports a ruling for the worker as Completed", async () => {
        const { escrow, registry, admin, worker, taskId } = await loadFixture(hookedDisputedFixture);
        await expect(escrow.connect(admin).resolveDispute(taskId, true))
          .to.emit(registry, "TaskSettledReported")
          .withArgs(await escrow.getAddress(), taskId, STATUS.Completed, worker.address);
      });

      it("reports a ruling for the poster as Cancelled", async () => {
        const { escrow, registry, admin, worker, taskId } = await loadFixture(hookedDisputedFixture);
        await expect(escrow.connect(admin).resolveDispute(taskId, false))
          .to.emit(registry, "TaskSettledReported")
          .withArgs(await escrow.getAddress(), taskId, STATUS.Cancelled, worker.address);
      });
    });

    describe("#releaseUnjudgedWork", () => {
      it("reports the release as Completed", async () => {
        const { escrow, registry, worker, taskId } = await loadFixture(hookedEscalatedFixture);
        await time.increase(await escrow.DISPUTE_WINDOW());
        await expect(escrow.connect(worker).releaseUnjudgedWork(taskId))
          .to.emit(registry, "TaskSettledReported")
          .withArgs(await escrow.getAddress(), taskId, STATUS.Completed, worker.address);
      });
    });

    describe("#cancelTask", () => {
      it("reports the cancellation as Cancelled with no worker", async () => {
        const { escrow, registry, poster, taskId } = await loadFixture(hookedFundedFixture);
        await expect(escrow.connect(poster).cancelTask(taskId))
          .to.emit(registry, "TaskSettledReported")
          .withArgs(await escrow.getAddress(), taskId, STATUS.Cancelled, ethers.ZeroAddress);
      });
    });

    describe("#selectWinner", () => {
      it("reports the payout as Completed with the winner", async () => {
        const { escrow, registry, poster, worker, usdc } = await loadFixture(hookedEscrowFixture);
        await escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), USDC(100), CATEGORY, ZONE, DAY);
        await commitOpen(escrow, worker, 1n, EVIDENCE_HASH);
        await time.increaseTo(await escrow.effectiveDeadline(1n));
        await escrow.connect(worker).revealOpen(1n, EVIDENCE_HASH, OPEN_SALT);
        await time.increaseTo((await openPhaseStarts(escrow, 1n)).selection);
        await expect(escrow.connect(poster).selectWinner(1n, worker.address))
          .to.emit(registry, "TaskSettledReported")
          .withArgs(await escrow.getAddress(), 1n, STATUS.Completed, worker.address);
      });
    });

    describe("#reclaimOpen", () => {
      it("reports the reclaim as Cancelled with no worker", async () => {
        const { escrow, registry, poster, usdc } = await loadFixture(hookedEscrowFixture);
        await escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), USDC(100), CATEGORY, ZONE, DAY);
        await time.increaseTo(await escrow.effectiveDeadline(1n));
        await expect(escrow.connect(poster).reclaimOpen(1n))
          .to.emit(registry, "TaskSettledReported")
          .withArgs(await escrow.getAddress(), 1n, STATUS.Cancelled, ethers.ZeroAddress);
      });
    });
  });

  describe("failing hooks", () => {
    describe("a reverting task registry", () => {
      it("emits HookFailed and still creates and funds the task", async () => {
        const { escrow, admin, poster, usdc, revertingHook } = await loadFixture(hostileHookFixture);
        const hook = await revertingHook.getAddress();
        await escrow.connect(admin).setTaskRegistry(hook);
        const amount = USDC(100);
        const nextId = await escrow.nextTaskId();
        const tx = escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), amount, CATEGORY, ZONE, DAY);
        await expect(tx).to.emit(escrow, "HookFailed").withArgs(hook, nextId);
        await expect(tx).to.changeTokenBalances(usdc, [poster, escrow], [-amount, amount]);
        expect((await escrow.getTask(nextId)).status).to.equal(STATUS.Funded);
      });

      it("emits HookFailed and still pays out", async () => {
        const { escrow, admin, verifier, worker, treasury, usdc, revertingHook, taskId, amount } =
          await loadFixture(hostileHookFixture);
        const hook = await revertingHook.getAddress();
        await escrow.connect(admin).setTaskRegistry(hook);
        const fee = (amount * BigInt(FEE_BPS)) / (await escrow.BPS_DENOMINATOR());
        const tx = escrow.connect(verifier).completeVerification(taskId, true);
        await expect(tx).to.emit(escrow, "HookFailed").withArgs(hook, taskId);
        await expect(tx).to.changeTokenBalances(usdc, [worker, treasury], [amount - fee, fee]);
      });
    });

    describe("a gas-burning task registry", () => {
      it("emits HookFailed and still creates and funds the task", async () => {
        const { escrow, admin, poster, usdc, gasBurningHook } = await loadFixture(hostileHookFixture);
        const hook = await gasBurningHook.getAddress();
        await escrow.connect(admin).setTaskRegistry(hook);
        const amount = USDC(100);
        const nextId = await escrow.nextTaskId();
        const tx = escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), amount, CATEGORY, ZONE, DAY);
        await expect(tx).to.emit(escrow, "HookFailed").withArgs(hook, nextId);
        await expect(tx).to.changeTokenBalances(usdc, [poster, escrow], [-amount, amount]);
      });

      it("emits HookFailed and still refunds", async () => {
        const { escrow, admin, poster, usdc, gasBurningHook, taskId, amount } = await loadFixture(hostileHookFixture);
        const hook = await gasBurningHook.getAddress();
        await escrow.connect(admin).setTaskRegistry(hook);
        await escrow.connect(poster).raiseDispute(taskId);
        const tx = escrow.connect(admin).resolveDispute(taskId, false);
        await expect(tx).to.emit(escrow, "HookFailed").withArgs(hook, taskId);
        await expect(tx).to.changeTokenBalances(usdc, [poster], [amount]);
      });
    });

    describe("a reverting reputation contract", () => {
      it("emits HookFailed and still pays out", async () => {
        const { escrow, admin, verifier, worker, treasury, usdc, revertingHook, taskId, amount } =
          await loadFixture(hostileHookFixture);
        const hook = await revertingHook.getAddress();
        await escrow.connect(admin).setReputationContract(hook);
        const fee = (amount * BigInt(FEE_BPS)) / (await escrow.BPS_DENOMINATOR());
        const tx = escrow.connect(verifier).completeVerification(taskId, true);
        await expect(tx).to.emit(escrow, "HookFailed").withArgs(hook, taskId);
        await expect(tx)
          .to.emit(escrow, "TaskCompleted")
          .withArgs(taskId, amount - fee, fee);
        await expect(tx).to.changeTokenBalances(usdc, [worker, treasury], [amount - fee, fee]);
      });

      it("emits HookFailed and still refunds", async () => {
        const { escrow, admin, poster, usdc, revertingHook, taskId, amount } = await loadFixture(hostileHookFixture);
        const hook = await revertingHook.getAddress();
        await escrow.connect(admin).setReputationContract(hook);
        await escrow.connect(poster).raiseDispute(taskId);
        const tx = escrow.connect(admin).resolveDispute(taskId, false);
        await expect(tx).to.emit(escrow, "HookFailed").withArgs(hook, taskId);
        await expect(tx).to.emit(escrow, "TaskCancelled").withArgs(taskId, amount);
        await expect(tx).to.changeTokenBalances(usdc, [poster], [amount]);
      });
    });

    describe("a gas-burning reputation contract", () => {
      it("emits HookFailed and still pays out", async () => {
        const { escrow, admin, verifier, worker, treasury, usdc, gasBurningHook, taskId, amount } =
          await loadFixture(hostileHookFixture);
        const hook = await gasBurningHook.getAddress();
        await escrow.connect(admin).setReputationContract(hook);
        const fee = (amount * BigInt(FEE_BPS)) / (await escrow.BPS_DENOMINATOR());
        const tx = escrow.connect(verifier).completeVerification(taskId, true);
        await expect(tx).to.emit(escrow, "HookFailed").withArgs(hook, taskId);
        await expect(tx).to.changeTokenBalances(usdc, [worker, treasury], [amount - fee, fee]);
        expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Completed);
      });

      it("gives the hook no more than HOOK_GAS_LIMIT", async () => {
        const { escrow, admin, verifier, gasBurningHook, taskId } = await loadFixture(hostileHookFixture);
        await escrow.connect(admin).setReputationContract(await gasBurningHook.getAddress());
        const gasLimit = await escrow.HOOK_GAS_LIMIT();
        const receipt = await (await escrow.connect(verifier).completeVerification(taskId, true)).wait();
        // Uncapped, the hook would burn 63/64 of the transaction's gas limit (the block gas limit here). Capped, the
        // whole settlement costs the cap plus the settlement's own gas, well under twice the cap.
        expect(receipt!.gasUsed).to.be.lessThan(2n * gasLimit);
        expect(receipt!.gasUsed).to.be.greaterThan(gasLimit);
      });
    });

    describe("both hooks failing", () => {
      it("emits HookFailed for each and still pays out", async () => {
        const { escrow, admin, verifier, worker, usdc, revertingHook, gasBurningHook, taskId, amount } =
          await loadFixture(hostileHookFixture);
        const registry = await revertingHook.getAddress();
        const reputation = await gasBurningHook.getAddress();
        await escrow.connect(admin).setTaskRegistry(registry);
        await escrow.connect(admin).setReputationContract(reputation);
        const fee = (amount * BigInt(FEE_BPS)) / (await escrow.BPS_DENOMINATOR());
        const tx = escrow.connect(verifier).completeVerification(taskId, true);
        await expect(tx).to.emit(escrow, "HookFailed").withArgs(registry, taskId);
        await expect(tx).to.emit(escrow, "HookFailed").withArgs(reputation, taskId);
        await expect(tx).to.changeTokenBalances(usdc, [worker], [amount - fee]);
      });
    });
  });
});
