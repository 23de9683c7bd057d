import type { Migration } from "./migration";

/**
 * Covering indexes for the open-task listing (listOpenTasks), refreshed once a second per query: without them its
 * count of many open tasks is one long statement that blocks every other request meanwhile (the listing's p99).
 * - tasks (status, is_open, task_id, deadline): the page is read newest first, and the count made, without visiting
 *   the table;
 * - listings (task_id, target_executor): "listed and open to every agent" is answered from the index.
 * SQLite's planner chooses them without statistics; the figures are in docs/performance.md.
 */
export const openTaskIndexes: Migration = {
  name: "011_open_task_indexes",
  async up(db) {
    await db.schema.alterTable("tasks", (t) => {
      t.index(["status", "is_open", "task_id", "deadline"], "tasks_open_scan");
    });
    await db.schema.alterTable("listings", (t) => {
      t.index(["task_id", "target_executor"], "listings_open_test");
    });
  },
  async down(db) {
    await db.schema.alterTable("listings", (t) => {
      t.dropIndex(["task_id", "target_executor"], "listings_open_test");
    });
    await db.schema.alterTable("tasks", (t) => {
      t.dropIndex(["status", "is_open", "task_id", "deadline"], "tasks_open_scan");
    });
  },
};
