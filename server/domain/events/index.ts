/** Push (the SSE event stream and webhooks): built with the dependency container, started and stopped with the API. */
import type { Deps } from "../deps";
import { fail } from "../../errors";
import { findExecutor } from "../../db/repositories/executors";
import { EventHub, type EventSink, type Subscription } from "./hub";
import { WebhookDispatcher } from "./webhooks";

export { EventHub } from "./hub";
export { WebhookDispatcher } from "./webhooks";

/** The hub and webhook dispatcher of `deps` (not started). */
export function createPush(deps: Deps): { events: EventHub; webhooks: WebhookDispatcher } {
  const events = new EventHub({
    db: deps.db,
    logger: deps.logger.child({ component: "events" }),
    config: deps.config.push,
    wallNowMs: () => deps.clock.wallNowMs(),
  });
  return { events, webhooks: new WebhookDispatcher(deps, events) };
}

/** Starts the hub (reads the log's newest id) and the webhook dispatcher. */
export async function startPush(deps: Deps): Promise<void> {
  await deps.events?.start();
  deps.webhooks?.start();
}

/** Ends every open stream and stops delivering (server stop). */
export async function stopPush(deps: Deps): Promise<void> {
  await deps.webhooks?.stop();
  await deps.events?.stop();
}

/** A Last-Event-ID (header or query): a decimal event id, else VALIDATION_ERROR naming `field`. */
export function parseLastEventId(raw: string, field: string): number {
  const value = raw.trim();
  if (!/^[0-9]{1,15}$/.test(value)) fail("VALIDATION_ERROR", `${field}: must be a decimal event id, got "${raw}"`);
  return Number(value);
}

export interface EventStream {
  /** Replays the caller's events after the Last-Event-ID, then goes live. */
  start(): Promise<void>;
  /** Leaves the hub and frees the key's stream slot (idempotent). */
  close(): void;
}

/**
 * Takes one of the caller's concurrent streams of a `kind` (event streams, log follows: counted apart, each up to
 * PushConfig.maxStreamsPerKey per API key, per process): 429 RATE_LIMIT over it. Answers the release (idempotent).
 */
export function takeStreamSlot(
  deps: Deps,
  caller: { wallet: string; keyId: number | null },
  kind: "event" | "log",
): () => void {
  const hub = deps.events;
  if (!hub) return fail("INTERNAL_ERROR", "the event hub is not running");
  const { maxStreamsPerKey } = deps.config.push;
  const slot = `${kind}:${caller.keyId !== null ? `key:${caller.keyId}` : `wallet:${caller.wallet}`}`;
  if (!hub.acquireStream(slot)) {
    const what = kind === "event" ? "event streams" : "log follows";
    fail(
      "RATE_LIMIT",
      `at most ${maxStreamsPerKey} concurrent ${what} per API key: close one first (a stream resumes with Last-Event-ID)`,
      { headers: { "Retry-After": "5" }, details: { maxStreams: maxStreamsPerKey } },
    );
  }
  let released = false;
  return () => {
    if (!released) hub.releaseStream(slot);
    released = true;
  };
}

/**
 * Opens an event stream for the caller: takes one of its key's concurrent streams (takeStreamSlot) and finds whether
 * it is a registered executor (task.open goes to those).
 */
export async function openEventStream(
  deps: Deps,
  caller: { wallet: string; keyId: number | null },
  lastEventId: number | undefined,
  sink: EventSink,
): Promise<EventStream> {
  const hub = deps.events;
  if (!hub) return fail("INTERNAL_ERROR", "the event hub is not running");
  const release = takeStreamSlot(deps, caller, "event");
  let closed = false;
  let subscription: Subscription | undefined;
  const close = () => {
    if (closed) return;
    closed = true;
    subscription?.close();
    release();
  };
  try {
    const executor = Boolean(await findExecutor(deps.db, caller.wallet));
    return {
      async start() {
        const opened = await hub.subscribe({ wallet: caller.wallet, executor }, lastEventId, sink);
        if (closed) opened.close();
        else subscription = opened;
      },
      close,
    };
  } catch (error) {
    close();
    throw error;
  }
}
