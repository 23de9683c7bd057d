/**
 * Every migration, in order. Kept in code (not discovered from files) so they run the same under ts-node, compiled
 * JavaScript and tests. Later features append; a migration never changes once released.
 */
import type { Knex } from "knex";

export interface Migration {
  name: string;
  up(db: Knex): Promise<void>;
  down(db: Knex): Promise<void>;
}

const chainAndEvents: Migration = {
  name: "001_chain_and_events",
  async up(db) {
    await db.schema.createTable("chain_identity", (t) => {
      t.integer("id").primary(); // always 1: one chain per database
      t.integer("chain_id").notNullable();
      t.string("escrow_address", 42).notNullable();
      t.bigInteger("deployment_block").notNullable();
      t.string("deployment_block_hash", 66).notNullable();
      t.string("network").notNullable();
      t.bigInteger("recorded_at").notNullable();
    });
    await db.schema.createTable("escrow_events", (t) => {
      t.bigInteger("block_number").notNullable();
      t.integer("log_index").notNullable();
      t.string("block_hash", 66).notNullable();
      t.string("tx_hash", 66).notNullable();
      t.integer("tx_index").notNullable();
      t.bigInteger("block_timestamp").notNullable();
      t.string("event_name", 64).notNullable();
      t.bigInteger("task_id").nullable();
      t.text("args").notNullable(); // JSON, bigints as decimal strings
      t.primary(["block_number", "log_index"]);
      t.unique(["tx_hash", "log_index"]);
      t.index(["task_id", "block_number", "log_index"]);
      t.index(["event_name"]);
    });
    await db.schema.createTable("blocks", (t) => {
      t.bigInteger("block_number").primary();
      t.string("block_hash", 66).notNullable();
      t.string("parent_hash", 66).notNullable();
      t.bigInteger("timestamp").notNullable();
    });
    await db.schema.createTable("checkpoints", (t) => {
      t.string("name", 64).primary();
      t.bigInteger("block_number").notNullable();
      t.string("block_hash", 66).notNullable();
      t.bigInteger("updated_at").notNullable();
    });
    await db.schema.createTable("indexer_lock", (t) => {
      t.string("name", 64).primary();
      t.string("owner", 64).nullable();
      t.bigInteger("expires_at").notNullable();
    });
  },
  async down(db) {
    for (const table of ["indexer_lock", "checkpoints", "blocks", "escrow_events", "chain_identity"]) {
      await db.schema.dropTableIfExists(table);
    }
  },
};

const projection: Migration = {
  name: "002_projection",
  async up(db) {
    await db.schema.createTable("tasks", (t) => {
      t.bigInteger("task_id").primary();
      t.string("poster", 42).notNullable();
      t.string("worker", 42).notNullable();
      t.string("token", 42).notNullable();
      t.string("amount", 80).notNullable();
      t.string("task_hash", 66).notNullable();
      t.string("evidence_hash", 66).notNullable();
      t.integer("status").notNullable();
      t.text("category").notNullable();
      t.text("location_zone").notNullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("deadline").notNullable();
      t.integer("submission_attempts").notNullable();
      t.bigInteger("disputed_at").notNullable();
      t.string("verifier", 42).notNullable();
      t.bigInteger("failed_verdict_at").notNullable();
      t.boolean("escalated").notNullable();
      t.boolean("is_open").notNullable();
      t.integer("open_submission_count").notNullable();
      t.string("fee_paid", 80).nullable();
      t.string("payout", 80).nullable();
      t.string("refund", 80).nullable();
      t.bigInteger("created_block").notNullable();
      t.string("created_tx", 66).notNullable();
      t.bigInteger("updated_block").notNullable();
      t.index(["task_hash"]);
      t.index(["poster", "task_id"]);
      t.index(["status", "task_id"]);
      t.index(["worker"]);
    });
    await db.schema.createTable("open_submissions", (t) => {
      t.bigInteger("task_id").notNullable();
      t.string("submitter", 42).notNullable();
      t.string("evidence_hash", 66).notNullable();
      t.bigInteger("block_number").notNullable();
      t.primary(["task_id", "submitter"]);
    });
    await db.schema.createTable("escrow_config", (t) => {
      t.string("key", 64).primary();
      t.text("value").notNullable();
      t.bigInteger("updated_block").notNullable();
    });
    await db.schema.createTable("allowed_tokens", (t) => {
      t.string("token", 42).primary();
      t.boolean("allowed").notNullable();
      t.string("min_rated_amount", 80).notNullable();
      t.bigInteger("updated_block").notNullable();
    });
    await db.schema.createTable("pause_periods", (t) => {
      t.integer("seq").primary();
      t.bigInteger("started_at").notNullable();
      t.bigInteger("ended_at").nullable();
      t.bigInteger("started_block").notNullable();
    });
  },
  async down(db) {
    for (const table of ["pause_periods", "allowed_tokens", "escrow_config", "open_submissions", "tasks"]) {
      await db.schema.dropTableIfExists(table);
    }
  },
};

export const MIGRATIONS: readonly Migration[] = [chainAndEvents, projection];

/** A knex migration source over MIGRATIONS. */
export const migrationSource: Knex.MigrationSource<Migration> = {
  getMigrations: async () => [...MIGRATIONS],
  getMigrationName: (m) => m.name,
  getMigration: async (m) => ({ up: m.up, down: m.down }),
};

/** Brings the schema up to date. Safe to call on every start and from several processes. */
export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
  return applied;
}

/** Drops every table of the project (and knex's own bookkeeping). */
export async function resetDatabase(db: Knex): Promise<void> {
  await db.migrate.rollback({ migrationSource }, true);
  await db.schema.dropTableIfExists("knex_migrations");
  await db.schema.dropTableIfExists("knex_migrations_lock");
}
