import type { Queryable } from "./util";

/** A stored blob: who uploaded it first, and its size. The bytes live in the blob store under `rootHash`. */
export interface BlobRow {
  /** 0x SHA-256 of the bytes, lower-case. */
  rootHash: string;
  size: number;
  /** The wallet that first uploaded these bytes (lower-case). */
  uploader: string;
  createdAt: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const fromRow = (r: any): BlobRow => ({
  rootHash: r.root_hash,
  size: Number(r.size),
  uploader: r.uploader,
  createdAt: Number(r.created_at),
});

/**
 * Records blobs. Storage is content-addressed, so a blob already recorded keeps its first uploader and the insert
 * is a no-op for it; duplicates within `blobs` are recorded once.
 */
export async function recordBlobs(db: Queryable, blobs: readonly BlobRow[]): Promise<void> {
  const unique = [...new Map(blobs.map((b) => [b.rootHash, b])).values()];
  if (unique.length === 0) return;
  await db("blobs")
    .insert(unique.map((b) => ({ root_hash: b.rootHash, size: b.size, uploader: b.uploader, created_at: b.createdAt })))
    .onConflict("root_hash")
    .ignore();
}

export async function findBlob(db: Queryable, rootHash: string): Promise<BlobRow | undefined> {
  const row = await db("blobs").where({ root_hash: rootHash }).first();
  return row ? fromRow(row) : undefined;
}
