import type { ChainName } from "../../escrow/records";
import type { BlockHeader } from "../../escrow/records";
import { bulkInsert, insertChunks, upsertClause, type Queryable } from "./util";

const BLOCK_COLUMNS = ["chain", "block_number", "block_hash", "parent_hash", "timestamp"];
const BLOCK_PG_TYPES = ["text", "bigint", "text", "text", "bigint"];
const BLOCK_UPSERT = upsertClause(["chain", "block_number"], BLOCK_COLUMNS);

/** Remembers the hashes of indexed blocks, which is how a reorg is noticed and its common ancestor found. */
export async function saveBlocks(db: Queryable, chain: ChainName, blocks: readonly BlockHeader[]): Promise<void> {
  for (const chunk of insertChunks(db, blocks)) {
    const rows = chunk.map((b) => [chain, b.number, b.hash, b.parentHash, b.timestamp]);
    await bulkInsert(db, "blocks", BLOCK_COLUMNS, rows, BLOCK_UPSERT, BLOCK_PG_TYPES);
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
