/**
 * Resolves the caller from `X-API-Key: sk_...` or `Authorization: Bearer sk_...` (and, on account routes, a sign-in
 * session `Bearer ses_...`). Missing, malformed, unknown or revoked credentials answer 401 UNAUTHORIZED.
 */
import type { Context } from "koa";
import { AppError } from "../../errors";
import { API_KEY_PATTERN, SESSION_PATTERN, hashSecret } from "../../domain/credentials";
import { findActiveKeyByHash, touchKey } from "../../db/repositories/apiKeys";
import { findSessionAddress } from "../../db/repositories/sessions";
import type { Caller } from "../route";
import type { Deps } from "../../domain/deps";

/** How fresh a key's recorded last use is kept (docs/api.md, "Signing in and API keys"). */
export const LAST_USED_RESOLUTION_SECONDS = 60;

/** The credential the request presents, if any. */
export function presentedCredential(ctx: Context): string | undefined {
  const key = ctx.get("x-api-key").trim();
  if (key) return key;
  const authorization = ctx.get("authorization").trim();
  const match = /^Bearer\s+(\S+)$/i.exec(authorization);
  return match?.[1];
}

export class AuthFailure extends AppError {
  constructor(message: string) {
    super({ code: "UNAUTHORIZED", message, headers: { "WWW-Authenticate": 'Bearer realm="api"' } });
  }
}

/** The caller, or undefined when no credential was presented. Throws AuthFailure for a bad credential. */
export async function authenticate(ctx: Context, deps: Deps, acceptsSession: boolean): Promise<Caller | undefined> {
  const credential = presentedCredential(ctx);
  if (!credential) return undefined;
  const now = deps.clock.wallNow();
  if (API_KEY_PATTERN.test(credential)) {
    const key = await findActiveKeyByHash(deps.db, hashSecret(credential));
    if (!key) throw new AuthFailure("invalid or revoked API key");
    // Last use is informational, to the minute: written at most once a minute per key (a write per request cost a
    // fifth of a task build), and never blocking the request.
    if (key.lastUsedAt === null || now - key.lastUsedAt >= LAST_USED_RESOLUTION_SECONDS) {
      touchKey(deps.db, key.id, now).catch(() => undefined);
    }
    return { wallet: key.address, keyId: key.id, via: "api-key" };
  }
  if (acceptsSession && SESSION_PATTERN.test(credential)) {
    const address = await findSessionAddress(deps.db, hashSecret(credential), now);
    if (!address) throw new AuthFailure("invalid or expired session: sign in again");
    return { wallet: address, keyId: null, via: "session" };
  }
  throw new AuthFailure(
    acceptsSession
      ? "credential must be an API key (sk_ and 64 hex) or a session token (ses_ and 64 hex)"
      : "API key must be sk_ followed by 64 hex characters",
  );
}

export function missingCredential(acceptsSession: boolean): AppError {
  return new AuthFailure(
    acceptsSession
      ? "authentication required: send an API key or a session token as Authorization: Bearer <token>"
      : "API key required: send X-API-Key: <key> or Authorization: Bearer <key>",
  );
}
