/**
 * Resolves the caller from `X-API-Key: sk_...` or `Authorization: Bearer sk_...` (and, on account routes, a sign-in
 * session `Bearer ses_...`). Missing, malformed, unknown or revoked credentials answer 401 UNAUTHORIZED.
 *
 * A hosted agent's token (a JWT, `Bearer eyJ...`, server/domain/agents/tokens.ts) is accepted wherever a key is: it
 * must verify (BAD_TOKEN; NO_JWT_SECRET without a secret) and name an agent that exists, is not deleted, is wanted
 * running or paused by its owner, and has the token's wallet (BAD_TOKEN otherwise). It acts as the agent's wallet.
 * Routes with `refusesAgentTokens` answer it DELEGATION_DISABLED (router.ts).
 */
import type { Context } from "koa";
import { decodeJwt } from "jose";
import { AppError } from "../../errors";
import type { HostedAgentsConfig } from "../../config";
import { AGENT_TOKEN_PATTERN, verifyAgentToken, type AgentTokenClaims } from "../../domain/agents/tokens";
import { findHostedAgentStanding } from "../../db/repositories/hostedAgents";
import { API_KEY_PATTERN, SESSION_PATTERN, hashSecret } from "../../domain/credentials";
import { activeApiKey } from "../../domain/accounts";
import { findSessionAddress } from "../../db/repositories/sessions";
import type { Caller } from "../route";
import type { Deps } from "../../domain/deps";

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

/** A verified token is trusted again for this long (never past its expiry): the rate limiter and auth both read it. */
export const VERIFIED_TOKEN_CACHE_MS = 5_000;
const VERIFIED_TOKEN_CACHE_SIZE = 1024;
/** Per configuration (so two APIs of one process with different secrets never share a verdict). */
const verifiedTokens = new WeakMap<object, Map<string, { claims: AgentTokenClaims; untilMs: number }>>();

/**
 * The claims of a hosted agent's token, verified (BAD_TOKEN, NO_JWT_SECRET) at most once per request and then cached
 * a few seconds (bounded by the token's own expiry).
 */
export async function verifiedAgentToken(
  ctx: Context,
  config: Readonly<HostedAgentsConfig>,
  token: string,
): Promise<AgentTokenClaims> {
  const state = ctx.state as { agentToken?: { token: string; config: object; claims: AgentTokenClaims } };
  if (state.agentToken?.token === token && state.agentToken.config === config) return state.agentToken.claims;
  let cache = verifiedTokens.get(config);
  if (!cache) verifiedTokens.set(config, (cache = new Map()));
  const nowMs = Date.now();
  const hit = cache.get(token);
  let claims: AgentTokenClaims;
  if (hit && hit.untilMs > nowMs) claims = hit.claims;
  else {
    claims = await verifyAgentToken(config, token);
    const expiresMs = (decodeJwt(token).exp ?? 0) * 1000;
    if (cache.size >= VERIFIED_TOKEN_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(token, { claims, untilMs: Math.min(nowMs + VERIFIED_TOKEN_CACHE_MS, expiresMs) });
  }
  state.agentToken = { token, config, claims };
  return claims;
}

function agentTokenRefused(message: string): AppError {
  return new AppError({
    code: "BAD_TOKEN",
    message,
    headers: { "WWW-Authenticate": 'Bearer realm="api", error="invalid_token"' },
  });
}

/** The caller a hosted agent's token acts as: the agent's wallet, while its owner wants it running or paused. */
async function agentTokenCaller(ctx: Context, deps: Deps, token: string): Promise<Caller> {
  const claims = await verifiedAgentToken(ctx, deps.config.hostedAgents, token);
  const agent = await findHostedAgentStanding(deps.db, claims.agentId);
  if (!agent || agent.deletedAt !== null || agent.wallet !== claims.wallet.toLowerCase()) {
    throw agentTokenRefused(`hosted-agent token of an unknown or deleted agent ${claims.agentId}`);
  }
  if (agent.desiredState !== "running" && agent.desiredState !== "paused") {
    throw agentTokenRefused(`hosted agent ${agent.id} is stopped: its token acts again once its owner starts it`);
  }
  return { wallet: agent.wallet, keyId: null, via: "agent-token", agentId: agent.id };
}

/** The caller, or undefined when no credential was presented. Throws AuthFailure for a bad credential. */
export async function authenticate(ctx: Context, deps: Deps, acceptsSession: boolean): Promise<Caller | undefined> {
  const credential = presentedCredential(ctx);
  if (!credential) return undefined;
  const now = deps.clock.wallNow();
  if (API_KEY_PATTERN.test(credential)) {
    const key = await activeApiKey(deps, credential);
    if (!key) throw new AuthFailure("invalid or revoked API key");
    return { wallet: key.address, keyId: key.id, via: "api-key" };
  }
  if (AGENT_TOKEN_PATTERN.test(credential)) return agentTokenCaller(ctx, deps, credential);
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
