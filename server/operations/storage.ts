/** Blob storage: single and batch uploads (posting family "uploads"), and the public download by root hash. */
import { defineOperation, type AnyOperation } from "./operation";
import { issue, z } from "../domain/schemas/common";
import { readBlob, uploadBlob, uploadBlobBatch } from "../domain/storage";
import {
  MAX_BATCH_UPLOADS,
  MAX_DECENTRALIZED_BATCH_UPLOADS,
  rootHashParam,
  storedBlobSchema,
  uploadBatchResultSchema,
} from "../domain/schemas/storage";
import type { ErrorCode } from "../errors";

/**
 * Request body limit of a single upload: 14 MiB (14,680,064 bytes). The base64 of a 10 MiB blob is 13,981,016
 * characters; the rest is room for the JSON around it. DATA_TOO_LARGE answers blobs above MAX_BLOB_BYTES that fit
 * this limit; a body above it answers PAYLOAD_TOO_LARGE.
 */
export const UPLOAD_BODY_LIMIT_BYTES = 14 * 1024 * 1024;
/** Whole upload-batch body (spec: 2 MB JSON). */
export const UPLOAD_BATCH_BODY_LIMIT_BYTES = 2 * 1024 * 1024;

const DATA_CODES: ErrorCode[] = ["MISSING_DATA", "INVALID_DATA", "EMPTY_DATA", "DATA_TOO_LARGE"];
const BODY_CODES: ErrorCode[] = [
  "INVALID_JSON",
  "PAYLOAD_TOO_LARGE",
  "REQUEST_ABORTED",
  "UNSUPPORTED_CHARSET",
  "UNSUPPORTED_ENCODING",
  "UNSUPPORTED_MEDIA_TYPE",
  "BAD_REQUEST",
];

/** `data`: presence is checked here; its content by the domain, which knows the configured size limit. */
const blobData = z
  .unknown()
  .superRefine((v, ctx) => {
    if (v === undefined || v === null) issue(ctx, "MISSING_DATA", "required: the blob's bytes as a base64 string");
  })
  .openapi({
    type: "string",
    format: "byte",
    description: "The blob's bytes as strict base64 (standard alphabet, = padding); at most 10 MB decoded",
  });

const uploadBody = z.object({ data: blobData }).openapi("UploadRequest");

/** Items are checked one by one by the domain, so that every failing item is reported (INVALID_ITEMS). */
const uploadItem = z.unknown().openapi({
  type: "object",
  required: ["data"],
  properties: { data: { type: "string", format: "byte", description: "The blob's bytes as strict base64" } },
});

const uploadBatchBody = z
  .object({
    items: z
      .array(uploadItem)
      .min(1, `must list 1 to ${MAX_BATCH_UPLOADS} items`)
      .superRefine((items, ctx) => {
        if (items.length > MAX_BATCH_UPLOADS) {
          issue(ctx, "BATCH_TOO_LARGE", `at most ${MAX_BATCH_UPLOADS} items per request, got ${items.length}`);
        }
      })
      .openapi({ minItems: 1, maxItems: MAX_BATCH_UPLOADS }),
  })
  .openapi("UploadBatchRequest");

export const uploadRoute = defineOperation({
  mcp: { tool: "upload_brief" },
  method: "post",
  path: "/api/v1/storage/upload",
  summary: "Store one blob (a brief or a result) and get its root hash",
  description:
    "Stores the base64 `data` in the content-addressed store; uploading the same bytes again returns the same " +
    "rootHash. On this server's local store, rootHash is the 0x SHA-256 of the bytes and txHash is always null. " +
    "Request body limit 14 MiB (a 10 MB blob's base64 and its JSON). Answers within about 85 seconds; " +
    "503 STORAGE_UNAVAILABLE (Retry-After: 60) when storage fails: nothing is paid, retry after a minute.",
  tags: ["storage"],
  auth: "required",
  posting: { family: "uploads", items: () => 1 },
  bodyLimit: UPLOAD_BODY_LIMIT_BYTES,
  request: { body: uploadBody },
  response: storedBlobSchema,
  successStatus: 201,
  errors: [...DATA_CODES, "VALIDATION_ERROR", ...BODY_CODES, "UNAUTHORIZED", "RATE_LIMIT", "STORAGE_UNAVAILABLE"],
  handler: ({ body, caller, deps }) => uploadBlob(deps, caller!.wallet, body.data),
});

export const uploadBatchRoute = defineOperation({
  mcp: { restOnly: "the bulk form of upload_brief" },
  method: "post",
  path: "/api/v1/storage/upload-batch",
  summary: "Store 1 to 50 blobs, all or nothing",
  description:
    "Every item is checked before any is stored: 400 INVALID_ITEMS lists error.details.errors as " +
    "{ index (0-based), code, message } (the message counts items from 1). A store failure ends the request with " +
    "error.details.index: 502 UPLOAD_FAILED, or 503 STORAGE_UNAVAILABLE when storage did not answer in time; " +
    "resend the whole batch (storage is content-addressed, so the root hashes are the same). The whole body must " +
    `fit 2 MB; a server storing on decentralized storage takes at most ${MAX_DECENTRALIZED_BATCH_UPLOADS} items. ` +
    "Counts one upload per item against the uploads rate limit. txHash is always null on the local store.",
  tags: ["storage"],
  auth: "required",
  posting: { family: "uploads", items: (body) => body.items.length },
  bodyLimit: UPLOAD_BATCH_BODY_LIMIT_BYTES,
  request: { body: uploadBatchBody },
  response: uploadBatchResultSchema,
  successStatus: 201,
  errors: [
    "INVALID_ITEMS",
    "BATCH_TOO_LARGE",
    "VALIDATION_ERROR",
    ...BODY_CODES,
    "UNAUTHORIZED",
    "RATE_LIMIT",
    "UPLOAD_FAILED",
    "STORAGE_UNAVAILABLE",
  ],
  handler: ({ body, caller, deps }) => uploadBlobBatch(deps, caller!.wallet, body.items),
});

export const downloadRoute = defineOperation({
  mcp: { restOnly: "the blob's bytes are the HTTP body itself (fetch_brief answers them as base64)" },
  method: "get",
  path: "/api/v1/storage/blobs/:rootHash",
  summary: "Download a blob's raw bytes by its root hash",
  description:
    "Public: private briefs are stored encrypted. Answers the raw bytes as application/octet-stream (not the JSON " +
    'envelope; errors are), with ETag "<rootHash>" and Cache-Control immutable; If-None-Match answers 304.',
  tags: ["storage"],
  auth: "none",
  request: { params: z.object({ rootHash: rootHashParam }) },
  response: z.string().openapi({ format: "binary" }),
  rawResponse: { contentType: "application/octet-stream", description: "The blob's bytes" },
  errors: ["INVALID_HASH", "NOT_FOUND", "STORAGE_UNAVAILABLE"],
  handler: async ({ params, ctx, deps }) => {
    const bytes = await readBlob(deps, params.rootHash);
    ctx.status = 200;
    ctx.set("ETag", `"${params.rootHash}"`);
    ctx.set("Cache-Control", "public, max-age=31536000, immutable");
    ctx.set("X-Content-Type-Options", "nosniff");
    if (ctx.fresh) {
      ctx.status = 304;
      ctx.body = null; // answered: the router leaves it alone
      return "";
    }
    ctx.type = "application/octet-stream";
    ctx.body = bytes;
    return "";
  },
});

export const storageRoutes: AnyOperation[] = [uploadRoute, uploadBatchRoute, downloadRoute];
