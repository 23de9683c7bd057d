/**
 * Counters behind the rate limits: fixed windows and continuously refilled token buckets. In memory by default; in
 * Redis when REDIS_URL is set, so several API processes share one budget. Both implement the same interface and are
 * atomic per key (Redis through Lua scripts).
 */
import Redis from "ioredis";

export interface WindowHit {
  /** Requests counted in the current window, this one included. */
  count: number;
  /** Milliseconds until the window resets. */
  resetInMs: number;
}

export interface BucketTake {
  ok: boolean;
  /** Tokens left after the take (or before, when refused). */
  remaining: number;
  /** Milliseconds until `cost` tokens are available again (0 when ok). */
  retryAfterMs: number;
}

export interface LimitStore {
  /** Counts a hit in the fixed window that contains now. */
  hitWindow(key: string, windowMs: number): Promise<WindowHit>;
  /** Reads the current window without counting. */
  peekWindow(key: string, windowMs: number): Promise<WindowHit>;
  /** Takes `cost` tokens from a bucket of `capacity` refilled at `capacity` per `refillMs`, if it holds them. */
  take(key: string, cost: number, capacity: number, refillMs: number): Promise<BucketTake>;
  close(): Promise<void>;
}

function windowStart(now: number, windowMs: number) {
  return Math.floor(now / windowMs) * windowMs;
}

export class MemoryLimitStore implements LimitStore {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private sweeps = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async hitWindow(key: string, windowMs: number): Promise<WindowHit> {
    return this.window(key, windowMs, 1);
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

  async take(key: string, cost: number, capacity: number, refillMs: number): Promise<BucketTake> {
    const now = this.now();
    const entry = this.buckets.get(key) ?? { tokens: capacity, at: now };
    const tokens = Math.min(capacity, entry.tokens + ((now - entry.at) * capacity) / refillMs);
    if (tokens >= cost) {
      this.buckets.set(key, { tokens: tokens - cost, at: now });
      return { ok: true, remaining: tokens - cost, retryAfterMs: 0 };
    }
    this.buckets.set(key, { tokens, at: now });
    return { ok: false, remaining: tokens, retryAfterMs: Math.ceil(((cost - tokens) * refillMs) / capacity) };
  }

  /** Drops windows that ended; keeps memory bounded by the number of active clients. */
  private sweep(now: number, windowMs: number) {
    for (const [key, entry] of this.windows) if (entry.start + windowMs <= now) this.windows.delete(key);
  }

  async close() {}
}

const HIT_WINDOW = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
if count == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('PTTL', KEYS[1])}`;

// Bucket state in a hash {tokens, at}; time from the Redis server so every API process agrees.
const TAKE = `
local capacity = tonumber(ARGV[1])
local refill = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + (now - at) * capacity / refill)
local ok = 0
local retry = 0
if tokens >= cost then
  tokens = tokens - cost
  ok = 1
else
  retry = math.ceil((cost - tokens) * refill / capacity)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], refill * 2)
return {ok, tostring(tokens), retry}`;

export class RedisLimitStore implements LimitStore {
  private readonly redis: Redis;

  constructor(url: string, private readonly prefix = "rl:") {
    this.redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
  }

  async hitWindow(key: string, windowMs: number): Promise<WindowHit> {
    return this.window(key, windowMs, 1);
  }

  async peekWindow(key: string, windowMs: number): Promise<WindowHit> {
    return this.window(key, windowMs, 0);
  }

  private async window(key: string, windowMs: number, add: number): Promise<WindowHit> {
    const start = windowStart(Date.now(), windowMs);
    const [count, ttl] = (await this.redis.eval(HIT_WINDOW, 1, `${this.prefix}w:${key}:${start}`, windowMs, add)) as [
      number,
      number,
    ];
    return { count, resetInMs: ttl > 0 ? ttl : windowMs };
  }

  async take(key: string, cost: number, capacity: number, refillMs: number): Promise<BucketTake> {
    const [ok, tokens, retry] = (await this.redis.eval(TAKE, 1, `${this.prefix}b:${key}`, capacity, refillMs, cost)) as [
      number,
      string,
      number,
    ];
    return { ok: ok === 1, remaining: Number(tokens), retryAfterMs: retry };
  }

  async close() {
    await this.redis.quit();
  }
}

export function createLimitStore(redisUrl: string | undefined, prefix?: string): LimitStore {
  return redisUrl ? new RedisLimitStore(redisUrl, prefix) : new MemoryLimitStore();
}
