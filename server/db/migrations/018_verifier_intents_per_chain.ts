import type { ChainName } from "../../escrow/records";
import type { Migration } from "./migration";

/**
 * Verifier intents per chain: each chain's marketplace verifier keeps its own intents, so an intent key
 * (`assign:<taskId>`, `verdict:<taskId>:<attempt>`) is unique per chain (base's `assign:0` and arc's `assign:0` are
 * two calls on two escrows). The unique key becomes (chain, intent_key); the rows already stored keep their chain
 * (014 gave them the posting chain), so their keys keep working. Down keeps the posting chain's rows only.
 */
export function verifierIntentsPerChain(postingChain: ChainName): Migration {
  return {
    name: "018_verifier_intents_per_chain",
    async up(db) {
      await db.schema.alterTable("verifier_intents", (t) => {
        t.dropUnique(["intent_key"]);
      });
      await db.schema.alterTable("verifier_intents", (t) => {
        t.unique(["chain", "intent_key"]);
        t.index(["chain", "status"]);
      });
    },
    async down(db) {
      await db("verifier_intents").whereNot({ chain: postingChain }).delete();
      await db.schema.alterTable("verifier_intents", (t) => {
        t.dropIndex(["chain", "status"]);
        t.dropUnique(["chain", "intent_key"]);
      });
      await db.schema.alterTable("verifier_intents", (t) => {
        t.unique(["intent_key"]);
      });
    },
  };
}
