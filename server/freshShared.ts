/**
 * One read shared by concurrent callers without ever answering a value read before the caller asked. The chain head's
 * number (`chain/head.ts`, for the allowance a build answers) and the database's data version (`db/repositories/
 * dataVersion.ts`, the key of the reads' caches) both use it: a value read before the caller asked may miss a block
 * or a commit the caller has already seen, which is the stale answer each of them rules out.
 *
 * The rule: a caller joins only a read that starts after it asked. The first caller starts one; a caller arriving
 * while it runs waits for the next read, which starts once the running one settles and serves every caller that
 * queued meanwhile. So any number of concurrent callers cost one read in flight plus at most one queued behind it.
 * A failed read fails the callers that shared it; the next caller starts a new one.
 *
 * Leaf module: it imports nothing of the server, so both lowest layers (db and chain) may use it.
 */

export interface FreshSharedOptions {
  /**
   * Reads start at least this many milliseconds apart (default 0). A later start only delays the callers, it never
   * makes an answer older than their asking; it bounds the reads a second when the source answers faster than that.
   */
  minIntervalMs?: number;
  /**
   * When a read starts once it may: "now" (default: the first caller's read starts in its own call) or "loopTurn"
   * (in the event loop's check phase, `setImmediate`, so every caller whose code ran in this turn of the loop shares
   * one read even when none is running).
   */
  start?: "now" | "loopTurn";
}

/**
 * `read` shared by concurrent callers under the rule above.
 *
 * @example const head = freshShared(blockNumberReader(provider), { minIntervalMs: 2 }); const block = await head();
 */
export function freshShared<T>(read: () => Promise<T>, options: FreshSharedOptions = {}): () => Promise<T> {
  const minIntervalMs = options.minIntervalMs ?? 0;
  const startNow = (options.start ?? "now") === "now";
  /** The read in flight; undefined from the moment it settles, before its callers see its answer. */
  let running: Promise<T> | undefined;
  /** The read the callers who asked since the last start will share; undefined when none is waiting. */
  let next: Promise<T> | undefined;
  let lastStart = -Infinity;

  const start = (): Promise<T> => {
    next = undefined; // a caller from now on asked after this read began: it waits for the one after
    lastStart = performance.now();
    const reading: Promise<T> = read().finally(() => {
      if (running === reading) running = undefined;
    });
    running = reading;
    return reading;
  };
  const ignore = () => undefined;
  const untilSpaced = (): Promise<void> | undefined => {
    const wait = lastStart + minIntervalMs - performance.now();
    return wait > 0 ? new Promise<void>((resolve) => setTimeout(resolve, wait)) : undefined;
  };
  const untilCheckPhase = () => new Promise<void>((resolve) => setImmediate(resolve));

  return () => {
    if (next) return next;
    if (startNow && !running && performance.now() - lastStart >= minIntervalMs) return start();
    next = (running ?? Promise.resolve())
      .then(ignore, ignore)
      .then(untilSpaced)
      .then(startNow ? undefined : untilCheckPhase)
      // Nothing starts a read while callers wait here, so the one started now began after every one of them asked.
      .then(start);
    return next;
  };
}
