/**
 * Counters behind the rate limits: fixed windows and continuously refilled token buckets. In memory by default; in
 * Redis when REDIS_URL is set, so several API processes share one budget. Both implement the same interface and are
 * atomic: a window hit per key, a take across all the buckets it names (Redis through Lua scripts, on the Redis
 * server's clock).
 */
import Redis from "ioredis";

export interface WindowHit {
  /** Requests counted in the current window, this one included. */
  count: number;
  /** Milliseconds until the window resets. */
  resetInMs: number;
}

export interface BucketTake {
  /** Whether this bucket held `cost` tokens. */
  ok: boolean;
  /** Tokens left after the take (or before, when the take was refused). */
  remaining: number;
  /** Milliseconds until `cost` tokens are available again in this bucket (0 when it held them). */
  retryAfterMs: number;
}

/** A token bucket of `capacity` tokens, refilled continuously at `capacity` per `refillMs`. */
export interface Bucket {
  key: string;
  capacity: number;
  refillMs: number;
}

export interface LimitStore {
  /** Counts a hit (or `count` hits: a batch's further items) in the fixed window that contains now. */
  hitWindow(key: string, windowMs: number, count?: number): Promise<WindowHit>;
  /** Reads the current window without counting. */
  peekWindow(key: string, windowMs: number): Promise<WindowHit>;
  /**
   * Takes `cost` tokens from every bucket if each holds them, and from none otherwise (a refused request costs
   * nothing). One result per bucket, in order; the take happened when every result is ok.
   */
  take(buckets: readonly Bucket[], cost: number): Promise<BucketTake[]>;
  close(): Promise<void>;
}

function windowStart(now: number, windowMs: number) {
  return Math.floor(now / windowMs) * windowMs;
}

export class MemoryLimitStore implements LimitStore {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private readonly buckets = new Map<string, { tokens: number; at: number; capacity: number; refillMs: number }>();
  private sweeps = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async hitWindow(key: string, windowMs: number, count = 1): Promise<WindowHit> {
    return this.window(key, windowMs, count);
  }

  async peekWindow(key: string, windowMs: number): Promise<WindowHit> {
    return this.window(key, windowMs, 0);
  }

  private window(key: string, windowMs: number, add: number): WindowHit {
    const now = this.now();
    const start = windowStart(now, windowMs);
    let entry = this.windows.get(key);
    if (!entry || entry.start !== start) {
      entry = { start, count: 0 };
      this.windows.set(key, entry);
    }
    entry.count += add;
    if (++this.sweeps % 1000 === 0) this.sweep(now, windowMs);
    return { count: entry.count, resetInMs: start + windowMs - now };
  }

  async take(buckets: readonly Bucket[], cost: number): Promise<BucketTake[]> {
    const now = this.now();
    const levels = buckets.map((b) => {
      const entry = this.buckets.get(b.key);
      return entry ? Math.min(b.capacity, entry.tokens + ((now - entry.at) * b.capacity) / b.refillMs) : b.capacity;
    });
    const ok = levels.every((tokens) => tokens >= cost);
    buckets.forEach((b, i) =>
      this.buckets.set(b.key, {
        tokens: ok ? levels[i] - cost : levels[i],
        at: now,
        capacity: b.capacity,
        refillMs: b.refillMs,
      }),
    );
    if (++this.sweeps % 1000 === 0) this.sweepBuckets(now);
    return buckets.map((b, i) => {
      const held = levels[i] >= cost;
      return {
        ok: held,
        remaining: ok ? levels[i] - cost : levels[i],
        retryAfterMs: held ? 0 : Math.ceil(((cost - levels[i]) * b.refillMs) / b.capacity),
      };
    });
  }

  /** Drops buckets that have refilled to capacity: an absent bucket is a full one. */
  private sweepBuckets(now: number) {
    for (const [key, e] of this.buckets) {
      if (e.tokens + ((now - e.at) * e.capacity) / e.refillMs >= e.capacity) this.buckets.delete(key);
    }
  }

  /** Drops windows that ended; keeps memory bounded by the number of active clients. */
  private sweep(now: number, windowMs: number) {
    for (const [key, entry] of this.windows) if (entry.start + windowMs <= now) this.windows.delete(key);
  }

  async close() {}
}

// Counters live in Redis and take their time from the Redis server, so every API process agrees on the window and
// on the refill whatever its own clock. Lua numbers reach Redis as strings of at most 14 significant digits: exact
// for millisecond times until the year 5138.

// Window state in a hash {start, count}; a hit in a later window starts the count again. The key expires at the end
// of its window.
const HIT_WINDOW = `
local windowMs = tonumber(ARGV[1])
local add = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local start = now - (now % windowMs)
local state = redis.call('HMGET', KEYS[1], 'start', 'count')
local count = 0
if tonumber(state[1]) == start then count = tonumber(state[2]) or 0 end
local reset = start + windowMs - now
if add > 0 then
  count = count + add
  redis.call('HSET', KEYS[1], 'start', tostring(start), 'count', tostring(count))
  redis.call('PEXPIRE', KEYS[1], reset)
end
return {count, reset}`;

// Bucket state in a hash {tokens, at} per key. ARGV: cost, then capacity and refill (ms) of each key in order. Every
// bucket is refilled first; the cost is taken from all of them only when all hold it. Replies ok (1 or 0), then
// tokens (as a string: fractional) and retry (ms) per key.
const TAKE = `
local cost = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local levels = {}
local ok = 1
for i, key in ipairs(KEYS) do
  local capacity = tonumber(ARGV[i * 2])
  local refill = tonumber(ARGV[i * 2 + 1])
  local state = redis.call('HMGET', key, 'tokens', 'at')
  local tokens = tonumber(state[1]) or capacity
  local at = tonumber(state[2]) or now
  tokens = math.min(capacity, tokens + math.max(0, now - at) * capacity / refill)
  levels[i] = tokens
  if tokens < cost then ok = 0 end
end
local out = {ok}
for i, key in ipairs(KEYS) do
  local capacity = tonumber(ARGV[i * 2])
  local refill = tonumber(ARGV[i * 2 + 1])
  local tokens = levels[i]
  local retry = 0
  if tokens < cost then retry = math.ceil((cost - tokens) * refill / capacity) end
  if ok == 1 then tokens = tokens - cost end
  redis.call('HSET', key, 'tokens', tostring(tokens), 'at', tostring(now))
  redis.call('PEXPIRE', key, refill)
  out[#out + 1] = tostring(tokens)
  out[#out + 1] = retry
end
return out`;

export class RedisLimitStore implements LimitStore {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix = "rl:",
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
  }

  async hitWindow(key: string, windowMs: number, count = 1): Promise<WindowHit> {
    return this.window(key, windowMs, count);
  }

  async peekWindow(key: string, windowMs: number): Promise<WindowHit> {
    return this.window(key, windowMs, 0);
  }

  private async window(key: string, windowMs: number, add: number): Promise<WindowHit> {
    const [count, resetInMs] = (await this.redis.eval(HIT_WINDOW, 1, `${this.prefix}w:${key}`, windowMs, add)) as [
      number,
      number,
    ];
    return { count, resetInMs };
  }

  async take(buckets: readonly Bucket[], cost: number): Promise<BucketTake[]> {
    const keys = buckets.map((b) => `${this.prefix}b:${b.key}`);
    const args = buckets.flatMap((b) => [b.capacity, b.refillMs]);
    const reply = (await this.redis.eval(TAKE, keys.length, ...keys, cost, ...args)) as [
      number,
      ...(string | number)[],
    ];
    return buckets.map((_, i) => {
      const retryAfterMs = Number(reply[2 + i * 2]);
      return { ok: retryAfterMs === 0, remaining: Number(reply[1 + i * 2]), retryAfterMs };
    });
  }

  async close() {
    await this.redis.quit();
  }
}

/**
 * The Redis store when `redisUrl` is set (time from the Redis server, so every process agrees); otherwise the memory
 * store on `nowMs` (the service's wall clock, which tests move instead of sleeping).
 */
export function createLimitStore(
  redisUrl: string | undefined,
  prefix?: string,
  nowMs: () => number = Date.now,
): LimitStore {
  return redisUrl ? new RedisLimitStore(redisUrl, prefix) : new MemoryLimitStore(nowMs);
}
