/**
 * Migration 018_verifier_intents_per_chain on a database with intents stored before it: they keep working under
 * their chain, and the other chain's verifier may then record the same intent key (SQLite, or PostgreSQL with
 * DATABASE_URL). Rolled back, the posting chain's intents stay and an intent key is unique again.
 */
import fs from "node:fs";
import { expect } from "chai";
import { createDb } from "../../../server/db/knex";
import { migrateLatest, migrationSource } from "../../../server/db/migrations";
import { findIntent, insertIntent, listIntentsByStatus } from "../../../server/db/repositories/verifierIntents";
import { freshDbOptions } from "../../helpers/db";

const intentRow = (key: string) => ({
  kind: "assign",
  task_id: 0,
  intent_key: key,
  args: JSON.stringify({ worker: "0x" + "1".repeat(40) }),
  status: "pending",
  nonce: null,
  tx_hash: null,
  raw_tx: null,
  attempts: 0,
  last_error: null,
  created_at: 1,
  updated_at: 1,
});

describe("migration 018_verifier_intents_per_chain", () => {
  it("keeps the intents stored before it, and makes an intent key unique per chain", async () => {
    const { options, dir } = freshDbOptions();
    const db = createDb(options);
    try {
      expect(await migrateLatest(db, { until: "016_api_key_expiry" })).to.include("016_api_key_expiry");
      await db("verifier_intents").insert(intentRow("assign:0"));
      // Before it, one key is one intent whatever the chain.
      let refused = false;
      await db("verifier_intents")
        .insert({ ...intentRow("assign:0"), chain: "arc" })
        .catch(() => (refused = true));
      expect(refused).to.equal(true);

      // Up to 018 exactly, so that the down below is 018's.
      expect(await migrateLatest(db, { until: "018_verifier_intents_per_chain" })).to.include(
        "018_verifier_intents_per_chain",
      );
      const old = await findIntent(db, "base", "assign:0");
      expect(old).to.include({ chain: "base", key: "assign:0", status: "pending" });
      expect(await findIntent(db, "arc", "assign:0")).to.equal(undefined);

      // arc's verifier records its own assign:0; a second one on either chain finds the existing row.
      const arc = await insertIntent(db, {
        chain: "arc",
        kind: "assign",
        taskId: 0,
        key: "assign:0",
        args: {},
        now: 2,
      });
      expect(arc.created).to.equal(true);
      expect(arc.intent).to.include({ chain: "arc", key: "assign:0" });
      expect(arc.intent.id).to.not.equal(old!.id);
      for (const chain of ["base", "arc"] as const) {
        const again = await insertIntent(db, { chain, kind: "assign", taskId: 0, key: "assign:0", args: {}, now: 3 });
        expect(again.created, chain).to.equal(false);
        expect((await listIntentsByStatus(db, chain, ["pending"])).map((i) => i.chain)).to.deep.equal([chain]);
      }

      // Down: the posting chain's intents stay, and the key is unique across the table again.
      await db.migrate.down({ migrationSource: migrationSource() });
      expect((await db("verifier_intents").select("chain", "intent_key")).map((r) => r.chain)).to.deep.equal(["base"]);
      refused = false;
      await db("verifier_intents")
        .insert({ ...intentRow("assign:0"), chain: "arc" })
        .catch(() => (refused = true));
      expect(refused).to.equal(true);
    } finally {
      await db.destroy();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
