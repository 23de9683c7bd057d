import type { Migration } from "./migration";

export const accountsAndListings: Migration = {
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
