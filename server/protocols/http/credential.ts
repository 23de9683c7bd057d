/** The credential an HTTP request presents, for every adapter served over HTTP. */
import type { Context } from "koa";

/** `X-API-Key: <credential>`, else `Authorization: Bearer <credential>`; undefined when neither is sent. */
export function presentedCredential(ctx: Context): string | undefined {
  const key = ctx.get("x-api-key").trim();
  if (key) return key;
  const authorization = ctx.get("authorization").trim();
  const match = /^Bearer\s+(\S+)$/i.exec(authorization);
  return match?.[1];
}
