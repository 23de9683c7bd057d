/**
 * Listing funded tasks on the marketplace (POST /a2a/tasks/index and index-batch).
 *
 * The service reads the funding receipt itself on the chain the body names (`chain`, the posting chain when absent),
 * takes the TaskCreated events of its own escrow there, checks the caller funded the task, checks the listing terms against what the chain says (verifier, token), and stores the listing
 * keyed by that chain and the on-chain task id, with its capabilities, in one transaction. The on-chain projection (the indexer's
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
import { fundingTransactionsOfHash } from "../db/repositories/tasks";
import { ZERO_ADDRESS } from "../escrow/records";
import { insertMarketEvents } from "../db/repositories/marketEvents";
import { listingEvents } from "./events/log";
import { requireListingChains } from "./marketplace/chainRules";
import { chainGateway } from "./chainGateways";

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
export function checkAgainstChain(
  item: IndexItem,
  event: FundedTask,
  wallet: string,
  settlementToken: string,
  chain?: ChainName,
): void {
  if (event.poster !== wallet) {
    fail(
      "NOT_TASK_AGENT",
      `task ${event.taskId} was funded by ${event.poster}, not by this key's wallet ${wallet}; the funding wallet must list it (or cancel it to get a refund)`,
    );
  }
  if (event.token !== settlementToken.toLowerCase()) {
    fail(
      "TOKEN_NOT_SETTLEMENT",
      `task ${event.taskId} is funded in ${event.token}, not in the settlement token ${settlementToken.toLowerCase()}${
        chain ? ` of chain ${chain}` : ""
      }`,
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
 * Stores `listing` unless the task (its chain and on-chain id) is listed already: the same terms again are accepted
 * (idempotent), different ones refused. A task hash listed for another task, on either chain, is refused. Listing and capabilities land in one
 * transaction; a concurrent insert of the same task is resolved by reading the winner's row.
 */
async function storeListing(deps: Deps, listing: ListingRecord): Promise<void> {
  let added = 0;
  for (let attempt = 0; ; attempt++) {
    try {
      await deps.db.transaction(async (trx) => {
        const existing = await findListingByTaskId(trx, listing.taskId, listing.chain);
        if (existing) return assertSameTerms(existing, listing);
        const sameHash = await findListingByHash(trx, listing.taskHash);
        if (sameHash) {
          fail(
            "HASH_NOT_THIS_TASK",
            `taskHash ${listing.taskHash} is listed for task ${sameHash.taskId} on ${sameHash.chain}, not task ${listing.taskId} on ${listing.chain}`,
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

/** A funding receipt read on `chain`, with that chain's settlement token. */
interface Funding {
  funding: FundingReceipt;
  token: string;
  chain: ChainName;
}

/**
 * Reads and checks the funding receipt on the chain named (the posting chain when none): the whole-request failures
 * of single and batch indexing. A transaction sent on another chain has no receipt here: RECEIPT_NOT_FOUND.
 */
async function loadFunding(deps: Deps, txHash: string, name: ChainName | undefined): Promise<Funding> {
  const chain = chainGateway(deps, name);
  let receipt;
  try {
    receipt = await chain.receipt(txHash);
  } catch (cause) {
    return fail("ON_CHAIN_CHECK_FAILED", `could not read the receipt of ${txHash} from chain ${chain.name}; retry`, {
      cause,
    });
  }
  if (!receipt) {
    return fail(
      "RECEIPT_NOT_FOUND",
      `txHash: no receipt for ${txHash} on chain ${chain.name} yet; retry once the transaction is mined (and name ` +
        `the chain it was sent on)`,
    );
  }
  const funding = readFundingReceipt(receipt, chain.book.escrow.proxy);
  if (!funding.succeeded) fail("TX_REVERTED", `txHash: transaction ${txHash} reverted; nothing was funded`);
  if (funding.created.length === 0) {
    fail(
      "NO_TASK_CREATED",
      `txHash: transaction ${txHash} created no task in the escrow ${chain.book.escrow.proxy} of chain ${chain.name}`,
    );
  }
  return { funding, token: chain.book.token.address, chain: chain.name };
}

async function listOne(
  deps: Deps,
  wallet: string,
  item: IndexItem,
  event: FundedTask,
  { funding, token, chain }: Funding,
): Promise<IndexResult> {
  checkAgainstChain(item, event, wallet, token, chain);
  const listing = listingFor(item, event, funding.txHash, chain, await deps.clock.chainNow());
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
  const loaded = await loadFunding(deps, body.txHash, body.chain);
  const { funding } = loaded;
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
  const result = await listOne(deps, wallet, body, event, loaded);
  await awaitIndexed(deps, loaded.chain, funding.blockNumber);
  return result;
}

/** How long indexing waits for the indexer to reach the funding block (read your writes). */
export const READ_YOUR_WRITES_MS = 5_000;

/**
 * Waits until `chain`'s indexer has `block`, so the lister's next read shows the task it just listed. Bounded: past
 * READ_YOUR_WRITES_MS the answer goes out anyway, and reads say NOT_INDEXED_YET until the indexer catches up.
 */
async function awaitIndexed(deps: Deps, chain: ChainName, block: number): Promise<void> {
  const indexer = deps.indexers?.get(chain) ?? (chain === deps.config.api.postingChain ? deps.indexer : undefined);
  try {
    await indexer?.waitForBlock(block, READ_YOUR_WRITES_MS);
  } catch {
    // the indexer is behind: readTask answers NOT_INDEXED_YET meanwhile
  }
}

/**
 * The transaction that funded every one of `taskHashes` on `chain`, found in the indexed projection (for ERC-4337
 * user operations, whose hash is not a transaction hash). The newest such transaction wins; none: RECEIPT_NOT_FOUND.
 */
async function findFundingTransaction(deps: Deps, chain: ChainName, taskHashes: readonly string[]): Promise<string> {
  let common: Map<string, number> | undefined;
  for (const hash of taskHashes) {
    const funded = await fundingTransactionsOfHash(deps.db, chain, hash);
    const txs = new Map(funded.map((t) => [t.txHash, t.block]));
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
  const chain = chainGateway(deps, body.chain).name;
  const txHash = body.isUserOp
    ? await findFundingTransaction(
        deps,
        chain,
        body.tasks.map((t) => t.taskHash),
      )
    : body.txHash;
  const loaded = await loadFunding(deps, txHash, chain);
  const { funding } = loaded;
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
      results.push(await listOne(deps, wallet, item, events[0], loaded));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      results.push({ taskHash: item.taskHash, error: { code: error.code, message: error.message } });
    }
  }
  await awaitIndexed(deps, chain, funding.blockNumber);
  return { results };
}
