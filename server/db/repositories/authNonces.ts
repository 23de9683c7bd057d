/**
 * Nonces of signed EIP-4361 messages: issued for one wallet and one purpose ("sign-in", "key-export:<agent id>"),
 * usable once before they expire (unix seconds).
 */
import type { Queryable } from "./util";

export interface AuthNonceRow {
  nonce: string;
  address: string;
  purpose: string;
  issuedAt: number;
  expiresAt: number;
  usedAt: number | null;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const fromRow = (r: any): AuthNonceRow => ({
  nonce: r.nonce,
  address: r.address,
  purpose: r.purpose,
  issuedAt: Number(r.issued_at),
  expiresAt: Number(r.expires_at),
  usedAt: r.used_at === null ? null : Number(r.used_at),
});

export async function insertNonce(
  db: Queryable,
  nonce: { nonce: string; address: string; purpose: string; issuedAt: number; expiresAt: number },
): Promise<void> {
  await db("auth_nonces").insert({
    nonce: nonce.nonce,
    address: nonce.address,
    purpose: nonce.purpose,
    issued_at: nonce.issuedAt,
    expires_at: nonce.expiresAt,
  });
}

export async function findNonce(db: Queryable, nonce: string): Promise<AuthNonceRow | undefined> {
  const row = await db("auth_nonces").where({ nonce }).first();
  return row ? fromRow(row) : undefined;
}

/**
 * Marks the nonce used if it is still unused and unexpired at `now`, for `address` and `purpose`. One statement, so
 * of two concurrent sign-ins with the same nonce exactly one gets true.
 */
export async function consumeNonce(
  db: Queryable,
  nonce: string,
  address: string,
  purpose: string,
  now: number,
): Promise<boolean> {
  const updated = await db("auth_nonces")
    .where({ nonce, address, purpose })
    .whereNull("used_at")
    .where("expires_at", ">", now)
    .update({ used_at: now });
  return updated === 1;
}

/** Deletes nonces that expired before `before` (used or not): they can only ever answer NONCE_INVALID. */
export async function pruneNonces(db: Queryable, before: number): Promise<number> {
  return db("auth_nonces").where("expires_at", "<", before).delete();
}
