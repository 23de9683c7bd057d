/**
 * Delivering and judging work (docs/marketplace.md, "Operations"): submit, verify (the task's verifier agent),
 * finalize and decline (the poster, manual mode). Reclaim, release and dispute are in recourse.ts.
 *
 * Every operation that moves money answers an unsigned transaction for the caller's wallet, and refuses UP FRONT,
 * with the code the escrow's revert would mean, what the escrow would refuse: the checks below mirror TaskEscrow's
 * (contracts/TaskEscrow.sol) on the indexed task, with deadlines and windows extended by the time the escrow spent
 * paused exactly as `_effectiveDeadline` and `_windowPassed` compute them (docs/contracts.md "Pause accounting").
 * Time only moves forward, so a transaction accepted now stays valid until a new pause or another party's move.
 *
 * Submit, precisely (decided here; docs/marketplace.md "Delivery: implementation notes"):
 * - The result is stored as canonical JSON for attempt n = the chain's submission count + 1, BEFORE the worker has
 *   a transaction: `submitEvidence(id, keccak256(canonical))`. The row is final for that attempt.
 * - The same result again (same evidence hash) while attempt n is not on-chain answers the same transaction
 *   (idempotent: a lost answer can be fetched again). A different result answers ALREADY_SUBMITTED with the stored
 *   attempt's evidence hash and its transaction in `details`: send that one (replacing it could let both
 *   transactions race, and the chain would record a deliverable the service no longer holds).
 * - While the latest on-chain submission awaits its verdict (status Submitted) a submit is ALREADY_SUBMITTED; after
 *   a failed verdict (Verified) the next attempt may be stored, at most 3 in all (MAX_ATTEMPTS_REACHED).
 */
import type { Deps } from "../deps";
import { escrowRefusal } from "../../chain/escrowErrors";
import { fail } from "../../errors";
import { loadConfigValues } from "../../db/repositories/escrowConfig";
import { findIntent } from "../../db/repositories/verifierIntents";
import {
  findSubmission,
  insertSubmission,
  clearVerdict,
  overwriteVerdict,
  type SubmissionRecord,
} from "../../db/repositories/submissions";
import { encodeCompleteVerification, encodeSubmitEvidence } from "../../chain/escrowCalls";
import { TASK_STATUS, ZERO_ADDRESS, type ChainName, type TaskRecord } from "../../escrow/records";
import { VerifierSendError, verdictKey } from "../../verifier/types";
import { CanonicalJsonError, canonicalJson, hashCanonical, utf8Length } from "./canonicalJson";
import {
  assertAssignmentSettled,
  loadTaskContext,
  requireOnChain,
  type TaskContext,
  unsignedEscrowTx,
  type EscrowTxResult,
} from "./taskContext";
import type { MarketplaceStatus } from "../marketStatus";
import { MAX_SUBMISSIONS, escrowPaused } from "../../escrow/rules";
import { verifierOn } from "../verifiers";

// ---------------------------------------------------------------------------------------------------------------
// Constants of the service (the escrow's are in server/escrow/rules.ts)
// ---------------------------------------------------------------------------------------------------------------

/** Largest stored result: its canonical JSON in UTF-8 bytes. */
export const MAX_RESULT_BYTES = 512 * 1024;

// ---------------------------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------------------------

export interface SubmitResult extends EscrowTxResult {
  attempt: number;
  evidenceHash: string;
}

export interface VerifyResult extends EscrowTxResult {
  attempt: number;
  passed: boolean;
}

export interface VerdictResult {
  taskHash: string;
  onChainTaskId: number;
  attempt: number;
  passed: boolean;
  /** The marketplace verifier's completeVerification intent. */
  intent: { key: string; status: string; txHash: string | null };
  state: MarketplaceStatus;
}

export interface ReclaimResult extends EscrowTxResult {
  /**
   * refund: the reward goes back to the poster; escalate: unjudged work is disputed (no refund); split: a dispute
   * nobody ruled on is split, half credited to each side.
   */
  outcome: "refund" | "escalate" | "split";
}

// ---------------------------------------------------------------------------------------------------------------
// Shared checks
// ---------------------------------------------------------------------------------------------------------------

/** Whether the escrow is paused, by the indexed pause periods and the configuration's flag. */
async function pausedNow(deps: Deps, ctx: TaskContext): Promise<boolean> {
  return ctx.paused || escrowPaused(ctx.pauses, (await loadConfigValues(deps.db, ctx.chain)).paused?.value);
}

export async function refuseWhilePaused(deps: Deps, ctx: TaskContext, call: string): Promise<void> {
  if (await pausedNow(deps, ctx)) {
    fail("ESCROW_PAUSED", `the escrow is paused: ${call} would revert; retry after it resumes`);
  }
}

/** The stored submission waiting for its submitEvidence (attempt above the chain's count), if any. */
async function pendingSubmission(
  deps: Deps,
  ctx: TaskContext,
  task: TaskRecord,
): Promise<SubmissionRecord | undefined> {
  if (task.status !== TASK_STATUS.Assigned && task.status !== TASK_STATUS.Verified) return undefined;
  return findSubmission(deps.db, task.taskId, task.submissionAttempts + 1, ctx.chain);
}

/**
 * The task must be Submitted on-chain (its latest deliverable awaits a verdict): NOT_SUBMITTED_ON_CHAIN (503, retry)
 * while a stored deliverable's submitEvidence is not indexed yet, INVALID_STATE otherwise.
 */
export async function requireSubmitted(deps: Deps, ctx: TaskContext, task: TaskRecord, what: string): Promise<void> {
  if (task.status === TASK_STATUS.Submitted) return;
  const pending = await pendingSubmission(deps, ctx, task);
  if (pending) {
    fail(
      "NOT_SUBMITTED_ON_CHAIN",
      `attempt ${pending.attempt} of task ${ctx.taskId} is stored but its submitEvidence is not indexed yet; retry once it is mined`,
    );
  }
  fail("INVALID_STATE", `task ${ctx.taskId} is ${ctx.status}: ${what} needs a submission awaiting its verdict`);
}

/**
 * The verdict the marketplace verifier is settling (or settled) on this attempt, when one is in flight: its
 * persisted intent's arguments, else the verdict recorded on the submission while its intent is not failed.
 */
async function verdictInFlight(
  deps: Deps,
  chain: ChainName,
  key: string,
  taskId: number,
  attempt: number,
): Promise<boolean | undefined> {
  const persisted = await findIntent(deps.db, chain, key);
  if (persisted && persisted.status !== "failed" && typeof persisted.args.passed === "boolean") {
    return persisted.args.passed;
  }
  const live = await verifierOn(deps, chain)?.intent(key);
  if (!live || live.status === "failed") return undefined;
  const row = await findSubmission(deps.db, taskId, attempt, chain);
  return row?.verdict ? row.verdict === "pass" : undefined;
}

function reasonOf(reason: string | undefined): string | null {
  return reason === undefined || reason.trim() === "" ? null : reason;
}

// ---------------------------------------------------------------------------------------------------------------
// Submit
// ---------------------------------------------------------------------------------------------------------------

export interface SubmitBody {
  result?: unknown;
  evidenceHash?: string;
}

/** The canonical JSON and evidence hash of a submit body, after its checks (NO_RESULT_DATA, VALIDATION_ERROR). */
export function canonicalResult(body: SubmitBody): { canonical: string; evidenceHash: string } {
  if (body.result === undefined || body.result === null) {
    fail("NO_RESULT_DATA", "result: the deliverable is required (any JSON value but null)");
  }
  let canonical: string;
  try {
    canonical = canonicalJson(body.result, "result");
  } catch (error) {
    if (error instanceof CanonicalJsonError) fail("VALIDATION_ERROR", `body.${error.message}`);
    throw error;
  }
  const bytes = utf8Length(canonical);
  if (bytes > MAX_RESULT_BYTES) {
    fail(
      "VALIDATION_ERROR",
      `body.result: its canonical JSON is ${bytes} bytes, at most ${MAX_RESULT_BYTES} are stored`,
    );
  }
  const evidenceHash = hashCanonical(canonical);
  if (body.evidenceHash !== undefined && body.evidenceHash.toLowerCase() !== evidenceHash) {
    fail(
      "VALIDATION_ERROR",
      `body.evidenceHash: ${body.evidenceHash.toLowerCase()} differs from keccak256 of the result's canonical JSON (${evidenceHash})`,
    );
  }
  return { canonical, evidenceHash };
}

/**
 * POST /a2a/tasks/{hash}/submit { result, evidenceHash? } by the worker. Refusals, in order: NO_RESULT_DATA and
 * VALIDATION_ERROR (the body), ASSIGNMENT_PENDING, NOT_INDEXED, FORBIDDEN (not the worker), ALREADY_SUBMITTED (the
 * latest submission awaits its verdict), INVALID_STATE, ESCROW_PAUSED, MAX_ATTEMPTS_REACHED, DEADLINE_REACHED,
 * ALREADY_SUBMITTED (another result is stored for this attempt; details carry its transaction).
 */
export async function submitResult(
  deps: Deps,
  wallet: string,
  rawHash: string,
  body: SubmitBody,
): Promise<SubmitResult> {
  const caller = wallet.toLowerCase();
  const { canonical, evidenceHash } = canonicalResult(body);
  const ctx = await loadTaskContext(deps, rawHash);
  assertAssignmentSettled(ctx, caller);
  const task = requireOnChain(ctx);
  if (task.worker === ZERO_ADDRESS || caller !== task.worker) {
    fail(
      "FORBIDDEN",
      `only the worker of task ${ctx.taskId} may submit (${
        task.worker === ZERO_ADDRESS ? "nobody is assigned" : task.worker
      })`,
    );
  }
  if (task.status === TASK_STATUS.Submitted) {
    fail(
      "ALREADY_SUBMITTED",
      `attempt ${task.submissionAttempts} of task ${ctx.taskId} is on-chain and awaits its verdict; resubmit only after a failed verdict`,
      { details: { attempt: task.submissionAttempts, evidenceHash: task.evidenceHash } },
    );
  }
  if (task.status !== TASK_STATUS.Assigned && task.status !== TASK_STATUS.Verified) {
    fail(
      "INVALID_STATE",
      `task ${ctx.taskId} is ${ctx.status}: work is submitted while assigned or after a failed verdict`,
    );
  }
  await refuseWhilePaused(deps, ctx, "submitEvidence");
  if (task.submissionAttempts >= MAX_SUBMISSIONS) {
    fail("MAX_ATTEMPTS_REACHED", `all ${MAX_SUBMISSIONS} attempts of task ${ctx.taskId} are used`);
  }
  if (ctx.effectiveDeadline !== null && ctx.now >= ctx.effectiveDeadline) {
    fail(
      "DEADLINE_REACHED",
      `the deadline of task ${ctx.taskId} passed at ${ctx.effectiveDeadline} (paused time included)`,
    );
  }

  const attempt = task.submissionAttempts + 1;
  const answer = (hash: string): SubmitResult => ({
    ...unsignedEscrowTx(deps, ctx, caller, encodeSubmitEvidence(ctx.taskId, hash)),
    attempt,
    evidenceHash: hash,
  });
  const stored = await insertSubmission(deps.db, {
    chain: ctx.chain,
    taskId: ctx.taskId,
    attempt,
    agent: caller,
    result: canonical,
    evidenceHash,
    submittedAt: ctx.now,
  });
  if (!stored) {
    const existing = await findSubmission(deps.db, ctx.taskId, attempt, ctx.chain);
    if (existing && existing.evidenceHash !== evidenceHash) {
      const pending = answer(existing.evidenceHash);
      fail(
        "ALREADY_SUBMITTED",
        `attempt ${attempt} of task ${ctx.taskId} is stored with another result (${existing.evidenceHash}) and awaits its submitEvidence: send that transaction (details.unsignedTx)`,
        { details: { attempt, evidenceHash: existing.evidenceHash, unsignedTx: pending.unsignedTx } },
      );
    }
  }
  return answer(evidenceHash);
}

// ---------------------------------------------------------------------------------------------------------------
// Verify (the task's verifier agent)
// ---------------------------------------------------------------------------------------------------------------

export interface VerifyBody {
  passed: boolean;
  reason?: string;
}

/**
 * POST /a2a/tasks/{hash}/verify { passed, reason? } by the task's verifier agent: records the verdict on the latest
 * attempt and answers the unsigned completeVerification for the verifier agent's wallet. Refusals, in order:
 * NO_ONCHAIN_VERIFIER, WRONG_MODE, NOT_INDEXED, SELF_VERIFICATION (the worker), NOT_VERIFIER, NOT_SUBMITTED_ON_CHAIN,
 * INVALID_STATE, ESCROW_PAUSED. Until the transaction is mined the verifier agent may change its verdict.
 */
export async function verifyAsAgent(
  deps: Deps,
  wallet: string,
  rawHash: string,
  body: VerifyBody,
): Promise<VerifyResult> {
  const caller = wallet.toLowerCase();
  const ctx = await loadTaskContext(deps, rawHash);
  const verifierAgent = ctx.listing.verifierAddress;
  if (!verifierAgent) {
    fail(
      "NO_ONCHAIN_VERIFIER",
      `task ${ctx.taskId} was funded without an on-chain verifier agent: the marketplace verifier judges it`,
    );
  }
  if (ctx.listing.verificationMode !== "agent") {
    fail(
      "WRONG_MODE",
      `task ${ctx.taskId} is verified in ${ctx.listing.verificationMode} mode, not by its verifier agent`,
    );
  }
  const task = requireOnChain(ctx);
  if (task.worker !== ZERO_ADDRESS && caller === task.worker) {
    fail("SELF_VERIFICATION", `the worker of task ${ctx.taskId} cannot verify its own work`);
  }
  if (caller !== verifierAgent) {
    fail("NOT_VERIFIER", `only the verifier agent of task ${ctx.taskId} (${verifierAgent}) may verify it`);
  }
  await requireSubmitted(deps, ctx, task, "verify");
  await refuseWhilePaused(deps, ctx, "completeVerification");
  const attempt = task.submissionAttempts;
  await overwriteVerdict(deps.db, {
    chain: ctx.chain,
    taskId: ctx.taskId,
    attempt,
    verdict: body.passed ? "pass" : "fail",
    by: caller,
    reason: reasonOf(body.reason),
    at: ctx.now,
  });
  return {
    ...unsignedEscrowTx(deps, ctx, caller, encodeCompleteVerification(ctx.taskId, body.passed)),
    attempt,
    passed: body.passed,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Finalize and decline (the poster, manual mode): the marketplace verifier sends completeVerification
// ---------------------------------------------------------------------------------------------------------------

/**
 * POST /a2a/tasks/{hash}/finalize (passed) and /decline { reason? } (failed) by the poster of a manual task.
 * Refusals, in order: NOT_POSTER, WRONG_MODE, NOT_INDEXED, NOT_SUBMITTED_ON_CHAIN, INVALID_STATE, ESCROW_PAUSED,
 * VERDICT_MISMATCH (the other verdict on this attempt is already with the verifier), SETTLEMENT_FAILED (503: the
 * verifier could not send; nothing recorded). Repeating the same verdict answers the same intent.
 */
export async function judgeManually(
  deps: Deps,
  wallet: string,
  rawHash: string,
  passed: boolean,
  reason?: string,
): Promise<VerdictResult> {
  const caller = wallet.toLowerCase();
  const operation = passed ? "finalize" : "decline";
  const ctx = await loadTaskContext(deps, rawHash);
  if (caller !== ctx.poster)
    fail("NOT_POSTER", `only the poster of task ${ctx.taskId} (${ctx.poster}) may ${operation} it`);
  if (ctx.listing.verificationMode !== "manual") {
    fail(
      "WRONG_MODE",
      `task ${ctx.taskId} is verified in ${ctx.listing.verificationMode} mode: only manual tasks are finalized or declined by the poster`,
    );
  }
  const task = requireOnChain(ctx);
  await requireSubmitted(deps, ctx, task, operation);
  await refuseWhilePaused(deps, ctx, "completeVerification");
  const attempt = task.submissionAttempts;
  const verifier = verifierOn(deps, ctx.chain);
  if (!verifier) return fail("SETTLEMENT_FAILED", "no marketplace verifier runs on this server; retry later");
  const key = verdictKey(ctx.taskId, attempt);
  const settling = await verdictInFlight(deps, ctx.chain, key, ctx.taskId, attempt);
  if (settling !== undefined && settling !== passed) {
    fail(
      "VERDICT_MISMATCH",
      `attempt ${attempt} of task ${ctx.taskId} is already being settled as ${
        settling ? "passed (finalize)" : "failed (decline)"
      }`,
      { details: { attempt, passed: settling } },
    );
  }
  // Recorded before the send (so a concurrent opposite verdict sees it), undone when the send is refused.
  const verdict = passed ? "pass" : "fail";
  await overwriteVerdict(deps.db, {
    chain: ctx.chain,
    taskId: ctx.taskId,
    attempt,
    verdict,
    by: caller,
    reason: reasonOf(reason),
    at: ctx.now,
  });
  let intent;
  try {
    intent = await verifier.requestVerdict(ctx.taskId, attempt, passed);
  } catch (error) {
    if (settling === undefined) await clearVerdict(deps.db, { chain: ctx.chain, taskId: ctx.taskId, attempt, verdict });
    if (error instanceof VerifierSendError) {
      fail(
        "SETTLEMENT_FAILED",
        `the marketplace verifier could not send completeVerification: ${error.message}; nothing changed, retry`,
        { cause: error, ...escrowRefusal(error.reason) },
      );
    }
    throw error;
  }
  if (intent.status === "failed") {
    fail(
      "SETTLEMENT_FAILED",
      `the marketplace verifier's completeVerification failed (${intent.error ?? "reverted"}); retry`,
    );
  }
  return {
    taskHash: ctx.taskHash,
    onChainTaskId: ctx.taskId,
    attempt,
    passed,
    intent: { key: intent.key, status: intent.status, txHash: intent.txHash },
    state: intent.status === "confirmed" ? (passed ? "completed" : "verified") : "verifying",
  };
}
