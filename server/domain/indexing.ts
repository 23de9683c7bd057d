/**
 * Listing funded tasks on the marketplace (POST /a2a/tasks/index and index-batch).
 *
 * The service reads the funding receipt itself, takes the TaskCreated events of its own escrow, checks the caller
 * funded the task, checks the listing terms against what the chain says (verifier, token), and stores the listing
 * keyed by the on-chain task id, with its capabilities, in one transaction. The on-chain projection (the indexer's
 * tasks table) may lag: indexing never waits for it. First-indexed terms are immutable: the same terms again answer
 * 200, anything else 409.
 */
import type { Deps } from "./deps";
import { rentalTerms } from "./services";
import { AppError, fail } from "../errors";
import type { ChainName } from "../escrow/records";
import { readFundingReceipt, type FundedTask, type FundingReceipt } from "../chain/receipts";
import { checkPostingTerms } from "./schemas/postingTerms";
import type { IndexBatchBody, IndexBatchResult, IndexBody, IndexItem, IndexResult } from "./schemas/marketplace";
import {
  findListingByHash,
  findListingByTaskId,
  insertListing,
  isUniqueViolation,
  type ListingRecord,
} from "../db/repositories/listings";
import { findTasksByHash } from "../db/repositories/tasks";
import { ZERO_ADDRESS } from "../escrow/records";
import { insertMarketEvents } from "../db/repositories/marketEvents";
import { listingEvents } from "./events/log";
import { requireListingChains } from "./marketplace/chainRules";

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
      `task ${event.taskId} was funded by ${event.poster}, not by this key's wallet ${wallet}; the funding wallet must list it (or cancel it to get a refund)`,
    );
  }
  if (event.token !== settlementToken.toLowerCase()) {
    fail(
      "TOKEN_NOT_SETTLEMENT",
      `task ${event.taskId} is funded in ${event.token}, not in the settlement token ${settlementToken.toLowerCase()}`,
      { status: 409 },
    );
  }
  const onChainVerifier = event.verifier === ZERO_ADDRESS ? undefined : event.verifier;
  if (item.verifierAddress !== undefined && item.verifierAddress !== onChainVerifier) {
    fail(
      "VERIFIER_MISMATCH",
      `verifierAddress ${item.verifierAddress} differs from the escrow's verifier of task ${event.taskId} (${
        onChainVerifier ?? "none: the marketplace verifier judges"
      })`,
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
        },
      );
    }
    fail(problem.code, problem.message, problem.status ? { status: problem.status } : {});
  }
  const mode = item.verificationMode ?? "manual";
  if (onChainVerifier && mode !== "agent") {
    fail(
      "VERIFIER_MODE_MISMATCH",
      `verificationMode: the escrow names verifier ${onChainVerifier} for task ${event.taskId}, so the mode must be agent, not ${mode}`,
    );
  }
}

/** The listing `item` describes for the funded task `event`. */
export function listingFor(
  item: IndexItem,
  event: FundedTask,
  txHash: string,
  chain: ChainName,
  listedAt: number,
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
    serviceTerms: null,
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
            .map((k) => [k, (v as Record<string, unknown>)[k]]),
        )
      : v,
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
  let added = 0;
  for (let attempt = 0; ; attempt++) {
    try {
      await deps.db.transaction(async (trx) => {
        const existing = await findListingByTaskId(trx, listing.taskId);
        if (existing) return assertSameTerms(existing, listing);
        const sameHash = await findListingByHash(trx, listing.taskHash);
        if (sameHash) {
          fail(
            "HASH_NOT_THIS_TASK",
            `taskHash ${listing.taskHash} is listed for on-chain task ${sameHash.taskId}, not task ${listing.taskId}`,
          );
        }
        await insertListing(trx, listing);
        // Push: task.listed to the poster and task.open (or task.offered to the target), with the listing.
        added = await insertMarketEvents(trx, listingEvents(listing, listing.listedAt * 1000));
      });
      if (added > 0) deps.events?.notify();
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
      `privacy: task ${existing.taskId} was listed ${existing.privacy}; privacy cannot change after first indexing`,
    );
  }
  const changed = changedTerms(existing, again);
  if (changed.length > 0) {
    fail(
      "TERMS_IMMUTABLE",
      `task ${existing.taskId} is listed already with other terms (${changed.join(
        ", ",
      )}); first-indexed terms cannot change`,
      { details: { fields: changed } },
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
  token: string,
): Promise<IndexResult> {
  checkAgainstChain(item, event, wallet, token);
  const listing = listingFor(item, event, funding.txHash, deps.config.api.postingChain, await deps.clock.chainNow());
  if (item.serviceId !== undefined && item.targetExecutor) {
    // A rental: the service's terms, checked against what the chain says was paid, are recorded with the listing.
    listing.serviceTerms = await rentalTerms(deps, {
      serviceId: item.serviceId,
      targetExecutor: item.targetExecutor,
      token: event.token,
      amount: event.amount,
    });
  }
  await requireListingChains(deps.db, listing);
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
      `txHash: transaction ${body.txHash} created ${funding.created.length} tasks; list them with index-batch`,
    );
  }
  const [event] = funding.created;
  if (event.taskHash !== body.taskHash) {
    fail(
      "HASH_MISMATCH",
      `taskHash ${body.taskHash} differs from the task the transaction funded (${event.taskHash}, task ${event.taskId})`,
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
      "txHash: no indexed transaction funded all the listed task hashes yet; retry once the user operation is mined and indexed",
    );
  }
  return newest[0];
}

/** POST /a2a/tasks/index-batch: each listed task checked like single indexing; results in input order. */
export async function indexTaskBatch(deps: Deps, wallet: string, body: IndexBatchBody): Promise<IndexBatchResult> {
  const txHash = body.isUserOp
    ? await findFundingTransaction(
        deps,
        body.tasks.map((t) => t.taskHash),
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
          `taskHash ${item.taskHash}: the transaction funded ${events.length} tasks with this hash`,
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
