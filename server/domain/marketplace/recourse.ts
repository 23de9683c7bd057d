/**
 * Recourse when the normal path stalls (docs/marketplace.md, "Operations"): release of escalated work nobody ruled
 * on, reclaim after the deadline (a refund, or escalation of unjudged work), and disputes. Each answers an unsigned
 * transaction and refuses up front what the escrow would refuse, with deadlines and windows extended by paused time
 * (server/escrow/rules.ts).
 */
import type { Deps } from "../deps";
import { fail } from "../../errors";
import {
  encodeClaimTimeout,
  encodeEscalateUnjudgedWork,
  encodeRaiseDispute,
  encodeReleaseUnjudgedWork,
  encodeSplitUnruled,
} from "../../chain/escrowCalls";
import { TASK_STATUS, ZERO_ADDRESS, type TaskRecord } from "../../escrow/records";
import {
  assertAssignmentSettled,
  loadTaskContext,
  requireOnChain,
  stillBefore,
  unsignedEscrowTx,
  type EscrowTxResult,
} from "./taskContext";
import { APPEAL_WINDOW_SECONDS, DISPUTE_WINDOW_SECONDS, ESCALATION_GRACE_SECONDS, windowEnd } from "../../escrow/rules";
import { refuseWhilePaused, requireSubmitted, type ReclaimResult } from "./deliver";

/** FORBIDDEN unless `caller` is the task's worker. */
function requireWorker(task: TaskRecord, caller: string, what: string): void {
  if (task.worker === ZERO_ADDRESS || caller !== task.worker) {
    fail("FORBIDDEN", `only the worker of task ${task.taskId} may ${what}`);
  }
}

/**
 * POST /a2a/tasks/{hash}/escalate by the worker: unsigned escalateUnjudgedWork when its submission still has no
 * verdict ESCALATION_GRACE (3 days) after the effective deadline; the task becomes Disputed (escalated) and
 * /release pays it after the dispute window unless the admin rules first. Refusals, in order:
 * ASSIGNMENT_PENDING, NOT_INDEXED, FORBIDDEN, INVALID_STATE (no submission awaiting its verdict), ESCROW_PAUSED,
 * DEADLINE_NOT_REACHED (details.availableAt).
 */
export async function buildEscalate(deps: Deps, wallet: string, rawHash: string): Promise<EscrowTxResult> {
  const caller = wallet.toLowerCase();
  const ctx = await loadTaskContext(deps, rawHash);
  assertAssignmentSettled(ctx, caller);
  const task = requireOnChain(ctx);
  requireWorker(task, caller, "escalate its unjudged work");
  if (task.status !== TASK_STATUS.Submitted) {
    fail("INVALID_STATE", `task ${ctx.taskId} is ${ctx.status}: only a submission awaiting its verdict is escalated`);
  }
  await refuseWhilePaused(deps, ctx, "escalateUnjudgedWork");
  const availableAt = (ctx.effectiveDeadline ?? task.deadline) + ESCALATION_GRACE_SECONDS;
  if (await stillBefore(deps, ctx, availableAt)) {
    fail(
      "DEADLINE_NOT_REACHED",
      `task ${ctx.taskId}'s judge has until ${availableAt} (the effective deadline plus 3 days) before escalation`,
      { details: { availableAt } },
    );
  }
  return unsignedEscrowTx(deps, ctx, caller, encodeEscalateUnjudgedWork(ctx.taskId));
}

/**
 * POST /a2a/tasks/{hash}/release by the worker: unsigned releaseUnjudgedWork once escalated work waited the dispute
 * window (14 days plus paused time) without a ruling. Refusals, in order: ASSIGNMENT_PENDING, NOT_INDEXED, FORBIDDEN,
 * INVALID_STATE (not disputed by escalation), ESCROW_PAUSED, DISPUTE_WINDOW_ACTIVE (details.availableAt).
 */
export async function buildRelease(deps: Deps, wallet: string, rawHash: string): Promise<EscrowTxResult> {
  const caller = wallet.toLowerCase();
  const ctx = await loadTaskContext(deps, rawHash);
  assertAssignmentSettled(ctx, caller);
  const task = requireOnChain(ctx);
  requireWorker(task, caller, "release its escalated work");
  if (task.status !== TASK_STATUS.Disputed || !task.escalated) {
    fail(
      "INVALID_STATE",
      `task ${ctx.taskId} is ${ctx.status}${
        task.status === TASK_STATUS.Disputed ? " (raised, not escalated: it waits for a ruling)" : ""
      }: only escalated unjudged work is released`,
    );
  }
  await refuseWhilePaused(deps, ctx, "releaseUnjudgedWork");
  const availableAt = windowEnd(ctx.pauses, task.disputedAt, DISPUTE_WINDOW_SECONDS, ctx.now);
  if (await stillBefore(deps, ctx, availableAt)) {
    fail(
      "DISPUTE_WINDOW_ACTIVE",
      `the dispute window of task ${ctx.taskId} runs until ${availableAt} (14 days plus paused time)`,
      {
        details: { availableAt },
      },
    );
  }
  return unsignedEscrowTx(deps, ctx, caller, encodeReleaseUnjudgedWork(ctx.taskId));
}

/**
 * POST /a2a/tasks/{hash}/reclaim by the poster: unsigned claimTimeout, refused up front with the escrow's refund
 * codes. A raised dispute nobody ruled on within the dispute window is split, not refunded: half the reward is
 * credited to each side (the worker's half less the fee), to be taken with /credits/withdraw. In order: NOT_POSTER, NOT_INDEXED, ASSIGNMENT_PENDING (an accept being confirmed), USE_CANCEL (Funded:
 * nobody took it), INVALID_STATUS (settled),
 * ESCROW_PAUSED, DEADLINE_NOT_REACHED, APPEAL_WINDOW_ACTIVE (Verified), ESCALATED_FOR_ADJUDICATION and
 * DISPUTE_WINDOW_ACTIVE (Disputed). Time refusals carry details.availableAt.
 */
export async function buildReclaim(deps: Deps, wallet: string, rawHash: string): Promise<ReclaimResult> {
  const caller = wallet.toLowerCase();
  const ctx = await loadTaskContext(deps, rawHash);
  if (caller !== ctx.poster) fail("NOT_POSTER", `only the poster of task ${ctx.taskId} (${ctx.poster}) may reclaim it`);
  const task = requireOnChain(ctx);
  if (task.status === TASK_STATUS.Funded) {
    // An accept the index does not show yet: the chain has (or is about to have) a worker.
    if (ctx.assignment) {
      fail(
        "ASSIGNMENT_PENDING",
        `an agent accepted task ${ctx.taskId} and its assignment is being confirmed; retry shortly`,
      );
    }
    fail(
      "USE_CANCEL",
      `nobody took task ${ctx.taskId}: cancel it instead (POST /api/v1/a2a/tasks/${ctx.taskHash}/cancel)`,
    );
  }
  if (task.status === TASK_STATUS.Completed || task.status === TASK_STATUS.Cancelled) {
    fail("INVALID_STATUS", `task ${ctx.taskId} is already settled (${ctx.status})`);
  }
  await refuseWhilePaused(deps, ctx, "claimTimeout");
  const deadline = ctx.effectiveDeadline ?? task.deadline;
  if (await stillBefore(deps, ctx, deadline)) {
    fail(
      "DEADLINE_NOT_REACHED",
      `the deadline of task ${ctx.taskId} is ${deadline} (paused time included); reclaim from then`,
      {
        details: { availableAt: deadline },
      },
    );
  }
  if (task.status === TASK_STATUS.Verified) {
    const availableAt = windowEnd(ctx.pauses, task.failedVerdictAt, APPEAL_WINDOW_SECONDS, ctx.now);
    if (await stillBefore(deps, ctx, availableAt)) {
      fail(
        "APPEAL_WINDOW_ACTIVE",
        `the worker may appeal the failed verdict of task ${ctx.taskId} until ${availableAt}`,
        {
          details: { availableAt },
        },
      );
    }
  } else if (task.status === TASK_STATUS.Disputed) {
    if (task.escalated) {
      fail(
        "ESCALATED_FOR_ADJUDICATION",
        `the work of task ${ctx.taskId} was escalated unjudged: it does not return by timeout (a ruling decides, or the worker is paid after the dispute window)`,
      );
    }
    const availableAt = windowEnd(ctx.pauses, task.disputedAt, DISPUTE_WINDOW_SECONDS, ctx.now);
    if (await stillBefore(deps, ctx, availableAt)) {
      fail("DISPUTE_WINDOW_ACTIVE", `the dispute of task ${ctx.taskId} awaits a ruling until ${availableAt}`, {
        details: { availableAt },
      });
    }
  }
  return {
    ...unsignedEscrowTx(deps, ctx, caller, encodeClaimTimeout(ctx.taskId)),
    outcome:
      task.status === TASK_STATUS.Submitted ? "escalate" : task.status === TASK_STATUS.Disputed ? "split" : "refund",
  };
}

/**
 * POST /a2a/tasks/{hash}/split by anyone: unsigned splitUnruled once a raised dispute (of a single-worker task, or a
 * contested open task) waited the dispute window (14 days plus paused time) without a ruling. Half the reward is
 * credited to the worker side (less the fee) and half to the other side; each takes it with /credits/withdraw.
 * Refusals, in order: NOT_INDEXED, INVALID_STATUS (not Disputed), ESCALATED_FOR_ADJUDICATION (escalated unjudged work
 * is released to the worker instead), ESCROW_PAUSED, DISPUTE_WINDOW_ACTIVE (details.availableAt).
 */
export async function buildSplitUnruled(deps: Deps, wallet: string, rawHash: string): Promise<EscrowTxResult> {
  const caller = wallet.toLowerCase();
  const ctx = await loadTaskContext(deps, rawHash);
  const task = requireOnChain(ctx);
  if (task.status !== TASK_STATUS.Disputed) {
    fail("INVALID_STATUS", `task ${ctx.taskId} is ${ctx.status}: only a dispute nobody ruled on is split`);
  }
  if (task.escalated) {
    fail(
      "ESCALATED_FOR_ADJUDICATION",
      `the work of task ${ctx.taskId} was escalated unjudged: the worker collects it with /release after the dispute window`,
    );
  }
  await refuseWhilePaused(deps, ctx, "splitUnruled");
  const availableAt = windowEnd(ctx.pauses, task.disputedAt, DISPUTE_WINDOW_SECONDS, ctx.now);
  if (await stillBefore(deps, ctx, availableAt)) {
    fail("DISPUTE_WINDOW_ACTIVE", `the dispute of task ${ctx.taskId} awaits a ruling until ${availableAt}`, {
      details: { availableAt },
    });
  }
  return unsignedEscrowTx(deps, ctx, caller, encodeSplitUnruled(ctx.taskId));
}

/**
 * POST /a2a/tasks/{hash}/dispute by the poster or the worker: unsigned raiseDispute of a submission or a failed
 * verdict before the deadline, or the worker's appeal within the appeal window of a failed verdict after it.
 * Refusals, in order: ASSIGNMENT_PENDING, NOT_INDEXED, FORBIDDEN, NOT_SUBMITTED_ON_CHAIN, INVALID_STATE,
 * ESCROW_PAUSED, DEADLINE_REACHED.
 */
export async function buildDispute(deps: Deps, wallet: string, rawHash: string): Promise<EscrowTxResult> {
  const caller = wallet.toLowerCase();
  const ctx = await loadTaskContext(deps, rawHash);
  assertAssignmentSettled(ctx, caller);
  const task = requireOnChain(ctx);
  const isWorker = task.worker !== ZERO_ADDRESS && caller === task.worker;
  if (caller !== task.poster && !isWorker) {
    fail("FORBIDDEN", `only the poster or the worker of task ${ctx.taskId} may dispute it`);
  }
  if (task.status !== TASK_STATUS.Submitted && task.status !== TASK_STATUS.Verified) {
    await requireSubmitted(deps, ctx, task, "a dispute");
  }
  await refuseWhilePaused(deps, ctx, "raiseDispute");
  const deadline = ctx.effectiveDeadline ?? task.deadline;
  if (ctx.now >= deadline) {
    const appealEnds = windowEnd(ctx.pauses, task.failedVerdictAt, APPEAL_WINDOW_SECONDS, ctx.now);
    const appeal = task.status === TASK_STATUS.Verified && isWorker && ctx.now < appealEnds;
    if (!appeal) {
      fail(
        "DEADLINE_REACHED",
        task.status === TASK_STATUS.Verified && isWorker
          ? `the deadline of task ${ctx.taskId} passed and so did the appeal window of its failed verdict (${appealEnds})`
          : `the deadline of task ${ctx.taskId} passed at ${deadline}: only the worker may still appeal a failed verdict, within 3 days`,
      );
    }
  }
  return unsignedEscrowTx(deps, ctx, caller, encodeRaiseDispute(ctx.taskId));
}
