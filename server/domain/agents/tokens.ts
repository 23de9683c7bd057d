/**
 * Hosted agents' tokens: short-lived JWTs (HS256, AGENT_JWT_SECRET) the agent host issues to each running agent's
 * worker. A token acts as the agent's own wallet, counts against the agent's 300-requests-a-minute limit, and cannot
 * create or revoke API keys (DELEGATION_DISABLED). No secret configured (off the devnet): NO_JWT_SECRET. A token that
 * does not verify (signature, expiry, issuer, type): BAD_TOKEN.
 */
import { SignJWT, jwtVerify } from "jose";
import { AppError, fail } from "../../errors";
import type { HostedAgentsConfig } from "../../config";

const ISSUER = "escrow-market";
const AUDIENCE = "hosted-agent";

export interface AgentTokenClaims {
  agentId: string;
  /** The agent's own wallet (lower case): the wallet the token acts as. */
  wallet: string;
}

/** A JWT's shape (three base64url parts, the header starting `eyJ`): how a bearer credential is told from a key. */
export const AGENT_TOKEN_PATTERN = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The token secret; NO_JWT_SECRET (500) when this server has none (off the devnet without AGENT_JWT_SECRET). */
export function requireJwtSecret(config: Readonly<HostedAgentsConfig>): string {
  if (!config.jwtSecret) {
    return fail("NO_JWT_SECRET", "hosted agents need AGENT_JWT_SECRET (at least 32 characters) on this server");
  }
  return config.jwtSecret;
}

function secretOf(config: Readonly<HostedAgentsConfig>): Uint8Array {
  return new TextEncoder().encode(requireJwtSecret(config));
}

export async function issueAgentToken(
  config: Readonly<HostedAgentsConfig>,
  claims: AgentTokenClaims,
  nowSeconds = Math.floor(Date.now() / 1000),
): Promise<{ token: string; expiresAt: number }> {
  const expiresAt = nowSeconds + config.tokenTtlSeconds;
  const token = await new SignJWT({ wal: claims.wallet.toLowerCase() })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(claims.agentId)
    .setIssuedAt(nowSeconds)
    .setExpirationTime(expiresAt)
    .sign(secretOf(config));
  return { token, expiresAt };
}

/** The claims of a valid token; BAD_TOKEN (401) otherwise. */
export async function verifyAgentToken(config: Readonly<HostedAgentsConfig>, token: string): Promise<AgentTokenClaims> {
  const secret = secretOf(config);
  try {
    const { payload } = await jwtVerify(token, secret, { issuer: ISSUER, audience: AUDIENCE, algorithms: ["HS256"] });
    if (typeof payload.sub !== "string" || typeof payload.wal !== "string") throw new Error("claims missing");
    return { agentId: payload.sub, wallet: payload.wal };
  } catch (cause) {
    throw new AppError({
      code: "BAD_TOKEN",
      message: "invalid or expired hosted-agent token: the agent host issues a new one",
      cause,
      headers: { "WWW-Authenticate": 'Bearer realm="api", error="invalid_token"' },
    });
  }
}
