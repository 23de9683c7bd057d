/** A TaskRecord as the indexer stores it, for tests that write or project rows without a chain. */
import { ethers } from "ethers";
import { TASK_STATUS, ZERO_ADDRESS, ZERO_HASH, type TaskRecord } from "../../server/escrow/records";

/** A Funded task of 5 USDC by poster 0xbbbb…, created at 1,800,000,000 with a day to run; `overrides` on top. */
export function taskRecord(taskId: number, overrides: Partial<TaskRecord> = {}): TaskRecord {
  return {
    chain: "base",
    taskId,
    poster: `0x${"b".repeat(40)}`,
    worker: ZERO_ADDRESS,
    token: `0x${"d".repeat(40)}`,
    amount: "5000000",
    taskHash: ethers.id(`brief ${taskId}`),
    evidenceHash: ZERO_HASH,
    status: TASK_STATUS.Funded,
    category: "general",
    locationZone: "global",
    createdAt: 1_800_000_000,
    deadline: 1_800_086_400,
    submissionAttempts: 0,
    disputedAt: 0,
    verifier: ZERO_ADDRESS,
    failedVerdictAt: 0,
    escalated: false,
    isOpen: false,
    openSubmissionCount: 0,
    openPick: ZERO_ADDRESS,
    openPickedAt: 0,
    openOutcome: null,
    heldReleased: false,
    feePaid: null,
    payout: null,
    refund: null,
    createdBlock: 12,
    createdTx: ethers.id(`tx ${taskId}`),
    updatedBlock: 14,
    ...overrides,
  };
}
