/**
 * Task-hash reservations: building a task reserves its brief hash for the poster for a while (24 hours by default) so
 * two posters cannot fund the same brief. A claim is one statement (insert, or take over the row when it is the same
 * poster's or has expired), so concurrent claims on SQLite and PostgreSQL have exactly one winner.
 */
import { queryRows, type Queryable } from "./util";
import { taskHashUnusedSql } from "./tasks";

export interface HashReservation {
  taskHash: string;
  poster: string;
  /** Unix seconds; the reservation is over at this second. */
  expiresAt: number;
  /** Unix seconds of the poster's first claim (a refresh keeps it). */
  createdAt: number;
}

export type ClaimResult =
  { claimed: true; expiresAt: number } | { claimed: false; holder: HashReservation | undefined };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const fromRow = (r: any): HashReservation => ({
  taskHash: r.task_hash,
  poster: r.poster,
  expiresAt: Number(r.expires_at),
  createdAt: Number(r.created_at),
});

/**
 * The claim's conflict clause (bindings: the poster, now): take over the row when it is the same poster's (keeping its
 * first claim's time) or has expired at or before now; answer the row when claimed, nothing when refused.
 */
const UPSERT_TAIL =
  `on conflict ("task_hash") do update set "poster" = excluded."poster", "expires_at" = excluded."expires_at", ` +
  `"created_at" = case when "hash_reservations"."poster" = excluded."poster" ` +
  `then "hash_reservations"."created_at" else excluded."created_at" end ` +
  `where "hash_reservations"."poster" = ? or "hash_reservations"."expires_at" <= ? ` +
  `returning "poster", "expires_at"`;

/**
 * Claims `taskHash` for `poster` until `now + ttlSeconds`. Succeeds when the hash is free, already the poster's (the
 * expiry is refreshed), or held by a reservation that expired at or before `now`. Otherwise reports the holder.
 * Atomic: `insert ... on conflict do update ... where`, which PostgreSQL and SQLite evaluate against the latest row
 * under the row's lock, so of two concurrent claims by different posters exactly one returns a row.
 */
export async function claimHash(
  db: Queryable,
  claim: { taskHash: string; poster: string; now: number; ttlSeconds: number },
): Promise<ClaimResult> {
  const taskHash = claim.taskHash.toLowerCase();
  const poster = claim.poster.toLowerCase();
  const expiresAt = claim.now + claim.ttlSeconds;
  // One raw statement (queryRows): the builder's upsert cost a sixth of a task build under load (bench:api).
  const rows = await queryRows(
    db,
    `insert into "hash_reservations" ("task_hash", "poster", "expires_at", "created_at") values (?, ?, ?, ?) ${UPSERT_TAIL}`,
    [taskHash, poster, expiresAt, claim.now, poster, claim.now],
  );
  if (rows.length === 1) return { claimed: true, expiresAt: Number(rows[0].expires_at) };
  return { claimed: false, holder: await findReservation(db, taskHash) };
}

/**
 * As claimHash, in the same one statement, but only while the hash is on no market (`taskHashUnusedSql`: no listing
 * and no indexed task has it): a task build's in-use check and claim as one statement instead of two, the check
 * first, so a hash in use is never reserved. True when claimed; false when the hash is in use or held by another
 * poster, which the caller tells apart with taskIdUsingHash and claimHash (the refusals are rare; builds are not).
 * The selected values are cast so PostgreSQL binds them as the columns' types.
 */
export async function claimUnusedHash(
  db: Queryable,
  claim: { taskHash: string; poster: string; now: number; ttlSeconds: number },
): Promise<boolean> {
  const taskHash = claim.taskHash.toLowerCase();
  const poster = claim.poster.toLowerCase();
  const expiresAt = claim.now + claim.ttlSeconds;
  const rows = await queryRows(
    db,
    `insert into "hash_reservations" ("task_hash", "poster", "expires_at", "created_at") ` +
      `select cast(? as varchar(66)), cast(? as varchar(42)), cast(? as bigint), cast(? as bigint) ` +
      `where ${taskHashUnusedSql} ${UPSERT_TAIL}`,
    [taskHash, poster, expiresAt, claim.now, taskHash, taskHash, poster, claim.now],
  );
  return rows.length === 1;
}

/** The reservation row of a hash, expired or not. */
export async function findReservation(db: Queryable, taskHash: string): Promise<HashReservation | undefined> {
  const row = await db("hash_reservations").where({ task_hash: taskHash.toLowerCase() }).first();
  return row ? fromRow(row) : undefined;
}
