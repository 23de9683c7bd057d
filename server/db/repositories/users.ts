/** Wallets that signed in (EIP-4361). One row per wallet, lower-case address. */
import type { Queryable } from "./util";

export interface UserRow {
  address: string;
  createdAt: number;
  lastSignInAt: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const fromRow = (r: any): UserRow => ({
  address: r.address,
  createdAt: Number(r.created_at),
  lastSignInAt: Number(r.last_sign_in_at),
});

/** Creates the wallet's row on its first sign-in, or moves its last sign-in time. */
export async function recordSignIn(db: Queryable, address: string, at: number): Promise<void> {
  await db("users")
    .insert({ address, created_at: at, last_sign_in_at: at })
    .onConflict("address")
    .merge({ last_sign_in_at: at });
}

export async function findUser(db: Queryable, address: string): Promise<UserRow | undefined> {
  const row = await db("users").where({ address }).first();
  return row ? fromRow(row) : undefined;
}
