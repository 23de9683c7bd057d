/**
 * Named fixtures for the contract suites. Each returns everything a test needs; tests destructure what they use.
 * Roles: admin (escrow admin and factory owner), treasury, verifier (the marketplace verifier), poster, worker,
 * verifierAgent (a task's own verifier), stranger; `others` are further funded accounts.
 */
import { ethers } from "hardhat";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import { deployAll } from "../../scripts/deploy";
import type { MockUSDC, TaskEscrow } from "../../typechain-types";

export const USDC = (whole: number | bigint | string) => ethers.parseUnits(String(whole), 6);
export const HOUR = 3600;
export const DAY = 86_400;
export const FEE_BPS = 1000;
export const TASK_HASH = ethers.sha256(ethers.toUtf8Bytes("brief: translate the attached text"));
export const EVIDENCE_HASH = ethers.keccak256(ethers.toUtf8Bytes('{"result":"done"}'));
export const CATEGORY = "general";
export const ZONE = "global";
/** The escrow's status numbers, from the one definition the server uses. */
export { TASK_STATUS as STATUS } from "../../server/escrow/records";
/** Open-submission phases (ITaskEscrow.Phase): Reveal was appended last, so the older numbers did not move. */
export const PHASE = { Submission: 0, Selection: 1, Expired: 2, Closed: 3, Reveal: 4 } as const;

/** The salt open-submission tests commit with unless they pass their own. */
export const OPEN_SALT = ethers.id("open-submission salt");

/** The commitment of an open submission: keccak256(abi.encode(escrow, taskId, submitter, evidenceHash, salt)). */
export function openCommitment(
  escrowAddress: string,
  taskId: bigint,
  submitter: string,
  evidenceHash: string,
  salt: string = OPEN_SALT,
): string {
  return ethers.keccak256(
    ethers.AbiCoder.defaultAbiCoder().encode(
      ["address", "uint256", "address", "bytes32", "bytes32"],
      [escrowAddress, taskId, submitter, evidenceHash, salt],
    ),
  );
}

/** `submitter` commits `evidenceHash` to open task `taskId` (its bond approved, or sent as `value`). */
export async function commitOpen(
  escrow: TaskEscrow,
  submitter: HardhatEthersSigner,
  taskId: bigint,
  evidenceHash: string,
  options: { salt?: string; value?: bigint } = {},
) {
  const commitment = openCommitment(await escrow.getAddress(), taskId, submitter.address, evidenceHash, options.salt);
  return escrow.connect(submitter).commitOpen(taskId, commitment, { value: options.value ?? 0n });
}

/** The start of an open task's Reveal phase (its effective deadline) and of its Selection and Expired phases. */
export async function openPhaseStarts(escrow: TaskEscrow, taskId: bigint) {
  const reveal = await escrow.effectiveDeadline(taskId);
  const selection = reveal + (await escrow.OPEN_REVEAL_WINDOW());
  return { reveal, selection, expired: selection + (await escrow.OPEN_SELECTION_WINDOW()) };
}

/** Escrow, factory and MockUSDC deployed through the deploy script; poster, worker and others funded and approved. */
/** Mints each account 1,000,000 USDC and lets the escrow pull any amount of it (the fixtures' posters and workers). */
export async function fundAccounts(
  usdc: MockUSDC,
  escrowAddress: string,
  accounts: readonly HardhatEthersSigner[],
): Promise<void> {
  for (const account of accounts) {
    await usdc.mint(account.address, USDC(1_000_000));
    await usdc.connect(account).approve(escrowAddress, ethers.MaxUint256);
  }
}

export async function deployEscrowFixture() {
  const [admin, treasury, verifier, poster, worker, verifierAgent, stranger, ...others] = await ethers.getSigners();
  const { escrow, agentFactory, mockUsdc, book } = await deployAll({
    admin: admin.address,
    treasury: treasury.address,
    verifier: verifier.address,
    feeBps: FEE_BPS,
    write: false,
  });
  const usdc = mockUsdc!;
  await fundAccounts(usdc, await escrow.getAddress(), [poster, worker, stranger, ...others.slice(0, 6)]);
  return {
    escrow,
    agentFactory,
    usdc,
    book,
    admin,
    treasury,
    verifier,
    poster,
    worker,
    verifierAgent,
    stranger,
    others,
  };
}

/** A Funded task (id 1) of 100 USDC, one day long, judged by the marketplace verifier. */
export async function fundedTaskFixture() {
  const base = await deployEscrowFixture();
  const { escrow, usdc, poster } = base;
  const amount = USDC(100);
  await escrow.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), amount, CATEGORY, ZONE, DAY);
  return { ...base, taskId: 1n, amount };
}

/** Task 1 Assigned to `worker` by the marketplace verifier. */
export async function assignedTaskFixture() {
  const base = await fundedTaskFixture();
  await base.escrow.connect(base.verifier).marketplaceAssign(base.taskId, base.worker.address);
  return base;
}

/** Task 1 Submitted once by `worker`. */
export async function submittedTaskFixture() {
  const base = await assignedTaskFixture();
  await base.escrow.connect(base.worker).submitEvidence(base.taskId, EVIDENCE_HASH);
  return base;
}

/** Task 1 Verified (one failed verdict). */
export async function failedVerdictFixture() {
  const base = await submittedTaskFixture();
  await base.escrow.connect(base.verifier).completeVerification(base.taskId, false);
  return base;
}

/** Task 1 Disputed by the poster before the deadline. */
export async function disputedTaskFixture() {
  const base = await submittedTaskFixture();
  await base.escrow.connect(base.poster).raiseDispute(base.taskId);
  return base;
}

/** Task 1 escalated: submitted, never judged, poster claimed the timeout after the deadline. */
export async function escalatedTaskFixture() {
  const base = await submittedTaskFixture();
  const { time } = await import("@nomicfoundation/hardhat-network-helpers");
  await time.increase(DAY);
  await base.escrow.connect(base.poster).claimTimeout(base.taskId);
  return base;
}

/** Task 1 funded with its own verifier agent (createTaskWithVerifier) and assigned. */
export async function agentVerifiedTaskFixture() {
  const base = await deployEscrowFixture();
  const { escrow, usdc, poster, verifierAgent, verifier, worker } = base;
  const amount = USDC(100);
  await escrow
    .connect(poster)
    .createTaskWithVerifier(TASK_HASH, await usdc.getAddress(), amount, CATEGORY, ZONE, DAY, verifierAgent.address);
  await escrow.connect(verifier).marketplaceAssign(1n, worker.address);
  return { ...base, taskId: 1n, amount };
}

/** The fields of the escrow's getTask struct, in its order. */
export const GET_TASK_FIELDS = [
  "poster",
  "worker",
  "token",
  "amount",
  "taskHash",
  "evidenceHash",
  "status",
  "category",
  "locationZone",
  "createdAt",
  "deadline",
  "submissionAttempts",
  "disputedAt",
] as const;
type GetTaskField = (typeof GET_TASK_FIELDS)[number];

/** The getTask fields of a record (an on-chain getTask result or a model's record), as a plain object. */
export function getTaskView<T extends Record<GetTaskField, unknown>>(t: T): Pick<T, GetTaskField> {
  return Object.fromEntries(GET_TASK_FIELDS.map((field) => [field, t[field]])) as Pick<T, GetTaskField>;
}
