/**
 * Composition root: configuration, logger, database, chain, indexer and the HTTP API. `npm start` runs it against the
 * configured network; the devnet calls `startServer` in-process. Listens on API_HOST:API_PORT (127.0.0.1:8787).
 */
import type { AddressInfo } from "node:net";
import { JsonRpcProvider, type Provider } from "ethers";
import { checkDevelopmentSecrets, loadConfig, type Config } from "./config";
import { createLogger, type Logger } from "./logger";
import { createDb, dbOptions, type Db } from "./db/knex";
import { migrateLatest } from "./db/migrations";
import { readAddressBook } from "./chain/addressBook";
import { createChainGateway, type ChainGateway } from "./chain/gateway";
import type { ChainName } from "./escrow/records";
import { providerChainReader } from "./chain/escrowLogs";
import { createLimitStore } from "./limits/store";
import { LocalBlobStore } from "./storage/blobStore";
import type { Indexer } from "./indexer/sync";
import { createIndexer } from "./indexer";
import { createApp } from "./api/app";
import { createHttpServer } from "./api/httpServer";
import { chainClock, type Clock } from "./chain/clock";
import type { Deps } from "./domain/deps";
import { createMarketplaceVerifier, type MarketplaceVerifier } from "./verifier";
import { AutoVerifier } from "./domain/marketplace/autoVerifier";
import { createPush, startPush, stopPush } from "./domain/events";
import { AgentHost } from "./hosting/host";
import { createMetrics, startMetricsListener } from "./observability/metrics";
import { stopOnSignals } from "./observability/shutdown";
import { wakeAcrossProcesses, wakeChannel } from "./pubsub/redisWake";

export interface StartOptions {
  config?: Readonly<Config>;
  logger?: Logger;
  /** An ethers provider to use instead of the posting chain's RPC URL (the devnet passes its in-process chain). */
  provider?: Provider;
  /** Providers of the other chains (CHAINS) to use instead of their RPC URLs. */
  providers?: Partial<Record<ChainName, Provider>>;
  /** Run the indexer in this process (default: RUN_INDEXER, true). */
  runIndexer?: boolean;
}

export interface RunningServer {
  url: string;
  deps: Deps;
  indexer?: Indexer;
  /** The agent host of this process (RUN_AGENT_HOST), when it runs one. */
  agentHost?: AgentHost;
  /** The separate metrics listener's URL (METRICS_PORT), when one runs. */
  metricsUrl?: string;
  /**
   * Stops gracefully: readiness answers 503, the agents stop (their leases released), event streams end (clients
   * reconnect elsewhere, per the stream's retry hint), the listener stops accepting and in-flight requests finish,
   * then the verifiers finish their tick (an intent being sent is recorded before it is signed and resumed by the
   * next process), the indexer's range commits or rolls back whole and its lock is released.
   */
  close(): Promise<void>;
}

/**
 * One gateway per configured chain (CHAINS) whose address book exists; a chain without one is left out (posting
 * there answers CHAIN_NOT_CONFIGURED). `providers` replaces a chain's RPC URL (the devnet's and tests' in-process
 * chains).
 */
export function buildChainGateways(
  config: Readonly<Config>,
  logger: Logger,
  providers: Partial<Record<ChainName, Provider>> = {},
): Map<ChainName, ChainGateway> {
  const gateways = new Map<ChainName, ChainGateway>();
  for (const chain of config.chains) {
    try {
      const book = readAddressBook(chain.network, config.deploymentsDir);
      const provider = providers[chain.name] ?? new JsonRpcProvider(chain.rpcUrl, undefined, { staticNetwork: true });
      gateways.set(chain.name, createChainGateway(chain.name, book, provider));
    } catch (error) {
      logger.warn(`no deployment for chain ${chain.name} (network ${chain.network}): it answers CHAIN_NOT_CONFIGURED`, {
        error,
      });
    }
  }
  return gateways;
}

/**
 * The dependency container. `provider` is the posting chain's (default: its RPC URL), `options.providers` the
 * others'. `clock` defaults to the posting chain's time read from its provider, cached for a second; every other
 * chain's time is read from its own provider, cached `chainTimeCacheMs` (default a second), with `clock`'s wall time.
 */
export async function buildDeps(
  config: Readonly<Config>,
  logger: Logger,
  db: Db,
  provider?: Provider,
  options: { clock?: Clock; providers?: Partial<Record<ChainName, Provider>>; chainTimeCacheMs?: number } = {},
) {
  const chains = buildChainGateways(config, logger, {
    ...options.providers,
    ...(provider ? { [config.api.postingChain]: provider } : {}),
  });
  const chain = chains.get(config.api.postingChain);
  const clock = options.clock ?? chainClock(chain?.provider);
  const clocks = new Map<ChainName, Clock>();
  for (const [name, gateway] of chains) {
    if (name === config.api.postingChain) continue;
    const own = chainClock(gateway.provider, options.chainTimeCacheMs ?? 1000);
    clocks.set(name, { ...clock, chainNow: own.chainNow, chainNowFresh: own.chainNowFresh });
  }
  const deps: Deps = {
    config,
    logger,
    db,
    // In memory the limits count on the service's wall clock; in Redis on the Redis server's (see limits/store.ts).
    limits: createLimitStore(config.api.redisUrl, config.api.limits.prefix, () => clock.wallNowMs()),
    blobs: new LocalBlobStore(config.api.storageDir),
    chain,
    chains,
    clock,
    clocks,
  };
  // Push: the event hub (SSE streams) and the webhook dispatcher; the caller starts them (startPush).
  Object.assign(deps, createPush(deps));
  // The marketplace verifier (the service's only signer) when its key is configured: one per chain with a
  // deployment, each with its own provider, escrow, nonces and intents; the caller starts them (startVerifiers).
  const verifierKey = config.marketplace.verifierPrivateKey;
  if (verifierKey) {
    const verifiers = new Map<ChainName, MarketplaceVerifier>();
    for (const [name, gateway] of chains) {
      verifiers.set(
        name,
        createMarketplaceVerifier({
          db,
          chain: gateway,
          privateKey: verifierKey,
          logger: logger.child({ component: "verifier", chain: name }),
          pollIntervalMs: config.marketplace.verifierPollMs,
        }),
      );
    }
    deps.verifiers = verifiers;
    deps.verifier = verifiers.get(config.api.postingChain);
  }
  return deps;
}

export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const config = options.config ?? loadConfig();
  await checkDevelopmentSecrets(
    config,
    async () =>
      (await (options.provider ?? new JsonRpcProvider(config.rpcUrl, undefined, { staticNetwork: true })).getNetwork())
        .chainId,
  );
  const logger = options.logger ?? createLogger(config.logLevel, { service: "api", network: config.network });
  const db = createDb(dbOptions(config));
  await migrateLatest(db, { postingChain: config.api.postingChain });
  const deps = await buildDeps(config, logger, db, options.provider, { providers: options.providers });

  // One indexer per configured chain with a deployment, each with its own checkpoint and writer lock.
  const indexers = new Map<ChainName, Indexer>();
  if (options.runIndexer ?? config.runIndexer) {
    for (const chainConfig of config.chains) {
      const gateway = deps.chains.get(chainConfig.name);
      if (!gateway) continue;
      const chainIndexer = createIndexer(
        config,
        db,
        logger,
        { chain: providerChainReader(gateway.provider), book: gateway.book, onEvents: () => deps.events?.notify() },
        chainConfig,
      );
      await chainIndexer.start();
      indexers.set(chainConfig.name, chainIndexer);
    }
    deps.indexers = indexers;
  }
  const indexer = indexers.get(config.api.postingChain);
  deps.indexer = indexer;
  const verifiers = [...(deps.verifiers?.values() ?? [])];
  for (const verifier of verifiers) await verifier.start();
  await startPush(deps);
  // With Redis, events written by another process (an indexer of its own, another API's listing) wake this process's
  // streams and webhooks at once; the slow poll stays as the fallback.
  const wake =
    config.api.redisUrl && deps.events
      ? await wakeAcrossProcesses(deps.events, {
          redisUrl: config.api.redisUrl,
          channel: wakeChannel(config.api.limits.prefix),
          logger: logger.child({ component: "events" }),
        })
      : undefined;
  // Auto-mode verdicts: evaluates submitted deliverables on every chain and asks that chain's verifier to settle them.
  const autoVerifier = verifiers.length > 0 ? new AutoVerifier(deps) : undefined;
  autoVerifier?.start();

  const { observability } = config;
  const metrics = observability.metricsOnApi || observability.metricsListener ? createMetrics(deps) : undefined;
  let draining = false;
  const app = createApp(deps, undefined, { metrics, draining: () => draining });
  const server = createHttpServer(app.callback(), config.api.timeouts);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.api.port, config.api.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.api.host}:${port}`;
  logger.info("API listening", { url });
  const metricsListener =
    metrics && observability.metricsListener
      ? await startMetricsListener(metrics, observability.metricsListener.host, observability.metricsListener.port)
      : undefined;
  if (metricsListener) logger.info("metrics listening", { url: metricsListener.url });
  // Hosted agents in this process (RUN_AGENT_HOST): their workers speak to this API over HTTP.
  let agentHost: AgentHost | undefined;
  if (config.hostedAgents.runHost) {
    agentHost = new AgentHost({ db, config, logger: logger.child({ component: "agent-host" }), apiUrl: url });
    deps.agentHost = agentHost;
    agentHost.start();
  }
  return {
    url,
    deps,
    indexer,
    agentHost,
    metricsUrl: metricsListener?.url,
    async close() {
      draining = true;
      // The agents first, while the API they deliver through still answers (they stay desired running: the next
      // start takes them again).
      await agentHost?.stop();
      // Open event streams end first (cleanly, with their last event sent), or server.close would wait for them.
      await stopPush(deps);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections?.();
      await closed;
      await autoVerifier?.stop();
      await Promise.all(verifiers.map((verifier) => verifier.stop()));
      await Promise.all([...indexers.values()].map((i) => i.stop()));
      await metricsListener?.close();
      await wake?.close();
      await deps.limits.close();
      await db.destroy();
    },
  };
}

if (require.main === module) {
  startServer()
    .then((running) => {
      stopOnSignals({
        logger: running.deps.logger,
        timeoutMs: running.deps.config.observability.shutdownTimeoutMs,
        close: () => running.close(),
      });
    })
    .catch((error) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    });
}
