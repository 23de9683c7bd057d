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
