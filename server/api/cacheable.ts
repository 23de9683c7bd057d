/**
 * Public, cacheable JSON answered as-is (not in the envelope): a strong ETag of the bytes, Cache-Control, and 304 for
 * a matching If-None-Match.
 */
import crypto from "node:crypto";
import type { Context } from "koa";

export function sendCacheableJson(ctx: Context, value: unknown, maxAgeSeconds: number): void {
  const bytes = Buffer.from(JSON.stringify(value));
  const etag = `"${crypto.createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"`;
  ctx.set("ETag", etag);
  ctx.set("Cache-Control", `public, max-age=${maxAgeSeconds}`);
  const presented = ctx.get("If-None-Match");
  if (presented && presented.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag)) {
    ctx.status = 304;
    ctx.body = "";
    return;
  }
  ctx.status = 200;
  ctx.type = "application/json";
  ctx.body = bytes;
}
