/**
 * Accept (docs/marketplace.md "Accept"): an agent takes a listed task through the marketplace verifier.
 *
 * In order: registered agent with a public key (NOT_REGISTERED, NO_PUBKEY); not the poster (SELF_ACCEPT) nor
 * the task's verifier agent (IS_VERIFIER); listed and open (NOT_FOUND, NOT_INDEXED, TASK_CANCELLED, TASK_EXPIRED,
 * NOT_OPEN); not assigned on-chain by the poster to someone else (ASSIGNED_ELSEWHERE); the target executor
 * (NOT_TARGET_EXECUTOR); the agent's minimum reward (BELOW_MIN_REWARD); the agent's chains (CHAIN_UNSUPPORTED); the
 * offer window (OFFER_HELD, NOT_OFFER_HOLDER); the accept lock (ACCEPT_LOCKED); the brief key (NEEDS_WRAP,
 * REWRAP_FAILED). Then the assignment row (the task's primary key: one winner), the agent's key, and the marketplace
 * verifier's marketplaceAssign; a send that fails removes both rows and answers 503 SETTLEMENT_FAILED. The lock is
 * released on every path.
 */
import type { Deps } from "../deps";
import { chainRefusal } from "./chainRules";
import { escrowRefusal } from "../../chain/escrowErrors";
import { assignmentHolds } from "../marketStatus";
import { AppError, fail } from "../../errors";
import { findExecutor, touchExecutor, type ExecutorRecord } from "../../db/repositories/executors";
import { findBid } from "../../db/repositories/bids";
import { findOpenOffer } from "../../db/repositories/offers";
import { acquireAcceptLock, releaseAcceptLock } from "../../db/repositories/acceptLocks";
import {
  deleteAssignment,
  findAssignment,
  insertAssignment,
  setAssignmentIntent,
  type AssignmentRecord,
} from "../../db/repositories/assignments";
import { deleteAgentKey, saveAgentKey } from "../../db/repositories/agentKeys";
import { TASK_STATUS, ZERO_ADDRESS } from "../../escrow/records";
import { assignKey, VerifierSendError, type IntentView } from "../../verifier/types";
import { agentBriefKey, type AgentBriefKey } from "./keys";
import { assignedElsewhere, deadlineReached, loadTaskContext, requireOnChain, type TaskContext } from "./taskContext";
import { verifierOn } from "../verifiers";

// ---------------------------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------------------------

export interface AcceptResult {
  taskHash: string;
  onChainTaskId: number;
  state: "assigning" | "assigned";
  /** The marketplaceAssign transaction, once broadcast; null for a task the poster assigned. */
  txHash: string | null;
  /** The agent's own wrapped brief key (private tasks only). */
  wrappedKey?: string;
}

export interface BidResult {
  taskHash: string;
  onChainTaskId: number;
  agent: string;
  /** The agent's reputation score when it bid. */
  score: number;
  bidAt: number;
  /** The exclusive offer window after this bid: whoever holds it, until when (wall clock). */
  offer: { agent: string; expiresAt: number } | null;
}

export interface Applicant {
  agent: string;
  publicKey: string | null;
  capabilities: string[];
  message: string | null;
  bidAt: number;
  scoreAtBid: number;
  /** The agent's reputation score now. */
  reputation: number;
  offerHolder: boolean;
}

export interface ApplicantsResult {
  taskHash: string;
  onChainTaskId: number;
  applicants: Applicant[];
  total: number;
  offer: { agent: string; expiresAt: number } | null;
}

// ---------------------------------------------------------------------------------------------------------------
// Shared checks
// ---------------------------------------------------------------------------------------------------------------

/** The caller's executor record (NOT_REGISTERED without one); a marketplace operation marks the agent seen. */
export async function requireRegisteredExecutor(deps: Deps, wallet: string): Promise<ExecutorRecord> {
  const executor = await findExecutor(deps.db, wallet);
  if (!executor) {
    return fail("NOT_REGISTERED", `${wallet} is not a registered agent: register with POST /api/v1/a2a/executors`);
  }
  await touchExecutor(deps.db, executor.address, await deps.clock.chainNow());
  return executor;
}

export function isTaskVerifier(ctx: TaskContext, wallet: string): boolean {
  const onChain = ctx.task && ctx.task.verifier !== ZERO_ADDRESS ? ctx.task.verifier : undefined;
  return wallet === ctx.listing.verifierAddress || wallet === onChain;
}

export function requirePoster(ctx: TaskContext, wallet: string): void {
  if (wallet !== ctx.poster) fail("NOT_POSTER", `only the poster of task ${ctx.taskId} (${ctx.poster}) may do this`);
}

/** Whether `executor` could take the task at all: target, minimum reward, chain (the offer window's eligibility). */
export function eligibility(ctx: TaskContext, executor: ExecutorRecord): AppError | undefined {
  const { listing } = ctx;
  if (listing.targetExecutor && listing.targetExecutor !== executor.address) {
    return new AppError({
      code: "NOT_TARGET_EXECUTOR",
      message: `task ${ctx.taskId} is reserved for the agent ${listing.targetExecutor}`,
    });
  }
  const amount = ctx.task?.amount ?? listing.amount;
  if (amount === null) {
    return new AppError({
      code: "REWARD_UNAVAILABLE",
      message: `the reward of task ${ctx.taskId} is not known yet; retry`,
    });
  }
  if (BigInt(amount) < BigInt(executor.minReward)) {
    return new AppError({
      code: "BELOW_MIN_REWARD",
      message: `the reward of task ${ctx.taskId} (${amount}) is below your minimum reward (${executor.minReward})`,
    });
  }
  return chainRefusal("CHAIN_UNSUPPORTED", executor, ctx.chain, `task ${ctx.taskId}`);
}

// ---------------------------------------------------------------------------------------------------------------
// Accept
// ---------------------------------------------------------------------------------------------------------------

/** The answer to an agent that holds the task's assignment already (a retried accept, or a poster's assignment). */
async function acceptedResult(
  deps: Deps,
  ctx: TaskContext,
  executor: ExecutorRecord,
  intent: IntentView | undefined,
): Promise<AcceptResult> {
  const key = await agentBriefKey(deps, ctx, executor);
  if (key && !key.stored) {
    await saveAgentKey(deps.db, {
      chain: ctx.chain,
      taskId: ctx.taskId,
      agent: executor.address,
      wrappedKey: key.wrappedKey,
      source: key.source,
      createdAt: deps.clock.wallNow(),
    });
  }
  const onChain = ctx.worker === executor.address && ctx.onChainStatus !== TASK_STATUS.Funded;
  return {
    taskHash: ctx.taskHash,
    onChainTaskId: ctx.taskId,
    state: onChain || intent?.status === "confirmed" ? "assigned" : "assigning",
    txHash: intent?.txHash ?? null,
    ...(key ? { wrappedKey: key.wrappedKey } : {}),
  };
}

/**
 * The open check of accept. Returns "adopt" when the caller is the worker the poster assigned on-chain itself (it
 * may accept to get its brief key); throws the code of a task that cannot be accepted.
 */
function checkOpen(ctx: TaskContext, agent: string): "open" | "adopt" {
  const status = ctx.onChainStatus;
  if (status === TASK_STATUS.Cancelled) fail("TASK_CANCELLED", `task ${ctx.taskId} was cancelled`);
  const takeable = status === TASK_STATUS.Funded || status === TASK_STATUS.Assigned;
  if (takeable && deadlineReached(ctx)) {
    fail(
      "TASK_EXPIRED",
      `task ${ctx.taskId} reached its deadline (${ctx.effectiveDeadline}) unassigned or undelivered`,
    );
  }
  if (status === TASK_STATUS.Funded) {
    if (ctx.assignment) fail("NOT_OPEN", `task ${ctx.taskId} was accepted by another agent`);
    return "open";
  }
  if (status === TASK_STATUS.Assigned && assignedElsewhere(ctx)) {
    if (ctx.worker === agent) return "adopt";
    fail("ASSIGNED_ELSEWHERE", `the poster assigned task ${ctx.taskId} on-chain to ${ctx.worker}`);
  }
  return fail("NOT_OPEN", `task ${ctx.taskId} is not open (${ctx.status})`);
}

/** Records the poster's on-chain assignment of `executor` (via poster) and answers it with its key. */
async function adopt(deps: Deps, ctx: TaskContext, executor: ExecutorRecord): Promise<AcceptResult> {
  const answer = await acceptedResult(deps, ctx, executor, undefined);
  if (ctx.voidAssignment) await deleteAssignment(deps.db, ctx.voidAssignment);
  if (!ctx.assignment) {
    await insertAssignment(deps.db, {
      chain: ctx.chain,
      taskId: ctx.taskId,
      agent: executor.address,
      via: "poster",
      intentId: null,
      acceptedAt: deps.clock.wallNow(),
    });
  }
  return answer;
}

/** POST /a2a/tasks/{hash}/accept (see the file's comment for the order of checks). */
export async function acceptTask(deps: Deps, wallet: string, rawHash: string): Promise<AcceptResult> {
  const agent = wallet.toLowerCase();
  const executor = await requireRegisteredExecutor(deps, agent);
  if (!executor.publicKey) fail("NO_PUBKEY", "your executor registration has no public key: register one to accept");
  const ctx = await loadTaskContext(deps, rawHash);
  if (agent === ctx.poster) fail("SELF_ACCEPT", `you posted task ${ctx.taskId}: a poster cannot accept its own task`);
  if (isTaskVerifier(ctx, agent)) {
    fail("IS_VERIFIER", `you are the verifier agent of task ${ctx.taskId}: you cannot also work on it`);
  }
  requireOnChain(ctx);

  // A retried accept of the agent that won answers the same again while the task is being (or is) assigned.
  if (
    ctx.assignment?.agent === agent &&
    ctx.assignment.via === "accept" &&
    ["assigning", "assigned"].includes(ctx.status)
  ) {
    return acceptedResult(deps, ctx, executor, ctx.assignIntent);
  }
  if (checkOpen(ctx, agent) === "adopt") return adopt(deps, ctx, executor);

  const refused = eligibility(ctx, executor);
  if (refused) throw refused;

  const offer = await findOpenOffer(deps.db, ctx.taskId, deps.clock.wallNow(), ctx.chain);
  if (offer && offer.agent !== agent) {
    if (await findBid(deps.db, ctx.taskId, agent, ctx.chain)) {
      fail(
        "NOT_OFFER_HOLDER",
        `a higher-scored applicant holds the exclusive offer of task ${ctx.taskId} until ${offer.expiresAt}`,
        {
          details: { offerExpiresAt: offer.expiresAt },
        },
      );
    }
    fail("OFFER_HELD", `an applicant holds the exclusive offer of task ${ctx.taskId} until ${offer.expiresAt}`, {
      details: { offerExpiresAt: offer.expiresAt },
    });
  }

  const lock = await acquireAcceptLock(deps.db, {
    chain: ctx.chain,
    taskId: ctx.taskId,
    agent,
    now: deps.clock.wallNow(),
    ttlSeconds: deps.config.marketplace.acceptLockSeconds,
  });
  if (!lock) fail("ACCEPT_LOCKED", `another agent is accepting task ${ctx.taskId}; retry in a few seconds`);
  try {
    return await acceptUnderLock(deps, ctx, executor);
  } finally {
    await releaseAcceptLock(deps.db, lock);
  }
}

/** Clears a void assignment left by an earlier accept, or refuses when a live one appeared meanwhile. */
async function clearStaleAssignment(deps: Deps, ctx: TaskContext): Promise<void> {
  const current = await findAssignment(deps.db, ctx.taskId, ctx.chain);
  if (!current) return;
  const intent =
    current.via === "accept" ? await verifierOn(deps, ctx.chain)?.intent(assignKey(ctx.taskId)) : undefined;
  const lockSeconds = deps.config.marketplace.acceptLockSeconds;
  if (assignmentHolds(current, intent, ctx.task, deps.clock.wallNow(), lockSeconds)) {
    fail("NOT_OPEN", `task ${ctx.taskId} was accepted by another agent`);
  }
  await deleteAssignment(deps.db, current);
}

async function acceptUnderLock(deps: Deps, ctx: TaskContext, executor: ExecutorRecord): Promise<AcceptResult> {
  const agent = executor.address;
  await clearStaleAssignment(deps, ctx);
  const key: AgentBriefKey | undefined = await agentBriefKey(deps, ctx, executor);

  const assignment: AssignmentRecord = {
    chain: ctx.chain,
    taskId: ctx.taskId,
    agent,
    via: "accept",
    intentId: null,
    acceptedAt: deps.clock.wallNow(),
  };
  if (!(await insertAssignment(deps.db, assignment))) {
    fail("NOT_OPEN", `task ${ctx.taskId} was accepted by another agent`);
  }
  const savedKey = key !== undefined && !key.stored;
  const rollBack = async () => {
    await deleteAssignment(deps.db, assignment);
    if (savedKey) await deleteAgentKey(deps.db, ctx.taskId, agent, ctx.chain);
  };

  let intent: IntentView;
  try {
    if (savedKey) {
      await saveAgentKey(deps.db, {
        chain: ctx.chain,
        taskId: ctx.taskId,
        agent,
        wrappedKey: key.wrappedKey,
        source: key.source,
        createdAt: assignment.acceptedAt,
      });
    }
    const verifier = verifierOn(deps, ctx.chain);
    if (!verifier) throw new VerifierSendError("no marketplace verifier is configured (VERIFIER_PRIVATE_KEY)");
    intent = await verifier.requestAssign(ctx.taskId, agent);
    if (intent.status === "failed") {
      throw new VerifierSendError(`marketplaceAssign failed: ${intent.error ?? "refused"}`);
    }
  } catch (error) {
    await rollBack();
    if (error instanceof VerifierSendError) {
      // reason: the escrow's error when marketplaceAssign would revert (EnforcedPause while paused, for example).
      return fail(
        "SETTLEMENT_FAILED",
        `the assignment of task ${ctx.taskId} could not be sent on-chain (${error.message}); nothing changed, retry`,
        { cause: error, ...escrowRefusal(error.reason) },
      );
    }
    throw error;
  }
  await setAssignmentIntent(deps.db, assignment, intent.id);
  return {
    taskHash: ctx.taskHash,
    onChainTaskId: ctx.taskId,
    state: intent.status === "confirmed" ? "assigned" : "assigning",
    txHash: intent.txHash,
    ...(key ? { wrappedKey: key.wrappedKey } : {}),
  };
}
