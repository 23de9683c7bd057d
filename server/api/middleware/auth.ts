/**
 * The credential a request presents: `X-API-Key: sk_...` or `Authorization: Bearer <credential>` (an API key, a
 * sign-in session `ses_...` on account routes, or a hosted agent's token `eyJ...`). What it acts as is decided in the
 * domain (server/domain/callers.ts); routes with `refusesAgentTokens` answer a hosted agent's token
 * DELEGATION_DISABLED (server/operations/invoke.ts).
 */
import type { Context } from "koa";
import type { HostedAgentsConfig } from "../../config";
import type { AgentTokenClaims } from "../../domain/agents/tokens";
import {
  AuthFailure,
  callerFor,
  missingCredential,
  verifiedAgentToken as verifiedAgentTokenOf,
  type Caller,
  type RequestMemo,
} from "../../domain/callers";
import { presentedCredential } from "../../protocols/http/credential";

export { AuthFailure, missingCredential, presentedCredential };

/** The claims of a hosted agent's token, verified at most once per request (the rate limiter and auth both ask). */
export function verifiedAgentToken(
  ctx: Context,
  config: Readonly<HostedAgentsConfig>,
  token: string,
): Promise<AgentTokenClaims> {
  return verifiedAgentTokenOf(ctx.state as RequestMemo, config, token);
}

/** The caller, or undefined when no credential was presented. Throws AuthFailure for a bad credential. */
export function authenticate(
  ctx: Context,
  deps: Parameters<typeof callerFor>[0],
  acceptsSession: boolean,
): Promise<Caller | undefined> {
  return callerFor(deps, presentedCredential(ctx), { acceptsSession, memo: ctx.state as RequestMemo });
}
