import type { Migration } from "./migration";

/**
 * The open-task listing's covering indexes (011) with the chain: since two chains share the tables, the listing joins
 * a task to its listing by chain and task id, and may keep one chain's tasks, so indexes without the chain make each
 * candidate row a visit to the table (the count of many open tasks is the listing's p99, docs/performance.md).
 * - tasks (status, is_open, task_id, deadline, chain): the page read newest first and its count, any chain or one;
 * - listings (chain, task_id, target_executor): "listed and open to every agent", answered from the index.
 */
export const chainReadIndexes: Migration = {
  name: "019_chain_read_indexes",
  async up(db) {
    await db.schema.alterTable("tasks", (t) => {
      t.dropIndex(["status", "is_open", "task_id", "deadline"], "tasks_open_scan");
      t.index(["status", "is_open", "task_id", "deadline", "chain"], "tasks_open_scan_chain");
    });
    await db.schema.alterTable("listings", (t) => {
      t.dropIndex(["task_id", "target_executor"], "listings_open_test");
      t.index(["chain", "task_id", "target_executor"], "listings_open_test_chain");
    });
  },
  async down(db) {
    await db.schema.alterTable("listings", (t) => {
      t.dropIndex(["chain", "task_id", "target_executor"], "listings_open_test_chain");
      t.index(["task_id", "target_executor"], "listings_open_test");
    });
    await db.schema.alterTable("tasks", (t) => {
      t.dropIndex(["status", "is_open", "task_id", "deadline", "chain"], "tasks_open_scan_chain");
      t.index(["status", "is_open", "task_id", "deadline"], "tasks_open_scan");
    });
  },
};
