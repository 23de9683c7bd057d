/**
 * The database connection: PostgreSQL when DATABASE_URL is set, else an SQLite file per network under data/.
 */
import fs from "node:fs";
import path from "node:path";
import knex, { type Knex } from "knex";
import pg from "pg";

// PostgreSQL returns int8 as strings; every bigint column here (block numbers, timestamps, task ids) is far below
// 2^53, so numbers are exact.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type Db = Knex;
export type Dialect = "sqlite" | "postgres";

export interface DbOptions {
  databaseUrl?: string;
  sqliteFile?: string;
  sqliteDriver?: "better-sqlite3" | "sqlite3";
  /** PostgreSQL schema to use (tests isolate themselves in their own schema). */
  pgSchema?: string;
}

export function dialectOf(db: Db): Dialect {
  return db.client.config.client === "pg" ? "postgres" : "sqlite";
}

/** The database options of a configuration. */
export function dbOptions(config: {
  databaseUrl?: string;
  databaseSchema?: string;
  sqliteFile: string;
  sqliteDriver: "better-sqlite3" | "sqlite3";
}): DbOptions {
  return {
    databaseUrl: config.databaseUrl,
    pgSchema: config.databaseSchema,
    sqliteFile: config.sqliteFile,
    sqliteDriver: config.sqliteDriver,
  };
}

export function createDb(options: DbOptions): Db {
  if (options.databaseUrl) {
    const schema = options.pgSchema;
    return knex({
      client: "pg",
      connection: options.databaseUrl,
      searchPath: schema ? [schema] : undefined,
      pool: {
        min: 0,
        max: 10,
        afterCreate: (conn: pg.Client, done: (err: Error | null, conn: pg.Client) => void) => {
          if (!schema) return done(null, conn);
          // Connections of several processes may race to create the schema: "already exists" is success.
          conn.query(`create schema if not exists "${schema}"`, (err) => {
            const code = (err as { code?: string } | null)?.code;
            done(err && code !== "23505" && code !== "42P06" ? err : null, conn);
          });
        },
      },
    });
  }
  const filename = options.sqliteFile ?? ":memory:";
  if (filename !== ":memory:") fs.mkdirSync(path.dirname(filename), { recursive: true });
  const driver = options.sqliteDriver ?? "better-sqlite3";
  return knex({
    client: driver,
    connection: { filename },
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: 1,
      afterCreate: (conn: unknown, done: (err: Error | null, conn: unknown) => void) => {
        const pragmas = [
          "journal_mode = WAL",
          "synchronous = NORMAL",
          "busy_timeout = 10000",
          "foreign_keys = ON",
          "cache_size = -65536",
          "mmap_size = 268435456",
        ];
        if (driver === "better-sqlite3") {
          const db = conn as { pragma(s: string): unknown; prepare(sql: string): unknown };
          for (const p of pragmas) db.pragma(p);
          cachePreparedStatements(db);
          return done(null, conn);
        }
        const db = conn as { exec(sql: string, cb: (err: Error | null) => void): void };
        db.exec(pragmas.map((p) => `PRAGMA ${p};`).join(" "), (err) => done(err, conn));
      },
    },
  });
}

/** How many prepared statements one SQLite connection keeps (least recently used go first). */
export const STATEMENT_CACHE_SIZE = 512;

/**
 * Knex prepares every query anew on better-sqlite3; preparing cost a fifth of a task read's time (bench:api). The
 * connection keeps its prepared statements by SQL text instead. Safe: statements run synchronously to completion on
 * the connection's one thread, and SQLite re-prepares a statement itself after a schema change.
 */
function cachePreparedStatements(db: { prepare(sql: string): unknown }): void {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, unknown>();
  db.prepare = (sql: string) => {
    let statement = cache.get(sql);
    if (statement === undefined) {
      statement = prepare(sql);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    } else {
      cache.delete(sql);
    }
    cache.set(sql, statement);
    return statement;
  };
}
