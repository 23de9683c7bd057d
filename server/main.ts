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
import { createChainGateway } from "./chain/gateway";
import { providerChainReader } from "./chain/escrowLogs";
import { createLimitStore } from "./limits/store";
import { LocalBlobStore } from "./storage/blobStore";
import { Indexer } from "./indexer/sync";
import { resetHint } from "./indexer";
import { createApp } from "./api/app";
import { createHttpServer } from "./api/httpServer";
import { chainClock, type Clock } from "./chain/clock";
import type { Deps } from "./domain/deps";
import { createMarketplaceVerifier } from "./verifier";
import { AutoVerifier } from "./domain/marketplace/autoVerifier";
import { createPush, startPush, stopPush } from "./domain/events";
import { AgentHost } from "./hosting/host";

export interface StartOptions {
  config?: Readonly<Config>;
  logger?: Logger;
  /** An ethers provider to use instead of RPC_URL (the devnet passes its in-process chain). */
  provider?: Provider;
  /** Run the indexer in this process (default true). */
  runIndexer?: boolean;
}

export interface RunningServer {
  url: string;
  deps: Deps;
  indexer?: Indexer;
  /** The agent host of this process (RUN_AGENT_HOST), when it runs one. */
  agentHost?: AgentHost;
  close(): Promise<void>;
}

/** The dependency container. `clock` defaults to chain time read from the provider, cached for a second. */
export async function buildDeps(
  config: Readonly<Config>,
  logger: Logger,
  db: Db,
  provider?: Provider,
  options: { clock?: Clock } = {},
) {
  let chain;
  try {
    const book = readAddressBook(config.network, config.deploymentsDir);
    chain = createChainGateway(
      book,
      provider ?? new JsonRpcProvider(config.rpcUrl, undefined, { staticNetwork: true }),
    );
  } catch (error) {
    logger.warn("no deployment for this network: posting answers CHAIN_NOT_CONFIGURED", { error });
  }
  const deps: Deps = {
    config,
    logger,
    db,
    limits: createLimitStore(config.api.redisUrl, config.api.limits.prefix),
    blobs: new LocalBlobStore(config.api.storageDir),
    chain,
    clock: options.clock ?? chainClock(chain?.provider),
  };
  // Push: the event hub (SSE streams) and the webhook dispatcher; the caller starts them (startPush).
  Object.assign(deps, createPush(deps));
  // The marketplace verifier (the service's only signer) when its key is configured; the caller starts it.
  const verifierKey = config.marketplace.verifierPrivateKey;
  if (verifierKey && chain) {
    deps.verifier = createMarketplaceVerifier({
      db,
      chain,
      privateKey: verifierKey,
      logger: logger.child({ component: "verifier" }),
      pollIntervalMs: config.marketplace.verifierPollMs,
    });
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
  await migrateLatest(db);
  const deps = await buildDeps(config, logger, db, options.provider);

  let indexer: Indexer | undefined;
  if ((options.runIndexer ?? true) && deps.chain) {
    const { book, provider } = deps.chain;
    indexer = new Indexer({
      db,
      chain: providerChainReader(provider),
      network: config.network,
      escrowAddress: book.escrow.proxy,
      agentFactoryAddress: book.agentFactory.proxy,
      startBlock: book.startBlock,
      config: config.indexer,
      logger: logger.child({ component: "indexer" }),
      resetHint: resetHint(config),
      onEvents: () => deps.events?.notify(),
    });
    await indexer.start();
    deps.indexer = indexer;
  }
  await deps.verifier?.start();
  await startPush(deps);
  // Auto-mode verdicts: evaluates submitted deliverables and asks the marketplace verifier to settle them.
  const autoVerifier = deps.verifier ? new AutoVerifier(deps) : undefined;
  autoVerifier?.start();

  const app = createApp(deps);
  const server = createHttpServer(app.callback(), config.api.timeouts);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.api.port, config.api.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.api.host}:${port}`;
  logger.info("API listening", { url });
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
    async close() {
      // The agents first, while the API they deliver through still answers (they stay desired running: the next
      // start takes them again).
      await agentHost?.stop();
      // Open event streams end first (cleanly, with their last event sent), or server.close would wait for them.
      await stopPush(deps);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections?.();
      await closed;
      await autoVerifier?.stop();
      await deps.verifier?.stop();
      await indexer?.stop();
      await deps.limits.close();
      await db.destroy();
    },
  };
}

if (require.main === module) {
  startServer()
    .then((running) => {
      const stop = async (signal: string) => {
        running.deps.logger.info("stopping", { signal });
        await running.close();
        process.exit(0);
      };
      process.on("SIGINT", () => void stop("SIGINT"));
      process.on("SIGTERM", () => void stop("SIGTERM"));
    })
    .catch((error) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    });
}
