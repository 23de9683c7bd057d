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

export type { Migration };

export const MIGRATIONS: readonly Migration[] = [
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
  oauth,
  apiKeyExpiry,
];

/** A knex migration source over MIGRATIONS. */
export const migrationSource: Knex.MigrationSource<Migration> = {
  getMigrations: async () => [...MIGRATIONS],
  getMigrationName: (m) => m.name,
  getMigration: async (m) => ({ up: m.up, down: m.down }),
};

/**
 * Brings the schema up to date. Safe to call on every start and from several processes: on PostgreSQL the
 * migration runs under an advisory lock (knex creates its own bookkeeping tables outside its lock, and processes
 * starting together on a fresh schema would collide); SQLite serialises writers itself.
 */
export async function migrateLatest(db: Knex): Promise<string[]> {
  if (db.client.config.client !== "pg") return runLatest(db);
  const searchPath = String((db.client.config as { searchPath?: string[] }).searchPath ?? "public");
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const connection: any = await db.client.acquireConnection();
  try {
    await connection.query("select pg_advisory_lock(hashtext($1))", [`${searchPath}/migrations`]);
    return await runLatest(db);
  } finally {
    await connection
      .query("select pg_advisory_unlock(hashtext($1))", [`${searchPath}/migrations`])
      .catch(() => undefined);
    await db.client.releaseConnection(connection);
  }
}

async function runLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
  return applied;
}

/** Drops every table of the project (and knex's own bookkeeping). */
export async function resetDatabase(db: Knex): Promise<void> {
  await db.migrate.rollback({ migrationSource }, true);
  await db.schema.dropTableIfExists("knex_migrations");
  await db.schema.dropTableIfExists("knex_migrations_lock");
}
