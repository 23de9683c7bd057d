/** The dependencies the domain, route handlers and middleware use. Built once by the composition root (server/main.ts) or by tests. */
import type { Knex } from "knex";
import type { Clock } from "../chain/clock";
import type { Config } from "../config";
import type { Logger } from "../logger";
import type { ChainGateway } from "../chain/gateway";
import type { ChainName } from "../escrow/records";
import type { LimitStore } from "../limits/store";
import type { BlobStore } from "../storage/blobStore";
import type { IndexerStatus } from "../indexer/sync";
import type { MarketplaceVerifier } from "../verifier/types";
import type { EventHub } from "./events/hub";
import type { WebhookDispatcher } from "./events/webhooks";
import type { StreamRegistry } from "./events/streams";

export interface Deps {
  config: Readonly<Config>;
  logger: Logger;
  db: Knex;
  limits: LimitStore;
  blobs: BlobStore;
  /**
   * The posting chain's gateway (config.api.postingChain), for code that serves one chain. Absent when that chain
   * has no deployment: posting answers CHAIN_NOT_CONFIGURED.
   */
  chain?: ChainGateway;
  /**
   * One gateway per configured chain that has a deployment (CHAINS), the posting chain's being `chain`.
   */
  chains: ReadonlyMap<ChainName, ChainGateway>;
  /** The posting chain's indexer (`indexers` has every chain's). */
  indexer?: { status(): IndexerStatus; waitForBlock(block: number, timeoutMs?: number): Promise<void> };
  /** The indexer of each chain this process indexes. */
  indexers?: ReadonlyMap<
    ChainName,
    { status(): IndexerStatus; waitForBlock(block: number, timeoutMs?: number): Promise<void> }
  >;
  /**
   * The posting chain's marketplace verifier (absent when no VERIFIER_PRIVATE_KEY is configured: accepts answer
   * SETTLEMENT_FAILED). A task's own chain's is `verifierOn(deps, chain)` (server/domain/verifiers.ts).
   */
  verifier?: MarketplaceVerifier;
  /** The marketplace verifier of each chain it settles on (`verifier` is the posting chain's). */
  verifiers?: ReadonlyMap<ChainName, MarketplaceVerifier>;
  /** The push event hub: live SSE streams; `notify()` after writing event rows (server/domain/events). */
  events?: EventHub;
  /** The open streams (event streams, log follows, MCP GET streams): their caps, lifetime and revocation. */
  streams?: StreamRegistry;
  /** Webhook fan-out and delivery. */
  webhooks?: WebhookDispatcher;
  /** The agent host of this process (server/hosting), when it runs one: told to look again after an owner's change. */
  agentHost?: { wake(): void };
  /** The posting chain's time (deadlines) and wall time (what the service itself times). */
  clock: Clock;
  /**
   * The chain time of every other chain with a deployment (its latest block, cached a second): a task's deadlines are
   * its own chain's time (`chainClock(deps, chain)`, server/domain/chainGateways.ts).
   */
  clocks?: ReadonlyMap<ChainName, Clock>;
}
