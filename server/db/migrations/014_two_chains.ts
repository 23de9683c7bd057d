import type { ChainName } from "../../escrow/records";
import type { Migration } from "./migration";

/**
 * Tables whose rows belong to one settlement chain, and their keys with the chain in front: an on-chain task id, a
 * block number, a checkpoint or a log is unique per chain only. `key` is the primary key after this migration (the
 * chain first), `unique` the unique keys that become per chain.
 */
const PER_CHAIN: readonly { table: string; key: string[]; unique?: string[][]; index?: string[][] }[] = [
  // The indexer's own state: one identity, checkpoint, writer lock and block list per chain.
  { table: "chain_identity", key: ["chain"] },
  { table: "checkpoints", key: ["chain", "name"] },
  { table: "indexer_lock", key: ["chain", "name"] },
  { table: "blocks", key: ["chain", "block_number"] },
  {
    table: "escrow_events",
    key: ["chain", "block_number", "log_index"],
    unique: [["tx_hash", "log_index"]],
    index: [["task_id", "block_number", "log_index"]],
  },
  // The projection and the configuration the escrow's events set, per escrow.
  { table: "tasks", key: ["chain", "task_id"] },
  { table: "open_submissions", key: ["chain", "task_id", "submitter"] },
  { table: "escrow_config", key: ["chain", "key"] },
  { table: "allowed_tokens", key: ["chain", "token"] },
  { table: "pause_periods", key: ["chain", "seq"] },
  { table: "deploy_fee_payments", key: ["chain", "tx_hash", "log_index"] },
  // The marketplace's records of a task, keyed by its on-chain id (the task hash stays unique across chains).
  { table: "listings", key: ["chain", "task_id"] },
  { table: "listing_capabilities", key: ["chain", "task_id", "capability"] },
  { table: "task_bids", key: ["chain", "task_id", "agent"] },
  { table: "task_offers", key: ["chain", "task_id"] },
  { table: "accept_locks", key: ["chain", "task_id"] },
  { table: "task_assignments", key: ["chain", "task_id"] },
  { table: "task_agent_keys", key: ["chain", "task_id", "agent"] },
  { table: "task_submissions", key: ["chain", "task_id", "attempt"] },
];

/**
 * Two settlement chains in one database: a `chain` column (`base` or `arc`) on every table whose rows belong to one
 * chain, with the on-chain ids unique per chain. Rows already stored belong to the posting chain the database was
 * serving, which the entry points pass to `migrateLatest` (POSTING_CHAIN; `base` when none is passed); it is also
 * the column's default, so a writer that names no chain keeps writing the posting chain's rows. Verifier intents
 * and market events take the column too (their keys stay: an intent key and an event's source name the task's
 * transaction or hash, unique across chains).
 */
export function twoChains(postingChain: ChainName): Migration {
  return {
    name: "014_two_chains",
    async up(db) {
      for (const { table, key, unique, index } of PER_CHAIN) {
        const hasChain = await db.schema.hasColumn(table, "chain");
        await db.schema.alterTable(table, (t) => {
          if (hasChain) t.string("chain", 16).notNullable().defaultTo(postingChain).alter();
          else t.string("chain", 8).notNullable().defaultTo(postingChain);
        });
        // A column already there (listings') holds each row's chain already.
        if (!hasChain) await db(table).update({ chain: postingChain });
        await db.schema.alterTable(table, (t) => {
          t.dropPrimary();
          for (const columns of unique ?? []) t.dropUnique(columns);
          for (const columns of index ?? []) t.dropIndex(columns);
        });
        await db.schema.alterTable(table, (t) => {
          t.primary(key);
          for (const columns of unique ?? []) t.unique(["chain", ...columns]);
          for (const columns of index ?? []) t.index(["chain", ...columns]);
        });
      }
      for (const table of ["verifier_intents", "market_events"]) {
        await db.schema.alterTable(table, (t) => {
          t.string("chain", 8).notNullable().defaultTo(postingChain);
        });
        await db(table).update({ chain: postingChain });
      }
      await db.schema.alterTable("tasks", (t) => t.index(["task_hash", "chain"], "tasks_task_hash_chain"));
    },
    async down(db) {
      // Back to one chain: the posting chain's rows stay, the others' go.
      await db.schema.alterTable("tasks", (t) => t.dropIndex(["task_hash", "chain"], "tasks_task_hash_chain"));
      for (const table of ["verifier_intents", "market_events"]) {
        await db(table).whereNot({ chain: postingChain }).delete();
        await db.schema.alterTable(table, (t) => t.dropColumn("chain"));
      }
      for (const { table, key, unique, index } of [...PER_CHAIN].reverse()) {
        await db(table).whereNot({ chain: postingChain }).delete();
        await db.schema.alterTable(table, (t) => {
          t.dropPrimary();
          for (const columns of unique ?? []) t.dropUnique(["chain", ...columns]);
          for (const columns of index ?? []) t.dropIndex(["chain", ...columns]);
        });
        await db.schema.alterTable(table, (t) => {
          t.primary(table === "chain_identity" ? ["id"] : key.slice(1));
          for (const columns of unique ?? []) t.unique(columns);
          for (const columns of index ?? []) t.index(columns);
          // listings had its chain column from the start (003).
          if (table !== "listings") t.dropColumn("chain");
        });
      }
    },
  };
}
