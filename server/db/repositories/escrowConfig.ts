import type { ChainName } from "../../escrow/records";
import type { EscrowConfigState } from "../../escrow/records";
import type { Queryable } from "./util";

/** Scalar settings of the escrow seen in its events (fee, treasury, verifier, admin, paused, implementation...). */
export async function loadConfigValues(db: Queryable, chain: ChainName): Promise<EscrowConfigState["values"]> {
  const rows = await db("escrow_config").where({ chain });
  return Object.fromEntries(rows.map((r) => [r.key, { value: r.value, updatedBlock: Number(r.updated_block) }]));
}

export async function replaceConfigValues(
  db: Queryable,
  chain: ChainName,
  values: EscrowConfigState["values"],
): Promise<void> {
  await db("escrow_config").where({ chain }).delete();
  const rows = Object.entries(values).map(([key, v]) => ({
    chain,
    key,
    value: v.value,
    updated_block: v.updatedBlock,
  }));
  if (rows.length) await db("escrow_config").insert(rows);
}
