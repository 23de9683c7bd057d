/**
 * Migration 020_drop_task_hash_index: `tasks (task_hash)` goes, and each lookup of tasks by hash is still answered
 * from an index, `tasks_task_hash_chain` (SQLite, or PostgreSQL with DATABASE_URL). Rolled back, the index is back.
 */
import fs from "node:fs";
import { expect } from "chai";
import { createDb, dialectOf, type Db } from "../../../server/db/knex";
import { migrateLatest, migrationSource } from "../../../server/db/migrations";
import {
  findTasksByHash,
  fundingTransactionsOfHash,
  taskIdUsingHash,
  upsertTasks,
} from "../../../server/db/repositories/tasks";
import { freshDbOptions } from "../../helpers/db";
import { taskRecord } from "../../helpers/taskRecord";

interface Statement {
  sql: string;
  bindings: unknown[];
}

/** The statements `run` sends (knex's query event; PostgreSQL's `$n` placeholders read back as `?`). */
async function statementsOf(db: Db, run: () => Promise<unknown>): Promise<Statement[]> {
  const seen: Statement[] = [];
  const listener = (q: Statement) => seen.push({ sql: q.sql.replace(/\$\d+/g, "?"), bindings: q.bindings ?? [] });
  db.on("query", listener);
  try {
    await run();
  } finally {
    db.off("query", listener);
  }
  return seen;
}

async function taskIndexes(db: Db): Promise<string[]> {
  const rows =
    dialectOf(db) === "postgres"
      ? (
          await db.raw(
            `select indexname as name from pg_indexes where tablename = 'tasks' and schemaname = current_schema()`,
          )
        ).rows
      : await db.raw(`select name from sqlite_master where type = 'index' and tbl_name = 'tasks'`);
  return rows.map((r: { name: string }) => r.name).sort();
}

/** The plan of a statement as text. On PostgreSQL with sequential scans off: whether an index can serve. */
async function plan(db: Db, { sql, bindings }: Statement): Promise<string> {
  if (dialectOf(db) === "postgres") {
    return db.transaction(async (trx) => {
      await trx.raw("set local enable_seqscan = off");
      const { rows } = await trx.raw(`explain ${sql}`, bindings);
      return rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n");
    });
  }
  const rows = await db.raw(`explain query plan ${sql}`, bindings);
  return rows.map((r: { detail: string }) => r.detail).join("\n");
}

describe("migration 020_drop_task_hash_index", () => {
  it("drops tasks (task_hash), leaves the hash lookups on tasks_task_hash_chain, and comes back on down", async () => {
    const { options, dir } = freshDbOptions();
    const db = createDb(options);
    try {
      await migrateLatest(db, { until: "019_chain_read_indexes" });
      await upsertTasks(
        db,
        "base",
        Array.from({ length: 50 }, (_, i) => taskRecord(i + 1)),
      );
      expect(await taskIndexes(db)).to.include.members(["tasks_task_hash_index", "tasks_task_hash_chain"]);

      expect(await migrateLatest(db, { until: "020_drop_task_hash_index" })).to.deep.equal([
        "020_drop_task_hash_index",
      ]);
      const after = await taskIndexes(db);
      expect(after).to.not.include("tasks_task_hash_index");
      expect(after).to.include("tasks_task_hash_chain");
      // The repository's lookups by hash: the same rows, each read from (task_hash, chain), never by walking a
      // chain's tasks in primary-key order.
      const hash = taskRecord(7).taskHash;
      const lookups = await statementsOf(db, async () => {
        expect((await findTasksByHash(db, hash)).map((t) => t.taskId)).to.deep.equal([7]);
        expect(await taskIdUsingHash(db, hash)).to.deep.equal({ taskId: 7, chain: "base" });
        expect(await fundingTransactionsOfHash(db, "base", hash)).to.have.length(1);
      });
      expect(lookups).to.have.length(3);
      for (const statement of lookups)
        expect(await plan(db, statement), statement.sql).to.match(/tasks_task_hash_chain/);

      await db.migrate.down({ migrationSource: migrationSource() });
      expect(await taskIndexes(db)).to.include.members(["tasks_task_hash_index", "tasks_task_hash_chain"]);
      expect(await migrateLatest(db)).to.include("020_drop_task_hash_index");
    } finally {
      if (options.pgSchema) await db.raw(`drop schema if exists "${options.pgSchema}" cascade`);
      await db.destroy();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
