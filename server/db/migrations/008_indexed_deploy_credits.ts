import type { Migration } from "./migration";

export const indexedDeployCredits: Migration = {
  name: "008_indexed_deploy_credits",
  async up(db) {
    // The indexer records AgentDeployed payments from the chain too: a credit can exist before anyone verifies it
    // (verified_at null), and its amount is known only once a verification has read the receipt's transfer.
    await db.schema.alterTable("deploy_fee_payments", (t) => {
      t.string("amount", 80).nullable().alter();
      t.bigInteger("verified_at").nullable().alter();
      t.bigInteger("indexed_at").nullable();
    });
  },
  async down(db) {
    await db("deploy_fee_payments").whereNull("verified_at").orWhereNull("amount").delete();
    await db.schema.alterTable("deploy_fee_payments", (t) => {
      t.dropColumn("indexed_at");
    });
    await db.schema.alterTable("deploy_fee_payments", (t) => {
      t.string("amount", 80).notNullable().alter();
      t.bigInteger("verified_at").notNullable().alter();
    });
  },
};
