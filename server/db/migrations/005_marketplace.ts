import type { Migration } from "./migration";

export const marketplace: Migration = {
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
