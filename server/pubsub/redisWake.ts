/**
 * Wakes the event hubs of other processes through Redis pub/sub (REDIS_URL), so that an event written by one process
 * reaches the streams and webhooks of every API process as soon as it is committed, instead of at the next slow poll
 * (EVENTS_POLL_MS, which stays as the fallback: a message lost while Redis is away is caught up by it, and SQLite
 * deployments have only the poll).
 *
 * A message is the newest event id its sender has handed out, or empty when the sender does not know it (a standalone
 * indexer). A receiver behind that id (or told nothing) reads the log; one that has it already does nothing, so a hub
 * that announces what it just read after a peer's message stops the echo there.
 */
import Redis from "ioredis";
import type { Logger } from "../logger";

export interface Wake {
  /** Tells the other processes that the log has events up to `latestId` (or new events, when not given). */
  announce(latestId?: number): void;
  close(): Promise<void>;
}

export interface WakeOptions {
  redisUrl: string;
  /** The channel, shared by every process of one deployment: the rate limits' prefix + "events". */
  channel: string;
  logger: Logger;
  /** Called for each announcement from another process, with its id (undefined: unknown). */
  onAnnounce?: (latestId: number | undefined) => void;
}

export async function createRedisWake(options: WakeOptions): Promise<Wake> {
  const { logger, channel } = options;
  // Subscribing takes the connection over: publishing needs one of its own.
  const publisher = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  publisher.on("error", (error) => logger.debug("event wake-up publisher unavailable", { error: String(error) }));
  const self = `${process.pid}:${Math.random().toString(36).slice(2)}`;
  let subscriber: Redis | undefined;
  if (options.onAnnounce) {
    const onAnnounce = options.onAnnounce;
    subscriber = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
    subscriber.on("error", (error) => logger.debug("event wake-up subscriber unavailable", { error: String(error) }));
    subscriber.on("message", (_channel: string, message: string) => {
      const [sender, id] = message.split(" ");
      if (sender === self) return;
      const latest = id ? Number(id) : undefined;
      onAnnounce(latest !== undefined && Number.isSafeInteger(latest) ? latest : undefined);
    });
    await subscriber.subscribe(channel);
  }
  return {
    announce(latestId) {
      if (publisher.status !== "ready") return; // the poll covers what is not announced
      publisher.publish(channel, `${self} ${latestId ?? ""}`).catch((error) => {
        logger.debug("event wake-up not published; the poll will find the events", { error: String(error) });
      });
    },
    async close() {
      publisher.disconnect();
      subscriber?.disconnect();
    },
  };
}

/** What of the event hub the wake-up uses: its newest id, a read of new rows, and a call after rows were handed out. */
export interface WakeableHub {
  latest(): number;
  notify(): void;
  onEvents(listener: () => void): () => void;
}

/**
 * Connects `hub` to the other processes: it reads the log when another process announces events it does not have,
 * and announces what it has handed out (its own writes, and the rows it read).
 */
export async function wakeAcrossProcesses(hub: WakeableHub, options: Omit<WakeOptions, "onAnnounce">): Promise<Wake> {
  const wake = await createRedisWake({
    ...options,
    onAnnounce: (latestId) => {
      if (latestId === undefined || latestId > hub.latest()) hub.notify();
    },
  });
  const stopListening = hub.onEvents(() => wake.announce(hub.latest()));
  return {
    announce: wake.announce,
    async close() {
      stopListening();
      await wake.close();
    },
  };
}

/** The channel of a deployment's event wake-ups: under the rate limits' Redis prefix, which its processes share. */
export const wakeChannel = (prefix: string) => `${prefix}events`;
