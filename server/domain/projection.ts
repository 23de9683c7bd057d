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
import { dataVersion } from "../db/repositories/dataVersion";
import { getAssignments, type AssignmentRecord } from "../db/repositories/assignments";
import { assignKey, verdictKey } from "../verifier/types";
import { verifierOn } from "./verifiers";
import { chainClock, gatewayOf } from "./chainGateways";
import { TASK_STATUS, ZERO_ADDRESS, type ChainName, type PausePeriod, type TaskRecord } from "../escrow/records";

/** A task's key across chains: an on-chain id is unique on its own chain only. */
export type TaskKey = `${ChainName}:${number}`;
export const taskKey = (chain: ChainName, taskId: number): TaskKey => `${chain}:${taskId}`;

/**
 * One read per chain among `items` (an on-chain id names a task on its own chain only): `read` gets a chain and that
 * chain's items and answers values by on-chain id, gathered here by task key. The one shape of a page's reads.
 */
export async function readPerChain<I extends { chain: ChainName }, V>(
  items: readonly I[],
  read: (chain: ChainName, items: I[]) => Promise<Iterable<readonly [number, V]>>,
): Promise<Map<TaskKey, V>> {
  const out = new Map<TaskKey, V>();
  for (const chain of new Set(items.map((i) => i.chain))) {
    const answers = await read(
      chain,
      items.filter((i) => i.chain === chain),
    );
    for (const [id, value] of answers) out.set(taskKey(chain, id), value);
  }
  return out;
}

/**
 * What the marketplace knows of a page of tasks beyond the chain: held assignments and verdicts in flight, by task
 * key (chain and on-chain id: task 1 of base and task 1 of arc are two tasks).
 */
export interface MarketFacts {
  assignments: ReadonlyMap<TaskKey, AssignmentState>;
  verifying: ReadonlySet<TaskKey>;
}

const NO_FACTS: MarketFacts = { assignments: new Map(), verifying: new Set() };

/**
 * The marketplace state of a listed task (see domain/marketStatus.ts). Before the projection has the task, the
 * receipt proved it Funded and the listing's creation-time deadline stands for the effective one.
 */
export function marketplaceState(
  listing: ListingRecord,
  task: TaskRecord | undefined,
  ctx: ProjectionContext,
  facts: MarketFacts = NO_FACTS,
): TaskState {
  const now = nowOn(ctx, listing.chain);
  const onChainStatus = task?.status ?? TASK_STATUS.Funded;
  const lapsed = task
    ? now >= effectiveDeadline(task, pausesOn(ctx, task.chain), now)
    : listing.deadline !== null && now >= listing.deadline;
  const key = taskKey(listing.chain, listing.taskId);
  const status = marketStatus({
    onChainStatus,
    lapsed,
    assignment: facts.assignments.get(key) ?? "none",
    verdictInFlight: facts.verifying.has(key),
  });
  return { status, onChainStatus };
}

/**
 * The marketplace facts of a page of tasks, by the task loader's rules (assignmentHolds, intentInFlight): the page's
 * stored assignments (one query per chain on the page, unless the caller read them already: `stored`, by task key),
 * then the view of its intents of the marketplace verifier of each task's chain. Only a Funded task's assignment can
 * hold.
 */
export async function marketFacts(
  deps: Deps,
  tasks: readonly TaskRecord[],
  stored?: ReadonlyMap<TaskKey, AssignmentRecord>,
): Promise<MarketFacts> {
  const funded = tasks.filter((t) => t.status === TASK_STATUS.Funded);
  const submitted = tasks.filter((t) => t.status === TASK_STATUS.Submitted);
  if (funded.length === 0 && submitted.length === 0) return NO_FACTS;
  const anyVerifier = tasks.some((t) => verifierOn(deps, t.chain));
  stored ??= await readPerChain(funded, (chain, page) =>
    getAssignments(
      deps.db,
      page.map((t) => t.taskId),
      chain,
    ),
  );
  // Nothing stored and no verifier: no assignment can hold and no verdict is in flight (most reads of an open task).
  if (stored.size === 0 && !anyVerifier) return NO_FACTS;
  const byKey = new Map(funded.map((t) => [taskKey(t.chain, t.taskId), t]));
  const wallNow = deps.clock.wallNow();
  const lockSeconds = deps.config.marketplace.acceptLockSeconds;
  const assignments = new Map<TaskKey, AssignmentState>();
  for (const [key, assignment] of stored) {
    const task = byKey.get(key);
    if (!task) continue;
    const verifier = verifierOn(deps, task.chain);
    const intent = verifier ? await verifier.intent(assignKey(task.taskId)) : undefined;
    if (assignmentHolds(assignment, intent, task, wallNow, lockSeconds)) {
      assignments.set(key, assignmentState(assignment, intent));
    }
  }
  const verifying = new Set<TaskKey>();
  for (const t of submitted) {
    const verifier = verifierOn(deps, t.chain);
    if (!verifier) continue;
    if (intentInFlight(await verifier.intent(verdictKey(t.taskId, t.submissionAttempts)))) {
      verifying.add(taskKey(t.chain, t.taskId));
    }
  }
  return { assignments, verifying };
}

/** What a projection reads of one settlement chain: its chain id (null without a deployment) and pause periods. */
export interface ChainProjection {
  chainId: number | null;
  pauses: readonly PausePeriod[];
  /** The chain's time now (its tasks' deadlines are in it). */
  now: number;
}

export interface ProjectionContext {
  /** Each configured chain's; a chain absent (a row of a chain no longer configured) has no id and no pauses. */
  chains: ReadonlyMap<ChainName, ChainProjection>;
  /** The posting chain's time now (reputation's decay, the open listing's deadline filter). */
  now: number;
}

const NO_PAUSES: readonly PausePeriod[] = [];

/** The time of `chain` now (the posting chain's for a chain no longer configured). */
export const nowOn = (ctx: ProjectionContext, chain: ChainName): number => ctx.chains.get(chain)?.now ?? ctx.now;

/** The pause periods of `chain`'s escrow, by which its tasks' deadlines are extended. */
export const pausesOn = (ctx: ProjectionContext, chain: ChainName): readonly PausePeriod[] =>
  ctx.chains.get(chain)?.pauses ?? NO_PAUSES;

/** The chain id of `chain`: its deployment's (null when the service has none there). */
export const chainIdOn = (ctx: ProjectionContext, chain: ChainName): number | null =>
  ctx.chains.get(chain)?.chainId ?? null;

/** The public metadata of a listed task. No key material; publicBrief only on public tasks. */
export function marketplaceMeta(
  listing: ListingRecord,
  task: TaskRecord | undefined,
  ctx: ProjectionContext,
): TaskMeta {
  return {
    taskHash: listing.taskHash,
    onChainTaskId: listing.taskId,
    chain: listing.chain,
    chainId: chainIdOn(ctx, listing.chain),
    token: task?.token ?? listing.token,
    amount: task?.amount ?? listing.amount,
    deadline: task?.deadline ?? listing.deadline,
    effectiveDeadline: task ? effectiveDeadline(task, pausesOn(ctx, task.chain), ctx.now) : null,
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

export function onChainTask(task: TaskRecord, ctx: ProjectionContext): OnChainTask {
  return {
    chain: task.chain,
    chainId: chainIdOn(ctx, task.chain),
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
    effectiveDeadline: effectiveDeadline(task, pausesOn(ctx, task.chain), nowOn(ctx, task.chain)),
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

/**
 * Every configured chain's id, pauses and time now (without a chain list: the posting chain's). `version`: the data
 * version (db/repositories/dataVersion.ts) the caller read for this request, else read here.
 */
export async function projectionContext(deps: Deps, version?: string): Promise<ProjectionContext> {
  const names = deps.config.chains?.map((c) => c.name) ?? [deps.config.api.postingChain];
  const at = version ?? (await dataVersion(deps.db));
  const chains = new Map<ChainName, ChainProjection>();
  for (const name of names) {
    chains.set(name, {
      chainId: chainIdOf(deps, name),
      pauses: await projectedPauses(deps, name, at),
      now: await chainClock(deps, name).chainNow(),
    });
  }
  return { chains, now: await deps.clock.chainNow() };
}

/**
 * The chain id of `chain` as a task view shows it: its gateway's deployment, or null when the chain is configured
 * without one (a task cannot be indexed there, so only a row of an earlier deployment shows null).
 */
export function chainIdOf(deps: Pick<Deps, "chains" | "chain" | "config">, chain: ChainName): number | null {
  return gatewayOf(deps, chain)?.book.chainId ?? null;
}

/**
 * Pause periods change only when the indexer records a pause or an unpause, so reads keep them per chain and data
 * version (a write by any process reads them again). Actions that check the escrow's state (domain/marketplace) read
 * them afresh.
 */
const pauseCaches = new WeakMap<Deps, ReadCache<readonly PausePeriod[]>>();

/** `chain`'s pause periods as of data version `version` (at most 16 chain and version pairs kept). */
function projectedPauses(deps: Deps, chain: ChainName, version: string): Promise<readonly PausePeriod[]> {
  let cache = pauseCaches.get(deps);
  if (!cache) pauseCaches.set(deps, (cache = new ReadCache(Number.POSITIVE_INFINITY, 16)));
  return cache.get(`${chain}:${version}`, () => loadPausePeriods(deps.db, chain));
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
