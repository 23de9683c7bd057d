/**
 * The service's two clocks, injected through `Deps.clock` so that tests pin them instead of sleeping:
 * - chain time (`chainNow`), which every deadline of the escrow is measured in;
 * - wall time (`wallNow`, `wallNowMs`), for what the service itself times: sign-in nonces, reservations, offer windows,
 *   accept locks (a chain that mines no block has a frozen clock, so those cannot use chain time).
 */
import type { Provider } from "ethers";

export interface Clock {
  /** Unix seconds of the chain's latest block; the wall clock when there is no chain or it cannot be read. */
  chainNow(): Promise<number>;
  /**
   * Chain time read from the chain now, past any cache: a refusal that rests on time ("the deadline is not reached")
   * re-reads it first, so a cached value a second old never refuses what the chain already allows.
   */
  chainNowFresh(): Promise<number>;
  /** Unix seconds on this machine. */
  wallNow(): number;
  /** Unix milliseconds on this machine. */
  wallNowMs(): number;
}

export const wallClock = {
  wallNow: () => Math.floor(Date.now() / 1000),
  wallNowMs: () => Date.now(),
} as const;

/**
 * Chain time read from `provider`, cached for `cacheMs` and read once at a time (concurrent requests share one read).
 * A cache of 0 reads the chain on every call (tests move the chain's time and expect the next request to see it).
 */
export function chainClock(provider: Provider | undefined, cacheMs = 1000): Clock {
  let cached = { at: 0, value: 0 };
  let reading: Promise<number> | undefined;
  const read = async () => {
    const wall = wallClock.wallNow();
    try {
      const block = await provider!.getBlock("latest");
      cached = { at: Date.now(), value: block ? block.timestamp : wall };
    } catch {
      cached = { at: Date.now(), value: wall };
    } finally {
      reading = undefined;
    }
    return cached.value;
  };
  return {
    ...wallClock,
    async chainNow() {
      if (!provider) return wallClock.wallNow();
      if (cacheMs <= 0) return read();
      if (Date.now() - cached.at < cacheMs) return cached.value;
      if (cached.at > 0 && reading) return cached.value; // a refresh is under way: the last value is recent enough
      return (reading ??= read());
    },
    chainNowFresh: () => (provider ? read() : Promise.resolve(wallClock.wallNow())),
  };
}

/** A clock set by hand (unit tests): `set` moves both clocks; `advance` moves them by seconds. */
export function manualClock(start: number): Clock & { set(seconds: number): void; advance(seconds: number): void } {
  let now = start;
  return {
    chainNow: async () => now,
    chainNowFresh: async () => now,
    wallNow: () => now,
    wallNowMs: () => now * 1000,
    set: (seconds) => void (now = seconds),
    advance: (seconds) => void (now += seconds),
  };
}

/**
 * The timers of the indexer's retries, failure waits and writer lock, injected (`IndexerOptions.timers`) so that tests
 * move time and watch the waits instead of sleeping through them.
 */
export interface Timers {
  /** Unix milliseconds: what a writer lock's lease expiry is measured in. */
  now(): number;
  /** Resolves after `ms`, or as soon as `signal` aborts (at once when it already has). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `tick` every `ms` until the returned function is called; a tick's promise is awaited by test timers only.
   * Never keeps the process alive.
   */
  every(ms: number, tick: () => unknown): () => void;
}

export const realTimers: Timers = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
    }),
  every: (ms, tick) => {
    const timer = setInterval(tick, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};
