import type { Migration } from "./migration";

/**
 * Drops `tasks (task_hash)`: `tasks_task_hash_chain` (task_hash, chain), added by 014, starts with the same column,
 * so every lookup by hash (with or without the chain) is answered from it, and each indexed task paid for a second
 * b-tree keyed on a random hash (the backfill's largest write, docs/performance.md).
 */
export const dropTaskHashIndex: Migration = {
  name: "020_drop_task_hash_index",
  async up(db) {
    await db.schema.alterTable("tasks", (t) => t.dropIndex(["task_hash"]));
  },
  async down(db) {
    await db.schema.alterTable("tasks", (t) => t.index(["task_hash"]));
  },
};
