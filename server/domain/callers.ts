/**
 * Who is calling: a credential (an API key `sk_...`, a sign-in session `ses_...` where the operation accepts one, or a
 * hosted agent's token, a JWT) resolved to the wallet it acts as. Every adapter hands the credential its wire carries
 * to `callerFor`; missing, malformed, unknown or revoked credentials answer 401 UNAUTHORIZED.
 *
 * A hosted agent's token must verify (BAD_TOKEN; NO_JWT_SECRET without a secret) and name an agent that may act
 * (`hostedAgentMayAct`) and has the token's wallet (BAD_TOKEN otherwise). It acts as the agent's wallet.
 */
import { decodeJwt } from "jose";
import { AppError } from "../errors";
import type { HostedAgentsConfig } from "../config";
import { AGENT_TOKEN_PATTERN, verifyAgentToken, type AgentTokenClaims } from "./agents/tokens";
import { ACTING_DESIRED_STATES, findHostedAgentStanding } from "../db/repositories/hostedAgents";
import { findSessionAddress } from "../db/repositories/sessions";
import { API_KEY_PATTERN, SESSION_PATTERN, hashSecret } from "./credentials";
import { activeApiKey, keyExpired } from "./accounts";
import { ACCESS_TOKEN_PATTERN, accessTokenGrant } from "./oauth";
import type { Deps } from "./deps";

export interface Caller {
  /** The wallet the API key acts as (lower-case); a hosted agent's token acts as the agent's own wallet. */
  wallet: string;
  keyId: number | null;
  /** How the caller authenticated. */
  via: "api-key" | "session" | "agent-token" | "oauth";
  /** With an OAuth access token (MCP only): the scopes the owner granted, and the client holding it. */
  scopes?: readonly string[];
  oauthClientId?: string;
  /** With a hosted agent's token: the agent (its requests count against the agent's own window). */
  agentId?: string;
}

/**
 * A hosted agent may act (its token is honoured, a host runs it) while its owner wants it running or paused and it is
 * not deleted. The agent host, the token check and the lease queries (db/repositories, through
 * ACTING_DESIRED_STATES) all ask this.
 */
export function hostedAgentMayAct(agent: { desiredState: string; deleted: boolean }): boolean {
  return !agent.deleted && (ACTING_DESIRED_STATES as readonly string[]).includes(agent.desiredState);
}

export class AuthFailure extends AppError {
  constructor(message: string, extra: { reason?: string; details?: Record<string, unknown> } = {}) {
    super({ code: "UNAUTHORIZED", message, ...extra, headers: { "WWW-Authenticate": 'Bearer realm="api"' } });
  }
}

/** A verified token is trusted again for this long (never past its expiry): the rate limiter and auth both read it. */
export const VERIFIED_TOKEN_CACHE_MS = 5_000;
const VERIFIED_TOKEN_CACHE_SIZE = 1024;
/** Per configuration (so two APIs of one process with different secrets never share a verdict). */
const verifiedTokens = new WeakMap<object, Map<string, { claims: AgentTokenClaims; untilMs: number }>>();

/** What one request remembers of its credential, so its token is verified at most once per request. */
export interface RequestMemo {
  agentToken?: { token: string; config: object; claims: AgentTokenClaims };
}

/**
 * The claims of a hosted agent's token, verified (BAD_TOKEN, NO_JWT_SECRET) at most once per request (`memo`) and
 * then cached a few seconds (bounded by the token's own expiry).
 */
export async function verifiedAgentToken(
  memo: RequestMemo,
  config: Readonly<HostedAgentsConfig>,
  token: string,
): Promise<AgentTokenClaims> {
  if (memo.agentToken?.token === token && memo.agentToken.config === config) return memo.agentToken.claims;
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
  memo.agentToken = { token, config, claims };
  return claims;
}

function agentTokenRefused(message: string): AppError {
  return new AppError({
    code: "BAD_TOKEN",
    message,
    headers: { "WWW-Authenticate": 'Bearer realm="api", error="invalid_token"' },
  });
}

/** The caller a hosted agent's token acts as: the agent's wallet, while the agent may act. */
async function agentTokenCaller(deps: Deps, memo: RequestMemo, token: string): Promise<Caller> {
  const claims = await verifiedAgentToken(memo, deps.config.hostedAgents, token);
  const agent = await findHostedAgentStanding(deps.db, claims.agentId);
  if (!agent || agent.deletedAt !== null || agent.wallet !== claims.wallet.toLowerCase()) {
    throw agentTokenRefused(`hosted-agent token of an unknown or deleted agent ${claims.agentId}`);
  }
  if (!hostedAgentMayAct({ desiredState: agent.desiredState, deleted: false })) {
    throw agentTokenRefused(`hosted agent ${agent.id} is stopped: its token acts again once its owner starts it`);
  }
  return { wallet: agent.wallet, keyId: null, via: "agent-token", agentId: agent.id };
}

/**
 * The caller `credential` acts as, or undefined when none was presented. Throws AuthFailure for a bad credential
 * (a session only counts where `acceptsSession`).
 */
export async function callerFor(
  deps: Deps,
  credential: string | undefined,
  options: { acceptsSession: boolean; memo?: RequestMemo; acceptsOAuth?: boolean },
): Promise<Caller | undefined> {
  if (!credential) return undefined;
  const now = deps.clock.wallNow();
  if (API_KEY_PATTERN.test(credential)) {
    const key = await activeApiKey(deps, credential);
    if (!key) throw new AuthFailure("invalid or revoked API key");
    if (keyExpired(key, deps.clock.wallNowMs())) {
      const expiredAt = new Date(key.expiresAt! * 1000).toISOString();
      throw new AuthFailure(`the session expired: this web session key ended at ${expiredAt}; sign in again`, {
        reason: "SESSION_EXPIRED",
        details: { expiredAt },
      });
    }
    return { wallet: key.address, keyId: key.id, via: "api-key" };
  }
  if (AGENT_TOKEN_PATTERN.test(credential)) return agentTokenCaller(deps, options.memo ?? {}, credential);
  // OAuth access tokens are bound to the MCP resource (RFC 8707): only /mcp accepts them.
  if (options.acceptsOAuth && ACCESS_TOKEN_PATTERN.test(credential)) {
    const grant = await accessTokenGrant(deps, credential);
    if ("refused" in grant) throw new AuthFailure(grant.refused);
    return { wallet: grant.wallet, keyId: null, via: "oauth", scopes: grant.scopes, oauthClientId: grant.clientId };
  }
  if (options.acceptsSession && SESSION_PATTERN.test(credential)) {
    const address = await findSessionAddress(deps.db, hashSecret(credential), now);
    if (!address) throw new AuthFailure("invalid or expired session: sign in again");
    return { wallet: address, keyId: null, via: "session" };
  }
  throw new AuthFailure(
    options.acceptsSession
      ? "credential must be an API key (sk_ and 64 hex) or a session token (ses_ and 64 hex)"
      : "API key must be sk_ followed by 64 hex characters",
  );
}

/** The 401 for a call that presented no credential where one is required. */
export function missingCredential(acceptsSession: boolean): AppError {
  return new AuthFailure(
    acceptsSession
      ? "authentication required: send an API key or a session token as Authorization: Bearer <token>"
      : "API key required: send X-API-Key: <key> or Authorization: Bearer <key>",
  );
}
