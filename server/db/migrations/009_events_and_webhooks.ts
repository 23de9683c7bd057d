import type { Migration } from "./migration";

export const eventsAndWebhooks: Migration = {
  name: "009_events_and_webhooks",
  async up(db) {
    // The push event log (GET /api/v1/events, webhooks): one row per marketplace event, its id the SSE event id.
    // Audience columns say who receives it: the task's poster, its worker, the agent it is pinned to, or every
    // registered executor (task.open). Written in the transaction that changes the listing or the projection.
    await db.schema.createTable("market_events", (t) => {
      t.bigIncrements("id").primary();
      t.string("type", 32).notNullable();
      t.bigInteger("task_id").notNullable();
      t.string("task_hash", 66).notNullable();
      t.string("poster", 42).notNullable();
      t.string("worker", 42).nullable();
      t.string("target", 42).nullable();
      t.boolean("to_poster").notNullable();
      t.boolean("to_worker").notNullable();
      t.boolean("to_target").notNullable();
      t.boolean("to_executors").notNullable();
      t.integer("on_chain_status").notNullable(); // the escrow status after the event
      t.string("tx_hash", 66).nullable();
      t.text("fields").notNullable(); // JSON: the type-specific fields of `data`
      t.bigInteger("at_ms").notNullable();
      t.string("source", 160).notNullable().unique(); // what produced it (an escrow log, a listing): written once
      t.index(["poster", "id"]);
      t.index(["worker", "id"]);
      t.index(["target", "id"]);
      t.index(["to_executors", "id"]);
      t.index(["at_ms"]);
    });
    // Webhooks: a wallet's endpoints; the secret signs every delivery (stored, answered once at registration).
    await db.schema.createTable("webhooks", (t) => {
      t.increments("id").primary();
      t.string("wallet", 42).notNullable();
      t.integer("key_id").nullable();
      t.text("url").notNullable();
      t.text("events").nullable(); // JSON array of event types, null: every type
      t.string("secret", 80).notNullable();
      t.bigInteger("after_event_id").notNullable(); // events up to this id predate the webhook
      t.bigInteger("created_at").notNullable();
      t.index(["wallet"]);
    });
    // One row per (webhook, event): its attempts, outcome and next try survive a restart.
    await db.schema.createTable("webhook_deliveries", (t) => {
      t.bigIncrements("id").primary();
      t.integer("webhook_id").notNullable().references("id").inTable("webhooks").onDelete("CASCADE");
      t.bigInteger("event_id").notNullable();
      t.string("status", 16).notNullable(); // pending | delivered | failed
      t.integer("attempts").notNullable();
      t.bigInteger("next_attempt_at_ms").nullable();
      t.integer("last_status_code").nullable();
      t.text("last_error").nullable();
      t.bigInteger("created_at_ms").notNullable();
      t.bigInteger("updated_at_ms").notNullable();
      t.unique(["webhook_id", "event_id"]);
      t.index(["status", "next_attempt_at_ms"]);
    });
    // The webhook fan-out's cursor: every event up to it has its delivery rows.
    await db.schema.createTable("webhook_cursor", (t) => {
      t.string("name", 32).primary();
      t.bigInteger("event_id").notNullable();
    });
  },
  async down(db) {
    await db.schema.dropTableIfExists("webhook_cursor");
    await db.schema.dropTableIfExists("webhook_deliveries");
    await db.schema.dropTableIfExists("webhooks");
    await db.schema.dropTableIfExists("market_events");
  },
};
