/**
 * The shared loader of the marketplace operations: a task hash resolved to its listing, its on-chain projection, the
 * marketplace's own records (the assignment and the marketplace verifier's intents) and the derived marketplace
 * state of docs/marketplace.md ("States"). Every operation of server/domain/marketplace/ starts here, so they all
 * see a task the same way.
 *
 * Clocks: deadlines are chain time (`now`) of the task's own chain (chainTime); the accept lock, offer windows and the
 * age of an assignment are wall clock (`wallNow`), because a chain that mines no block has a frozen clock.
 */
import type { UnsignedTx } from "../schemas/posting";
import type { Deps } from "../deps";
import { taskHashParam } from "../schemas/marketplace";
import { fail } from "../../errors";
import { type ListingRecord } from "../../db/repositories/listings";
import { findTaskRows } from "../../db/repositories/taskRows";
import { loadPausePeriods } from "../../db/repositories/pausePeriods";
import { type AssignmentRecord } from "../../db/repositories/assignments";
import { TASK_STATUS, ZERO_ADDRESS, type ChainName, type PausePeriod, type TaskRecord } from "../../escrow/records";
import { assignKey, verdictKey, type IntentView } from "../../verifier/types";
import { effectiveDeadline, escrowPaused } from "../../escrow/rules";
import {
  assignmentHolds,
  assignmentState,
  intentInFlight,
  marketStatus,
  type MarketplaceStatus,
} from "../marketStatus";
import { verifierOn } from "../verifiers";
import { chainClock, chainGateway } from "../chainGateways";

export interface TaskContext {
  taskHash: string;
  /** The task's settlement chain (its listing's). */
  chain: ChainName;
  taskId: number;
  listing: ListingRecord;
  /** The on-chain projection of the listed task; undefined while the indexer has not seen it (see requireOnChain). */
  task: TaskRecord | undefined;
  poster: string;
  /** The on-chain worker, or undefined while none is assigned (or the projection lags). */
  worker: string | undefined;
  /** The escrow status (Funded before the projection has the task: the funding receipt proved it). */
  onChainStatus: number;
  pauses: readonly PausePeriod[];
  /** Chain time, Unix seconds. */
  now: number;
  /** Wall clock, Unix seconds. */
  wallNow: number;
  /** The escrow's deadline plus time spent paused (the listing's creation-time deadline before indexing). */
  effectiveDeadline: number | null;
  /** Whether the escrow is paused now (every non-admin call would revert EnforcedPause). */
  paused: boolean;
  /** The marketplace's live assignment: void ones (see `voidAssignment`) are not here. */
  assignment: AssignmentRecord | undefined;
  /** An assignment row that no longer holds: its marketplaceAssign failed, or the accept died before sending it. */
  voidAssignment: AssignmentRecord | undefined;
  /** The marketplace verifier's marketplaceAssign intent of this task, if any. */
  assignIntent: IntentView | undefined;
  /** The verdict intent of the latest submission, if any. */
  verdictIntent: IntentView | undefined;
  /** The derived marketplace state. */
  status: MarketplaceStatus;
}

// ---------------------------------------------------------------------------------------------------------------
// The path parameter
// ---------------------------------------------------------------------------------------------------------------

/**
 * A task hash of a marketplace path, by the rule of the `:hash` path parameter (schemas/marketplace.ts taskHashParam):
 * a numeric id answers TASK_ID_DEPRECATED, anything else that is not 0x + 64 hex VALIDATION_ERROR, the zero hash
 * EMPTY_HASH. Returns it lower-case.
 */
export function parseTaskHash(raw: string): string {
  const parsed = taskHashParam.safeParse(raw);
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  const code = (first.code === "custom" ? first.params?.errorCode : undefined) ?? "VALIDATION_ERROR";
  return fail(code, `hash: ${first.message}`);
}

// ---------------------------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------------------------

/** Chain time of `chain`, Unix seconds, from that chain's clock (`fresh`: past its cache). */
export async function chainTime(deps: Deps, chain: ChainName, fresh: boolean): Promise<number> {
  const clock = chainClock(deps, chain);
  return fresh ? clock.chainNowFresh() : clock.chainNow();
}

/** The marketplace state (docs/marketplace.md "States") of a loaded task. */
export function deriveStatus(c: Omit<TaskContext, "status">): MarketplaceStatus {
  return marketStatus({
    onChainStatus: c.onChainStatus,
    lapsed: c.effectiveDeadline !== null && c.now >= c.effectiveDeadline,
    assignment: assignmentState(c.assignment, c.assignIntent),
    verdictInFlight: intentInFlight(c.verdictIntent),
  });
}

/**
 * Loads a listed task by hash (`raw` is the path parameter: see parseTaskHash). NOT_FOUND when no task with this
 * hash is listed. The on-chain projection may lag the listing: `task` is then undefined and the state comes from the
 * funding receipt (Funded).
 */
export async function loadTaskContext(deps: Deps, raw: string): Promise<TaskContext> {
  const taskHash = parseTaskHash(raw);
  // The listing, its task and its assignment in one statement.
  const postingChain = deps.config.api.postingChain;
  const [{ listing, task: projected, assignment: stored }, postingPauses, postingNow] = await Promise.all([
    findTaskRows(deps.db, { taskHash }),
    loadPausePeriods(deps.db, postingChain),
    deps.clock.chainNow(),
  ]);
  if (!listing) return fail("NOT_FOUND", `no listed task has hash ${taskHash} (list it with /a2a/tasks/index)`);
  // The pauses of the task's own escrow (the posting chain's were read alongside, the usual case).
  const pauses = listing.chain === postingChain ? postingPauses : await loadPausePeriods(deps.db, listing.chain);
  // Chain time of the task's own chain (the posting chain's was read alongside).
  const now = listing.chain === postingChain ? postingNow : await chainTime(deps, listing.chain, false);
  // After a reorg the same on-chain id may hold another task, which the listing must not describe.
  const task = projected && projected.taskHash === listing.taskHash ? projected : undefined;
  const verifier = verifierOn(deps, listing.chain);
  const assignIntent = verifier ? await verifier.intent(assignKey(listing.taskId)) : undefined;
  const verdictIntent =
    verifier && task && task.submissionAttempts > 0
      ? await verifier.intent(verdictKey(listing.taskId, task.submissionAttempts))
      : undefined;
  const wallNow = deps.clock.wallNow();
  const holds =
    stored !== undefined &&
    assignmentHolds(stored, assignIntent, task, wallNow, deps.config.marketplace.acceptLockSeconds);
  const base: Omit<TaskContext, "status"> = {
    taskHash,
    chain: listing.chain,
    taskId: listing.taskId,
    listing,
    task,
    poster: listing.poster,
    worker: task && task.worker !== ZERO_ADDRESS ? task.worker : undefined,
    onChainStatus: task?.status ?? TASK_STATUS.Funded,
    pauses,
    now,
    wallNow,
    effectiveDeadline: task ? effectiveDeadline(task, pauses, now) : listing.deadline,
    paused: escrowPaused(pauses),
    assignment: holds ? stored : undefined,
    voidAssignment: holds ? undefined : stored,
    assignIntent,
    verdictIntent,
  };
  // Added to the literal, not `{ ...base, status }`: a hidden class per object on Node 20
  // (test/server/domain/hiddenClasses.test.ts).
  return Object.assign(base, { status: deriveStatus(base) });
}

// ---------------------------------------------------------------------------------------------------------------
// Checks shared by the operations
// ---------------------------------------------------------------------------------------------------------------

/** The on-chain projection of the task; NOT_INDEXED (503, retry) while the indexer has not seen it. */
export function requireOnChain(ctx: TaskContext): TaskRecord {
  if (!ctx.task) {
    return fail(
      "NOT_INDEXED",
      `task ${ctx.taskId} (${ctx.taskHash}) is listed but not indexed from the chain yet; retry`,
    );
  }
  return ctx.task;
}

/**
 * Whether `agent` accepted this task through the marketplace and the chain does not show it as the worker yet: its
 * marketplaceAssign is unsent, unconfirmed, or confirmed but not indexed.
 */
export function assignmentPending(ctx: TaskContext, agent: string): boolean {
  const a = ctx.assignment;
  if (!a || a.agent !== agent.toLowerCase()) return false;
  return !(ctx.task && ctx.task.worker === a.agent && ctx.task.status !== TASK_STATUS.Funded);
}

/**
 * For the worker's operations (submit and the rest): ASSIGNMENT_PENDING (503, retry) while the caller's accepted
 * assignment is not on-chain yet.
 */
export function assertAssignmentSettled(ctx: TaskContext, caller: string): void {
  if (assignmentPending(ctx, caller)) {
    fail(
      "ASSIGNMENT_PENDING",
      `the assignment of task ${ctx.taskId} to ${caller.toLowerCase()} is not confirmed on-chain yet; retry shortly`,
    );
  }
}

/**
 * Whether the chain shows a worker that the marketplace did not assign through an accept: the poster assigned it
 * with assignWorker (the marketplace was not asked).
 */
export function assignedElsewhere(ctx: TaskContext): boolean {
  if (!ctx.worker) return false;
  return !ctx.assignment || ctx.assignment.via === "poster" || ctx.assignment.agent !== ctx.worker;
}

/** Whether the effective deadline has passed (chain time). */
export function deadlineReached(ctx: TaskContext): boolean {
  return ctx.effectiveDeadline !== null && ctx.now >= ctx.effectiveDeadline;
}

/** An unsigned escrow call for a marketplace operation, answered to the wallet that must sign it. */
export interface EscrowTxResult {
  taskHash: string;
  onChainTaskId: number;
  unsignedTx: UnsignedTx;
  /** The task's chain: the transaction is for its escrow and must be sent there. */
  chain: ChainName;
  chainId: number;
}

/**
 * The unsigned escrow call `data` from `from` on the task's own chain: to that chain's escrow proxy, with its chain
 * id (CHAIN_NOT_CONFIGURED, 503, when this service has no deployment of the task's chain).
 */
export function unsignedEscrowTx(deps: Deps, ctx: TaskContext, from: string, data: string): EscrowTxResult {
  const gateway = chainGateway(deps, ctx.chain);
  return {
    taskHash: ctx.taskHash,
    onChainTaskId: ctx.taskId,
    unsignedTx: { to: gateway.book.escrow.proxy, data, from, value: "0" },
    chain: ctx.chain,
    chainId: gateway.book.chainId,
  };
}

/**
 * Whether chain time is still before `at`, for a refusal that rests on time: a cached `ctx.now` that says so is
 * re-read from the chain first (and `ctx.now` updated), so the service never refuses what the chain already allows.
 */
export async function stillBefore(deps: Deps, ctx: TaskContext, at: number): Promise<boolean> {
  if (ctx.now >= at) return false;
  ctx.now = Math.max(ctx.now, await chainTime(deps, ctx.chain, true));
  return ctx.now < at;
}
