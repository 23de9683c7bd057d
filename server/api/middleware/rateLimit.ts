/**
 * The spec's limits. Fixed 60-second windows per IP (every request; and posting requests whose key failed
 * authentication), per hosted agent (every request with its token, instead of its IP's window: 300 a minute), and continuously refilled token buckets for posting with a valid key: per wallet per family
 * (uploads, task builds, task listings) and per IP across posting routes. A bulk call takes one token per item.
 * Over a limit: 429 RATE_LIMIT with Retry-After (seconds) and RateLimit-Policy (`<limit>;w=<window seconds>`); the
 * refusing limit's family is left in `ctx.state.rateLimited` for the request log and the metrics.
 */
import type { Context, Middleware } from "koa";
import type { HostedAgentsConfig, LimitsConfig } from "../../config";
import { AGENT_TOKEN_PATTERN } from "../../domain/agents/tokens";
import { presentedCredential, verifiedAgentToken } from "./auth";
import type { LimitStore } from "../../limits/store";
import { countRequests, policy, tooMany } from "../../operations/postingLimits";

/**
 * Every request, by IP: `ipPerWindow` per fixed window. A request bearing a valid hosted agent's token counts against
 * the agent's own window instead (`agentPerWindow`, key `agent:<id>`); an invalid token counts against the IP's.
 */
export function ipWindowLimit(
  store: LimitStore,
  limits: LimitsConfig,
  hostedAgents?: Readonly<HostedAgentsConfig>,
): Middleware {
  // The header's two values, written once: every request sends one.
  const ipPolicy = policy(limits.ipPerWindow, limits.windowMs);
  const agentPolicy = policy(limits.agentPerWindow, limits.windowMs);
  return async (ctx, next) => {
    const agentId = hostedAgents ? await tokenAgent(ctx, hostedAgents) : undefined;
    ctx.set("RateLimit-Policy", agentId !== undefined ? agentPolicy : ipPolicy);
    await countRequests(store, limits, ctx, agentId, 1);
    await next();
  };
}

/** The agent of a valid hosted agent's token the request bears, if it bears one (auth answers the invalid ones). */
async function tokenAgent(ctx: Context, hostedAgents: Readonly<HostedAgentsConfig>): Promise<string | undefined> {
  const credential = presentedCredential(ctx);
  if (!credential || !AGENT_TOKEN_PATTERN.test(credential)) return undefined;
  try {
    return (await verifiedAgentToken(ctx, hostedAgents, credential)).agentId;
  } catch {
    return undefined;
  }
}

/** Refuses a posting request from an IP already over its failed-authentication budget. */
export async function checkFailedAuthBudget(ctx: Context, store: LimitStore, limits: LimitsConfig): Promise<void> {
  const hit = await store.peekWindow(`authfail:${ctx.ip}`, limits.windowMs);
  if (hit.count >= limits.failedAuthPerWindow) {
    ctx.state.rateLimited = "failed_auth";
    throw tooMany(
      `too many posting requests with failed authentication from this address: retry in ${Math.ceil(hit.resetInMs / 1000)} s`,
      hit.resetInMs,
      limits.failedAuthPerWindow,
      limits.windowMs,
    );
  }
}

export async function countFailedAuth(ctx: Context, store: LimitStore, limits: LimitsConfig): Promise<void> {
  await store.hitWindow(`authfail:${ctx.ip}`, limits.windowMs);
}
