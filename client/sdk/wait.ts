/**
 * Following one task to a final state: the event stream when the service has one (the caller's own tasks), with a
 * read of the task as fallback and as the source of truth (every readIntervalMs, 10 s by default: the stream does
 * not carry other callers' tasks and older services have none).
 */
import type { MarketApi } from "./api";
import { isMarketError, MarketError } from "./errors";
import { subscribe } from "./events";
import type { TaskDetail, TaskState } from "./types";

export const FINAL_STATUSES: readonly string[] = ["completed", "cancelled", "expired"];

export interface WaitOptions {
  /** Stop when this holds (default: a final status: completed, cancelled, expired). */
  until?: (state: TaskState, detail: TaskDetail) => boolean;
  /** Give up after this long: MarketError WAIT_TIMEOUT (default: no limit). */
  timeoutMs?: number;
  /** Read the task this often (default 10 s, at least 2 s). */
  readIntervalMs?: number;
  signal?: AbortSignal;
  /** Called when the marketplace state changes, saying whether an event or a read saw it. */
  onChange?: (state: TaskState, via: "stream" | "read") => void;
}

export interface WaitResult {
  state: TaskState;
  detail: TaskDetail;
  via: "stream" | "read";
  /** The transaction of the last event about the task, when the stream gave one. */
  txHash: string | null;
}

export function waitForTask(api: MarketApi, taskHash: string, options: WaitOptions = {}): Promise<WaitResult> {
  const hash = taskHash.toLowerCase();
  const until = options.until ?? ((state: TaskState) => FINAL_STATUSES.includes(state.status));
  const interval = Math.max(options.readIntervalMs ?? 10_000, 2_000);
  return new Promise<WaitResult>((resolve, reject) => {
    let finished = false;
    let last: string | undefined;
    let txHash: string | null = null;
    const timers: NodeJS.Timeout[] = [];
    const sub = subscribe(api, async (event) => {
      if (event.data.taskHash?.toLowerCase() !== hash) return;
      txHash = event.data.txHash ?? txHash;
      await check("stream");
    });
    sub.done.catch(() => undefined); // no stream (404) or a key without one: the reads carry on
    const finish = (error: unknown, result?: WaitResult) => {
      if (finished) return;
      finished = true;
      timers.forEach(clearTimeout);
      options.signal?.removeEventListener("abort", onAbort);
      void sub.close();
      if (result) resolve(result);
      else reject(error);
    };
    const onAbort = () => finish(options.signal!.reason ?? new Error("aborted"));
    options.signal?.addEventListener("abort", onAbort, { once: true });
    async function check(via: "stream" | "read") {
      let detail: TaskDetail;
      try {
        detail = await api.task(hash);
      } catch (error) {
        if (isMarketError(error, "NOT_FOUND", "NOT_INDEXED_YET", "API_UNREACHABLE", "RATE_LIMIT")) return;
        return finish(error);
      }
      const state = detail.a2aState;
      if (!state || finished) return;
      if (state.status !== last) {
        last = state.status;
        options.onChange?.(state, via);
      }
      if (until(state, detail)) finish(undefined, { state, detail, via, txHash });
    }
    const read = () => {
      if (finished) return;
      void check("read").finally(() => {
        if (!finished) timers.push(setTimeout(read, interval));
      });
    };
    if (options.timeoutMs !== undefined) {
      timers.push(
        setTimeout(
          () => finish(new MarketError("WAIT_TIMEOUT", `task ${hash} did not reach the awaited state in time`)),
          options.timeoutMs,
        ),
      );
    }
    if (options.signal?.aborted) onAbort();
    else read();
  });
}
