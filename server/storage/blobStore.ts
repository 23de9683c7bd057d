/**
 * The local content-addressed blob store: a brief is stored under the SHA-256 of its bytes, which is also the task
 * hash the escrow records. Writes are atomic (temporary file, then rename), so a crash never leaves a partial blob,
 * and storing the same bytes twice is a no-op with the same root hash.
 */
import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";

export interface StoredBlob {
  /** 0x SHA-256 of the bytes. */
  rootHash: string;
  size: number;
  /** Transaction that anchored the blob on decentralized storage; null for the local store. */
  txHash: string | null;
}

export interface BlobStore {
  /** Whether this store writes to decentralized storage (uploads then take at most 4 items per batch). */
  readonly decentralized: boolean;
  put(bytes: Buffer): Promise<StoredBlob>;
  get(rootHash: string): Promise<Buffer | undefined>;
}

export const sha256Hex = (bytes: Buffer) => `0x${crypto.createHash("sha256").update(bytes).digest("hex")}`;

export class LocalBlobStore implements BlobStore {
  readonly decentralized = false;

  constructor(private readonly dir: string) {}

  private file(rootHash: string) {
    const hex = rootHash.slice(2).toLowerCase();
    return path.join(this.dir, hex.slice(0, 2), hex.slice(2, 4), hex);
  }

  async put(bytes: Buffer): Promise<StoredBlob> {
    const rootHash = sha256Hex(bytes);
    const file = this.file(rootHash);
    try {
      await fs.access(file);
    } catch {
      await fs.mkdir(path.dirname(file), { recursive: true });
      const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}.tmp`;
      await fs.writeFile(tmp, bytes);
      await fs.rename(tmp, file);
    }
    return { rootHash, size: bytes.length, txHash: null };
  }

  async get(rootHash: string): Promise<Buffer | undefined> {
    try {
      return await fs.readFile(this.file(rootHash));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }
}
