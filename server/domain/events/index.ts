/** Push (the SSE event stream and webhooks): built with the dependency container, started and stopped with the API. */
import type { Deps } from "../deps";
import { fail } from "../../errors";
import { findExecutor } from "../../db/repositories/executors";
import { EventHub, type EventSink, type Subscription } from "./hub";
import { WebhookDispatcher } from "./webhooks";
import { StreamRegistry, type StreamKind } from "./streams";
import { chainIdOf } from "../projection";

export { EventHub } from "./hub";
export { WebhookDispatcher } from "./webhooks";
export { StreamRegistry } from "./streams";

/** The hub, the open streams' registry and the webhook dispatcher of `deps` (not started). */
export function createPush(deps: Deps): { events: EventHub; streams: StreamRegistry; webhooks: WebhookDispatcher } {
  const logger = deps.logger.child({ component: "events" });
  const events = new EventHub({
    db: deps.db,
    logger,
    config: deps.config.push,
    wallNowMs: () => deps.clock.wallNowMs(),
    chainIdOf: (chain) => chainIdOf(deps, chain),
  });
  const streams = new StreamRegistry({ db: deps.db, logger, config: deps.config.push });
  return { events, streams, webhooks: new WebhookDispatcher(deps, events) };
}

/** Starts the hub (reads the log's newest id), the streams' credential check and the webhook dispatcher. */
export async function startPush(deps: Deps): Promise<void> {
  await deps.events?.start();
  deps.streams?.start();
  deps.webhooks?.start();
}

/** Ends every open stream and stops delivering (server stop). */
export async function stopPush(deps: Deps): Promise<void> {
  await deps.webhooks?.stop();
  deps.streams?.stop();
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
 * Takes one of the caller's concurrent streams of a `kind` (StreamRegistry: caps per key, wallet and client address,
 * a maximum lifetime, ended when the credential stops acting): 429 RATE_LIMIT over a cap. `end` closes the response
 * when the stream must end; answers the release (idempotent), run when the stream ends for any reason.
 */
export function takeStreamSlot(
  deps: Deps,
  caller: { wallet: string; keyId: number | null; agentId?: string },
  ip: string,
  kind: StreamKind,
  end: () => void,
  maxLifetimeMs?: number,
): () => void {
  const streams = deps.streams;
  if (!streams) return fail("INTERNAL_ERROR", "the stream registry is not running");
  return streams.take(
    kind,
    { wallet: caller.wallet, keyId: caller.keyId, agentId: caller.agentId, ip },
    end,
    maxLifetimeMs,
  );
}

/**
 * Opens an event stream for the caller: takes one of its key's concurrent streams (takeStreamSlot) and finds whether
 * it is a registered executor (task.open goes to those).
 */
export async function openEventStream(
  deps: Deps,
  caller: { wallet: string; keyId: number | null; agentId?: string },
  ip: string,
  lastEventId: number | undefined,
  sink: EventSink,
): Promise<EventStream> {
  const hub = deps.events;
  if (!hub) return fail("INTERNAL_ERROR", "the event hub is not running");
  const release = takeStreamSlot(deps, caller, ip, "event", () => sink.close());
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
