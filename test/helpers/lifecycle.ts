/**
 * Fixtures and receipt helpers for the task-lifecycle suite (test/contracts/TaskEscrow.lifecycle.test.ts). They build
 * on the shared fixtures in ./fixtures and add the states those do not reach: a Funded task with its own verifier, a
 * task whose worker used every submission, a worker's appeal after the deadline, an open-submission task and a
 * native-currency task.
 */
import { ethers } from "hardhat";
import { time } from "@nomicfoundation/hardhat-network-helpers";
import type { TaskEscrow } from "../../typechain-types";
import {
  CATEGORY,
  DAY,
  EVIDENCE_HASH,
  FEE_BPS,
  TASK_HASH,
  USDC,
  ZONE,
  agentVerifiedTaskFixture,
  deployEscrowFixture,
  failedVerdictFixture,
} from "./fixtures";

/** Evidence of a second round, distinct from EVIDENCE_HASH. */
export const SECOND_EVIDENCE_HASH = ethers.keccak256(ethers.toUtf8Bytes('{"result":"done, second round"}'));

/** Task 1 Funded with its own verifier agent and nobody assigned yet. */
export async function agentFundedTaskFixture() {
  const base = await deployEscrowFixture();
  const { escrow, usdc, poster, verifierAgent } = base;
  const amount = USDC(100);
  await escrow
    .connect(poster)
    .createTaskWithVerifier(TASK_HASH, await usdc.getAddress(), amount, CATEGORY, ZONE, DAY, verifierAgent.address);
  return { ...base, taskId: 1n, amount };
}

/** Task 1 (agent-verified) Submitted once by `worker`. */
export async function agentSubmittedTaskFixture() {
  const base = await agentVerifiedTaskFixture();
  await base.escrow.connect(base.worker).submitEvidence(base.taskId, EVIDENCE_HASH);
  return base;
}

/** Task 1 Verified after three submissions, each failed: the worker has no submission left. */
export async function exhaustedAttemptsFixture() {
  const base = await failedVerdictFixture();
  const { escrow, verifier, worker, taskId } = base;
  const maxSubmissions = await escrow.MAX_SUBMISSIONS();
  for (let attempt = 1n; attempt < maxSubmissions; ++attempt) {
    await escrow.connect(worker).submitEvidence(taskId, SECOND_EVIDENCE_HASH);
    await escrow.connect(verifier).completeVerification(taskId, false);
  }
  return base;
}

/** Task 1 Disputed by the worker's appeal, after the deadline, of a failed verdict given before it. */
export async function appealedTaskFixture() {
  const base = await failedVerdictFixture();
  const { escrow, worker, taskId } = base;
  await time.increaseTo(await escrow.effectiveDeadline(taskId));
  await escrow.connect(worker).raiseDispute(taskId);
  return base;
}

/** Task 1 is an open-submission task of 100 USDC, one day long, without submissions. */
export async function openTaskFixture() {
  const base = await deployEscrowFixture();
  const { escrow, usdc, poster } = base;
  const amount = USDC(100);
  await escrow.connect(poster).createTaskOpen(TASK_HASH, await usdc.getAddress(), amount, CATEGORY, ZONE, DAY);
  return { ...base, taskId: 1n, amount };
}

/** Native currency allowed; task 1 funded with `amount` wei, one day long, Submitted once by `worker`. */
export async function nativeSubmittedTaskFixture() {
  const base = await deployEscrowFixture();
  const { escrow, admin, poster, verifier, worker } = base;
  const amount = ethers.parseEther("1");
  await escrow.connect(admin).allowToken(ethers.ZeroAddress);
  await escrow
    .connect(poster)
    .createTask(TASK_HASH, ethers.ZeroAddress, amount, CATEGORY, ZONE, DAY, { value: amount });
  const taskId = 1n;
  await escrow.connect(verifier).marketplaceAssign(taskId, worker.address);
  await escrow.connect(worker).submitEvidence(taskId, EVIDENCE_HASH);
  return { ...base, taskId, amount };
}

/** The split of `amount` at `feeBps` (the fixture fee unless given): fee rounded down, the rest to the worker. */
export async function payoutSplit(escrow: TaskEscrow, amount: bigint, feeBps: bigint = BigInt(FEE_BPS)) {
  const fee = (amount * feeBps) / (await escrow.BPS_DENOMINATOR());
  return { fee, workerPayout: amount - fee };
}
