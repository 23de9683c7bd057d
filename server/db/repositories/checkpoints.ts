import type { ChainName } from "../../escrow/records";
import type { Queryable } from "./util";

/** How far a stream is indexed: every event up to and including `blockNumber` is stored and folded. */
export interface Checkpoint {
  blockNumber: number;
  blockHash: string;
}

export async function getCheckpoint(db: Queryable, chain: ChainName, name: string): Promise<Checkpoint | undefined> {
  const row = await db("checkpoints").where({ chain, name }).first();
  return row ? { blockNumber: Number(row.block_number), blockHash: row.block_hash } : undefined;
}

export async function deleteCheckpoint(db: Queryable, chain: ChainName, name: string): Promise<void> {
  await db("checkpoints").where({ chain, name }).delete();
}

export async function setCheckpoint(
  db: Queryable,
  chain: ChainName,
  name: string,
  checkpoint: Checkpoint,
): Promise<void> {
  await db("checkpoints")
    .insert({
      chain,
      name,
      block_number: checkpoint.blockNumber,
      block_hash: checkpoint.blockHash,
      updated_at: Date.now(),
    })
    .onConflict(["chain", "name"])
    .merge();
}
