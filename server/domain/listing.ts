/** The marketplace's reads of listed tasks: the open-task list (cached), one task, a poster's tasks. */
import { ReadCache, SerializedData } from "./readCache";
import type { Deps } from "./deps";
import { fail } from "../errors";
import { getListings, listListingsByPoster, type ListingRecord } from "../db/repositories/listings";
import { findTasksByHash, getTasks, listOpenTasks } from "../db/repositories/tasks";
import { findTaskRows, type TaskRows } from "../db/repositories/taskRows";
import { dataVersion } from "../db/repositories/dataVersion";
import { chainClock } from "./chainGateways";
import type { AssignmentRecord } from "../db/repositories/assignments";
import { latestSubmissions } from "../db/repositories/submissions";
import { listJudgingTaskIds, listWorkingTaskIds, type ChainTaskId } from "../db/repositories/workList";
import type { ChainName, TaskRecord } from "../escrow/records";
import { postersWithReputationAtLeast } from "./reputation";
import {
  canSeeResult,
  marketFacts,
  marketplaceMeta,
  marketplaceState,
  matchingTask,
  onChainTask,
  projectionContext,
  readPerChain,
  taskKey,
  type MarketFacts,
  type ProjectionContext,
  type TaskKey,
} from "./projection";

/** A page of a list, of one chain's tasks or (without a chain) of every chain's. */
export interface ListPage {
  limit: number;
  offset: number;
  chain?: ChainName;
}

export interface OpenTasksQuery {
  /** Only tasks settling on this chain (default: every chain's). */
  chain?: ChainName;
  capabilities?: string[];
  minReputation: number;
  limit: number;
  offset: number;
  /** Only the task with this hash (lower-case), if it is open: A2A's contextId filter. */
  taskHash?: string;
  /** Only tasks listed at or after this time (unix seconds): A2A's statusTimestampAfter, a task's listing time. */
  listedSince?: number;
  /** Newest listing first (A2A's order: by status timestamp, descending), instead of the newest task first. */
  newestListedFirst?: boolean;
}

/**
 * Open-task pages are public and hot: each query's page is computed once per data version (a write by any process,
 * the indexer's included, is a new version: db/repositories/dataVersion.ts) and second of each clock the page depends
 * on, and kept serialized (docs/api.md, "Reads").
 */
const OPEN_TASK_PAGES_KEPT = 1000;
const openTaskCaches = new WeakMap<Deps, ReadCache<SerializedData>>();

function openTasksCache(deps: Deps) {
  let cache = openTaskCaches.get(deps);
  if (!cache) openTaskCaches.set(deps, (cache = new ReadCache(Number.POSITIVE_INFINITY, OPEN_TASK_PAGES_KEPT)));
  return cache;
}

/**
 * GET /a2a/tasks: listed tasks a worker could take now, newest first. The key holds the query (its chain filter
 * too), the data version read for this request, each chain's time (deadlines lapse in it) and the wall second (an
 * accept's assignment lapses in it): a page is reused only while nothing was written and no clock moved.
 */
export async function cachedOpenListedTasks(deps: Deps, query: OpenTasksQuery) {
  const version = await dataVersion(deps.db);
  const chains = deps.config.chains?.map((c) => c.name) ?? [deps.config.api.postingChain];
  const times: number[] = [deps.clock.wallNow(), await deps.clock.chainNow()];
  for (const chain of chains) times.push(await chainClock(deps, chain).chainNow());
  const key = JSON.stringify([query, version, times]);
  // Kept serialized: a hot page is sent many times, and serializing it each time cost as much as the rest.
  return openTasksCache(deps).get(
    key,
    async () => new SerializedData(JSON.stringify(await listOpenListedTasks(deps, query, version))),
  );
}

/** Forgets cached open-task pages (after this process lists a task: its next read need not wait for a new key). */
export function invalidateOpenTasks(deps: Deps): void {
  openTaskCaches.get(deps)?.clear();
}

export async function listOpenListedTasks(deps: Deps, query: OpenTasksQuery, version?: string) {
  const ctx = await projectionContext(deps, version);
  const posters = await postersWithReputationAtLeast(deps.db, query.minReputation, ctx.now);
  const { tasks, total } = await listOpenTasks(deps.db, {
    now: ctx.now,
    chain: query.chain,
    limit: query.limit,
    offset: query.offset,
    listedOnly: true,
    // A task pinned to one agent (a rental) is not offered to everyone: its target sees it in listOfferedTasks.
    untargetedOnly: true,
    capabilities: query.capabilities,
    posters,
    taskHash: query.taskHash,
    listedSince: query.listedSince,
    newestListedFirst: query.newestListedFirst,
  });
  // A task with a held assignment is no longer open to others (total may still count it for a moment).
  return { tasks: await projectOpenPage(deps, ctx, tasks, { hideHeld: true }), total };
}

/** The `{ meta, state }` of a page of open tasks (listed ones only; `hideHeld` leaves out held assignments). */
async function projectOpenPage(
  deps: Deps,
  ctx: ProjectionContext,
  tasks: readonly TaskRecord[],
  { hideHeld }: { hideHeld: boolean },
) {
  const listings = await listingsOf(deps, tasks);
  const facts = await marketFacts(deps, tasks);
  const out = [];
  for (const task of tasks) {
    const key = taskKey(task.chain, task.taskId);
    const listing = listings.get(key);
    if (!listing || !matchingTask(listing, task)) continue;
    if (hideHeld && facts.assignments.has(key)) continue;
    out.push({
      meta: marketplaceMeta(listing, task, ctx),
      state: marketplaceState(listing, task, ctx, facts),
    });
  }
  return out;
}

/** The listings of tasks of any chains, by task key (one query per chain on the page). */
function listingsOf(
  deps: Deps,
  tasks: readonly { chain: ChainName; taskId: number }[],
): Promise<Map<TaskKey, ListingRecord>> {
  return readPerChain(tasks, (chain, page) =>
    getListings(
      deps.db,
      page.map((t) => t.taskId),
      chain,
    ),
  );
}

/** GET /tasks/:id: the on-chain task with its marketplace projection; resultData only for those who may see it. */
export async function readTask(
  deps: Deps,
  id: { taskId: number; chain?: ChainName } | { taskHash: string },
  caller: string | undefined,
) {
  // The task, its listing and its assignment in one statement (by hash: the listed task with this hash, on either
  // chain; by id: on the chain named, else the posting chain), kept per data version.
  const version = await dataVersion(deps.db);
  const rows = await keptTaskRows(
    deps,
    "taskId" in id ? { taskId: id.taskId, chain: id.chain ?? deps.config.api.postingChain } : id,
    version,
  );
  let { task, listing } = rows;
  if ("taskId" in id) {
    // By id, a task the indexer has not reached is NOT_FOUND, listed or not; by hash, a listed one is NOT_INDEXED_YET.
    if (!task) listing = undefined;
  } else if (!listing) {
    // An unlisted hash: the newest funded task with it (the chain does not forbid reusing a hash).
    task = (await findTasksByHash(deps.db, id.taskHash)).at(-1);
  }
  if (!task) {
    const which = "taskId" in id ? `task ${id.taskId}` : `task with hash ${id.taskHash}`;
    // Listed from its funding receipt, but the indexer has not reached that block yet.
    if (listing) return fail("NOT_INDEXED_YET", `${which} is listed; its funding block is not indexed yet; retry`);
    return fail("NOT_FOUND", `${which} not found (or not indexed yet; retry)`);
  }
  if (listing && !matchingTask(listing, task)) listing = undefined;
  const ctx = await projectionContext(deps, version);
  // Keys added to the record, not `{ ...record, key }`: on Node 20 optimized code gives each object made that way a
  // hidden class of its own, slowing every read and lengthening collections (test/server/domain/hiddenClasses.test.ts).
  const view = Object.assign(onChainTask(task, ctx), {
    a2aMeta: listing ? marketplaceMeta(listing, task, ctx) : null,
    a2aState: listing
      ? marketplaceState(listing, task, ctx, await marketFacts(deps, [task], storedAssignment(task, rows)))
      : null,
  });
  if (!canSeeResult(task, listing, caller)) return view;
  return Object.assign(view, {
    resultData: (await deliverables(deps, [task])).get(taskKey(task.chain, task.taskId)) ?? null,
  });
}

/**
 * The task reads' rows of one data version, by id or hash: a hot task is read from the database once per version
 * (any write, by any process, is a new one), and the rows of an older version are dropped with it. Only the rows are
 * kept: the view is projected per read, at each clock's time now. At most TASK_ROWS_KEPT tasks (the oldest go first).
 */
const TASK_ROWS_KEPT = 10_000;
const keptRows = new WeakMap<Deps, { version: string; rows: Map<string, TaskRows> }>();

async function keptTaskRows(
  deps: Deps,
  key: { taskId: number; chain: ChainName } | { taskHash: string },
  version: string,
): Promise<TaskRows> {
  let kept = keptRows.get(deps);
  if (kept?.version !== version) keptRows.set(deps, (kept = { version, rows: new Map() }));
  const name = "taskId" in key ? `${key.chain}:${key.taskId}` : key.taskHash.toLowerCase();
  const hit = kept.rows.get(name);
  if (hit) return hit;
  const rows = await findTaskRows(deps.db, key);
  // Another request may have seen a newer version meanwhile: these rows then belong to the older one only.
  if (keptRows.get(deps) === kept) {
    if (kept.rows.size >= TASK_ROWS_KEPT) kept.rows.delete(kept.rows.keys().next().value!);
    kept.rows.set(name, rows);
  }
  return rows;
}

/** The assignment a task read found, as marketFacts takes a page's (none stored: an empty map, no query). */
const NO_ASSIGNMENT: ReadonlyMap<TaskKey, AssignmentRecord> = new Map();
const storedAssignment = (task: TaskRecord, { assignment }: TaskRows): ReadonlyMap<TaskKey, AssignmentRecord> =>
  assignment ? new Map([[taskKey(task.chain, assignment.taskId), assignment]]) : NO_ASSIGNMENT;

/**
 * The latest deliverable of each task whose submitEvidence is indexed (stored attempt at most the chain's count), as
 * the result value the worker sent, by task key; tasks without one are absent. Stored attempts awaiting their
 * transaction are not deliverables yet.
 */
function deliverables(deps: Deps, tasks: readonly TaskRecord[]): Promise<Map<TaskKey, unknown>> {
  return readPerChain(tasks, async (chain, page) => {
    const upTo = new Map(page.map((t) => [t.taskId, t.submissionAttempts]));
    const latest = await latestSubmissions(deps.db, upTo, chain);
    return [...latest].map(([id, s]): [number, unknown] => [id, JSON.parse(s.result)]);
  });
}

/** What a list shows of one listed task: nothing (not the caller's), or its view with or without the deliverable. */
type Shown = "hidden" | "with-result" | "without-result";

/**
 * The views of listed tasks, in the order given: meta, state, the on-chain record and, where `shown` says the caller
 * may see it, the latest deliverable. The one home of the caller's lists (posted, working, judging).
 */
async function listedTaskViews(
  deps: Deps,
  listings: readonly ListingRecord[],
  shown: (task: TaskRecord | undefined, facts: MarketFacts, listing: ListingRecord) => Shown,
) {
  const tasks = await readPerChain(listings, (chain, page) =>
    getTasks(
      deps.db,
      chain,
      page.map((l) => l.taskId),
    ),
  );
  const ctx = await projectionContext(deps);
  const matched = listings.flatMap((l) => matchingTask(l, tasks.get(taskKey(l.chain, l.taskId))) ?? []);
  const results = await deliverables(deps, matched);
  const facts = await marketFacts(deps, matched);
  return listings.flatMap((listing) => {
    const task = matchingTask(listing, tasks.get(taskKey(listing.chain, listing.taskId)));
    const show = shown(task, facts, listing);
    if (show === "hidden") return [];
    return [
      {
        meta: marketplaceMeta(listing, task, ctx),
        state: marketplaceState(listing, task, ctx, facts),
        onChain: task ? onChainTask(task, ctx) : null,
        resultData: task && show === "with-result" ? (results.get(taskKey(task.chain, task.taskId)) ?? null) : null,
      },
    ];
  });
}

/** The listings of `tasks`, in that order (tasks without a listing left out). */
async function listingsInOrder(deps: Deps, tasks: readonly ChainTaskId[]): Promise<ListingRecord[]> {
  const listings = await listingsOf(deps, tasks);
  return tasks.flatMap((t) => listings.get(taskKey(t.chain, t.taskId)) ?? []);
}

/** GET /a2a/tasks/posted: the caller's listed tasks, newest first, with state and the on-chain record. */
export async function listPostedTasks(deps: Deps, wallet: string, page: ListPage) {
  const { listings, total } = await listListingsByPoster(deps.db, wallet, page);
  // The poster always sees the deliverable of their own task.
  return { tasks: await listedTaskViews(deps, listings, () => "with-result"), total };
}

/**
 * GET /a2a/tasks/offered: open tasks pinned to the caller (rentals and other targeted tasks), newest first, with
 * their projection; the caller accepts them directly (no other agent can hold their offer window).
 */
export async function listOfferedTasks(deps: Deps, wallet: string, page: ListPage) {
  const ctx = await projectionContext(deps);
  const { tasks, total } = await listOpenTasks(deps.db, {
    now: ctx.now,
    chain: page.chain,
    limit: page.limit,
    offset: page.offset,
    offeredTo: wallet.toLowerCase(),
  });
  return { tasks: await projectOpenPage(deps, ctx, tasks, { hideHeld: false }), total };
}

/**
 * GET /a2a/tasks/working: the caller's work, newest first: listed tasks it is the on-chain worker of, or holds an
 * assignment of that is still on its way to the chain (state assigning). A lapsed accept is not work.
 */
export async function listWorkingTasks(deps: Deps, wallet: string, page: ListPage) {
  const who = wallet.toLowerCase();
  const work = await listWorkingTaskIds(deps.db, who, page);
  const tasks = await listedTaskViews(deps, await listingsInOrder(deps, work.tasks), (task, facts, listing) => {
    // The worker's task, or an assignment on its way to the chain: work too, without a deliverable yet.
    if (task?.worker !== who && !facts.assignments.has(taskKey(listing.chain, listing.taskId))) return "hidden";
    return task && canSeeResult(task, listing, who) ? "with-result" : "without-result";
  });
  return { tasks, total: work.total };
}

/**
 * GET /a2a/tasks/judging: the tasks awaiting the caller's verdict as their verifier agent (agent mode, latest
 * submission on-chain), oldest first, each with its latest deliverable: what a verifier agent judges.
 */
export async function listJudgingTasks(deps: Deps, wallet: string, page: ListPage) {
  const who = wallet.toLowerCase();
  const { tasks: queue, total } = await listJudgingTaskIds(deps.db, who, page);
  // The verifier agent sees the deliverable it judges (canSeeResult), as in the single read.
  const tasks = await listedTaskViews(deps, await listingsInOrder(deps, queue), (task, _facts, listing) =>
    task && canSeeResult(task, listing, who) ? "with-result" : "without-result",
  );
  return { tasks, total };
}
