/**
 * The event hub: the live side of the push event log. Whoever writes event rows (the indexer after a range, the
 * listing after its transaction) calls `notify()`; the hub then reads the new rows once, in id order, and hands each
 * to the open streams it concerns, in memory: no stream polls the database. A slow poll (PushConfig.pollMs) finds
 * rows written by another process (an indexer of its own beside several API processes on one PostgreSQL).
 *
 * A stream that resumes (`Last-Event-ID`) first replays its own rows from the database, then goes live; the switch
 * happens with no await between the last replay read and joining the live set, so no row falls between the two.
 * Rows become visible in id order (market_events' writers are serialised), which the cursor relies on.
 */
import type { Knex } from "knex";
import type { Logger } from "../../logger";
import type { PushConfig } from "../../config";
import {
  latestEventId,
  listEventsAfter,
  listEventsForWallet,
  pruneMarketEvents,
  type MarketEventRecord,
} from "../../db/repositories/marketEvents";
import { pruneDeliveries } from "../../db/repositories/webhooks";
import { eventData, recipientRole, type ChainIdOf, type Recipient } from "./log";
import type { MarketEvent } from "../schemas/events";

const PAGE = 500;
const PRUNE_EVERY_MS = 3600_000;

/** Where a stream's events go (the SSE writer). */
export interface EventSink {
  send(event: MarketEvent): void;
  /** Ends the stream (server stop). */
  close(): void;
}

interface Subscriber extends Recipient {
  sink: EventSink;
  /** Every event up to this id was sent or is not this subscriber's. */
  lastSent: number;
  live: boolean;
  closed: boolean;
}

export interface Subscription {
  close(): void;
}

export class EventHub {
  private cursor = 0;
  private readonly subscribers = new Set<Subscriber>();
  private readonly listeners = new Set<() => void>();
  private draining: Promise<void> | undefined;
  private again = false;
  private timers: NodeJS.Timeout[] = [];
  private started = false;
  private stopped = false;

  constructor(
    private readonly options: {
      db: Knex;
      logger: Logger;
      config: PushConfig;
      wallNowMs: () => number;
      /** The chain id an event of each chain carries (without it: null, a hub that knows no deployment). */
      chainIdOf?: ChainIdOf;
    },
  ) {}

  /** Reads the log's newest id (live streams start after it) and starts the slow poll and the pruning. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.cursor = await latestEventId(this.options.db);
    const poll = setInterval(() => this.notify(), this.options.config.pollMs);
    const prune = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    poll.unref();
    prune.unref();
    this.timers.push(poll, prune);
    await this.prune();
  }

  /** The newest event id the hub has handed out. */
  latest(): number {
    return this.cursor;
  }

  /** New rows may be in the log: read them once and hand them out (coalesced while a read runs). */
  notify(): void {
    if (this.stopped || !this.started) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain().finally(() => (this.draining = undefined));
  }

  /** Calls `listener` after new rows were handed out (the webhook fan-out). */
  onEvents(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Opens a stream for `recipient`: replays its events after `lastEventId` (none: only events from now on), then
   * sends live ones. Resolves once the stream is live.
   */
  async subscribe(recipient: Recipient, lastEventId: number | undefined, sink: EventSink): Promise<Subscription> {
    const sub: Subscriber = {
      ...recipient,
      wallet: recipient.wallet.toLowerCase(),
      sink,
      lastSent: lastEventId ?? this.cursor,
      live: false,
      closed: false,
    };
    const subscription = {
      close: () => {
        sub.closed = true;
        this.subscribers.delete(sub);
      },
    };
    if (this.stopped) {
      sink.close();
      return subscription;
    }
    this.subscribers.add(sub);
    for (;;) {
      const upTo = this.cursor;
      const rows = await listEventsForWallet(this.options.db, sub.wallet, {
        after: sub.lastSent,
        upTo,
        limit: PAGE,
        executor: sub.executor,
      });
      if (sub.closed) return subscription;
      for (const row of rows) this.deliver(sub, row);
      if (rows.length === PAGE) continue;
      if (this.cursor === upTo) {
        // No await since the read: every row up to the hub's cursor is sent, later ones come live.
        sub.lastSent = Math.max(sub.lastSent, upTo);
        sub.live = true;
        return subscription;
      }
    }
  }

  /** Ends every stream and stops the timers (server stop). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    for (const sub of this.subscribers) {
      sub.closed = true;
      sub.sink.close();
    }
    this.subscribers.clear();
    await this.draining;
  }

  private deliver(sub: Subscriber, row: MarketEventRecord) {
    if (row.id <= sub.lastSent) return;
    const role = recipientRole(row, sub);
    if (role) sub.sink.send(eventData(row, role, this.options.chainIdOf ?? (() => null)));
    sub.lastSent = row.id;
  }

  private async drain(): Promise<void> {
    do {
      this.again = false;
      let found = false;
      try {
        for (;;) {
          const rows = await listEventsAfter(this.options.db, this.cursor, PAGE);
          if (rows.length === 0 || this.stopped) break;
          found = true;
          for (const sub of this.subscribers) {
            if (!sub.live || sub.closed) continue;
            for (const row of rows) this.deliver(sub, row);
          }
          this.cursor = rows[rows.length - 1].id;
          if (rows.length < PAGE) break;
        }
      } catch (error) {
        this.options.logger.warn("event hub could not read the event log; retrying on the next poll", { error });
      }
      if (found) for (const listener of this.listeners) listener();
    } while (this.again && !this.stopped);
  }

  private async prune(): Promise<void> {
    const before = this.options.wallNowMs() - this.options.config.retentionMs;
    try {
      await pruneMarketEvents(this.options.db, before);
      await pruneDeliveries(this.options.db, before);
    } catch (error) {
      this.options.logger.warn("event log pruning failed", { error });
    }
  }
}
