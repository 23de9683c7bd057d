/** Wallets that signed in (EIP-4361). One row per wallet, lower-case address. */
import type { Queryable } from "./util";

/** Creates the wallet's row on its first sign-in, or moves its last sign-in time. */
export async function recordSignIn(db: Queryable, address: string, at: number): Promise<void> {
  await db("users")
    .insert({ address, created_at: at, last_sign_in_at: at })
    .onConflict("address")
    .merge({ last_sign_in_at: at });
}
