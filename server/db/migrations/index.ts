/**
 * Every migration, in order (one file each, named by its migration). Kept in code (not discovered from files) so they
 * run the same under ts-node, compiled JavaScript and tests. Later features add a file and append it here; a
 * migration never changes once released.
 */
import type { Knex } from "knex";
import type { Migration } from "./migration";
import { chainAndEvents } from "./001_chain_and_events";
import { projection } from "./002_projection";
import { accountsAndListings } from "./003_accounts_and_listings";
import { listingFunding } from "./004_listings_funding";
import { marketplace } from "./005_marketplace";
import { services } from "./006_services";
import { deployFees } from "./007_deploy_fees";
import { indexedDeployCredits } from "./008_indexed_deploy_credits";
import { eventsAndWebhooks } from "./009_events_and_webhooks";
import { hostedAgents } from "./010_hosted_agents";
import { openTaskIndexes } from "./011_open_task_indexes";
import { noncePurpose } from "./012_nonce_purpose";
import { openVerdicts } from "./013_open_verdicts";
import { oauth } from "./015_oauth";
import { apiKeyExpiry } from "./016_api_key_expiry";
import { twoChains } from "./014_two_chains";
import { hostedAgentChains } from "./017_hosted_agent_chains";
import { verifierIntentsPerChain } from "./018_verifier_intents_per_chain";
import { chainReadIndexes } from "./019_chain_read_indexes";
import { dropTaskHashIndex } from "./020_drop_task_hash_index";
import type { ChainName } from "../../escrow/records";

export type { Migration };

/** Options of a migration run: the posting chain the database's existing rows belong to (POSTING_CHAIN). */
export interface MigrateOptions {
  postingChain?: ChainName;
}

/** Every migration, for a database whose rows so far belong to `postingChain`. */
export function migrations(postingChain: ChainName = "base"): readonly Migration[] {
  return [
    ...MIGRATIONS_TO_013,
    twoChains(postingChain),
    oauth,
    apiKeyExpiry,
    hostedAgentChains(postingChain),
    verifierIntentsPerChain(postingChain),
    chainReadIndexes,
    dropTaskHashIndex,
  ];
}

const MIGRATIONS_TO_013: readonly Migration[] = [
  chainAndEvents,
  projection,
  accountsAndListings,
  listingFunding,
  marketplace,
  services,
  deployFees,
  indexedDeployCredits,
  eventsAndWebhooks,
  hostedAgents,
  openTaskIndexes,
  noncePurpose,
  openVerdicts,
];

/** Every migration, the posting chain `base`. */
export const MIGRATIONS: readonly Migration[] = migrations();

/** A knex migration source over the migrations (up to `until`, a migration's name, when given). */
export function migrationSource(options: MigrateOptions & { until?: string } = {}): Knex.MigrationSource<Migration> {
  const all = migrations(options.postingChain);
  const end = options.until ? all.findIndex((m) => m.name === options.until) + 1 : all.length;
  return {
    getMigrations: async () => all.slice(0, end),
    getMigrationName: (m) => m.name,
    getMigration: async (m) => ({ up: m.up, down: m.down }),
  };
}

/**
 * Brings the schema up to date. Safe to call on every start and from several processes: on PostgreSQL the
 * migration runs under an advisory lock (knex creates its own bookkeeping tables outside its lock, and processes
 * starting together on a fresh schema would collide); SQLite serialises writers itself.
 */
export async function migrateLatest(db: Knex, options: MigrateOptions & { until?: string } = {}): Promise<string[]> {
  if (db.client.config.client !== "pg") return runLatest(db, options);
  const searchPath = String((db.client.config as { searchPath?: string[] }).searchPath ?? "public");
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const connection: any = await db.client.acquireConnection();
  try {
    await connection.query("select pg_advisory_lock(hashtext($1))", [`${searchPath}/migrations`]);
    return await runLatest(db, options);
  } finally {
    await connection
      .query("select pg_advisory_unlock(hashtext($1))", [`${searchPath}/migrations`])
      .catch(() => undefined);
    await db.client.releaseConnection(connection);
  }
}

async function runLatest(db: Knex, options: MigrateOptions & { until?: string }): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource: migrationSource(options) })) as [number, string[]];
  return applied;
}

/** Drops every table of the project (and knex's own bookkeeping). */
export async function resetDatabase(db: Knex): Promise<void> {
  await db.migrate.rollback({ migrationSource: migrationSource() }, true);
  await db.schema.dropTableIfExists("knex_migrations");
  await db.schema.dropTableIfExists("knex_migrations_lock");
}
