/**
 * The posting journal: what a posting has done so far, saved before each step that cannot be undone, so a posting
 * interrupted anywhere (a crash between send and index included) resumes where it stopped and never pays twice.
 * The signed funding transaction is saved BEFORE it is broadcast: resuming broadcasts the same bytes (same nonce,
 * same hash) or finds them mined.
 *
 * The record holds the private briefs' keys (the poster's own secret): FileJournal writes files readable by the
 * owner only (0600).
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { SettlementPin } from "./checks";
import type { IndexResult } from "./types";

export type PostingStage =
  | "prepared" // briefs encrypted and wrapped, blobs in the record
  | "uploaded" // blobs stored; task hashes known
  | "approve-signed" // the approve is signed (and saved) but maybe not broadcast
  | "approved" // the approve is mined
  | "create-signed" // the funding transaction is signed (and saved) but maybe not broadcast
  | "create-sent" // the funding transaction is broadcast
  | "confirmed" // the funding transaction is mined
  | "indexed"; // the tasks are listed

export interface JournalTx {
  hash: string;
  nonce: number;
  raw?: string;
}

export interface JournalItem {
  taskHash: string;
  /** The blob to upload (base64), until it is uploaded. */
  blob?: string;
  rootHash?: string;
  /** Private briefs: the brief key (hex), the keys wrapped per agent and to custody. */
  briefKey?: string;
  wrappedKeys?: Record<string, string>;
  custodyWrappedKey?: string;
  onChainTaskId?: number;
}

export interface PostingRecord {
  version: 1;
  /** The posting's id: derived from the wallet and the drafts, or the caller's `postingId`. */
  id: string;
  wallet: string;
  stage: PostingStage;
  pin: SettlementPin;
  items: JournalItem[];
  /** The built (and checked) funding transaction. */
  built?: { to: string; data: string; gas?: string };
  approve?: JournalTx;
  create?: JournalTx;
  indexed?: IndexResult[];
  updatedAt: string;
}

export interface PostingJournal {
  load(id: string): Promise<PostingRecord | undefined>;
  save(record: PostingRecord): Promise<void>;
  remove(id: string): Promise<void>;
}

/** A journal in memory: resumes within one process only. */
export class MemoryJournal implements PostingJournal {
  private readonly records = new Map<string, string>();
  async load(id: string) {
    const text = this.records.get(id);
    return text === undefined ? undefined : (JSON.parse(text) as PostingRecord);
  }
  async save(record: PostingRecord) {
    this.records.set(record.id, JSON.stringify(record));
  }
  async remove(id: string) {
    this.records.delete(id);
  }
}

/** A journal of files `<dir>/<id>.json` (0600), each written atomically (temporary file, fsync, rename). */
export class FileJournal implements PostingJournal {
  constructor(readonly dir: string) {}

  private file(id: string) {
    if (!/^[0-9a-zA-Z_-]{1,128}$/.test(id)) throw new Error(`journal id ${id} must be 1-128 of [0-9a-zA-Z_-]`);
    return path.join(this.dir, `${id}.json`);
  }

  async load(id: string) {
    try {
      return JSON.parse(await fs.readFile(this.file(id), "utf8")) as PostingRecord;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  async save(record: PostingRecord) {
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const target = this.file(record.id);
    const temporary = `${target}.${process.pid}.tmp`;
    const handle = await fs.open(temporary, "w", 0o600);
    try {
      await handle.writeFile(JSON.stringify(record, null, 2));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temporary, target);
  }

  async remove(id: string) {
    await fs.rm(this.file(id), { force: true });
  }
}
