/** Schemas of the upload routes' answers. */
import { issue, z } from "./common";

/** Items per upload-batch request. */
export const MAX_BATCH_UPLOADS = 50;
/** Items per upload-batch request on a server storing on decentralized storage. */
export const MAX_DECENTRALIZED_BATCH_UPLOADS = 4;
/** What a client should wait before retrying after STORAGE_UNAVAILABLE (spec: retry after a minute). */
export const STORAGE_RETRY_AFTER_SECONDS = 60;

export const STRICT_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
export const ROOT_HASH = /^(0x)?[0-9a-fA-F]{64}$/;

export const storedBlobSchema = z
  .object({
    rootHash: z.string().openapi({
      description: "Root hash of the stored blob: for the local store the 0x SHA-256 of the bytes",
      example: `0x${"ab".repeat(32)}`,
    }),
    txHash: z
      .string()
      .nullable()
      .openapi({
        description:
          "Transaction that anchored the blob on decentralized storage; always null on a server using the local " +
          "content-addressed store (nothing is paid and no transaction is sent)",
      }),
  })
  .openapi("StoredBlob");

export type StoredBlobResult = z.infer<typeof storedBlobSchema>;

export const uploadBatchResultSchema = z
  .object({ results: z.array(storedBlobSchema).openapi({ description: "One per item, in input order" }) })
  .openapi("UploadBatchResult");

/** A root hash from a path: 64 hex characters with or without 0x, normalized to lower-case 0x (INVALID_HASH). */
export const rootHashParam = z
  .string()
  .superRefine((v, ctx) => {
    if (!ROOT_HASH.test(v)) {
      issue(ctx, "INVALID_HASH", "must be a root hash: 64 hex characters, optionally prefixed with 0x");
    }
  })
  .transform((v) => `0x${v.replace(/^0x/, "").toLowerCase()}`)
  .openapi({ example: `0x${"ab".repeat(32)}`, description: "Root hash returned by the upload (0x optional)" });
