/** The poster's own moves before anyone works on the task: assign (unsigned assignWorker), cancel (unsigned cancelTask). */
import type { Deps } from "../deps";
import { fail } from "../../errors";
import { encodeAssignWorker, encodeCancelTask } from "../../chain/escrowCalls";
import { TASK_STATUS, ZERO_ADDRESS } from "../../escrow/records";
import { deadlineReached, loadTaskContext, requireOnChain, unsignedEscrowTx, type EscrowTxResult } from "./taskContext";
import { isTaskVerifier, requirePoster } from "./accept";
import { requireSettlesOn } from "./chainRules";

/**
 * POST /tasks/{hash}/assign { worker }: the unsigned assignWorker for the poster. Nothing is recorded: the listing
 * stays open until the transaction is mined, and then other agents' accepts answer ASSIGNED_ELSEWHERE. Refusals:
 * NOT_POSTER; VALIDATION_ERROR for a worker the escrow would refuse (the poster) or that could never be judged (the
 * task's verifier agent); CHAIN_UNSUPPORTED for a registered agent that does not settle on the task's chain; NOT_INDEXED; NOT_OPEN (not Funded, or past the deadline); INVALID_STATE (an agent's accept
 * is being assigned); ESCROW_PAUSED.
 */
export async function buildAssignWorker(
  deps: Deps,
  wallet: string,
  rawHash: string,
  worker: string,
): Promise<EscrowTxResult> {
  const poster = wallet.toLowerCase();
  const ctx = await loadTaskContext(deps, rawHash);
  requirePoster(ctx, poster);
  const target = worker.toLowerCase();
  if (target === ZERO_ADDRESS) fail("VALIDATION_ERROR", "worker: must not be the zero address");
  if (target === poster)
    fail("VALIDATION_ERROR", "worker: must not be the poster (the escrow refuses self-assignment)");
  if (isTaskVerifier(ctx, target)) {
    fail(
      "VALIDATION_ERROR",
      "worker: the task's verifier agent cannot also be its worker (nobody could judge the work)",
    );
  }
  await requireSettlesOn(deps.db, "CHAIN_UNSUPPORTED", target, ctx.chain, `task ${ctx.taskId}`);
  requireOnChain(ctx);
  if (ctx.onChainStatus !== TASK_STATUS.Funded || deadlineReached(ctx)) {
    fail(
      "NOT_OPEN",
      `task ${ctx.taskId} is not open (${ctx.status}): only a funded task before its deadline can be assigned`,
    );
  }
  if (ctx.assignment) {
    fail(
      "INVALID_STATE",
      `an agent accepted task ${ctx.taskId} and the marketplace is assigning it (${ctx.assignment.agent})`,
    );
  }
  if (ctx.paused) fail("ESCROW_PAUSED", "the escrow is paused: assignWorker would revert; retry after it resumes");
  return unsignedEscrowTx(deps, ctx, poster, encodeAssignWorker(ctx.taskId, target));
}

/**
 * POST /a2a/tasks/{hash}/cancel: the unsigned cancelTask for the poster. Refusals: NOT_POSTER; NOT_INDEXED;
 * INVALID_STATUS (not Funded on-chain); ASSIGNMENT_PENDING (an agent's accept is being assigned: retry, then the task
 * is no longer cancellable, or is again); ESCROW_PAUSED.
 */
export async function buildCancelTask(deps: Deps, wallet: string, rawHash: string): Promise<EscrowTxResult> {
  const poster = wallet.toLowerCase();
  const ctx = await loadTaskContext(deps, rawHash);
  requirePoster(ctx, poster);
  requireOnChain(ctx);
  if (ctx.onChainStatus !== TASK_STATUS.Funded) {
    fail("INVALID_STATUS", `task ${ctx.taskId} is ${ctx.status}: only a funded task nobody took can be cancelled`);
  }
  if (ctx.assignment) {
    fail(
      "ASSIGNMENT_PENDING",
      `an agent accepted task ${ctx.taskId} and its assignment is not confirmed yet; retry shortly`,
    );
  }
  if (ctx.paused) fail("ESCROW_PAUSED", "the escrow is paused: cancelTask would revert; retry after it resumes");
  return unsignedEscrowTx(deps, ctx, poster, encodeCancelTask(ctx.taskId));
}
