/**
 * The OAuth 2.1 exchange of MCP authorization (docs/oauth.md) as HTTP, in OAuth's own formats rather than the REST
 * envelope: the metadata documents, Dynamic Client Registration, the token endpoint (form-encoded) and revocation.
 * The rules live in server/domain/oauth.ts; the approval itself is the web app's page (`/oauth/authorize`) calling
 * the catalog's operations (server/operations/oauth.ts).
 *
 *   GET  /.well-known/oauth-protected-resource[/mcp]   RFC 9728
 *   GET  /.well-known/oauth-authorization-server        RFC 8414 (also /.well-known/openid-configuration's path is
 *                                                        not served: this is no OpenID provider)
 *   POST /oauth/register                                 RFC 7591, JSON
 *   POST /oauth/token                                    application/x-www-form-urlencoded
 *   POST /oauth/revoke                                   RFC 7009, application/x-www-form-urlencoded
 *
 * Errors are `{ error, error_description }` with the status of the OAUTH_* code (invalid_client 401); a domain error
 * of another code answers invalid_request.
 */
import type { Context, Middleware } from "koa";
import * as contentType from "content-type";
import getRawBody from "raw-body";
import type { Deps } from "../../domain/deps";
import { AppError } from "../../errors";
import {
  authorizationServerMetadata,
  exchangeToken,
  protectedResourceMetadata,
  registerClient,
  revokeToken,
} from "../../domain/oauth";
import { readJsonBody } from "../http/body";

const FORM_LIMIT_BYTES = 16 * 1024;

/** The RFC 6749 `error` of an AppError: OAUTH_INVALID_GRANT is invalid_grant; any other code is invalid_request. */
function oauthError(error: AppError): { status: number; body: { error: string; error_description: string } } {
  const name = error.code.startsWith("OAUTH_") ? error.code.slice("OAUTH_".length).toLowerCase() : "invalid_request";
  const status = error.code.startsWith("OAUTH_") ? error.status : 400;
  return { status, body: { error: name, error_description: error.message } };
}

async function readForm(ctx: Context): Promise<Record<string, string>> {
  const header = ctx.get("content-type");
  let type: string;
  try {
    type = header ? contentType.parse(header).type : "";
  } catch {
    type = "";
  }
  if (type !== "application/x-www-form-urlencoded") {
    throw new AppError({
      code: "OAUTH_INVALID_REQUEST",
      message: `Content-Type must be application/x-www-form-urlencoded, got ${type || "none"}`,
    });
  }
  let raw: string;
  try {
    raw = await getRawBody(ctx.req, { limit: FORM_LIMIT_BYTES, encoding: "utf-8" });
  } catch {
    throw new AppError({
      code: "OAUTH_INVALID_REQUEST",
      message: `the form must be at most ${FORM_LIMIT_BYTES} bytes`,
    });
  }
  const form: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(raw)) {
    if (name in form) throw new AppError({ code: "OAUTH_INVALID_REQUEST", message: `${name} is repeated` });
    form[name] = value;
  }
  return form;
}

/**
 * Answers JSON. Every path here allows any origin (../mcp/cors.ts sets the headers and answers preflights): a
 * browser-based MCP host calls these endpoints from its own page, and none of them reads a cookie.
 */
function json(ctx: Context, status: number, body: unknown, cacheable = false): void {
  ctx.status = status;
  ctx.set("Cache-Control", cacheable ? "public, max-age=300" : "no-store");
  ctx.body = body;
}

const METADATA_PATHS = new Set(["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]);
const AS_METADATA_PATH = "/.well-known/oauth-authorization-server";
const POST_PATHS = new Set(["/oauth/register", "/oauth/token", "/oauth/revoke"]);

export function oauthEndpoints(deps: Deps): Middleware {
  return async (ctx, next) => {
    const path = ctx.path;
    if (ctx.method === "GET" || ctx.method === "HEAD") {
      if (METADATA_PATHS.has(path)) return json(ctx, 200, protectedResourceMetadata(deps), true);
      if (path === AS_METADATA_PATH) {
        return json(ctx, 200, authorizationServerMetadata(deps), true);
      }
      return next();
    }
    if (ctx.method !== "POST" || !POST_PATHS.has(path)) return next();
    try {
      if (path === "/oauth/register") {
        const body = await readJsonBody(ctx, FORM_LIMIT_BYTES).catch((error: unknown) => {
          if (error instanceof AppError) {
            throw new AppError({ code: "OAUTH_INVALID_CLIENT_METADATA", message: error.message });
          }
          throw error;
        });
        return json(ctx, 201, await registerClient(deps, body));
      }
      const form = await readForm(ctx);
      if (path === "/oauth/token") {
        ctx.set("Pragma", "no-cache");
        return json(ctx, 200, await exchangeToken(deps, form));
      }
      await revokeToken(deps, form);
      return json(ctx, 200, {});
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const answer = oauthError(error);
      if (answer.status === 401) ctx.set("WWW-Authenticate", 'Bearer realm="oauth"');
      return json(ctx, answer.status, answer.body);
    }
  };
}
