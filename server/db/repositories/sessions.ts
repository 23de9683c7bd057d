import type { Queryable } from "./util";

export async function insertSession(
  db: Queryable,
  session: { tokenHash: string; address: string; createdAt: number; expiresAt: number },
): Promise<void> {
  await db("sessions").insert({
    token_hash: session.tokenHash,
    address: session.address,
    created_at: session.createdAt,
    expires_at: session.expiresAt,
  });
}

/** The wallet of an unexpired session. */
export async function findSessionAddress(db: Queryable, tokenHash: string, now: number): Promise<string | undefined> {
  const row = await db("sessions").where({ token_hash: tokenHash }).where("expires_at", ">", now).first();
  return row?.address;
}

/** Deletes one session (sign-out); false when there was none. */
export async function deleteSession(db: Queryable, tokenHash: string): Promise<boolean> {
  return (await db("sessions").where({ token_hash: tokenHash }).delete()) > 0;
}

/** Deletes sessions that expired before `before`. */
export async function pruneSessions(db: Queryable, before: number): Promise<number> {
  return db("sessions").where("expires_at", "<", before).delete();
}
