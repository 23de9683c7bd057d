/**
 * The agent host's access to hosted agents (server/hosting reaches the database only through this module): host
 * heartbeats, leases of agents to hosts, the host's reports of an agent's status and the event stream's resume
 * point, the agent's log, and the installed skills a worker runs. The statements themselves are in
 * db/repositories/agentHosts.ts and hostedAgents.ts; `openHostDatabase` opens (and migrates) the database a
 * standalone host shares with the API.
 */
import type { Knex } from "knex";
import { createDb, dbOptions } from "../../db/knex";
import { migrateLatest } from "../../db/migrations";
import type { Config } from "../../config";

export {
  appendAgentLog,
  claimAgentLease,
  findAgentsToRun,
  heartbeatHost,
  listClaimableAgents,
  releaseAgentLease,
  removeHost,
  renewAgentLeases,
  reportAgentStatus,
  reportAgentStopped,
  saveLastEventId,
  type HostedAgentRun,
  type HostedStatus,
  type LogLevel,
} from "../../db/repositories/agentHosts";
export { listInstalledSkills } from "../../db/repositories/hostedAgents";

/** The configured database (PostgreSQL with DATABASE_URL, else the SQLite file), migrated to the latest schema. */
export async function openHostDatabase(config: Readonly<Config>): Promise<Knex> {
  const db = createDb(dbOptions(config));
  await migrateLatest(db, { postingChain: config.api.postingChain });
  return db;
}
