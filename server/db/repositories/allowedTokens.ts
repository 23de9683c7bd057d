import type { ChainName } from "../../escrow/records";
import type { EscrowConfigState } from "../../escrow/records";
import { toBool, type Queryable } from "./util";

/** The token allowlist and minimum rated amounts seen in the escrow's events. */
export async function loadTokens(db: Queryable, chain: ChainName): Promise<EscrowConfigState["tokens"]> {
  const rows = await db("allowed_tokens").where({ chain });
  return Object.fromEntries(
    rows.map((r) => [
      r.token,
      { allowed: toBool(r.allowed), minRatedAmount: String(r.min_rated_amount), updatedBlock: Number(r.updated_block) },
    ]),
  );
}

export async function replaceTokens(
  db: Queryable,
  chain: ChainName,
  tokens: EscrowConfigState["tokens"],
): Promise<void> {
  await db("allowed_tokens").where({ chain }).delete();
  const rows = Object.entries(tokens).map(([token, t]) => ({
    chain,
    token,
    allowed: t.allowed,
    min_rated_amount: t.minRatedAmount,
    updated_block: t.updatedBlock,
  }));
  if (rows.length) await db("allowed_tokens").insert(rows);
}

export async function isTokenAllowed(db: Queryable, chain: ChainName, token: string): Promise<boolean> {
  const row = await db("allowed_tokens").where({ chain, token: token.toLowerCase() }).first();
  return row ? toBool(row.allowed) : false;
}
