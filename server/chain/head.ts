/**
 * The chain head's block number, read fresh for each caller but shared between concurrent callers: a caller joins
 * only a read that starts after it asked, so the number it gets is never older than a read of its own would have been,
 * while any number of concurrent callers cost one `eth_blockNumber` in flight plus at most one queued behind it.
 */
import type { Provider } from "ethers";

/** A provider that also takes raw JSON-RPC (ethers' JsonRpcApiProvider, Hardhat's provider). */
export interface RawRpc {
  send(method: string, params: unknown[]): Promise<unknown>;
}

/** `provider` as a raw JSON-RPC sender when it is one, else undefined. */
export function rawRpcOf(provider: Provider): RawRpc | undefined {
  const send = (provider as Partial<RawRpc>).send;
  return typeof send === "function" ? (provider as unknown as RawRpc) : undefined;
}

/**
 * Reads the head's number with a raw `eth_blockNumber` when the provider takes one: ethers' `getBlockNumber` answers
 * from its own cache for up to a quarter of a second.
 */
export function blockNumberReader(provider: Provider): () => Promise<number> {
  const rpc = rawRpcOf(provider);
  if (!rpc) return () => provider.getBlockNumber();
  return async () => Number(await rpc.send("eth_blockNumber", []));
}

/**
 * `read` shared by concurrent callers without ever answering a value read before the caller asked: the first caller
 * starts a read; a caller arriving while it runs waits for the next read, which starts when the running one settles
 * and serves every caller that queued meanwhile. A failed read fails the callers that shared it, and the next caller
 * starts a new one. Reads start at least `minIntervalMs` apart: a later start only delays the callers, it never makes
 * an answer older than their asking, and it bounds the reads a second when the source answers faster than that (an
 * in-process chain answers `eth_blockNumber` in a fraction of a millisecond, for about 150 µs of CPU each).
 *
 * @example const head = freshShared(blockNumberReader(provider), 2); const block = await head();
 */
export function freshShared<T>(read: () => Promise<T>, minIntervalMs = 0): () => Promise<T> {
  let running: Promise<T> | undefined;
  let queued: Promise<T> | undefined;
  let lastStart = -Infinity;
  const start = () => {
    lastStart = performance.now();
    const reading: Promise<T> = read().finally(() => {
      if (running === reading) running = undefined;
    });
    running = reading;
    return reading;
  };
  const settled = () => undefined;
  const spaced = () => {
    const wait = lastStart + minIntervalMs - performance.now();
    return wait > 0 ? new Promise<void>((resolve) => setTimeout(resolve, wait)) : undefined;
  };
  return () => {
    if (!running && !queued && performance.now() - lastStart >= minIntervalMs) return start();
    queued ??= (running ?? Promise.resolve())
      .then(settled, settled)
      .then(spaced)
      .then(() => {
        queued = undefined;
        // Nothing starts a read while callers are queued, so one running now began after they asked: share it.
        return running ?? start();
      });
    return queued;
  };
}
