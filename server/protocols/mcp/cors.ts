/**
 * CORS for what browser-based MCP hosts call: /mcp and the OAuth endpoints of MCP authorization (docs/oauth.md,
 * "Browser-based hosts"). Any origin is allowed (`Access-Control-Allow-Origin: *`, never with credentials): these
 * paths read no cookie, a caller authenticates with a header (X-API-Key or Authorization: Bearer) or the OAuth form,
 * which a page of another origin does not have unless its user gave it. DNS rebinding stays refused by /mcp's Host
 * check (hostAllowed, ./endpoint.ts).
 *
 * Mounted before the envelope and the per-IP window, so that every answer on these paths carries the headers (a
 * browser hides an answer without them from the page, errors and 429s included), and a preflight (OPTIONS with
 * Access-Control-Request-Method) is answered 204 here, before authentication: a browser never sends credentials in one.
 */
import type { Middleware } from "koa";
import { MCP_PATH } from "./endpoint";

/** The request headers MCP's Streamable HTTP transport and its authorization send. */
export const CORS_ALLOW_HEADERS =
  "Authorization, X-API-Key, Mcp-Session-Id, Mcp-Protocol-Version, Content-Type, Last-Event-ID, Accept";
/** The response headers a host reads: its session, the OAuth challenge, and how long to wait after a 429. */
export const CORS_EXPOSE_HEADERS = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After";
/** How long a browser may reuse a preflight's answer (Chromium caps it at 2 hours). */
const MAX_AGE_SECONDS = 86_400;

const OAUTH_METADATA_PATHS = new Set([
  "/.well-known/oauth-protected-resource",
  `/.well-known/oauth-protected-resource${MCP_PATH}`,
  "/.well-known/oauth-authorization-server",
]);
const OAUTH_POST_PATHS = new Set(["/oauth/register", "/oauth/token", "/oauth/revoke"]);

/** The methods a path answers across origins, or undefined for a path without CORS. */
export function corsMethods(path: string): string | undefined {
  if (path === MCP_PATH) return "GET, POST, DELETE";
  if (OAUTH_POST_PATHS.has(path)) return "POST";
  if (OAUTH_METADATA_PATHS.has(path)) return "GET";
  return undefined;
}

export function mcpCors(): Middleware {
  return async (ctx, next) => {
    const methods = corsMethods(ctx.path);
    if (methods === undefined) return next();
    ctx.set("Access-Control-Allow-Origin", "*");
    if (ctx.method === "OPTIONS") {
      ctx.set("Access-Control-Allow-Methods", methods);
      ctx.set("Access-Control-Allow-Headers", CORS_ALLOW_HEADERS);
      ctx.set("Access-Control-Max-Age", String(MAX_AGE_SECONDS));
      ctx.status = 204;
      return;
    }
    ctx.set("Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
    await next();
  };
}
