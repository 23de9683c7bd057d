/**
 * The push stream `GET /api/v1/events` (Server-Sent Events): `id`, `event` and one-line JSON `data` per event,
 * `: keep-alive` comments as heartbeat. The subscription resumes with `Last-Event-ID` after a disconnect, backing off
 * exponentially (with jitter) between attempts; a 429 waits for Retry-After. A server without the stream answers
 * 404: the subscription ends with ApiError NOT_FOUND so the caller can fall back to polling.
 */
import type { MarketApi } from "./api";
import type { MarketEvent } from "./types";

export interface SubscribeOptions {
  /** Resume after this event id. */
  lastEventId?: string;
  /** First reconnect delay (default 1 s), doubled per failed attempt up to maxDelayMs (default 30 s). */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** No byte (event or heartbeat) for this long means the connection is dead: reconnect (default 45 s). */
  idleTimeoutMs?: number;
  /** Called when a connection is open (200 text/event-stream). */
  onOpen?: () => void;
  /** Called on each failed connection before the back-off (the subscription keeps trying). */
  onError?: (error: unknown, retryInMs: number) => void;
}

export interface EventSubscription {
  /** The id of the last event handled (to resume a later subscription). */
  readonly lastEventId: string | undefined;
  /** Settles when the subscription ends: resolves on close(), rejects on a final error (404, 401, 403). */
  readonly done: Promise<void>;
  close(): Promise<void>;
}

/** Subscribes to the caller's events; `handler` runs for each event in order (the next waits for it). */
export function subscribe(
  api: MarketApi,
  handler: (event: MarketEvent) => void | Promise<void>,
  options: SubscribeOptions = {},
): EventSubscription {
  void api;
  void handler;
  void options;
  throw new Error("not implemented yet");
}

/** Parses SSE text incrementally: feed chunks, get complete events (comments and retry lines are skipped). */
export class SseParser {
  feed(chunk: string): { id?: string; event?: string; data: string }[] {
    void chunk;
    throw new Error("not implemented yet");
  }
}
