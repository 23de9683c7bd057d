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

const marketplace: Migration = {
  name: "005_marketplace",
  async up(db) {
    // Agents (executors) and what they declare.
    await db.schema.createTable("executors", (t) => {
      t.string("address", 42).primary();
      t.string("public_key", 130).notNullable();
      t.text("supported_chains").notNullable(); // JSON array of chain names
      t.string("min_reward", 80).notNullable(); // smallest units of the settlement token
      t.boolean("verifier_opt_in").notNullable();
      t.string("name", 64).nullable();
      t.bigInteger("registered_at").notNullable();
      t.bigInteger("updated_at").notNullable();
      t.bigInteger("last_seen_at").notNullable();
    });
    await db.schema.createTable("executor_capabilities", (t) => {
      t.string("address", 42).notNullable();
      t.string("capability", 64).notNullable();
      t.primary(["address", "capability"]);
      t.index(["capability"]);
    });
    // Applicants of a task.
    await db.schema.createTable("task_bids", (t) => {
      t.bigInteger("task_id").notNullable();
      t.string("agent", 42).notNullable();
      t.text("message").nullable();
      t.string("score", 32).notNullable(); // the agent's reputation score when it bid
      t.bigInteger("created_at").notNullable();
      t.primary(["task_id", "agent"]);
    });
    // Exclusive offer windows: the best-scored bidder may accept alone until expires_at.
    await db.schema.createTable("task_offers", (t) => {
      t.bigInteger("task_id").primary();
      t.string("agent", 42).notNullable();
      t.string("score", 32).notNullable();
      t.bigInteger("expires_at").notNullable();
    });
    // The accept lock: one agent at a time may be accepting a task.
    await db.schema.createTable("accept_locks", (t) => {
      t.bigInteger("task_id").primary();
      t.string("agent", 42).notNullable();
      t.bigInteger("expires_at").notNullable();
    });
    // Who the marketplace assigned (accept, or the poster's assignWorker seen on-chain).
    await db.schema.createTable("task_assignments", (t) => {
      t.bigInteger("task_id").primary();
      t.string("agent", 42).notNullable();
      t.string("via", 16).notNullable(); // accept | poster
      t.bigInteger("intent_id").nullable(); // the verifier intent performing marketplaceAssign
      t.bigInteger("accepted_at").notNullable();
      t.index(["agent"]);
    });
    // Brief keys wrapped per agent (re-wrapped from custody when the poster allowed it).
    await db.schema.createTable("task_agent_keys", (t) => {
      t.bigInteger("task_id").notNullable();
      t.string("agent", 42).notNullable();
      t.text("wrapped_key").notNullable();
      t.string("source", 16).notNullable(); // poster | custody
      t.bigInteger("created_at").notNullable();
      t.primary(["task_id", "agent"]);
    });
    // Deliverables: one row per attempt.
    await db.schema.createTable("task_submissions", (t) => {
      t.bigInteger("task_id").notNullable();
      t.integer("attempt").notNullable(); // 1..3, the on-chain submission count after it
      t.string("agent", 42).notNullable();
      t.text("result").notNullable(); // canonical JSON of the result
      t.string("evidence_hash", 66).notNullable(); // keccak256 of the canonical JSON
      t.string("verdict", 8).nullable(); // pass | fail
      t.string("verdict_by", 42).nullable();
      t.text("verdict_reason").nullable();
      t.bigInteger("submitted_at").notNullable();
      t.bigInteger("verdict_at").nullable();
      t.primary(["task_id", "attempt"]);
    });
    // The marketplace verifier's persisted intents: each chain call happens exactly once.
    await db.schema.createTable("verifier_intents", (t) => {
      t.increments("id").primary();
      t.string("kind", 16).notNullable(); // assign | verdict
      t.bigInteger("task_id").notNullable();
      t.string("intent_key", 128).notNullable().unique(); // e.g. assign:7 or verdict:7:2
      t.text("args").notNullable(); // JSON
      t.string("status", 16).notNullable(); // pending | sent | confirmed | failed
      t.integer("nonce").nullable();
      t.string("tx_hash", 66).nullable();
      t.text("raw_tx").nullable(); // the signed transaction, re-broadcast as-is after a crash
      t.integer("attempts").notNullable();
      t.text("last_error").nullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("updated_at").notNullable();
      t.index(["status"]);
      t.index(["task_id"]);
    });
  },
  async down(db) {
    for (const table of [
      "verifier_intents",
      "task_submissions",
      "task_agent_keys",
      "task_assignments",
      "accept_locks",
      "task_offers",
      "task_bids",
      "executor_capabilities",
      "executors",
    ]) {
      await db.schema.dropTableIfExists(table);
    }
  },
};

export const MIGRATIONS: readonly Migration[] = [
  chainAndEvents,
  projection,
  accountsAndListings,
  listingFunding,
  marketplace,
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
    await connection.query("select pg_advisory_unlock(hashtext($1))", [`${searchPath}/migrations`]).catch(() => undefined);
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
