import crypto from "node:crypto";
import type { Knex } from "knex";

/** Knex or a transaction of it: every repository function takes either. */
export type Queryable = Knex | Knex.Transaction;

/** Rows per multi-row insert: below SQLite's bound-variable limit for our widest table. */
export const INSERT_CHUNK = 400;

export function chunks<T>(items: readonly T[], size = INSERT_CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Rows per bulkInsert statement on PostgreSQL, which binds one array per column whatever the row count (`unnest`):
 * an indexer range's rows in one statement rather than one per SQLite-sized chunk, each a round trip.
 */
export const PG_INSERT_CHUNK = 10_000;

/** `items` in chunks for bulkInsert: `sqliteSize` rows on SQLite (its bound-variable limit), PG_INSERT_CHUNK on PostgreSQL. */
export function insertChunks<T>(db: Queryable, items: readonly T[], sqliteSize = INSERT_CHUNK): T[][] {
  return chunks(items, db.client.config.client === "pg" ? PG_INSERT_CHUNK : sqliteSize);
}

/** SQLite returns 0/1 for booleans, PostgreSQL true/false. */
export const toBool = (v: unknown): boolean => v === true || v === 1 || v === "1" || v === "true";

/**
 * The rows a raw statement answers: a SELECT, or a write with RETURNING (`?` placeholders, double-quoted
 * identifiers: the same text on SQLite and PostgreSQL). For hot statements: knex's builder compiles the same SQL anew
 * on every call, which costs more than SQLite takes to answer (bench:api).
 *
 * On better-sqlite3, when nothing holds the one connection (no transaction, no query in flight), the statement runs
 * on it at once (prepared once: knex.ts), as knex would run it but without its pool round trip: under load, an
 * acquisition through the pool's queue costs more than the rest of an authenticated MCP call (bench:api). Safe: the statement runs synchronously to completion (a write in its own implicit transaction, as
 * knex runs it outside one), so nothing else can use the connection meanwhile; a transaction holding the connection
 * makes the statement wait for it through knex, as before.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function queryRows(db: Queryable, sql: string, bindings: readonly unknown[] = []): Promise<any[]> {
  return runStatement(db, sql, bindings, false);
}

/**
 * As queryRows, each row as the array of its values in the order selected: for a statement that selects many columns
 * (a join), where building a keyed object per row costs more than SQLite's own work (bench:api). Column names
 * must be distinct, as on SQLite's path through knex the values are read from keyed rows.
 *
 * On PostgreSQL the driver answers arrays itself (`rowMode`), and the statement is prepared once per pooled
 * connection under a name taken from its text: its later runs send no text and are not parsed or planned again (for
 * one task's joined row, planning took 0.25 ms against 0.09 ms executing, and the read in sequence fell from 1.2-1.3
 * ms to 0.4 ms: docs/performance.md, "PostgreSQL reads and targets"). So a statement given here must
 * select named columns, never `*`: PostgreSQL refuses to run a prepared statement whose columns changed since
 * ("cached plan must not change result type"), as a migration adding a column would make them.
 */
export async function queryArrays(db: Queryable, sql: string, bindings: readonly unknown[] = []): Promise<unknown[][]> {
  if (db.client.config.client === "pg") {
    const result = await db
      .raw(sql, bindings as Knex.RawBinding[])
      .options({ rowMode: "array", name: statementName(sql) });
    return result.rows;
  }
  return runStatement(db, sql, bindings, true);
}

const statementNames = new Map<string, string>();

/** The name a statement is prepared under on PostgreSQL: a hash of its text, so one name never holds two texts. */
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (!name)
    statementNames.set(sql, (name = `q_${crypto.createHash("sha256").update(sql).digest("hex").slice(0, 32)}`));
  return name;
}

/**
 * `sqliteReady`: the caller built `bindings` in better-sqlite3's form already (no undefined, array or Date; booleans
 * as 0 and 1: `sqliteBindings`), so they are neither checked nor copied again (a bulk insert has thousands).
 */
async function runStatement(
  db: Queryable,
  sql: string,
  bindings: readonly unknown[],
  arrays: boolean,
  sqliteReady = false,
) {
  const connection = await directSqliteConnection(db);
  if (connection && (sqliteReady || bindings.every(directBinding))) {
    const statement = connection.prepare(sql);
    // Outside a transaction only a read goes direct: a write goes through knex, in its own implicit transaction.
    if (statement.reader || (db as Knex.Transaction).isTransaction) {
      // Statements are shared by their text: set the row shape on every run.
      if (statement.reader) statement.raw(arrays);
      return runDirect(db, connection, statement, sql, bindings, sqliteReady);
    }
  }
  const result = await db.raw(sql, bindings as Knex.RawBinding[]);
  const rows = db.client.config.client === "pg" ? result.rows : result;
  return arrays ? rows.map(Object.values) : rows;
}

interface SqliteStatement {
  reader: boolean;
  raw(arrays: boolean): SqliteStatement;
  all(bindings: unknown[]): unknown[];
  run(bindings: unknown[]): unknown;
}

interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
  /** Set by knex: the connection's id, and the transaction's while one holds it. */
  __knexUid?: string;
  __knexTxId?: string;
}

let directQueries = 0;

/**
 * Runs `sql` on a better-sqlite3 connection, prepared (cached by its text: knex.ts): its rows for a read (or a write
 * with RETURNING), else an empty array. The statement is announced to knex's "query" and "query-response" listeners
 * as knex announces one (with the connection's transaction id), so statement counts and timings still see it.
 */
function runDirect(
  db: Queryable,
  connection: SqliteConnection,
  statement: SqliteStatement,
  sql: string,
  bindings: readonly unknown[],
  sqliteReady: boolean,
): unknown[] {
  const query = {
    sql,
    bindings,
    method: "raw",
    __knexUid: connection.__knexUid,
    __knexTxId: connection.__knexTxId,
    __knexQueryUid: `direct${++directQueries}`,
  };
  db.client.emit("query", query);
  const values = sqliteReady ? (bindings as unknown[]) : bindings.map((b) => (typeof b === "boolean" ? Number(b) : b));
  const rows = statement.reader ? statement.all(values) : (statement.run(values), []);
  db.client.emit("query-response", rows, query);
  return rows;
}

/**
 * The better-sqlite3 connection a statement of `db` can run on directly: a transaction's own connection, or the
 * pool's one connection when nothing holds it (not acquired by a query or a transaction). Safe: a statement runs
 * synchronously to completion, so nothing else uses the connection meanwhile; inside a transaction it is one of the
 * transaction's statements, as through knex. A statement that finds the connection held waits for it through knex.
 */
async function directSqliteConnection(db: Queryable): Promise<SqliteConnection | undefined> {
  if (db.client.config.client !== "better-sqlite3") return undefined;
  const trx = db as Knex.Transaction;
  if (trx.isTransaction) {
    // A finished transaction's statement goes through knex, which refuses it.
    if (trx.isCompleted()) return undefined;
    return (await trx.client.acquireConnection()) as SqliteConnection;
  }
  return idleSqliteConnection(db);
}

/** The better-sqlite3 connection of `db` when nothing holds it: not a transaction, not acquired by a query. */
function idleSqliteConnection(db: Queryable): SqliteConnection | undefined {
  const pool = db.client.pool as
    { numUsed(): number; numPendingAcquires(): number; free?: { resource: SqliteConnection }[] } | undefined;
  if (!pool || pool.numUsed() !== 0 || pool.numPendingAcquires() !== 0) return undefined;
  return pool.free?.[0]?.resource;
}

/** A value better-sqlite3 binds as knex would (knex expands arrays and refuses undefined: those go through it). */
const directBinding = (b: unknown) => b !== undefined && !Array.isArray(b) && !(b instanceof Date);

/**
 * `"column" in (ids)` as raw SQL with one binding, whatever the number of ids: SQLite reads the list as a JSON array
 * (`json_each`), PostgreSQL as an array parameter (`any`). A set of thousands of ids is then one statement, one
 * round trip and one prepared text, where knex's `whereIn` would build and bind a placeholder per id and SQLite's
 * bound-variable limit would force chunks. Both plans look each id up in the column's index.
 */
export function inIds(db: Queryable, column: string, ids: readonly number[]): { sql: string; binding: unknown } {
  if (db.client.config.client === "pg") return { sql: `"${column}" = any(?::bigint[])`, binding: [...ids] };
  return { sql: `"${column}" in (select "value" from json_each(?))`, binding: JSON.stringify(ids) };
}

/** `?, ?, ?` for an IN list of `count` values. */
export const placeholders = (count: number) => Array(count).fill("?").join(", ");

const bulkSql = new Map<string, string>();

/**
 * A multi-row insert with an ON CONFLICT clause, as raw SQL whose text is built once per table, row count and clause
 * (PostgreSQL and SQLite share the syntax). Knex's builder re-derives the column list of every row and escapes every
 * value on every call: for a 200-row, 25-column upsert that costs more than the insert itself. On PostgreSQL, one
 * array parameter per column (`unnest`) replaces thousands of parameters that would each be parsed and planned, and
 * keeps the statement far below PostgreSQL's 65,535 parameters whatever the row count; on SQLite the caller chunks
 * the rows (`chunks`) below its bound-variable limit. With `returning`, answers the rows the statement wrote (a row
 * skipped by the conflict clause is not among them); without it, an empty array.
 */
export async function bulkInsert(
  db: Queryable,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  onConflict: string,
  pgTypes?: readonly string[],
  returning?: readonly string[],
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<any[]> {
  if (rows.length === 0) return [];
  const tail = returning ? ` returning ${returning.map((c) => `"${c}"`).join(", ")}` : "";
  if (pgTypes && db.client.config.client === "pg") {
    // One array parameter per column: a 25-parameter statement PostgreSQL parses and plans in no time, instead of
    // a 5,000-parameter VALUES list. unnest yields the rows in array order, so a serial column numbers them in it.
    const sql =
      `insert into "${table}" (${columns.map((c) => `"${c}"`).join(", ")}) ` +
      `select * from unnest(${pgTypes.map((t) => `?::${t}[]`).join(", ")}) ${onConflict}${tail}`;
    const arrays = columns.map((_, c) => rows.map((r) => (r[c] === undefined ? null : r[c])));
    const result = await db.raw(sql, arrays as unknown as Knex.RawBinding[]);
    return returning ? result.rows : [];
  }
  const key = `${table}|${columns.join(",")}|${rows.length}|${onConflict}|${tail}`;
  let sql = bulkSql.get(key);
  if (!sql) {
    const tuple = `(${columns.map(() => "?").join(", ")})`;
    sql = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(", ")}) values ${Array(rows.length).fill(tuple).join(", ")} ${onConflict}${tail}`;
    bulkSql.set(key, sql);
  }
  // Through runStatement: on better-sqlite3 inside a transaction (the indexer's ranges) the statement runs on the
  // transaction's connection directly, where knex's raw would scan the text for each of its thousands of bindings.
  const sqlite = db.client.config.client === "better-sqlite3" ? sqliteBindings(rows) : undefined;
  const result = sqlite
    ? await runStatement(db, sql, sqlite, false, true)
    : await runStatement(db, sql, flatBindings(rows), false);
  return returning ? result : [];
}

/** The rows' values in one list, undefined as null. */
function flatBindings(rows: readonly (readonly unknown[])[]): unknown[] {
  const bindings: unknown[] = [];
  for (const row of rows) for (const v of row) bindings.push(v === undefined ? null : v);
  return bindings;
}

/**
 * The rows' values in one list as better-sqlite3 binds them (undefined as null, booleans as 0 and 1, as knex binds
 * them on SQLite), built in one pass; undefined when a value must go through knex (an array or a Date).
 */
function sqliteBindings(rows: readonly (readonly unknown[])[]): unknown[] | undefined {
  const bindings = new Array<unknown>(rows.length * rows[0].length);
  let i = 0;
  for (const row of rows) {
    for (const v of row) {
      if (typeof v === "boolean") bindings[i++] = v ? 1 : 0;
      else if (v === undefined) bindings[i++] = null;
      else if (typeof v === "object" && v !== null) return undefined;
      else bindings[i++] = v;
    }
  }
  // Rows of unequal length: not this fast path's case.
  return i === bindings.length ? bindings : undefined;
}

/** `on conflict (keys) do update set` every other column to the new row's value. */
export function upsertClause(keys: readonly string[], columns: readonly string[]): string {
  const set = columns.filter((c) => !keys.includes(c)).map((c) => `"${c}" = excluded."${c}"`);
  return `on conflict (${keys.map((k) => `"${k}"`).join(", ")}) do update set ${set.join(", ")}`;
}
