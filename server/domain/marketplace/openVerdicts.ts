/**
 * The contest and judge path of open-submission tasks (docs/contracts.md, "Second audit: what was decided"): the
 * poster sends revealed entries it finds worthless to the task's judge during the selection window, or a revealed
 * submitter contests the poster's pick within the contest window; the judge (or the admin) then rules. Each answers
 * an unsigned transaction and refuses up front what the escrow would refuse, with windows extended by paused time.
 */
import type { Deps } from "../deps";
import { fail } from "../../errors";
import { encodeContestOpen, encodeJudgeOpen } from "../../chain/escrowCalls";
import { loadConfigValues } from "../../db/repositories/escrowConfig";
import { loadOpenSubmissions } from "../../db/repositories/openSubmissions";
import { TASK_STATUS, ZERO_ADDRESS, type ChainName, type TaskRecord } from "../../escrow/records";
import { windowEnd } from "../../escrow/rules";
import { loadTaskContext, requireOnChain, stillBefore, unsignedEscrowTx, type EscrowTxResult } from "./taskContext";
import { refuseWhilePaused } from "./deliver";

/** The escrow's OPEN_REVEAL_WINDOW, OPEN_SELECTION_WINDOW and OPEN_CONTEST_WINDOW (TaskEscrowBase.sol). */
export const OPEN_REVEAL_WINDOW_SECONDS = 24 * 3600;
export const OPEN_SELECTION_WINDOW_SECONDS = 3 * 24 * 3600;
export const OPEN_CONTEST_WINDOW_SECONDS = 2 * 24 * 3600;

/** INVALID_STATE unless the indexed task is an open-submission task (the escrow's NotOpenTask). */
function requireOpenTask(task: TaskRecord): void {
  if (!task.isOpen) {
    fail("INVALID_STATE", `task ${task.taskId} is not an open-submission task: use /dispute for a single-worker task`);
  }
}

/** The revealed submitters of `chain`'s open task (lower case), as indexed. */
async function revealedSubmitters(deps: Deps, chain: ChainName, taskId: number): Promise<Set<string>> {
  const byTask = (await loadOpenSubmissions(deps.db, chain, [taskId])).get(taskId);
  return new Set(byTask ? [...byTask.keys()].map((a) => a.toLowerCase()) : []);
}

/**
 * POST /a2a/tasks/{hash}/contest: unsigned contestOpen. The poster, while it picked nobody, during the selection
 * window (from the effective deadline plus the 1-day reveal window, for 3 days) when something was revealed; or a
 * revealed submitter other than the poster's pick within 2 days (plus paused time) of the pick. The task becomes
 * Disputed; its judge rules with /judge, or nobody does and /split halves it after the dispute window.
 * Refusals, in order: NOT_INDEXED, INVALID_STATE (not an open task; nothing revealed; the contest window closed),
 * INVALID_STATUS (not Funded), FORBIDDEN (not the poster before a pick, nor a revealed submitter other than the
 * pick after it), ESCROW_PAUSED, DEADLINE_NOT_REACHED (before the selection window, details.availableAt),
 * DEADLINE_REACHED (the selection window is over).
 */
export async function buildContestOpen(deps: Deps, wallet: string, rawHash: string): Promise<EscrowTxResult> {
  const caller = wallet.toLowerCase();
  const ctx = await loadTaskContext(deps, rawHash);
  const task = requireOnChain(ctx);
  requireOpenTask(task);
  if (task.status !== TASK_STATUS.Funded) {
    fail("INVALID_STATUS", `task ${ctx.taskId} is ${ctx.status}: only an unsettled open task is contested`);
  }
  const revealed = await revealedSubmitters(deps, ctx.chain, ctx.taskId);
  const picked = task.openPick !== ZERO_ADDRESS;
  if (caller === task.poster && !picked) {
    if (revealed.size === 0) {
      fail("INVALID_STATE", `nothing was revealed on task ${ctx.taskId}: there is no entry to send to the judge`);
    }
    await refuseWhilePaused(deps, ctx, "contestOpen");
    const selectionStart = (ctx.effectiveDeadline ?? task.deadline) + OPEN_REVEAL_WINDOW_SECONDS;
    if (await stillBefore(deps, ctx, selectionStart)) {
      fail(
        "DEADLINE_NOT_REACHED",
        `the selection window of task ${ctx.taskId} opens at ${selectionStart} (the effective deadline plus the reveal window)`,
        { details: { availableAt: selectionStart } },
      );
    }
    if (ctx.now >= selectionStart + OPEN_SELECTION_WINDOW_SECONDS) {
      fail("DEADLINE_REACHED", `the selection window of task ${ctx.taskId} closed: the entry is released by default`);
    }
    return unsignedEscrowTx(deps, ctx, caller, encodeContestOpen(ctx.taskId));
  }
  if (!picked || caller === task.openPick || !revealed.has(caller)) {
    fail(
      "FORBIDDEN",
      picked
        ? `only a revealed submitter other than the pick (${task.openPick}) may contest task ${ctx.taskId}`
        : `only the poster may send task ${ctx.taskId} to its judge before it picks a submission`,
    );
  }
  await refuseWhilePaused(deps, ctx, "contestOpen");
  const closesAt = windowEnd(ctx.pauses, task.openPickedAt, OPEN_CONTEST_WINDOW_SECONDS, ctx.now);
  if (!(await stillBefore(deps, ctx, closesAt))) {
    fail("INVALID_STATE", `the contest window of task ${ctx.taskId}'s pick closed at ${closesAt}`);
  }
  return unsignedEscrowTx(deps, ctx, caller, encodeContestOpen(ctx.taskId));
}

/**
 * POST /a2a/tasks/{hash}/judge { winner }: unsigned judgeOpen for the task's judge (its verifier agent, else the
 * marketplace verifier) or the admin, as indexed from the escrow's events: pays a revealed submitter, or refunds the
 * poster when `winner` is the zero address (winners and refunds are credited: /credits/withdraw takes them).
 * Refusals, in order: NOT_INDEXED, INVALID_STATE (not an open task), INVALID_STATUS (not Disputed), NOT_VERIFIER,
 * VALIDATION_ERROR (winner is not a revealed submitter), ESCROW_PAUSED.
 */
export async function buildJudgeOpen(
  deps: Deps,
  wallet: string,
  rawHash: string,
  winner: string,
): Promise<EscrowTxResult> {
  const caller = wallet.toLowerCase();
  const ctx = await loadTaskContext(deps, rawHash);
  const task = requireOnChain(ctx);
  requireOpenTask(task);
  if (task.status !== TASK_STATUS.Disputed) {
    fail("INVALID_STATUS", `task ${ctx.taskId} is ${ctx.status}: only a contested open task is judged`);
  }
  const config = await loadConfigValues(deps.db, ctx.chain);
  const judge = task.verifier !== ZERO_ADDRESS ? task.verifier : config.verifier?.value?.toLowerCase();
  const admin = config.admin?.value?.toLowerCase();
  if (caller !== judge && caller !== admin) {
    fail("NOT_VERIFIER", `only the judge of task ${ctx.taskId} (${judge ?? "unknown"}) or the admin may rule on it`);
  }
  const target = winner.toLowerCase();
  if (target !== ZERO_ADDRESS && !(await revealedSubmitters(deps, ctx.chain, ctx.taskId)).has(target)) {
    fail(
      "VALIDATION_ERROR",
      `winner: ${target} revealed no submission on task ${ctx.taskId}; name a revealed submitter, or the zero address to refund the poster`,
    );
  }
  await refuseWhilePaused(deps, ctx, "judgeOpen");
  return unsignedEscrowTx(deps, ctx, caller, encodeJudgeOpen(ctx.taskId, target));
}
