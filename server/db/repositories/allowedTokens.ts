import type { EscrowConfigState } from "../../escrow/records";
import { toBool, type Queryable } from "./util";

/** The token allowlist and minimum rated amounts seen in the escrow's events. */
export async function loadTokens(db: Queryable): Promise<EscrowConfigState["tokens"]> {
  const rows = await db("allowed_tokens").select();
  return Object.fromEntries(
    rows.map((r) => [
      r.token,
      { allowed: toBool(r.allowed), minRatedAmount: String(r.min_rated_amount), updatedBlock: Number(r.updated_block) },
    ]),
  );
}

export async function replaceTokens(db: Queryable, tokens: EscrowConfigState["tokens"]): Promise<void> {
  await db("allowed_tokens").delete();
  const rows = Object.entries(tokens).map(([token, t]) => ({
    token,
    allowed: t.allowed,
    min_rated_amount: t.minRatedAmount,
    updated_block: t.updatedBlock,
  }));
  if (rows.length) await db("allowed_tokens").insert(rows);
}

export async function isTokenAllowed(db: Queryable, token: string): Promise<boolean> {
  const row = await db("allowed_tokens").where({ token: token.toLowerCase() }).first();
  return row ? toBool(row.allowed) : false;
}
