/**
 * Reads and parses a JSON request body with a size limit, answering each failure with its spec code:
 * PAYLOAD_TOO_LARGE, REQUEST_ABORTED, UNSUPPORTED_CHARSET, UNSUPPORTED_ENCODING (gzip, deflate and br are accepted),
 * UNSUPPORTED_MEDIA_TYPE for a body that is not JSON, INVALID_JSON.
 */
import zlib from "node:zlib";
import type { Context } from "koa";
import * as contentType from "content-type";
import getRawBody from "raw-body";
import { AppError } from "../../errors";

const DECODERS: Record<string, () => NodeJS.ReadWriteStream> = {
  gzip: () => zlib.createGunzip(),
  "x-gzip": () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

function hasBody(ctx: Context): boolean {
  const length = ctx.get("content-length");
  return Boolean(ctx.get("transfer-encoding")) || (length !== "" && length !== "0");
}

/** Parses the body of `ctx` as JSON; undefined when the request has none. */
export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  if (!hasBody(ctx)) return undefined;

  let charset = "utf-8";
  const header = ctx.get("content-type");
  if (header) {
    let parsed;
    try {
      parsed = contentType.parse(header);
    } catch {
      throw new AppError({ code: "UNSUPPORTED_MEDIA_TYPE", message: `malformed Content-Type: ${header}` });
    }
    if (parsed.type !== "application/json" && !parsed.type.endsWith("+json")) {
      throw new AppError({
        code: "UNSUPPORTED_MEDIA_TYPE",
        message: `Content-Type must be application/json, got ${parsed.type}`,
      });
    }
    charset = (parsed.parameters.charset ?? "utf-8").toLowerCase();
  }
  if (charset !== "utf-8" && charset !== "utf8") {
    throw new AppError({ code: "UNSUPPORTED_CHARSET", message: `unsupported charset ${charset}: send UTF-8` });
  }

  const encoding = (ctx.get("content-encoding") || "identity").toLowerCase().trim();
  if (ctx.req.destroyed || !ctx.req.readable) {
    // The client hung up before the body was read (while authentication ran, for example).
    throw new AppError({ code: "REQUEST_ABORTED", message: "the client aborted the request" });
  }
  let stream: NodeJS.ReadableStream = ctx.req;
  let length: string | undefined = ctx.get("content-length") || undefined;
  if (encoding !== "identity") {
    const decoder = DECODERS[encoding];
    if (!decoder) {
      throw new AppError({
        code: "UNSUPPORTED_ENCODING",
        message: `unsupported Content-Encoding ${encoding}: use identity, gzip, deflate or br`,
      });
    }
    const decoded = decoder();
    // pipe() does not forward a client hang-up: without this the decoder would wait for the rest forever.
    ctx.req.once("close", () => {
      if (!ctx.req.complete) decoded.emit("aborted");
    });
    stream = ctx.req.pipe(decoded);
    length = undefined; // the decoded size is only known while reading
  }

  let text: string;
  try {
    text = await getRawBody(stream, { limit, length, encoding: "utf-8" });
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === "entity.too.large") {
      throw new AppError({
        code: "PAYLOAD_TOO_LARGE",
        message: `request body larger than ${limit} bytes`,
        cause: error,
      });
    }
    if (type === "request.aborted" || type === "stream.not.readable") {
      throw new AppError({ code: "REQUEST_ABORTED", message: "the client aborted the request", cause: error });
    }
    if (type === "request.size.invalid") {
      throw new AppError({
        code: "BAD_REQUEST",
        message: "request body shorter than its Content-Length",
        cause: error,
      });
    }
    if ((error as { code?: string }).code?.startsWith("Z_") || (error as { errno?: number }).errno !== undefined) {
      throw new AppError({ code: "BAD_REQUEST", message: `body is not valid ${encoding} data`, cause: error });
    }
    throw error;
  }
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new AppError({ code: "INVALID_JSON", message: `body is not valid JSON: ${(error as Error).message}` });
  }
}
