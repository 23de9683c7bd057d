import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import type { Wallet } from "ethers";
import type { TaskEscrow } from "../../typechain-types";
import {
  CATEGORY,
  DAY,
  EVIDENCE_HASH,
  FEE_BPS,
  STATUS,
  TASK_HASH,
  USDC,
  ZONE,
  agentVerifiedTaskFixture,
  assignedTaskFixture,
  submittedTaskFixture,
} from "../helpers/fixtures";
import { escrowEventNames } from "../helpers/events";

/** The domain tag the payload starts with, computed here rather than read from the contract. */
const TEE_VERDICT_TAG = "TaskEscrow.TEEVerdict.v1";
/** Length in bytes of an ECDSA signature r || s || v. */
const SIGNATURE_LENGTH = 65;

interface VerdictFields {
  chainId: bigint;
  escrow: string;
  taskId: bigint;
  submissionAttempts: bigint | number;
  evidenceHash: string;
  passed: boolean;
}

/** The TEE verdict payload as the design defines it, encoded independently of the contract. */
function encodeVerdict(fields: VerdictFields): string {
  return ethers.AbiCoder.defaultAbiCoder().encode(
    ["bytes32", "uint256", "address", "uint256", "uint8", "bytes32", "bool"],
    [
      ethers.id(TEE_VERDICT_TAG),
      fields.chainId,
      fields.escrow,
      fields.taskId,
      fields.submissionAttempts,
      fields.evidenceHash,
      fields.passed,
    ],
  );
}

/** The payload of `passed` on the current round of `taskId`, computed from the task record. */
async function verdictFor(escrow: TaskEscrow, taskId: bigint, passed: boolean): Promise<VerdictFields> {
  const task = await escrow.getTask(taskId);
  return {
    chainId: (await ethers.provider.getNetwork()).chainId,
    escrow: await escrow.getAddress(),
    taskId,
    submissionAttempts: task.submissionAttempts,
    evidenceHash: task.evidenceHash,
    passed,
  };
}

/** EIP-191 personal-sign signature of the payload bytes. */
function sign(wallet: Wallet, payload: string): Promise<string> {
  return wallet.signMessage(ethers.getBytes(payload));
}

/** Task 1 Submitted once, with a TEE signer configured. */
async function teeSubmittedFixture() {
  const base = await submittedTaskFixture();
  const teeWallet = new ethers.Wallet(ethers.id("test TEE signer"));
  await base.escrow.connect(base.admin).setTeeSigner(teeWallet.address);
  return { ...base, teeWallet };
}

/** Task 1 (with its own verifier agent) Submitted once, with a TEE signer configured. */
async function teeAgentSubmittedFixture() {
  const base = await agentVerifiedTaskFixture();
  await base.escrow.connect(base.worker).submitEvidence(base.taskId, EVIDENCE_HASH);
  const teeWallet = new ethers.Wallet(ethers.id("test TEE signer"));
  await base.escrow.connect(base.admin).setTeeSigner(teeWallet.address);
  return { ...base, teeWallet };
}

describe("TaskEscrow", () => {
  describe("#teeVerdictPayload", () => {
    it("tags the payload with keccak256 of the verdict domain", async () => {
      const { escrow } = await loadFixture(submittedTaskFixture);
      expect(await escrow.TEE_VERDICT_TYPEHASH()).to.equal(ethers.id(TEE_VERDICT_TAG));
    });

    it("equals the independent encoding of a passing verdict", async () => {
      const { escrow, taskId } = await loadFixture(submittedTaskFixture);
      const expected = encodeVerdict({
        chainId: (await ethers.provider.getNetwork()).chainId,
        escrow: await escrow.getAddress(),
        taskId,
        submissionAttempts: 1,
        evidenceHash: EVIDENCE_HASH,
        passed: true,
      });
      expect(await escrow.teeVerdictPayload(taskId, true)).to.equal(expected);
    });

    it("equals the independent encoding of a failing verdict", async () => {
      const { escrow, taskId } = await loadFixture(submittedTaskFixture);
      const expected = encodeVerdict({
        chainId: (await ethers.provider.getNetwork()).chainId,
        escrow: await escrow.getAddress(),
        taskId,
        submissionAttempts: 1,
        evidenceHash: EVIDENCE_HASH,
        passed: false,
      });
      expect(await escrow.teeVerdictPayload(taskId, false)).to.equal(expected);
    });

    it("binds the submission count of the current round", async () => {
      const { escrow, verifier, worker, taskId } = await loadFixture(submittedTaskFixture);
      await escrow.connect(verifier).completeVerification(taskId, false);
      await escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH);
      const expected = encodeVerdict({
        chainId: (await ethers.provider.getNetwork()).chainId,
        escrow: await escrow.getAddress(),
        taskId,
        submissionAttempts: 2,
        evidenceHash: EVIDENCE_HASH,
        passed: true,
      });
      expect(await escrow.teeVerdictPayload(taskId, true)).to.equal(expected);
    });
  });

  describe("#completeVerificationWithTEE", () => {
    it("reverts when no TEE signer is set", async () => {
      const { escrow, verifier, taskId } = await loadFixture(submittedTaskFixture);
      const teeWallet = new ethers.Wallet(ethers.id("test TEE signer"));
      const payload = await escrow.teeVerdictPayload(taskId, true);
      const signature = await sign(teeWallet, payload);
      await expect(
        escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, signature),
      ).to.be.revertedWithCustomError(escrow, "TEESignerNotSet");
    });

    it("reverts when the TEE signer was unset again", async () => {
      const { escrow, admin, verifier, teeWallet, taskId } = await loadFixture(teeSubmittedFixture);
      await escrow.connect(admin).setTeeSigner(ethers.ZeroAddress);
      const payload = await escrow.teeVerdictPayload(taskId, true);
      const signature = await sign(teeWallet, payload);
      await expect(
        escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, signature),
      ).to.be.revertedWithCustomError(escrow, "TEESignerNotSet");
    });

    describe("when the verdict passes", () => {
      it("pays the worker the reward less the fee and the treasury the fee", async () => {
        const { escrow, verifier, worker, treasury, usdc, teeWallet, taskId, amount } =
          await loadFixture(teeSubmittedFixture);
        const payload = encodeVerdict(await verdictFor(escrow, taskId, true));
        const signature = await sign(teeWallet, payload);
        const fee = (amount * BigInt(FEE_BPS)) / (await escrow.BPS_DENOMINATOR());
        await expect(
          escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, signature),
        ).to.changeTokenBalances(usdc, [worker, treasury, escrow], [amount - fee, fee, -amount]);
      });

      it("emits VerificationCompleted, TaskCompleted and TEESettled with their arguments", async () => {
        const { escrow, verifier, teeWallet, taskId, amount } = await loadFixture(teeSubmittedFixture);
        const payload = encodeVerdict(await verdictFor(escrow, taskId, true));
        const signature = await sign(teeWallet, payload);
        const fee = (amount * BigInt(FEE_BPS)) / (await escrow.BPS_DENOMINATOR());
        const tx = escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, signature);
        await expect(tx).to.emit(escrow, "VerificationCompleted").withArgs(taskId, true);
        await expect(tx)
          .to.emit(escrow, "TaskCompleted")
          .withArgs(taskId, amount - fee, fee);
        await expect(tx).to.emit(escrow, "TEESettled").withArgs(taskId, true, teeWallet.address);
      });

      it("emits TEESettled last", async () => {
        const { escrow, verifier, teeWallet, taskId } = await loadFixture(teeSubmittedFixture);
        const payload = encodeVerdict(await verdictFor(escrow, taskId, true));
        const signature = await sign(teeWallet, payload);
        const tx = await escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, signature);
        expect(await escrowEventNames(escrow, tx)).to.deep.equal([
          "VerificationCompleted",
          "TaskCompleted",
          "TEESettled",
        ]);
      });

      it("marks the task Completed", async () => {
        const { escrow, verifier, teeWallet, taskId } = await loadFixture(teeSubmittedFixture);
        const payload = encodeVerdict(await verdictFor(escrow, taskId, true));
        await escrow
          .connect(verifier)
          .completeVerificationWithTEE(taskId, true, payload, await sign(teeWallet, payload));
        expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Completed);
      });

      it("accepts the verdict from the task's own verifier agent", async () => {
        const { escrow, verifierAgent, teeWallet, taskId } = await loadFixture(teeAgentSubmittedFixture);
        const payload = encodeVerdict(await verdictFor(escrow, taskId, true));
        await expect(
          escrow
            .connect(verifierAgent)
            .completeVerificationWithTEE(taskId, true, payload, await sign(teeWallet, payload)),
        )
          .to.emit(escrow, "TEESettled")
          .withArgs(taskId, true, teeWallet.address);
      });
    });

    describe("when the verdict fails", () => {
      it("marks the task Verified and records the failed verdict time", async () => {
        const { escrow, verifier, teeWallet, taskId } = await loadFixture(teeSubmittedFixture);
        const payload = encodeVerdict(await verdictFor(escrow, taskId, false));
        const tx = await escrow
          .connect(verifier)
          .completeVerificationWithTEE(taskId, false, payload, await sign(teeWallet, payload));
        const block = await ethers.provider.getBlock((await tx.wait())!.blockNumber);
        expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Verified);
        expect(await escrow.failedVerdictAt(taskId)).to.equal(block!.timestamp);
      });

      it("emits VerificationCompleted and TEESettled with passed false, and moves no funds", async () => {
        const { escrow, verifier, worker, treasury, usdc, teeWallet, taskId } = await loadFixture(teeSubmittedFixture);
        const payload = encodeVerdict(await verdictFor(escrow, taskId, false));
        const tx = await escrow
          .connect(verifier)
          .completeVerificationWithTEE(taskId, false, payload, await sign(teeWallet, payload));
        await expect(tx).to.emit(escrow, "VerificationCompleted").withArgs(taskId, false);
        await expect(tx).to.emit(escrow, "TEESettled").withArgs(taskId, false, teeWallet.address);
        await expect(tx).not.to.emit(escrow, "TaskCompleted");
        await expect(tx).to.changeTokenBalances(usdc, [worker, treasury, escrow], [0, 0, 0]);
      });
    });

    describe("when the signature or the payload is not the signer's verdict on this round", () => {
      it("reverts when another key signed the payload", async () => {
        const { escrow, verifier, taskId } = await loadFixture(teeSubmittedFixture);
        const impostor = new ethers.Wallet(ethers.id("not the TEE signer"));
        const payload = await escrow.teeVerdictPayload(taskId, true);
        await expect(
          escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, await sign(impostor, payload)),
        ).to.be.revertedWithCustomError(escrow, "InvalidTEESignature");
      });

      it("reverts when the signed payload carries the opposite verdict", async () => {
        const { escrow, verifier, teeWallet, taskId } = await loadFixture(teeSubmittedFixture);
        const failingPayload = await escrow.teeVerdictPayload(taskId, false);
        await expect(
          escrow
            .connect(verifier)
            .completeVerificationWithTEE(taskId, true, failingPayload, await sign(teeWallet, failingPayload)),
        ).to.be.revertedWithCustomError(escrow, "InvalidTEESignature");
      });

      it("reverts when the signature covers the opposite verdict", async () => {
        const { escrow, verifier, teeWallet, taskId } = await loadFixture(teeSubmittedFixture);
        const passingPayload = await escrow.teeVerdictPayload(taskId, true);
        const failingSignature = await sign(teeWallet, await escrow.teeVerdictPayload(taskId, false));
        await expect(
          escrow.connect(verifier).completeVerificationWithTEE(taskId, true, passingPayload, failingSignature),
        ).to.be.revertedWithCustomError(escrow, "InvalidTEESignature");
      });

      it("reverts when the payload is another task's", async () => {
        const { escrow, verifier, poster, worker, usdc, teeWallet, taskId } = await loadFixture(teeSubmittedFixture);
        await escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), USDC(100), CATEGORY, ZONE, DAY);
        const otherTaskId = taskId + 1n;
        await escrow.connect(verifier).marketplaceAssign(otherTaskId, worker.address);
        await escrow.connect(worker).submitEvidence(otherTaskId, EVIDENCE_HASH);
        const otherPayload = await escrow.teeVerdictPayload(otherTaskId, true);
        await expect(
          escrow
            .connect(verifier)
            .completeVerificationWithTEE(taskId, true, otherPayload, await sign(teeWallet, otherPayload)),
        ).to.be.revertedWithCustomError(escrow, "InvalidTEESignature");
      });

      it("reverts when the payload names another chain id", async () => {
        const { escrow, verifier, teeWallet, taskId } = await loadFixture(teeSubmittedFixture);
        const fields = await verdictFor(escrow, taskId, true);
        const payload = encodeVerdict({ ...fields, chainId: fields.chainId + 1n });
        await expect(
          escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, await sign(teeWallet, payload)),
        ).to.be.revertedWithCustomError(escrow, "InvalidTEESignature");
      });

      it("reverts when the payload names another escrow", async () => {
        const { escrow, verifier, stranger, teeWallet, taskId } = await loadFixture(teeSubmittedFixture);
        const payload = encodeVerdict({ ...(await verdictFor(escrow, taskId, true)), escrow: stranger.address });
        await expect(
          escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, await sign(teeWallet, payload)),
        ).to.be.revertedWithCustomError(escrow, "InvalidTEESignature");
      });

      it("reverts when a verdict on an earlier round is replayed after a resubmission", async () => {
        const { escrow, verifier, worker, teeWallet, taskId } = await loadFixture(teeSubmittedFixture);
        const firstRoundPayload = await escrow.teeVerdictPayload(taskId, true);
        const firstRoundSignature = await sign(teeWallet, firstRoundPayload);
        await escrow.connect(verifier).completeVerification(taskId, false);
        // The same evidence again: only the submission count tells the rounds apart.
        await escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH);
        await expect(
          escrow.connect(verifier).completeVerificationWithTEE(taskId, true, firstRoundPayload, firstRoundSignature),
        ).to.be.revertedWithCustomError(escrow, "InvalidTEESignature");
      });

      it("reverts when the signature is truncated", async () => {
        const { escrow, verifier, teeWallet, taskId } = await loadFixture(teeSubmittedFixture);
        const payload = await escrow.teeVerdictPayload(taskId, true);
        const truncated = ethers.dataSlice(await sign(teeWallet, payload), 0, SIGNATURE_LENGTH - 1);
        await expect(
          escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, truncated),
        ).to.be.revertedWithCustomError(escrow, "InvalidTEESignature");
      });

      it("reverts when the signature is empty", async () => {
        const { escrow, verifier, taskId } = await loadFixture(teeSubmittedFixture);
        const payload = await escrow.teeVerdictPayload(taskId, true);
        await expect(
          escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, "0x"),
        ).to.be.revertedWithCustomError(escrow, "InvalidTEESignature");
      });

      it("reverts when the signature is 65 bytes that recover to no signer", async () => {
        const { escrow, verifier, taskId } = await loadFixture(teeSubmittedFixture);
        const payload = await escrow.teeVerdictPayload(taskId, true);
        const garbage = ethers.hexlify(new Uint8Array(SIGNATURE_LENGTH));
        await expect(
          escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, garbage),
        ).to.be.revertedWithCustomError(escrow, "InvalidTEESignature");
      });

      it("reverts when the payload is the raw hash signed without the EIP-191 prefix", async () => {
        const { escrow, verifier, teeWallet, taskId } = await loadFixture(teeSubmittedFixture);
        const payload = await escrow.teeVerdictPayload(taskId, true);
        const rawSignature = teeWallet.signingKey.sign(ethers.keccak256(payload)).serialized;
        await expect(
          escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, rawSignature),
        ).to.be.revertedWithCustomError(escrow, "InvalidTEESignature");
      });
    });

    describe("when the caller may not judge the task", () => {
      it("reverts when the caller is a stranger", async () => {
        const { escrow, stranger, teeWallet, taskId } = await loadFixture(teeSubmittedFixture);
        const payload = await escrow.teeVerdictPayload(taskId, true);
        await expect(
          escrow.connect(stranger).completeVerificationWithTEE(taskId, true, payload, await sign(teeWallet, payload)),
        ).to.be.revertedWithCustomError(escrow, "NotVerifier");
      });

      it("reverts when the caller is the worker", async () => {
        const { escrow, worker, teeWallet, taskId } = await loadFixture(teeSubmittedFixture);
        const payload = await escrow.teeVerdictPayload(taskId, true);
        await expect(
          escrow.connect(worker).completeVerificationWithTEE(taskId, true, payload, await sign(teeWallet, payload)),
        ).to.be.revertedWithCustomError(escrow, "NotVerifier");
      });

      it("reverts when the marketplace verifier judges a task that names its own verifier agent", async () => {
        const { escrow, verifier, teeWallet, taskId } = await loadFixture(teeAgentSubmittedFixture);
        const payload = await escrow.teeVerdictPayload(taskId, true);
        await expect(
          escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, await sign(teeWallet, payload)),
        ).to.be.revertedWithCustomError(escrow, "NotVerifier");
      });
    });

    describe("when no evidence awaits a verdict", () => {
      it("reverts when the task is Assigned", async () => {
        const { escrow, admin, verifier, taskId } = await loadFixture(assignedTaskFixture);
        const teeWallet = new ethers.Wallet(ethers.id("test TEE signer"));
        await escrow.connect(admin).setTeeSigner(teeWallet.address);
        const payload = await escrow.teeVerdictPayload(taskId, true);
        await expect(
          escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, await sign(teeWallet, payload)),
        )
          .to.be.revertedWithCustomError(escrow, "InvalidStatus")
          .withArgs(STATUS.Assigned, STATUS.Submitted);
      });

      it("reverts when the verdict was already settled", async () => {
        const { escrow, verifier, teeWallet, taskId } = await loadFixture(teeSubmittedFixture);
        const payload = await escrow.teeVerdictPayload(taskId, true);
        const signature = await sign(teeWallet, payload);
        await escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, signature);
        await expect(escrow.connect(verifier).completeVerificationWithTEE(taskId, true, payload, signature))
          .to.be.revertedWithCustomError(escrow, "InvalidStatus")
          .withArgs(STATUS.Completed, STATUS.Submitted);
      });
    });
  });
});
