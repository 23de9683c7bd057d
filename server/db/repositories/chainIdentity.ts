import type { ChainName } from "../../escrow/records";
import type { Queryable } from "./util";

/** The chain a database's rows of one settlement chain were built from: one identity per `chain`. */
export interface ChainIdentity {
  chainId: number;
  escrowAddress: string;
  deploymentBlock: number;
  deploymentBlockHash: string;
  network: string;
}

export async function getChainIdentity(db: Queryable, chain: ChainName): Promise<ChainIdentity | undefined> {
  const row = await db("chain_identity").where({ chain }).first();
  if (!row) return undefined;
  return {
    chainId: Number(row.chain_id),
    escrowAddress: row.escrow_address,
    deploymentBlock: Number(row.deployment_block),
    deploymentBlockHash: row.deployment_block_hash,
    network: row.network,
  };
}

export async function recordChainIdentity(db: Queryable, chain: ChainName, identity: ChainIdentity): Promise<void> {
  await db("chain_identity")
    .insert({
      id: 1,
      chain,
      chain_id: identity.chainId,
      escrow_address: identity.escrowAddress.toLowerCase(),
      deployment_block: identity.deploymentBlock,
      deployment_block_hash: identity.deploymentBlockHash,
      network: identity.network,
      recorded_at: Date.now(),
    })
    .onConflict("chain")
    .ignore();
}
