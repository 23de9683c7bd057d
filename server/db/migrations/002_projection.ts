import type { Migration } from "./migration";

export const projection: Migration = {
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
