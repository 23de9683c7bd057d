/**
 * Blob uploads and downloads (briefs and results). A blob arrives as strict base64, is checked (MISSING_DATA,
 * INVALID_DATA, EMPTY_DATA, DATA_TOO_LARGE), stored in the content-addressed blob store within the upload time budget
 * and recorded with its uploader. Batches check every item before storing any, and are all or nothing from the
 * client's view: storage is content-addressed, so resending a batch gives the same root hashes.
 *
 * Store failures are dependency failures, never 500s: a single upload answers 503 STORAGE_UNAVAILABLE; a batch
 * answers 502 UPLOAD_FAILED for the item the store refused, or 503 STORAGE_UNAVAILABLE when the time budget ran out,
 * both with `error.details.index`. Nothing is paid for an upload, so retrying is always safe.
 */
import { AppError, fail, type ItemError } from "../errors";
import type { Deps } from "./deps";
import { recordBlobs } from "../db/repositories/blobs";
import type { StoredBlob } from "../storage/blobStore";
import {
  MAX_DECENTRALIZED_BATCH_UPLOADS,
  STORAGE_RETRY_AFTER_SECONDS,
  STRICT_BASE64,
  type StoredBlobResult,
} from "./schemas/storage";

export type BlobDataCheck =
  | { ok: true; bytes: Buffer }
  | { ok: false; code: "MISSING_DATA" | "INVALID_DATA" | "EMPTY_DATA" | "DATA_TOO_LARGE"; message: string };

/** `bytes` as the spec's size figure: "10 MB" for the default limit. */
export function formatSize(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}

/**
 * Checks one upload's `data` field and decodes it. Strict base64 only: the standard alphabet, `=` padding to a
 * multiple of 4 characters, no whitespace, and the text must be exactly what the decoded bytes encode to (so
 * non-canonical trailing bits are refused instead of silently changing the blob and its hash).
 */
export function checkBlobData(value: unknown, maxBytes: number): BlobDataCheck {
  if (value === undefined || value === null) {
    return { ok: false, code: "MISSING_DATA", message: "data is required: the blob's bytes as a base64 string" };
  }
  if (typeof value !== "string") {
    return { ok: false, code: "INVALID_DATA", message: `data must be a base64 string, got ${typeof value}` };
  }
  if (value.length === 0) return { ok: false, code: "EMPTY_DATA", message: "data must not be empty (zero bytes)" };
  if (value.length % 4 !== 0 || !STRICT_BASE64.test(value)) {
    return {
      ok: false,
      code: "INVALID_DATA",
      message: "data is not strict base64 (A-Z, a-z, 0-9, + and /, padded with = to a multiple of 4 characters)",
    };
  }
  const padding = value.endsWith("==") ? 2 : value.endsWith("=") ? 1 : 0;
  const size = (value.length / 4) * 3 - padding;
  if (size > maxBytes) {
    return {
      ok: false,
      code: "DATA_TOO_LARGE",
      message: `data decodes to ${size} bytes, above the limit of ${formatSize(maxBytes)}`,
    };
  }
  const bytes = Buffer.from(value, "base64");
  if (bytes.length !== size || bytes.toString("base64") !== value) {
    return { ok: false, code: "INVALID_DATA", message: "data is not canonical base64 (its padding bits are not zero)" };
  }
  return { ok: true, bytes };
}

/** Checks one batch item (`{ data }`); the message counts items from 1. */
function checkBatchItem(item: unknown, index: number, maxBytes: number): BlobDataCheck {
  const label = `item ${index + 1}`;
  if (item === null || typeof item !== "object" || Array.isArray(item)) {
    return { ok: false, code: "MISSING_DATA", message: `${label}: must be an object { data: <base64> }` };
  }
  const checked = checkBlobData((item as { data?: unknown }).data, maxBytes);
  return checked.ok ? checked : { ...checked, message: `${label}: ${checked.message}` };
}

class StoreTimeout extends Error {
  override name = "StoreTimeout";
}

/** `promise`, or a StoreTimeout once `deadline` (epoch ms) has passed. The store call itself keeps running. */
async function beforeDeadline<T>(promise: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StoreTimeout("the blob store did not answer in time")),
      Math.max(0, deadline - Date.now()),
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function storageUnavailable(cause: unknown, index?: number): AppError {
  const which = index === undefined ? "the blob" : `item ${index + 1}`;
  const why = cause instanceof StoreTimeout ? "storage did not answer in time" : "storage is unavailable";
  return new AppError({
    code: "STORAGE_UNAVAILABLE",
    message: `${why}: ${which} was not stored; nothing was paid, retry after a minute`,
    headers: { "Retry-After": String(STORAGE_RETRY_AFTER_SECONDS) },
    ...(index === undefined ? {} : { details: { index } }),
    cause,
  });
}

export async function store(deps: Deps, bytes: Buffer, deadline: number, index?: number): Promise<StoredBlob> {
  try {
    return await beforeDeadline(deps.blobs.put(bytes), deadline);
  } catch (error) {
    deps.logger.warn("blob store failed", { index, size: bytes.length, error });
    if (index === undefined || error instanceof StoreTimeout) throw storageUnavailable(error, index);
    throw new AppError({
      code: "UPLOAD_FAILED",
      message: `item ${index + 1} could not be stored; nothing was kept for this batch, resend it`,
      details: { index },
      cause: error,
    });
  }
}

async function record(deps: Deps, uploader: string, blobs: readonly StoredBlob[]): Promise<void> {
  const createdAt = deps.clock.wallNow();
  await recordBlobs(
    deps.db,
    blobs.map((b) => ({ rootHash: b.rootHash, size: b.size, uploader, createdAt })),
  );
}

const result = (blob: StoredBlob): StoredBlobResult => ({ rootHash: blob.rootHash, txHash: blob.txHash });

/** Stores one blob for `uploader` (the key's wallet). `data` is the request's base64 `data` field. */
export async function uploadBlob(deps: Deps, uploader: string, data: unknown): Promise<StoredBlobResult> {
  const checked = checkBlobData(data, deps.config.api.maxBlobBytes);
  if (!checked.ok) fail(checked.code, `data: ${checked.message}`);
  const stored = await store(deps, checked.bytes, Date.now() + deps.config.api.uploadTimeoutMs);
  await record(deps, uploader, [stored]);
  return result(stored);
}

/**
 * Stores a batch of `{ data }` items (1..50, already counted by the request schema) for `uploader`, all or nothing:
 * every item is checked first (400 INVALID_ITEMS lists each failure), then they are stored in order; the first store
 * failure ends the request with its index and nothing is recorded.
 */
export async function uploadBlobBatch(
  deps: Deps,
  uploader: string,
  items: readonly unknown[],
): Promise<{ results: StoredBlobResult[] }> {
  if (deps.blobs.decentralized && items.length > MAX_DECENTRALIZED_BATCH_UPLOADS) {
    fail(
      "BATCH_TOO_LARGE",
      `items: this server stores on decentralized storage and takes at most ${MAX_DECENTRALIZED_BATCH_UPLOADS} ` +
        `items per batch, got ${items.length}`,
    );
  }
  const maxBytes = deps.config.api.maxBlobBytes;
  const checked = items.map((item, index) => checkBatchItem(item, index, maxBytes));
  const errors: ItemError[] = [];
  checked.forEach((c, index) => {
    if (!c.ok) errors.push({ index, code: c.code, message: c.message });
  });
  if (errors.length > 0) {
    fail("INVALID_ITEMS", `${errors.length} of ${items.length} items are invalid; first: ${errors[0].message}`, {
      details: { errors },
    });
  }
  const deadline = Date.now() + deps.config.api.uploadTimeoutMs;
  const stored: StoredBlob[] = [];
  for (const [index, c] of checked.entries()) {
    if (c.ok) stored.push(await store(deps, c.bytes, deadline, index));
  }
  await record(deps, uploader, stored);
  return { results: stored.map(result) };
}

/** The bytes stored under `rootHash` (normalized); 404 NOT_FOUND when absent, 503 when the store fails. */
export async function readBlob(deps: Deps, rootHash: string): Promise<Buffer> {
  let bytes: Buffer | undefined;
  try {
    bytes = await beforeDeadline(deps.blobs.get(rootHash), Date.now() + deps.config.api.uploadTimeoutMs);
  } catch (error) {
    deps.logger.warn("blob store read failed", { rootHash, error });
    throw new AppError({
      code: "STORAGE_UNAVAILABLE",
      message: "storage is unavailable: retry after a minute",
      headers: { "Retry-After": String(STORAGE_RETRY_AFTER_SECONDS) },
      cause: error,
    });
  }
  if (!bytes) fail("NOT_FOUND", `no blob with root hash ${rootHash}`);
  return bytes;
}
