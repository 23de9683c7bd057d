import type { Migration } from "./migration";

export const deployFees: Migration = {
  name: "007_deploy_fees",
  async up(db) {
    // Verified deploy-fee payments: each AgentDeployed event buys one deploy credit, once (the primary key).
    await db.schema.createTable("deploy_fee_payments", (t) => {
      t.string("tx_hash", 66).notNullable();
      t.integer("log_index").notNullable();
      t.string("payer", 42).notNullable();
      t.string("amount", 80).notNullable();
      t.bigInteger("nonce").notNullable();
      t.bigInteger("block_number").notNullable();
      t.bigInteger("verified_at").notNullable();
      t.bigInteger("spent_at").nullable(); // set when a hosted agent uses the credit
      t.primary(["tx_hash", "log_index"]);
      t.index(["payer", "spent_at"]);
    });
  },
  async down(db) {
    await db.schema.dropTableIfExists("deploy_fee_payments");
  },
};
