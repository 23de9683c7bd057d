/**
 * Listing funded tasks on the marketplace, and the marketplace's reads of them.
 *
 * Indexing: the service reads the funding receipt itself, takes the TaskCreated events of its own escrow, checks the
 * caller funded the task, checks the listing terms against what the chain says (verifier, token), and stores the
 * listing keyed by the on-chain task id, with its capabilities, in one transaction. The on-chain projection (the
 * indexer's tasks table) may lag: indexing never waits for it. First-indexed terms are immutable: the same terms
 * again answer 200, anything else 409.
 *
 * Reads: the projection of a listed task is `{ meta, state }`; meta is what the poster listed plus what the receipt
 * proved, state is the lifecycle from the on-chain projection. Key material (wrappedKeys, custody key) never leaves
 * through a read.
 */
import { ReadCache, SerializedData } from "./readCache";
import type { Deps } from "./deps";
import { effectiveDeadline } from "../escrow/rules";
import {
  assignmentHolds,
  assignmentState,
  intentInFlight,
  marketStatus,
  type AssignmentState,
} from "./marketStatus";
import { AppError, fail } from "../errors";
import { readFundingReceipt, type FundedTask, type FundingReceipt } from "../chain/receipts";
import { checkPostingTerms } from "./schemas/postingTerms";
import type {
  IndexBatchBody,
  IndexBatchResult,
  IndexBody,
  IndexItem,
  IndexResult,
  OnChainTask,
  TaskMeta,
  TaskState,
} from "./schemas/marketplace";
import {
  findListingByHash,
  findListingByTaskId,
  getListings,
  insertListing,
  isUniqueViolation,
  listListingsByPoster,
  type ListingRecord,
} from "../db/repositories/listings";
import { findTaskById, findTasksByHash, getTasks, listOpenTasks } from "../db/repositories/tasks";
import { loadPausePeriods } from "../db/repositories/pausePeriods";
import { latestSubmissions } from "../db/repositories/submissions";
import { getAssignments } from "../db/repositories/assignments";
import { assignKey, verdictKey } from "../verifier/types";
import { TASK_STATUS, ZERO_ADDRESS, type PausePeriod, type TaskRecord } from "../escrow/records";
import { postersWithReputationAtLeast } from "./reputation";

// ---------------------------------------------------------------------------------------------------------------
// Indexing rules
// ---------------------------------------------------------------------------------------------------------------

/** Rules of the body alone, checked before the chain is read: service pinning and the privacy rules. */
export function checkListingBody(item: IndexItem): void {
  if (item.serviceId !== undefined && !item.targetExecutor) {
    fail("SERVICE_NO_TARGET", "serviceId requires targetExecutor (the agent that sells the service)");
  }
  const privacy = item.privacy ?? "private";
  if (privacy === "public") {
    if (item.wrappedKeys && Object.keys(item.wrappedKeys).length > 0) {
      fail("PUBLIC_TASK_HAS_KEYS", "wrappedKeys: a public task carries no key material (its brief is plaintext)");
    }
    if (item.custodyWrappedKey !== undefined) {
      fail("PUBLIC_TASK_HAS_CUSTODY", "custodyWrappedKey: a public task carries no custody key material");
    }
  } else if (item.publicBrief !== undefined) {
    fail("BRIEF_ON_PRIVATE_TASK", "publicBrief: only a public task has a display copy of its brief (privacy public)");
  }
}

/**
 * Rules that need the funding event: the caller funded it, the token is the settlement token, and the verification
 * terms agree with the verifier the escrow recorded. Throws the first failure.
 */
export function checkAgainstChain(item: IndexItem, event: FundedTask, wallet: string, settlementToken: string): void {
  if (event.poster !== wallet) {
    fail(
      "NOT_TASK_AGENT",
      `task ${event.taskId} was funded by ${event.poster}, not by this key's wallet ${wallet}; the funding wallet must list it (or cancel it to get a refund)`
    );
  }
  if (event.token !== settlementToken.toLowerCase()) {
    fail(
      "TOKEN_NOT_SETTLEMENT",
      `task ${event.taskId} is funded in ${event.token}, not in the settlement token ${settlementToken.toLowerCase()}`,
      { status: 409 }
    );
  }
  const onChainVerifier = event.verifier === ZERO_ADDRESS ? undefined : event.verifier;
  if (item.verifierAddress !== undefined && item.verifierAddress !== onChainVerifier) {
    fail(
      "VERIFIER_MISMATCH",
      `verifierAddress ${item.verifierAddress} differs from the escrow's verifier of task ${event.taskId} (${
        onChainVerifier ?? "none: the marketplace verifier judges"
      })`
    );
  }
  const privacy = item.privacy ?? "private";
  const problem = checkPostingTerms({ ...item, verifierAddress: onChainVerifier }, wallet, privacy);
  if (problem) {
    if (problem.code === "NO_VERIFIER") {
      fail(
        "NO_VERIFIER",
        `verificationMode agent needs a verifier agent on-chain, and task ${event.taskId} has none (fund it with createTaskWithVerifier)`,
        {
          status: 409,
        }
      );
    }
    fail(problem.code, problem.message, problem.status ? { status: problem.status } : {});
  }
  const mode = item.verificationMode ?? "manual";
  if (onChainVerifier && mode !== "agent") {
    fail(
      "VERIFIER_MODE_MISMATCH",
      `verificationMode: the escrow names verifier ${onChainVerifier} for task ${event.taskId}, so the mode must be agent, not ${mode}`
    );
  }
}

/** The listing `item` describes for the funded task `event`. */
export function listingFor(
  item: IndexItem,
  event: FundedTask,
  txHash: string,
  chain: string,
  listedAt: number
): ListingRecord {
  return {
    taskId: event.taskId,
    taskHash: event.taskHash,
    chain,
    poster: event.poster,
    txHash,
    privacy: item.privacy ?? "private",
    verificationMode: item.verificationMode ?? "manual",
    verificationCriteria: item.verificationCriteria ?? null,
    verifierAddress: event.verifier === ZERO_ADDRESS ? null : event.verifier,
    rootHash: item.rootHash ?? null,
    wrappedKeys: item.wrappedKeys && Object.keys(item.wrappedKeys).length > 0 ? item.wrappedKeys : null,
    targetExecutor: item.targetExecutor ?? null,
    serviceId: item.serviceId ?? null,
    publicBrief: item.publicBrief ?? null,
    custodyWrappedKey:
      item.custodyWrappedKey === undefined ? null : `0x${item.custodyWrappedKey.replace(/^0x/i, "").toLowerCase()}`,
    token: event.token,
    amount: event.amount,
    deadline: event.deadline,
    listedAt,
    capabilities: [...new Set(item.requiredCapabilities ?? [])].sort(),
  };
}

/** JSON with object keys sorted, so equal terms compare equal whatever order a client sent them in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, (v as Record<string, unknown>)[k]])
        )
      : v
  );
}

const TERM_FIELDS = {
  verificationMode: (l: ListingRecord) => l.verificationMode,
  verificationCriteria: (l: ListingRecord) => l.verificationCriteria,
  verifierAddress: (l: ListingRecord) => l.verifierAddress,
  requiredCapabilities: (l: ListingRecord) => l.capabilities,
  rootHash: (l: ListingRecord) => l.rootHash,
  wrappedKeys: (l: ListingRecord) => l.wrappedKeys,
  targetExecutor: (l: ListingRecord) => l.targetExecutor,
  serviceId: (l: ListingRecord) => l.serviceId,
  publicBrief: (l: ListingRecord) => l.publicBrief,
  custodyWrappedKey: (l: ListingRecord) => l.custodyWrappedKey,
} as const;

/** The listing terms that differ between two listings of the same task (privacy is checked on its own). */
export function changedTerms(first: ListingRecord, again: ListingRecord): string[] {
  return Object.entries(TERM_FIELDS)
    .filter(([, read]) => canonical(read(first) ?? null) !== canonical(read(again) ?? null))
    .map(([field]) => field);
}

/**
 * Stores `listing` unless the task is listed already: the same terms again are accepted (idempotent), different ones
 * refused. A task hash listed for another on-chain task is refused. Listing and capabilities land in one
 * transaction; a concurrent insert of the same task is resolved by reading the winner's row.
 */
async function storeListing(deps: Deps, listing: ListingRecord): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await deps.db.transaction(async (trx) => {
        const existing = await findListingByTaskId(trx, listing.taskId);
        if (existing) return assertSameTerms(existing, listing);
        const sameHash = await findListingByHash(trx, listing.taskHash);
        if (sameHash) {
          fail(
            "HASH_NOT_THIS_TASK",
            `taskHash ${listing.taskHash} is listed for on-chain task ${sameHash.taskId}, not task ${listing.taskId}`
          );
        }
        await insertListing(trx, listing);
      });
      return;
    } catch (error) {
      if (attempt === 0 && isUniqueViolation(error)) continue;
      throw error;
    }
  }
}

function assertSameTerms(existing: ListingRecord, again: ListingRecord): void {
  if (existing.privacy !== again.privacy) {
    fail(
      "PRIVACY_IMMUTABLE",
      `privacy: task ${existing.taskId} was listed ${existing.privacy}; privacy cannot change after first indexing`
    );
  }
  const changed = changedTerms(existing, again);
  if (changed.length > 0) {
    fail(
      "TERMS_IMMUTABLE",
      `task ${existing.taskId} is listed already with other terms (${changed.join(
        ", "
      )}); first-indexed terms cannot change`,
      { details: { fields: changed } }
    );
  }
}

/** Reads and checks the funding receipt: the whole-request failures of single and batch indexing. */
async function loadFunding(deps: Deps, txHash: string): Promise<{ funding: FundingReceipt; token: string }> {
  const chain = deps.chain;
  if (!chain) return fail("CHAIN_NOT_CONFIGURED", "no escrow is configured on the posting chain");
  let receipt;
  try {
    receipt = await chain.receipt(txHash);
  } catch (cause) {
    return fail("ON_CHAIN_CHECK_FAILED", `could not read the receipt of ${txHash} from the chain; retry`, { cause });
  }
  if (!receipt) {
    return fail("RECEIPT_NOT_FOUND", `txHash: no receipt for ${txHash} yet; retry once the transaction is mined`);
  }
  const funding = readFundingReceipt(receipt, chain.book.escrow.proxy);
  if (!funding.succeeded) fail("TX_REVERTED", `txHash: transaction ${txHash} reverted; nothing was funded`);
  if (funding.created.length === 0) {
    fail("NO_TASK_CREATED", `txHash: transaction ${txHash} created no task in the escrow ${chain.book.escrow.proxy}`);
  }
  return { funding, token: chain.book.token.address };
}

async function listOne(
  deps: Deps,
  wallet: string,
  item: IndexItem,
  event: FundedTask,
  funding: FundingReceipt,
  token: string
): Promise<IndexResult> {
  checkAgainstChain(item, event, wallet, token);
  const listing = listingFor(item, event, funding.txHash, deps.config.api.postingChain, await deps.clock.chainNow());
  await storeListing(deps, listing);
  return { taskHash: event.taskHash, onChainTaskId: event.taskId, indexed: true };
}

/** POST /a2a/tasks/index: lists the one task funded by `body.txHash`. `wallet` is the key's wallet. */
export async function indexTask(deps: Deps, wallet: string, body: IndexBody): Promise<IndexResult> {
  checkListingBody(body);
  const { funding, token } = await loadFunding(deps, body.txHash);
  if (funding.created.length > 1) {
    fail(
      "MULTIPLE_TASK_CREATED",
      `txHash: transaction ${body.txHash} created ${funding.created.length} tasks; list them with index-batch`
    );
  }
  const [event] = funding.created;
  if (event.taskHash !== body.taskHash) {
    fail(
      "HASH_MISMATCH",
      `taskHash ${body.taskHash} differs from the task the transaction funded (${event.taskHash}, task ${event.taskId})`
    );
  }
  const result = await listOne(deps, wallet, body, event, funding, token);
  await awaitIndexed(deps, funding.blockNumber);
  return result;
}

/** How long indexing waits for the indexer to reach the funding block (read your writes). */
export const READ_YOUR_WRITES_MS = 5_000;

/**
 * Waits until the indexer has `block`, so the lister's next read shows the task it just listed. Bounded: past
 * READ_YOUR_WRITES_MS the answer goes out anyway, and reads say NOT_INDEXED_YET until the indexer catches up.
 */
async function awaitIndexed(deps: Deps, block: number): Promise<void> {
  try {
    await deps.indexer?.waitForBlock(block, READ_YOUR_WRITES_MS);
  } catch {
    // the indexer is behind: readTask answers NOT_INDEXED_YET meanwhile
  }
}

/**
 * The transaction that funded every one of `taskHashes`, found in the indexed projection (for ERC-4337 user
 * operations, whose hash is not a transaction hash). The newest such transaction wins; none: RECEIPT_NOT_FOUND.
 */
async function findFundingTransaction(deps: Deps, taskHashes: readonly string[]): Promise<string> {
  let common: Map<string, number> | undefined;
  for (const hash of taskHashes) {
    const txs = new Map((await findTasksByHash(deps.db, hash)).map((t) => [t.createdTx, t.createdBlock]));
    common = common ? new Map([...common].filter(([tx]) => txs.has(tx))) : txs;
    if (common.size === 0) break;
  }
  const newest = [...(common ?? new Map<string, number>())].sort((a, b) => b[1] - a[1])[0];
  if (!newest) {
    return fail(
      "RECEIPT_NOT_FOUND",
      "txHash: no indexed transaction funded all the listed task hashes yet; retry once the user operation is mined and indexed"
    );
  }
  return newest[0];
}

/** POST /a2a/tasks/index-batch: each listed task checked like single indexing; results in input order. */
export async function indexTaskBatch(
  deps: Deps,
  wallet: string,
  body: IndexBatchBody
): Promise<IndexBatchResult> {
  const txHash = body.isUserOp
    ? await findFundingTransaction(
        deps,
        body.tasks.map((t) => t.taskHash)
      )
    : body.txHash;
  const { funding, token } = await loadFunding(deps, txHash);
  const results: IndexBatchResult["results"] = [];
  for (const item of body.tasks) {
    try {
      checkListingBody(item);
      const events = funding.created.filter((e) => e.taskHash === item.taskHash);
      if (events.length === 0) {
        fail("NOT_IN_RECEIPT", `taskHash ${item.taskHash}: the transaction did not fund this task`);
      }
      if (events.length > 1) {
        fail(
          "MULTIPLE_TASK_CREATED",
          `taskHash ${item.taskHash}: the transaction funded ${events.length} tasks with this hash`
        );
      }
      results.push(await listOne(deps, wallet, item, events[0], funding, token));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      results.push({ taskHash: item.taskHash, error: { code: error.code, message: error.message } });
    }
  }
  await awaitIndexed(deps, funding.blockNumber);
  return { results };
}

// ---------------------------------------------------------------------------------------------------------------
// Projection
// ---------------------------------------------------------------------------------------------------------------

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
 * The marketplace facts of a page of tasks, by the task loader's rules (assignmentHolds, intentInFlight): one query
 * for the page's assignments, then the marketplace verifier's own view of its intents.
 */
export async function marketFacts(deps: Deps, tasks: readonly TaskRecord[]): Promise<MarketFacts> {
  const funded = tasks.filter((t) => t.status === TASK_STATUS.Funded);
  const submitted = tasks.filter((t) => t.status === TASK_STATUS.Submitted);
  if (funded.length === 0 && submitted.length === 0) return NO_FACTS;
  const verifier = deps.verifier;
  const stored = await getAssignments(
    deps.db,
    funded.map((t) => t.taskId),
  );
  const byId = new Map(funded.map((t) => [t.taskId, t]));
  const wallNow = deps.clock.wallNow();
  const lockSeconds = deps.config.marketplace.acceptLockSeconds;
  const assignments = new Map<number, AssignmentState>();
  for (const [taskId, assignment] of stored) {
    const intent = verifier ? await verifier.intent(assignKey(taskId)) : undefined;
    if (assignmentHolds(assignment, intent, byId.get(taskId), wallNow, lockSeconds)) {
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
  ctx: ProjectionContext
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
  };
}

/**
 * The projection row of a listing, when it is the listed task: after a reorg the same on-chain id may hold another
 * task, which the listing must not describe.
 */
function matchingTask(listing: ListingRecord, task: TaskRecord | undefined): TaskRecord | undefined {
  return task && task.taskHash === listing.taskHash ? task : undefined;
}

async function projectionContext(deps: Deps): Promise<ProjectionContext> {
  return {
    chainId: deps.chain?.book.chainId ?? null,
    pauses: await loadPausePeriods(deps.db),
    now: await deps.clock.chainNow(),
  };
}

/** Whether `caller` may see a task's result: its poster or worker, or anyone when the task is public. */
export function canSeeResult(
  task: TaskRecord,
  listing: ListingRecord | undefined,
  caller: string | undefined
): boolean {
  if (listing?.privacy === "public") return true;
  if (!caller) return false;
  const who = caller.toLowerCase();
  return who === task.poster || (task.worker !== ZERO_ADDRESS && who === task.worker);
}

// ---------------------------------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------------------------------

export interface OpenTasksQuery {
  capabilities?: string[];
  minReputation: number;
  limit: number;
  offset: number;
}

/** GET /a2a/tasks: listed tasks a worker could take now, newest first. */
/** Open-task pages are public and hot: cached per query for a second (docs/api.md, "Reads"). */
export const OPEN_TASKS_CACHE_MS = 1000;
const openTaskCaches = new WeakMap<Deps, ReadCache<SerializedData>>();

function openTasksCache(deps: Deps) {
  let cache = openTaskCaches.get(deps);
  if (!cache) openTaskCaches.set(deps, (cache = new ReadCache(OPEN_TASKS_CACHE_MS)));
  return cache;
}

/**
 * The key holds the indexer's checkpoint and the chain's current second: a page is reused only while nothing was
 * indexed and no deadline could have passed; the TTL bounds staleness when the indexer runs in another process.
 */
export async function cachedOpenListedTasks(deps: Deps, query: OpenTasksQuery) {
  const key = JSON.stringify([query, deps.indexer?.status().checkpoint ?? null, await deps.clock.chainNow()]);
  // Kept serialized: a hot page is sent many times, and serializing it each time cost as much as the rest.
  return openTasksCache(deps).get(key, async () => new SerializedData(JSON.stringify(await listOpenListedTasks(deps, query))));
}

/** Forgets cached open-task pages (after this process lists a task). */
export function invalidateOpenTasks(deps: Deps): void {
  openTaskCaches.get(deps)?.clear();
}

export async function listOpenListedTasks(deps: Deps, query: OpenTasksQuery) {
  const ctx = await projectionContext(deps);
  const posters = await postersWithReputationAtLeast(deps.db, query.minReputation, ctx.now);
  const { tasks, total } = await listOpenTasks(deps.db, {
    now: ctx.now,
    limit: query.limit,
    offset: query.offset,
    listedOnly: true,
    capabilities: query.capabilities,
    posters,
  });
  const listings = await getListings(
    deps.db,
    tasks.map((t) => t.taskId)
  );
  const facts = await marketFacts(deps, tasks);
  const out = [];
  for (const task of tasks) {
    const listing = listings.get(task.taskId);
    // A task with a held assignment is no longer open to others (total may still count it for a moment).
    if (!listing || !matchingTask(listing, task) || facts.assignments.has(task.taskId)) continue;
    out.push({
      meta: marketplaceMeta(listing, task, ctx),
      state: marketplaceState(listing, task, ctx.pauses, ctx.now),
    });
  }
  return { tasks: out, total };
}

/** GET /tasks/:id: the on-chain task with its marketplace projection; resultData only for those who may see it. */
export async function readTask(
  deps: Deps,
  id: { taskId: number } | { taskHash: string },
  caller: string | undefined
) {
  let task: TaskRecord | undefined;
  let listing: ListingRecord | undefined;
  if ("taskId" in id) {
    task = await findTaskById(deps.db, id.taskId);
    listing = task ? await findListingByTaskId(deps.db, id.taskId) : undefined;
  } else {
    // The listed task with this hash; else the newest funded one (the chain does not forbid reusing a hash).
    listing = await findListingByHash(deps.db, id.taskHash);
    task = listing
      ? await findTaskById(deps.db, listing.taskId)
      : (await findTasksByHash(deps.db, id.taskHash)).at(-1);
  }
  if (!task) {
    const which = "taskId" in id ? `task ${id.taskId}` : `task with hash ${id.taskHash}`;
    // Listed from its funding receipt, but the indexer has not reached that block yet.
    if (listing) return fail("NOT_INDEXED_YET", `${which} is listed; its funding block is not indexed yet; retry`);
    return fail("NOT_FOUND", `${which} not found (or not indexed yet; retry)`);
  }
  if (listing && !matchingTask(listing, task)) listing = undefined;
  const ctx = await projectionContext(deps);
  return {
    ...onChainTask(task, ctx.pauses, ctx.now),
    a2aMeta: listing ? marketplaceMeta(listing, task, ctx) : null,
    a2aState: listing
      ? marketplaceState(listing, task, ctx.pauses, ctx.now, await marketFacts(deps, [task]))
      : null,
    ...(canSeeResult(task, listing, caller)
      ? { resultData: (await deliverables(deps, [task])).get(task.taskId) ?? null }
      : {}),
  };
}

/**
 * The latest deliverable of each task whose submitEvidence is indexed (stored attempt at most the chain's count), as
 * the result value the worker sent; tasks without one are absent. Stored attempts awaiting their transaction are not
 * deliverables yet.
 */
async function deliverables(deps: Deps, tasks: readonly TaskRecord[]): Promise<Map<number, unknown>> {
  const latest = await latestSubmissions(deps.db, new Map(tasks.map((t) => [t.taskId, t.submissionAttempts])));
  return new Map([...latest].map(([id, s]) => [id, JSON.parse(s.result)]));
}

/** GET /a2a/tasks/posted: the caller's listed tasks, newest first, with state and the on-chain record. */
export async function listPostedTasks(deps: Deps, wallet: string, page: { limit: number; offset: number }) {
  const { listings, total } = await listListingsByPoster(deps.db, wallet, page);
  const tasks = await getTasks(
    deps.db,
    listings.map((l) => l.taskId)
  );
  const ctx = await projectionContext(deps);
  const matched = listings.flatMap((l) => matchingTask(l, tasks.get(l.taskId)) ?? []);
  const results = await deliverables(deps, matched);
  const facts = await marketFacts(deps, matched);
  return {
    tasks: listings.map((listing) => {
      const task = matchingTask(listing, tasks.get(listing.taskId));
      return {
        meta: marketplaceMeta(listing, task, ctx),
        state: marketplaceState(listing, task, ctx.pauses, ctx.now, facts),
        onChain: task ? onChainTask(task, ctx.pauses, ctx.now) : null,
        // The poster always sees the deliverable of their own task.
        resultData: task ? results.get(task.taskId) ?? null : null,
      };
    }),
    total,
  };
}
