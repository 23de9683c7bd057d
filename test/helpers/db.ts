/**
 * A fresh, migrated database per test: an SQLite file in a temporary folder by default, or, when DATABASE_URL is
 * set, a PostgreSQL schema of its own (dropped afterwards). The same suites run on both.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createDb, type Db, type DbOptions } from "../../server/db/knex";
import { migrateLatest } from "../../server/db/migrations";

export interface TestDb {
  db: Db;
  options: DbOptions;
  /** Another connection pool on the same database (a second process would have one). */
  reopen(): Db;
  /** Registers something to stop before the database goes away (indexers hold connections and locks). */
  onCleanup(stop: () => Promise<void>): void;
  cleanup(): Promise<void>;
}

export const usingPostgres = () => Boolean(process.env.DATABASE_URL);

export async function createTestDb(): Promise<TestDb> {
  let options: DbOptions;
  let dir: string | undefined;
  if (usingPostgres()) {
    options = { databaseUrl: process.env.DATABASE_URL, pgSchema: `t_${crypto.randomBytes(6).toString("hex")}` };
  } else {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "escrow-db-"));
    options = { sqliteFile: path.join(dir, "test.sqlite"), sqliteDriver: "better-sqlite3" };
  }
  const db = createDb(options);
  await migrateLatest(db);
  const extra: Db[] = [];
  const stoppers: (() => Promise<void>)[] = [];
  return {
    db,
    options,
    reopen() {
      const other = createDb(options);
      extra.push(other);
      return other;
    },
    onCleanup(stop) {
      stoppers.push(stop);
    },
    async cleanup() {
      for (const stop of stoppers.reverse()) await stop();
      for (const other of extra) await other.destroy();
      if (options.pgSchema) await db.raw(`drop schema if exists "${options.pgSchema}" cascade`);
      await db.destroy();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Options of a database no migration has touched, for tests that migrate step by step: a PostgreSQL schema of its own
 * (DATABASE_URL set) or a SQLite file in a temporary folder (`dir`, for the test to remove).
 */
export function freshDbOptions(): { options: DbOptions; dir?: string } {
  if (usingPostgres()) {
    return {
      options: { databaseUrl: process.env.DATABASE_URL, pgSchema: `t_${crypto.randomBytes(6).toString("hex")}` },
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "escrow-db-"));
  return { options: { sqliteFile: path.join(dir, "test.sqlite"), sqliteDriver: "better-sqlite3" }, dir };
}
