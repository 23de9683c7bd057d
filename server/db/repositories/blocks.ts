import type { ChainName } from "../../escrow/records";
import type { BlockHeader } from "../../escrow/records";
import { chunks, type Queryable } from "./util";

/** Remembers the hashes of indexed blocks, which is how a reorg is noticed and its common ancestor found. */
export async function saveBlocks(db: Queryable, chain: ChainName, blocks: readonly BlockHeader[]): Promise<void> {
  const rows = blocks.map((b) => ({
    chain,
    block_number: b.number,
    block_hash: b.hash,
    parent_hash: b.parentHash,
    timestamp: b.timestamp,
  }));
  for (const chunk of chunks(rows)) {
    await db("blocks").insert(chunk).onConflict(["chain", "block_number"]).merge();
  }
}

/** Stored blocks at or below `blockNumber`, newest first. */
export async function listBlocksDownFrom(
  db: Queryable,
  chain: ChainName,
  blockNumber: number,
  limit: number,
): Promise<BlockHeader[]> {
  const rows = await db("blocks")
    .where({ chain })
    .where("block_number", "<=", blockNumber)
    .orderBy("block_number", "desc")
    .limit(limit);
  return rows.map((r) => ({
    number: Number(r.block_number),
    hash: r.block_hash,
    parentHash: r.parent_hash,
    timestamp: Number(r.timestamp),
  }));
}

export async function deleteBlocksAfter(db: Queryable, chain: ChainName, blockNumber: number): Promise<void> {
  await db("blocks").where({ chain }).where("block_number", ">", blockNumber).delete();
}
