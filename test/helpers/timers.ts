/**
 * Test time for the indexer's timers (server/chain/clock.ts `Timers`): a clock that moves only when the test moves it,
 * firing on the way the sleeps and interval ticks that fall due, in order. Several views share one clock (two indexers
 * competing for one lease read the same time); each view tells which of its sleeps are pending, so a test waits for a
 * wait to begin instead of sleeping.
 */
import type { Timers } from "../../server/chain/clock";

interface Entry {
  due: number;
  seq: number;
  owner: ManualTimers;
  /** A sleep's resolve, or an interval's tick (whose promise the clock awaits before it moves on). */
  fire: () => unknown;
  /** The sleep's length; undefined for an interval. */
  sleepMs?: number;
  period?: number;
}

export class ManualTime {
  private nowMs: number;
  private seq = 0;
  private readonly entries = new Set<Entry>();

  constructor(start = Date.now()) {
    this.nowMs = start;
  }

  now(): number {
    return this.nowMs;
  }

  /** A view of this clock for one user (one indexer). */
  timers(): ManualTimers {
    return new ManualTimers(this);
  }

  /** When the earliest sleep or tick falls due; undefined when nothing waits. */
  next(): number | undefined {
    return this.earliest()?.due;
  }

  /**
   * Moves the clock to `to`, firing what falls due on the way in order: an interval's tick is awaited before the clock
   * moves on; a woken sleeper runs on its own (a test waits for what it does next).
   */
  async advanceTo(to: number): Promise<void> {
    for (let entry = this.earliest(); entry && entry.due <= to; entry = this.earliest()) {
      this.nowMs = Math.max(this.nowMs, entry.due);
      if (entry.period) entry.due += entry.period;
      else this.entries.delete(entry);
      await entry.fire();
    }
    this.nowMs = Math.max(this.nowMs, to);
  }

  /** Moves the clock to the earliest sleep or tick and fires it (and any due at the same time). */
  async fireNext(): Promise<void> {
    const due = this.next();
    if (due === undefined) throw new Error("no timer is pending");
    await this.advanceTo(due);
  }

  /** @internal */
  add(entry: Omit<Entry, "seq">): Entry {
    const added = { ...entry, seq: this.seq++ };
    this.entries.add(added);
    return added;
  }

  /** @internal */
  remove(entry: Entry): void {
    this.entries.delete(entry);
  }

  /** @internal The durations of `owner`'s pending sleeps. */
  sleepsOf(owner: ManualTimers): number[] {
    return [...this.entries].filter((e) => e.owner === owner && e.sleepMs !== undefined).map((e) => e.sleepMs!);
  }

  private earliest(): Entry | undefined {
    let first: Entry | undefined;
    for (const e of this.entries)
      if (!first || e.due < first.due || (e.due === first.due && e.seq < first.seq)) first = e;
    return first;
  }
}

/** One user's timers on a ManualTime. */
export class ManualTimers implements Timers {
  /** How many of this view's sleeps have run to their end (not cut short by their signal). */
  slept = 0;

  constructor(readonly time: ManualTime) {}

  now(): number {
    return this.time.now();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const onAbort = () => {
        this.time.remove(entry);
        resolve();
      };
      const entry = this.time.add({
        due: this.time.now() + ms,
        owner: this,
        sleepMs: ms,
        fire: () => {
          signal?.removeEventListener("abort", onAbort);
          this.slept++;
          resolve();
        },
      });
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  every(ms: number, tick: () => unknown): () => void {
    const entry = this.time.add({ due: this.time.now() + ms, owner: this, period: ms, fire: tick });
    return () => this.time.remove(entry);
  }

  /** The lengths of this view's sleeps not yet due (empty while its user runs or waits on something else). */
  sleeps(): number[] {
    return this.time.sleepsOf(this);
  }
}
