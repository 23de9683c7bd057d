/**
 * The projection of a listed task: `{ meta, state }`, where meta is what the poster listed plus what the receipt proved
 * and state the marketplace state (domain/marketStatus.ts); and the on-chain record as the API shows it. Key material
 * (wrappedKeys, custody key) never leaves through a projection.
 */
import type { Deps } from "./deps";
import { ReadCache } from "./readCache";
import { effectiveDeadline } from "../escrow/rules";
import { assignmentHolds, assignmentState, intentInFlight, marketStatus, type AssignmentState } from "./marketStatus";
import type { OnChainTask, TaskMeta, TaskState } from "./schemas/marketplace";
import { type ListingRecord } from "../db/repositories/listings";
import { loadPausePeriods } from "../db/repositories/pausePeriods";
import { getAssignments, type AssignmentRecord } from "../db/repositories/assignments";
import { assignKey, verdictKey } from "../verifier/types";
import { TASK_STATUS, ZERO_ADDRESS, type PausePeriod, type TaskRecord } from "../escrow/records";

/** What the marketplace knows of a page of tasks beyond the chain: held assignments and verdicts in flight. */
export interface MarketFacts {
  assignments: ReadonlyMap<number, AssignmentState>;
  verifying: ReadonlySet<number>;
}

const NO_FACTS: MarketFacts = { assignments: new Map(), verifying: new Set() };

/**
 * The marketplace state of a listed task (see domain/marketStatus.ts). Before the projection has the task, the
 * receipt proved it Funded and the listing's creation-time deadline stands for the effective one.
 */
export function marketplaceState(
  listing: ListingRecord,
  task: TaskRecord | undefined,
  pauses: readonly PausePeriod[],
  now: number,
  facts: MarketFacts = NO_FACTS,
): TaskState {
  const onChainStatus = task?.status ?? TASK_STATUS.Funded;
  const lapsed = task
    ? now >= effectiveDeadline(task, pauses, now)
    : listing.deadline !== null && now >= listing.deadline;
  const status = marketStatus({
    onChainStatus,
    lapsed,
    assignment: facts.assignments.get(listing.taskId) ?? "none",
    verdictInFlight: facts.verifying.has(listing.taskId),
  });
  return { status, onChainStatus };
}

/**
 * The marketplace facts of a page of tasks, by the task loader's rules (assignmentHolds, intentInFlight): the page's
 * stored assignments (one query, unless the caller read them already: `stored`), then the marketplace verifier's own
 * view of its intents. Only a Funded task's assignment can hold.
 */
export async function marketFacts(
  deps: Deps,
  tasks: readonly TaskRecord[],
  stored?: ReadonlyMap<number, AssignmentRecord>,
): Promise<MarketFacts> {
  const funded = tasks.filter((t) => t.status === TASK_STATUS.Funded);
  const submitted = tasks.filter((t) => t.status === TASK_STATUS.Submitted);
  if (funded.length === 0 && submitted.length === 0) return NO_FACTS;
  const verifier = deps.verifier;
  stored ??= await getAssignments(
    deps.db,
    funded.map((t) => t.taskId),
  );
  // Nothing stored and no verifier: no assignment can hold and no verdict is in flight (most reads of an open task).
  if (stored.size === 0 && !verifier) return NO_FACTS;
  const byId = new Map(funded.map((t) => [t.taskId, t]));
  const wallNow = deps.clock.wallNow();
  const lockSeconds = deps.config.marketplace.acceptLockSeconds;
  const assignments = new Map<number, AssignmentState>();
  for (const [taskId, assignment] of stored) {
    const task = byId.get(taskId);
    if (!task) continue;
    const intent = verifier ? await verifier.intent(assignKey(taskId)) : undefined;
    if (assignmentHolds(assignment, intent, task, wallNow, lockSeconds)) {
      assignments.set(taskId, assignmentState(assignment, intent));
    }
  }
  const verifying = new Set<number>();
  for (const t of verifier ? submitted : []) {
    if (intentInFlight(await verifier!.intent(verdictKey(t.taskId, t.submissionAttempts)))) verifying.add(t.taskId);
  }
  return { assignments, verifying };
}

export interface ProjectionContext {
  chainId: number | null;
  pauses: readonly PausePeriod[];
  now: number;
}

/** The public metadata of a listed task. No key material; publicBrief only on public tasks. */
export function marketplaceMeta(
  listing: ListingRecord,
  task: TaskRecord | undefined,
  ctx: ProjectionContext,
): TaskMeta {
  return {
    taskHash: listing.taskHash,
    onChainTaskId: listing.taskId,
    chain: listing.chain as TaskMeta["chain"],
    chainId: ctx.chainId,
    token: task?.token ?? listing.token,
    amount: task?.amount ?? listing.amount,
    deadline: task?.deadline ?? listing.deadline,
    effectiveDeadline: task ? effectiveDeadline(task, ctx.pauses, ctx.now) : null,
    verificationMode: listing.verificationMode as TaskMeta["verificationMode"],
    verificationCriteria: (listing.verificationCriteria as TaskMeta["verificationCriteria"]) ?? null,
    verifierAddress: listing.verifierAddress,
    requiredCapabilities: listing.capabilities,
    privacy: listing.privacy,
    rootHash: listing.rootHash,
    ...(listing.privacy === "public" && listing.publicBrief !== null ? { publicBrief: listing.publicBrief } : {}),
    targetExecutor: listing.targetExecutor,
    serviceId: listing.serviceId,
    listedAt: listing.listedAt,
    fundingTxHash: listing.txHash,
  };
}

export function onChainTask(task: TaskRecord, pauses: readonly PausePeriod[], now: number): OnChainTask {
  return {
    taskId: task.taskId,
    poster: task.poster,
    worker: task.worker,
    token: task.token,
    amount: task.amount,
    taskHash: task.taskHash,
    evidenceHash: task.evidenceHash,
    status: task.status,
    category: task.category,
    locationZone: task.locationZone,
    createdAt: task.createdAt,
    deadline: task.deadline,
    effectiveDeadline: effectiveDeadline(task, pauses, now),
    submissionAttempts: task.submissionAttempts,
    disputedAt: task.disputedAt,
    verifier: task.verifier,
    failedVerdictAt: task.failedVerdictAt,
    escalated: task.escalated,
    payout: task.payout,
    fee: task.feePaid,
    refund: task.refund,
    fundingTxHash: task.createdTx,
    ...(task.isOpen
      ? {
          open: {
            submissionCount: task.openSubmissionCount,
            pick: task.openPick === ZERO_ADDRESS ? null : task.openPick,
            pickedAt: task.openPick === ZERO_ADDRESS ? null : task.openPickedAt,
            outcome: task.openOutcome,
          },
        }
      : {}),
  };
}

/**
 * The projection row of a listing, when it is the listed task: after a reorg the same on-chain id may hold another
 * task, which the listing must not describe.
 */
export function matchingTask(listing: ListingRecord, task: TaskRecord | undefined): TaskRecord | undefined {
  return task && task.taskHash === listing.taskHash ? task : undefined;
}

export async function projectionContext(deps: Deps): Promise<ProjectionContext> {
  return {
    chainId: deps.chain?.book.chainId ?? null,
    pauses: await projectedPauses(deps),
    now: await deps.clock.chainNow(),
  };
}

/**
 * Pause periods change only when the indexer records a pause or an unpause, so reads keep them per indexer checkpoint
 * (a new checkpoint reads them again) and for at most PAUSES_CACHE_MS, which bounds staleness when the indexer runs in
 * another process, as for the open-task pages. Actions that check the escrow's state (domain/marketplace) read them
 * afresh.
 */
export const PAUSES_CACHE_MS = 1000;
const pauseCaches = new WeakMap<Deps, ReadCache<readonly PausePeriod[]>>();

function projectedPauses(deps: Deps): Promise<readonly PausePeriod[]> {
  let cache = pauseCaches.get(deps);
  if (!cache) pauseCaches.set(deps, (cache = new ReadCache(PAUSES_CACHE_MS, 16)));
  return cache.get(String(deps.indexer?.status().checkpoint ?? null), () =>
    loadPausePeriods(deps.db, deps.config.api.postingChain),
  );
}

/**
 * Whether `caller` may see a task's result: its poster, its worker or its verifier agent (who judges it, and whose
 * key a private task must wrap: VERIFIER_NOT_WRAPPED), or anyone when the task is public. The one rule of every read
 * of a result: the single read here, and the work and judging lists (domain/listing.ts).
 */
export function canSeeResult(
  task: TaskRecord,
  listing: ListingRecord | undefined,
  caller: string | undefined,
): boolean {
  if (listing?.privacy === "public") return true;
  if (!caller) return false;
  const who = caller.toLowerCase();
  const is = (party: string) => party !== ZERO_ADDRESS && who === party;
  return who === task.poster || is(task.worker) || is(task.verifier);
}
