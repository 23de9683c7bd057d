/**
 * A standalone agent host process (`npm run agents:host`): runs hosted agents for an API that runs elsewhere, to
 * scale past one machine. Configuration as the API's (server/config.ts), plus API_URL, the API its agents' workers
 * speak to. Hosts share the agents through leases in the database: with DATABASE_URL (PostgreSQL) any number of
 * hosts on any machines; on SQLite only processes of one machine share its database file. Each host runs at most
 * AGENT_HOST_CAPACITY agents; a host that dies leaves its agents to the others within AGENT_LEASE_MS.
 */
import { loadConfig } from "../config";
import { createLogger } from "../logger";
import { createDb, dbOptions } from "../db/knex";
import { migrateLatest } from "../db/migrations";
import { AgentHost } from "./host";
import { stopOnSignals } from "../observability/shutdown";

async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { service: "agent-host", network: config.network });
  const apiUrl = process.env.API_URL;
  if (!apiUrl) throw new Error("API_URL: required, the API the hosted agents speak to (e.g. http://127.0.0.1:8787)");
  if (!config.databaseUrl) {
    logger.warn("no DATABASE_URL: agents are shared only with hosts on this machine (the SQLite file)", {
      sqliteFile: config.sqliteFile,
    });
  }
  const db = createDb(dbOptions(config));
  await migrateLatest(db, { postingChain: config.api.postingChain });
  const host = new AgentHost({ db, config, logger, apiUrl });
  host.start();
  // The workers stop, and each agent's lease is released so another host takes it at once.
  stopOnSignals({
    logger,
    timeoutMs: config.observability.shutdownTimeoutMs,
    async close() {
      await host.stop();
      await db.destroy();
    },
  });
}

main().catch((error) => {
  console.error(String(error instanceof Error ? (error.stack ?? error.message) : error));
  process.exit(1);
});
