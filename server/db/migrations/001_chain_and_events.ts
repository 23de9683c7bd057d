import type { Migration } from "./migration";

export const chainAndEvents: Migration = {
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
