/**
 * The posting token buckets (spec: uploads, task builds, task listings), taken by every adapter through invoke: per
 * wallet per family, and per client address across posting operations. A bulk call takes one token per item. And the
 * per-request window (per IP, or per hosted agent), which REST counts per request and MCP per JSON-RPC batch item.
 * Over a limit: 429 RATE_LIMIT with Retry-After (seconds) and RateLimit-Policy (`<limit>;w=<window seconds>`).
 */
import { AppError } from "../errors";
import type { LimitsConfig } from "../config";
import type { LimitStore } from "../limits/store";
import type { PostingFamily } from "./operation";

const FAMILY_NAMES: Record<PostingFamily, string> = {
  uploads: "uploads",
  builds: "task builds",
  listings: "task listings",
};

const BUCKET_REFILL_MS = 60_000;

export function tooMany(message: string, retryAfterMs: number, limit: number, windowMs: number): AppError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new AppError({
    code: "RATE_LIMIT",
    message,
    details: { retryAfterSeconds: seconds },
    headers: { "Retry-After": String(seconds), "RateLimit-Policy": policy(limit, windowMs) },
  });
}

/** The RateLimit-Policy header's value: `<limit>;w=<window seconds>`. */
export const policy = (limit: number, windowMs: number) => `${limit};w=${Math.round(windowMs / 1000)}`;

/**
 * Takes `items` tokens from the wallet's family bucket and from the IP's posting bucket, from both or from neither:
 * a refused request costs nothing. Refused: the bucket with the longer wait answers (the wallet's when equal), and
 * the refusing family is left in `client.state.rateLimited` for the request log and the metrics.
 */
export async function takePostingTokens(
  client: { ip: string; state?: Record<string, unknown> },
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
      { key: `postip:${client.ip}`, capacity: limits.ipPostingPerMinute, refillMs: BUCKET_REFILL_MS },
    ],
    cost,
  );
  if (!walletTake.ok && walletTake.retryAfterMs >= ipTake.retryAfterMs) {
    if (client.state) client.state.rateLimited = `wallet_${family}`;
    throw tooMany(
      `rate limit for ${FAMILY_NAMES[family]} exhausted for this wallet: ${cost} needed, retry in ${Math.ceil(walletTake.retryAfterMs / 1000)} s`,
      walletTake.retryAfterMs,
      limits.walletFamilyPerMinute,
      BUCKET_REFILL_MS,
    );
  }
  if (!ipTake.ok) {
    if (client.state) client.state.rateLimited = `posting_ip_${family}`;
    throw tooMany(
      `rate limit for posting (${FAMILY_NAMES[family]}) exhausted for this address: ${cost} needed, retry in ${Math.ceil(ipTake.retryAfterMs / 1000)} s`,
      ipTake.retryAfterMs,
      limits.ipPostingPerMinute,
      BUCKET_REFILL_MS,
    );
  }
}

/**
 * Counts `count` requests in the window of a request from `client.ip` (or bearing hosted agent `agentId`'s valid
 * token, which counts against the agent's own window instead): RATE_LIMIT over it, the refusing window left in
 * `client.state.rateLimited`. The REST frame counts each request; a JSON-RPC batch counts its further items here.
 */
export async function countRequests(
  store: LimitStore,
  limits: LimitsConfig,
  client: { ip: string; state?: Record<string, unknown> },
  agentId: string | undefined,
  count: number,
): Promise<void> {
  const agent = agentId !== undefined;
  const limit = agent ? limits.agentPerWindow : limits.ipPerWindow;
  const hit = await store.hitWindow(agent ? `agent:${agentId}` : `ip:${client.ip}`, limits.windowMs, count);
  if (hit.count > limit) {
    if (client.state) client.state.rateLimited = agent ? "agent" : "ip";
    const who = agent ? `hosted agent ${agentId}` : "this address";
    throw tooMany(
      `too many requests from ${who}: retry in ${Math.ceil(hit.resetInMs / 1000)} s`,
      hit.resetInMs,
      limit,
      limits.windowMs,
    );
  }
}
