import type { Migration } from "./migration";

export const hostedAgents: Migration = {
  name: "010_hosted_agents",
  async up(db) {
    // Hosted agents: agents the service runs for an owner who spent a deploy credit. Each has its own wallet, whose
    // key is stored only encrypted under the key-encryption key (docs/agents.md, "Hosted agents").
    await db.schema.createTable("hosted_agents", (t) => {
      t.string("id", 40).primary(); // agt_ + 24 hex
      t.string("slug", 48).nullable().unique(); // null once deleted (the slug is free again)
      t.string("former_slug", 48).nullable();
      t.string("owner", 42).notNullable();
      t.string("name", 80).notNullable();
      t.text("description").nullable();
      t.text("capabilities").notNullable(); // JSON array
      t.string("min_reward", 78).notNullable(); // smallest reward taken, raw units
      t.string("wallet", 42).notNullable().unique(); // the agent's own address
      t.text("encrypted_key").nullable(); // null once erased (NO_KEY)
      t.boolean("verifier_opt_in").notNullable().defaultTo(false);
      t.string("verifier_name", 80).nullable();
      // What the owner asked for (stopped | running | paused) and what the host reports
      // (stopped | starting | running | paused | crashed | deleted).
      t.string("desired_state", 16).notNullable();
      t.string("status", 16).notNullable();
      t.integer("restarts").notNullable().defaultTo(0); // worker restarts after a crash (the host's count)
      // Bumped by the owner's restart and by skill changes: the host restarts the worker when it changes.
      t.integer("generation").notNullable().defaultTo(0);
      t.text("last_error").nullable();
      // The host that runs it and until when (ms): each agent runs on exactly one host.
      t.string("lease_host", 80).nullable();
      t.bigInteger("lease_until_ms").nullable();
      t.string("last_event_id", 40).nullable(); // the event stream's resume point
      t.string("deploy_tx_hash", 66).nullable(); // the deploy credit spent on it
      t.integer("deploy_log_index").nullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("updated_at").notNullable();
      t.bigInteger("deleted_at").nullable();
      t.index(["owner"]);
      t.index(["desired_state"]);
    });
    // Installed skills, with the secrets a skill needs stored encrypted (one JSON object per install).
    await db.schema.createTable("hosted_agent_skills", (t) => {
      t.string("agent_id", 40).notNullable().references("id").inTable("hosted_agents").onDelete("CASCADE");
      t.string("skill", 40).notNullable();
      t.text("config").notNullable(); // JSON, not secret
      t.text("encrypted_secrets").nullable();
      t.bigInteger("installed_at").notNullable();
      t.primary(["agent_id", "skill"]);
    });
    // The agent's log (the host's and the worker's lines): the owner reads and follows it.
    await db.schema.createTable("hosted_agent_logs", (t) => {
      t.bigIncrements("id").primary();
      t.string("agent_id", 40).notNullable().references("id").inTable("hosted_agents").onDelete("CASCADE");
      t.string("level", 8).notNullable();
      t.text("message").notNullable();
      t.bigInteger("at_ms").notNullable();
      t.index(["agent_id", "id"]);
    });
    // Every export of an agent's key, written before the key is answered (EXPORT_NOT_LOGGED otherwise).
    await db.schema.createTable("hosted_agent_key_exports", (t) => {
      t.bigIncrements("id").primary();
      t.string("agent_id", 40).notNullable();
      t.string("owner", 42).notNullable();
      t.string("ip", 64).nullable();
      t.bigInteger("at_ms").notNullable();
      t.index(["agent_id"]);
    });
    // Agent hosts alive (heartbeat) and their capacity: AGENT_CAPACITY compares running agents with their sum.
    await db.schema.createTable("agent_hosts", (t) => {
      t.string("id", 80).primary();
      t.integer("capacity").notNullable();
      t.bigInteger("seen_at_ms").notNullable();
    });
  },
  async down(db) {
    await db.schema.dropTableIfExists("agent_hosts");
    await db.schema.dropTableIfExists("hosted_agent_key_exports");
    await db.schema.dropTableIfExists("hosted_agent_logs");
    await db.schema.dropTableIfExists("hosted_agent_skills");
    await db.schema.dropTableIfExists("hosted_agents");
  },
};
