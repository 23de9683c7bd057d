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

const accountsAndListings: Migration = {
  name: "003_accounts_and_listings",
  async up(db) {
    await db.schema.createTable("users", (t) => {
      t.string("address", 42).primary();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("last_sign_in_at").notNullable();
    });
    await db.schema.createTable("auth_nonces", (t) => {
      t.string("nonce", 64).primary();
      t.string("address", 42).notNullable();
      t.bigInteger("issued_at").notNullable();
      t.bigInteger("expires_at").notNullable();
      t.bigInteger("used_at").nullable();
    });
    await db.schema.createTable("sessions", (t) => {
      t.string("token_hash", 66).primary();
      t.string("address", 42).notNullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("expires_at").notNullable();
      t.index(["address"]);
    });
    await db.schema.createTable("api_keys", (t) => {
      t.increments("id").primary();
      t.string("address", 42).notNullable();
      t.string("key_hash", 66).notNullable().unique();
      t.string("prefix", 16).notNullable();
      t.string("label", 100).nullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("revoked_at").nullable();
      t.bigInteger("last_used_at").nullable();
      t.index(["address"]);
    });
    await db.schema.createTable("blobs", (t) => {
      t.string("root_hash", 66).primary();
      t.bigInteger("size").notNullable();
      t.string("uploader", 42).notNullable();
      t.bigInteger("created_at").notNullable();
    });
    await db.schema.createTable("hash_reservations", (t) => {
      t.string("task_hash", 66).primary();
      t.string("poster", 42).notNullable();
      t.bigInteger("expires_at").notNullable();
      t.bigInteger("created_at").notNullable();
    });
    await db.schema.createTable("listings", (t) => {
      t.bigInteger("task_id").primary(); // on-chain task id on this database's chain
      t.string("task_hash", 66).notNullable().unique();
      t.string("chain", 16).notNullable();
      t.string("poster", 42).notNullable();
      t.string("tx_hash", 66).notNullable();
      t.string("privacy", 8).notNullable();
      t.string("verification_mode", 8).notNullable();
      t.text("verification_criteria").nullable(); // JSON
      t.string("verifier_address", 42).nullable();
      t.string("root_hash", 80).nullable();
      t.text("wrapped_keys").nullable(); // JSON map address -> hex ECIES blob
      t.string("target_executor", 42).nullable();
      t.integer("service_id").nullable();
      t.text("public_brief").nullable();
      t.bigInteger("listed_at").notNullable();
      t.index(["poster", "task_id"]);
    });
    await db.schema.createTable("listing_capabilities", (t) => {
      t.bigInteger("task_id").notNullable();
      t.string("capability", 64).notNullable();
      t.primary(["task_id", "capability"]);
      t.index(["capability"]);
    });
  },
  async down(db) {
    for (const table of [
      "listing_capabilities",
      "listings",
      "hash_reservations",
      "blobs",
      "api_keys",
      "sessions",
      "auth_nonces",
      "users",
    ]) {
      await db.schema.dropTableIfExists(table);
    }
  },
};

/**
 * Listings keep what the funding receipt proved (token, amount, creation-time deadline), so a listing reads whole
 * while the on-chain projection lags, and the custody copy of a private brief's key (used by later work).
 */
const listingFunding: Migration = {
  name: "004_listings_funding",
  async up(db) {
    await db.schema.alterTable("listings", (t) => {
      t.string("token", 42).nullable();
      t.string("amount", 80).nullable();
      t.bigInteger("deadline").nullable();
      t.text("custody_wrapped_key").nullable();
    });
  },
  async down(db) {
    await db.schema.alterTable("listings", (t) => {
      t.dropColumns("token", "amount", "deadline", "custody_wrapped_key");
    });
  },
};

export const MIGRATIONS: readonly Migration[] = [chainAndEvents, projection, accountsAndListings, listingFunding];

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
