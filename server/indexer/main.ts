/**
 * `npm run indexer`: the indexer alone, for deployments that scale the API to several processes over one
 * PostgreSQL. Only one indexer writes at a time; a second one waits for the lock. Stops on SIGINT/SIGTERM
 * within SHUTDOWN_TIMEOUT_MS.
 */
import { loadConfig } from "../config";
import { createLogger } from "../logger";
import { createDb, dbOptions } from "../db/knex";
import { migrateLatest } from "../db/migrations";
import { createIndexer } from "./index";
import { stopOnSignals } from "../observability/shutdown";
import { createRedisWake, wakeChannel } from "../pubsub/redisWake";

async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { service: "indexer", network: config.network });
  const db = createDb(dbOptions(config));
  await migrateLatest(db, { postingChain: config.api.postingChain });
  // With Redis, the API processes hear of each indexed range at once instead of at their next poll.
  const wake = config.api.redisUrl
    ? await createRedisWake({
        redisUrl: config.api.redisUrl,
        channel: wakeChannel(config.api.limits.prefix),
        logger,
      })
    : undefined;
  // One sync loop per configured chain, each with its own checkpoint and writer lock.
  const indexers = config.chains.map((chain) =>
    createIndexer(config, db, logger, { onEvents: () => wake?.announce() }, chain),
  );
  for (const [i, indexer] of indexers.entries()) {
    await indexer.start();
    logger.info("indexer started", {
      chain: config.chains[i].name,
      rpc: config.chains[i].rpcUrl,
      database: config.databaseUrl ? "postgres" : config.sqliteFile,
    });
  }
  // The range in progress finishes (or rolls back whole), then the writer lock is released for the next indexer.
  stopOnSignals({
    logger,
    timeoutMs: config.observability.shutdownTimeoutMs,
    async close() {
      await Promise.all(indexers.map((indexer) => indexer.stop()));
      await wake?.close();
      await db.destroy();
    },
  });
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
