import type { Queryable } from "./util";

/** The chain a database was built from. A database never holds two chains' data. */
export interface ChainIdentity {
  chainId: number;
  escrowAddress: string;
  deploymentBlock: number;
  deploymentBlockHash: string;
  network: string;
}

export async function getChainIdentity(db: Queryable): Promise<ChainIdentity | undefined> {
  const row = await db("chain_identity").where({ id: 1 }).first();
  if (!row) return undefined;
  return {
    chainId: Number(row.chain_id),
    escrowAddress: row.escrow_address,
    deploymentBlock: Number(row.deployment_block),
    deploymentBlockHash: row.deployment_block_hash,
    network: row.network,
  };
}

export async function recordChainIdentity(db: Queryable, identity: ChainIdentity): Promise<void> {
  await db("chain_identity")
    .insert({
      id: 1,
      chain_id: identity.chainId,
      escrow_address: identity.escrowAddress.toLowerCase(),
      deployment_block: identity.deploymentBlock,
      deployment_block_hash: identity.deploymentBlockHash,
      network: identity.network,
      recorded_at: Date.now(),
    })
    .onConflict("id")
    .ignore();
}
