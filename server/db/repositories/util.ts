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

/** SQLite returns 0/1 for booleans, PostgreSQL true/false. */
export const toBool = (v: unknown): boolean => v === true || v === 1 || v === "1" || v === "true";

/**
 * The rows of a raw SELECT (`?` placeholders, double-quoted identifiers: the same text on SQLite and PostgreSQL).
 * For hot point reads: knex's builder compiles the same SQL anew on every call, about 50 µs, three times what
 * SQLite takes to answer (bench:api; a task read makes five such reads).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function selectRows(db: Queryable, sql: string, bindings: readonly unknown[] = []): Promise<any[]> {
  const result = await db.raw(sql, bindings as Knex.RawBinding[]);
  return db.client.config.client === "pg" ? result.rows : result;
}

/** `?, ?, ?` for an IN list of `count` values. */
export const placeholders = (count: number) => Array(count).fill("?").join(", ");

const bulkSql = new Map<string, string>();

/**
 * A multi-row insert with an ON CONFLICT clause, as raw SQL whose text is built once per table, row count and clause
 * (PostgreSQL and SQLite share the syntax). Knex's builder re-derives the column list of every row and escapes every
 * value on every call: for a 200-row, 25-column upsert that costs more than the insert itself. On PostgreSQL, one
 * array parameter per column (`unnest`) replaces thousands of parameters that would each be parsed and planned.
 */
export async function bulkInsert(
  db: Queryable,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  onConflict: string,
  pgTypes?: readonly string[],
): Promise<void> {
  if (rows.length === 0) return;
  if (pgTypes && db.client.config.client === "pg") {
    // One array parameter per column: a 25-parameter statement PostgreSQL parses and plans in no time, instead of
    // a 5,000-parameter VALUES list.
    const sql =
      `insert into "${table}" (${columns.map((c) => `"${c}"`).join(", ")}) ` +
      `select * from unnest(${pgTypes.map((t) => `?::${t}[]`).join(", ")}) ${onConflict}`;
    const arrays = columns.map((_, c) => rows.map((r) => (r[c] === undefined ? null : r[c])));
    await db.raw(sql, arrays as unknown as Knex.RawBinding[]);
    return;
  }
  const key = `${table}|${columns.join(",")}|${rows.length}|${onConflict}`;
  let sql = bulkSql.get(key);
  if (!sql) {
    const tuple = `(${columns.map(() => "?").join(", ")})`;
    sql = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(", ")}) values ${Array(rows.length).fill(tuple).join(", ")} ${onConflict}`;
    bulkSql.set(key, sql);
  }
  const bindings: unknown[] = [];
  for (const row of rows) for (const v of row) bindings.push(v === undefined ? null : v);
  await db.raw(sql, bindings as Knex.RawBinding[]);
}

/** `on conflict (keys) do update set` every other column to the new row's value. */
export function upsertClause(keys: readonly string[], columns: readonly string[]): string {
  const set = columns.filter((c) => !keys.includes(c)).map((c) => `"${c}" = excluded."${c}"`);
  return `on conflict (${keys.map((k) => `"${k}"`).join(", ")}) do update set ${set.join(", ")}`;
}
