/**
 * The push event log as the domain sees it: the listing events (task.listed to the poster, task.open to every
 * registered executor, task.offered to the agent a task is pinned to), who receives an event and as what role, and
 * the `data` object the SSE stream and webhooks send (docs/api.md, "Events"). The escrow-derived events are written
 * by the indexer (server/indexer/marketEvents.ts) in its range transaction.
 */
import type { ListingRecord } from "../../db/repositories/listings";
import type { MarketEventRecord, NewMarketEvent } from "../../db/repositories/marketEvents";
import { TASK_STATUS, type ChainName } from "../../escrow/records";
import { marketStatus } from "../marketStatus";
import type { EventRole, MarketEvent } from "../schemas/events";

/** The events of a task's first listing: the poster's task.listed, then task.offered or task.open. */
export function listingEvents(listing: ListingRecord, atMs: number): NewMarketEvent[] {
  const fields = {
    privacy: listing.privacy,
    amount: listing.amount,
    token: listing.token,
    deadline: listing.deadline,
    verificationMode: listing.verificationMode,
    requiredCapabilities: listing.capabilities,
    targetExecutor: listing.targetExecutor,
    serviceId: listing.serviceId,
  };
  const base = {
    chain: listing.chain,
    taskId: listing.taskId,
    taskHash: listing.taskHash,
    poster: listing.poster,
    worker: null,
    target: listing.targetExecutor,
    toWorker: false,
    onChainStatus: TASK_STATUS.Funded,
    txHash: listing.txHash,
    fields,
    atMs,
  };
  const listed: NewMarketEvent = {
    ...base,
    type: "task.listed",
    toPoster: true,
    toTarget: false,
    toExecutors: false,
    source: `listing:${listing.taskId}:${listing.taskHash}:task.listed`,
  };
  const announced: NewMarketEvent = listing.targetExecutor
    ? {
        ...base,
        type: "task.offered",
        toPoster: false,
        toTarget: true,
        toExecutors: false,
        source: `listing:${listing.taskId}:${listing.taskHash}:task.offered`,
      }
    : {
        ...base,
        type: "task.open",
        toPoster: false,
        toTarget: false,
        toExecutors: true,
        source: `listing:${listing.taskId}:${listing.taskHash}:task.open`,
      };
  return [listed, announced];
}

/** A recipient of the event stream: a wallet, and whether it is a registered executor (task.open goes to those). */
export interface Recipient {
  wallet: string;
  executor: boolean;
}

/** The role `who` receives `event` as, or undefined when the event is not theirs. */
export function recipientRole(event: MarketEventRecord, who: Recipient): EventRole | undefined {
  const w = who.wallet.toLowerCase();
  if (event.toPoster && event.poster === w) return "poster";
  if (event.toWorker && event.worker === w) return "worker";
  if (event.toTarget && event.target === w) return "target";
  if (event.toExecutors && who.executor && event.poster !== w) return "executor";
  return undefined;
}

/** A settlement chain's EVM chain id, null when the service has no deployment there. */
export type ChainIdOf = (chain: ChainName) => number | null;

/** The `data` of `event` for a recipient with `role`; `chainIdOf` gives the chain id of the event's chain. */
export function eventData(event: MarketEventRecord, role: EventRole, chainIdOf: ChainIdOf): MarketEvent {
  const state = marketStatus({
    onChainStatus: event.onChainStatus,
    lapsed: false,
    assignment: event.onChainStatus === TASK_STATUS.Funded ? "none" : "confirmed",
    verdictInFlight: false,
  });
  return {
    ...event.fields,
    id: String(event.id),
    type: event.type as MarketEvent["type"],
    taskHash: event.taskHash,
    chain: event.chain,
    chainId: chainIdOf(event.chain),
    onChainTaskId: String(event.taskId),
    role,
    state,
    txHash: event.txHash,
    at: new Date(event.atMs).toISOString(),
  };
}
