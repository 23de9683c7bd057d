/**
 * The spec's limits. Fixed 60-second windows per IP (every request; and posting requests whose key failed
 * authentication), per hosted agent (every request with its token, instead of its IP's window: 300 a minute), and continuously refilled token buckets for posting with a valid key: per wallet per family
 * (uploads, task builds, task listings) and per IP across posting routes. A bulk call takes one token per item.
 * Over a limit: 429 RATE_LIMIT with Retry-After (seconds) and RateLimit-Policy (`<limit>;w=<window seconds>`).
 */
import type { Context, Middleware } from "koa";
import { AppError } from "../../errors";
import type { HostedAgentsConfig, LimitsConfig } from "../../config";
import { AGENT_TOKEN_PATTERN } from "../../domain/agents/tokens";
import { presentedCredential, verifiedAgentToken } from "./auth";
import type { LimitStore } from "../../limits/store";
import type { PostingFamily } from "../route";

const FAMILY_NAMES: Record<PostingFamily, string> = {
  uploads: "uploads",
  builds: "task builds",
  listings: "task listings",
};

const BUCKET_REFILL_MS = 60_000;

function tooMany(message: string, retryAfterMs: number, limit: number, windowMs: number): AppError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new AppError({
    code: "RATE_LIMIT",
    message,
    details: { retryAfterSeconds: seconds },
    headers: { "Retry-After": String(seconds), "RateLimit-Policy": policy(limit, windowMs) },
  });
}

/** The RateLimit-Policy header's value: `<limit>;w=<window seconds>`. */
const policy = (limit: number, windowMs: number) => `${limit};w=${Math.round(windowMs / 1000)}`;

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
    await countRequests(store, limits, ctx.ip, agentId, 1);
    await next();
  };
}

/**
 * Counts `count` requests in the window of a request from `ip` (or bearing hosted agent `agentId`'s valid token):
 * RATE_LIMIT over it. The request itself is counted by ipWindowLimit; a JSON-RPC batch counts its further items here.
 */
export async function countRequests(
  store: LimitStore,
  limits: LimitsConfig,
  ip: string,
  agentId: string | undefined,
  count: number,
): Promise<void> {
  const agent = agentId !== undefined;
  const limit = agent ? limits.agentPerWindow : limits.ipPerWindow;
  const hit = await store.hitWindow(agent ? `agent:${agentId}` : `ip:${ip}`, limits.windowMs, count);
  if (hit.count > limit) {
    const who = agent ? `hosted agent ${agentId}` : "this address";
    throw tooMany(
      `too many requests from ${who}: retry in ${Math.ceil(hit.resetInMs / 1000)} s`,
      hit.resetInMs,
      limit,
      limits.windowMs,
    );
  }
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

/**
 * Takes `items` tokens from the wallet's family bucket and from the IP's posting bucket, from both or from neither:
 * a refused request costs nothing. Refused: the bucket with the longer wait answers (the wallet's when equal).
 */
export async function takePostingTokens(
  ctx: Context,
  store: LimitStore,
  limits: LimitsConfig,
  wallet: string,
  family: PostingFamily,
  items: number,
): Promise<void> {
  const cost = Math.max(1, items);
  const [walletTake, ipTake] = await store.take(
    [
      { key: `wallet:${wallet}:${family}`, capacity: limits.walletFamilyPerMinute, refillMs: BUCKET_REFILL_MS },
      { key: `postip:${ctx.ip}`, capacity: limits.ipPostingPerMinute, refillMs: BUCKET_REFILL_MS },
    ],
    cost,
  );
  if (!walletTake.ok && walletTake.retryAfterMs >= ipTake.retryAfterMs) {
    throw tooMany(
      `rate limit for ${FAMILY_NAMES[family]} exhausted for this wallet: ${cost} needed, retry in ${Math.ceil(walletTake.retryAfterMs / 1000)} s`,
      walletTake.retryAfterMs,
      limits.walletFamilyPerMinute,
      BUCKET_REFILL_MS,
    );
  }
  if (!ipTake.ok) {
    throw tooMany(
      `rate limit for posting (${FAMILY_NAMES[family]}) exhausted for this address: ${cost} needed, retry in ${Math.ceil(ipTake.retryAfterMs / 1000)} s`,
      ipTake.retryAfterMs,
      limits.ipPostingPerMinute,
      BUCKET_REFILL_MS,
    );
  }
}
