import type { Migration } from "./migration";

/**
 * Covering indexes for the open-task listing (listOpenTasks), refreshed once a second per query: its count of 10,000
 * open tasks was one 7 ms statement, blocking every other request meanwhile (bench:api, the listing's p99).
 * - tasks (status, is_open, task_id, deadline): the page is read newest first, and the count made, without visiting
 *   the table;
 * - listings (task_id, target_executor): "listed and open to every agent" is answered from the index.
 * Page and count of 10,000 open tasks: about 4 ms instead of 8 (the count 3 ms instead of 7), chosen by SQLite's
 * planner without statistics.
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
