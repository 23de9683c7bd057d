import type { ChainName } from "../../escrow/records";
import type { Knex } from "knex";

/**
 * Lease rows behind the writer lock on SQLite (PostgreSQL uses a session advisory lock instead). A lease held by a
 * process that died expires after its time-to-live. `now` is the caller's clock in Unix milliseconds (every process
 * sharing the database reads the same wall time).
 */
export async function tryAcquireLease(
  db: Knex,
  chain: ChainName,
  name: string,
  owner: string,
  ttlMs: number,
  now: number,
): Promise<boolean> {
  return db.transaction(async (trx) => {
    const row = await trx("indexer_lock").where({ chain, name }).first();
    if (!row) {
      await trx("indexer_lock").insert({ chain, name, owner, expires_at: now + ttlMs });
      return true;
    }
    if (row.owner !== null && row.owner !== owner && Number(row.expires_at) > now) return false;
    await trx("indexer_lock")
      .where({ chain, name })
      .update({ owner, expires_at: now + ttlMs });
    return true;
  });
}

/** Extends the lease; false when another process took it over (this one must stop writing). */
export async function renewLease(
  db: Knex,
  chain: ChainName,
  name: string,
  owner: string,
  ttlMs: number,
  now: number,
): Promise<boolean> {
  const updated = await db("indexer_lock")
    .where({ chain, name, owner })
    .update({ expires_at: now + ttlMs });
  return updated === 1;
}

export async function releaseLease(db: Knex, chain: ChainName, name: string, owner: string): Promise<void> {
  await db("indexer_lock").where({ chain, name, owner }).update({ owner: null, expires_at: 0 });
}
