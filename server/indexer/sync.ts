/**
 * The sync loop: backfills the escrow's events from its deployment block in bounded ranges, then follows the head
 * behind a number of confirmations. Each range's events, their projection and the checkpoint are written in one
 * database transaction, so a crash at any moment leaves either the whole range or none of it. Stored block hashes
 * reveal reorgs; the index then rolls back to the common ancestor and re-applies.
 */
import type { Knex } from "knex";
import type { Log } from "ethers";
import type { IndexerConfig } from "../config";
import type { Logger } from "../logger";
import { decodeEscrowLog, fetchLogsAdaptive, type ChainReader } from "../chain/escrowLogs";
import { backoffDelay, classifyRpcError, withRetry, type RetryOptions } from "../chain/rpcErrors";
import type { Unsubscribe } from "../chain/heads";
import { realTimers, type Timers } from "../chain/clock";
import { deleteBlocksAfter, listBlocksDownFrom, saveBlocks } from "../db/repositories/blocks";
import { deleteCheckpoint, getCheckpoint, setCheckpoint, type Checkpoint } from "../db/repositories/checkpoints";
import {
  deleteEventsAfter,
  insertNewEvents,
  listEventsNamed,
  listEventsOfTasks,
} from "../db/repositories/escrowEvents";
import { deleteTasks, getTasks, insertTasks, upsertTasks } from "../db/repositories/tasks";
import {
  deleteOpenSubmissionsOf,
  insertOpenSubmissions,
  loadOpenSubmissions,
} from "../db/repositories/openSubmissions";
import { loadConfigValues, replaceConfigValues } from "../db/repositories/escrowConfig";
import { loadTokens, replaceTokens } from "../db/repositories/allowedTokens";
import { loadPausePeriods, replacePausePeriods } from "../db/repositories/pausePeriods";
import { deleteUnspentDeployFeesAfter, recordIndexedDeployFees } from "../db/repositories/deployFees";
import { decodeAgentDeployed } from "../chain/deployFee";
import { CONFIG_HANDLERS, emptyConfig, foldEvents, isConfigEvent, type FoldContext } from "./handlers";
import { ensureChainIdentity } from "./chainIdentity";
import { writeChainEvents } from "./marketEvents";
import { createWriterLock, type WriterLock } from "./lock";
import type { BlockHeader, ChainName, EscrowConfigState, StoredEvent, TaskRecord } from "../escrow/records";

export const CHECKPOINT_NAME = "escrow";

/** After a new-head subscription was refused or lost: how long the head poll serves alone before subscribing again. */
export const RESUBSCRIBE_AFTER_MS = 30_000;

export interface IndexerOptions {
  db: Knex;
  chain: ChainReader;
  /**
   * The settlement chain indexed (default `base`): its rows, checkpoint, block hashes and writer lock are its own, so
   * the indexer of another chain over the same database never touches them.
   */
  chainName?: ChainName;
  network: string;
  escrowAddress: string;
  /**
   * The agent deploy-fee factory, when the deployment has one: its AgentDeployed events become deploy credits of the
   * paying wallets (deploy_fee_payments), written in the same transaction as the range's escrow events.
   */
  agentFactoryAddress?: string;
  startBlock: number;
  config: IndexerConfig;
  logger: Logger;
  /** How to reset the database, quoted when it belongs to another chain. */
  resetHint?: string;
  /**
   * Called after a range whose transaction added push events (market_events) commits: the API's event hub wakes its
   * live streams and webhooks with it (an indexer in another process is found by the hub's slow poll instead).
   */
  onEvents?: () => void;
  /**
   * The timers of the RPC retries' backoff, the wait after a failed step and the writer lock (its waits, renewals and
   * lease clock); default real time. The wait for a new head between steps (its poll interval and head poll) stays on
   * real time.
   */
  timers?: Timers;
  /** Test hooks: a fault thrown here aborts the range's transaction, as a crash would. */
  faults?: { beforeCommit?: (range: { from: number; to: number }) => void | Promise<void> };
}

export interface IndexerStatus {
  state: "starting" | "waiting-for-lock" | "backfilling" | "following" | "stopped";
  checkpoint: number | null;
  head: number | null;
  eventsIndexed: number;
  lastError: string | null;
}

/** What the chain answered for one range, before any decoding. */
interface RangeRead {
  logs: Log[];
  factoryLogs: Log[];
  /** The largest log range the node accepted while reading (fetchLogsAdaptive). */
  workingRange: number;
  headers: Map<number, BlockHeader>;
}

/** Thrown by a write when another process holds the lock now. */
class LockLostError extends Error {
  override name = "LockLostError";
}

export class Indexer {
  private readonly stopping = new AbortController();
  private readonly timers: Timers;
  /** withRetry's options for every chain call: backoff on `timers`, cut short by stop(). */
  private readonly retry: RetryOptions;
  private readonly lock: WriterLock;
  private loop: Promise<void> | undefined;
  private range: number;
  /** The chain reads of the range after the one being written, started before its transaction (see prefetch). */
  private prefetched: { from: number; to: number; read: Promise<RangeRead> } | undefined;
  private failures = 0;
  private lastProgressLog = 0;
  private caughtUp = false;
  private readonly waiters = new Set<{ block: number; resolve: () => void }>();
  /** The live new-head subscription's end, if any. */
  private heads: Unsubscribe | undefined;
  /** A subscription being set up (awaited by stop()). */
  private subscribing: Promise<void> | undefined;
  private resubscribeAt = 0;
  /** The newest head the subscription announced. */
  private announced = -1;
  /** Ends the wait for a new head, while the loop waits. */
  private wake: (() => void) | undefined;
  private current: IndexerStatus = {
    state: "starting",
    checkpoint: null,
    head: null,
    eventsIndexed: 0,
    lastError: null,
  };

  private readonly chainName: ChainName;

  constructor(private readonly options: IndexerOptions) {
    this.chainName = options.chainName ?? "base";
    this.timers = options.timers ?? realTimers;
    const signal = this.stopping.signal;
    this.retry = { signal, sleep: (ms) => this.timers.sleep(ms, signal) };
    this.lock = createWriterLock(
      options.db,
      this.chainName,
      `indexer:${options.escrowAddress.toLowerCase()}`,
      options.config.lockTtlMs,
      this.timers,
    );
    this.range = options.config.maxBlockRange;
  }

  status(): IndexerStatus {
    return { ...this.current };
  }

  /**
   * Checks the chain identity (throws ChainIdentityMismatchError), then runs the loop in the background. Resolves
   * once the loop is running (it may still be waiting for the lock).
   */
  async start(): Promise<void> {
    const { db, chain, network, escrowAddress, startBlock } = this.options;
    await ensureChainIdentity(
      db,
      chain,
      {
        chainName: this.chainName,
        network,
        escrowAddress,
        startBlock,
        resetHint: this.options.resetHint ?? "reset the database (npm run db:reset)",
      },
      this.retry,
    );
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
    await this.subscribing;
    await this.heads?.();
    this.heads = undefined;
    await this.lock.release();
    this.current.state = "stopped";
  }

  /** Resolves once every event up to `blockNumber` is queryable. */
  waitForBlock(blockNumber: number, timeoutMs = 30_000): Promise<void> {
    if ((this.current.checkpoint ?? -1) >= blockNumber) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = { block: blockNumber, resolve: () => (clearTimeout(timer), resolve()) };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(
          new Error(
            `indexer did not reach block ${blockNumber} within ${timeoutMs} ms (at ${this.current.checkpoint})`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  private async run(): Promise<void> {
    const { logger } = this.options;
    while (!this.stopping.signal.aborted) {
      try {
        const progressed = await this.step();
        this.failures = 0;
        this.current.lastError = null;
        if (!progressed) await this.waitForNewHead();
      } catch (error) {
        if (error instanceof LockLostError) {
          logger.warn("writer lock lost; waiting to take it again");
          continue;
        }
        const kind = classifyRpcError(error);
        this.failures++;
        this.current.lastError = error instanceof Error ? error.message : String(error);
        // A fatal error cannot be fixed by retrying soon; keep trying slowly in case the node or database recovers.
        const delay = kind === "fatal" ? 30_000 : backoffDelay(this.failures - 1, 200, 30_000);
        logger[kind === "fatal" ? "error" : "warn"]("indexer step failed", { kind, error, retryInMs: delay });
        await this.timers.sleep(delay, this.stopping.signal);
      }
    }
  }

  /**
   * The wait of a loop level with the head, until whichever comes first: the node announces a head beyond the one the
   * last step read (a subscription, when the chain reader offers one), the head poll reads another head (one cheap
   * `eth_blockNumber` every `headPollMs`, only while no subscription is live), `pollIntervalMs` passes (a full step
   * anyway: a reorg at the same height changes no head number), or stop(). A step's database work thus runs once per
   * new head, as soon as it is known, and an idle loop's RPC calls are the head poll's plus a step each poll interval.
   */
  private async waitForNewHead(): Promise<void> {
    const { chain, config } = this.options;
    this.listenForHeads();
    const seen = this.current.head;
    if (seen !== null && this.announced > seen) return;
    const headPollMs = config.headPollMs ?? 0;
    const signal = this.stopping.signal;
    await new Promise<void>((resolve) => {
      let headTimer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(pollTimer);
        clearTimeout(headTimer);
        signal.removeEventListener("abort", done);
        this.wake = undefined;
        resolve();
      };
      const pollTimer = setTimeout(done, config.pollIntervalMs);
      signal.addEventListener("abort", done, { once: true });
      this.wake = done;
      if (signal.aborted) return done();
      if (headPollMs <= 0 || headPollMs >= config.pollIntervalMs) return;
      const pollHead = async () => {
        if (this.wake !== done) return;
        // A live subscription makes the head poll redundant; it resumes on the next tick if the subscription is lost.
        if (!this.heads) {
          // A failing read waits for the next tick: the full step's retries and backoff deal with a failing node.
          const head = await chain.blockNumber().catch(() => seen);
          if (this.wake !== done) return;
          if (head !== seen) return done();
        }
        headTimer = setTimeout(() => void pollHead(), headPollMs);
      };
      headTimer = setTimeout(() => void pollHead(), headPollMs);
    });
  }

  /** Subscribes to new heads in the background when the chain reader offers them and no subscription is live. */
  private listenForHeads(): void {
    const source = this.options.chain.heads;
    if (!source || this.heads || this.subscribing || this.timers.now() < this.resubscribeAt) return;
    const { logger } = this.options;
    const signal = this.stopping.signal;
    // Lost before the subscription was handed over (its socket closed at once): not kept as live.
    let lost = false;
    this.subscribing = source
      .subscribe({
        signal,
        onHead: (head) => {
          this.announced = head;
          if (head > (this.current.head ?? -1)) this.wake?.();
        },
        onLost: (error) => {
          lost = true;
          this.heads = undefined;
          this.resubscribeAt = this.timers.now() + RESUBSCRIBE_AFTER_MS;
          logger.warn("new-head subscription lost; polling the head", { error, resubscribeInMs: RESUBSCRIBE_AFTER_MS });
        },
      })
      .then(
        async (unsubscribe) => {
          if (signal.aborted || lost) return unsubscribe();
          this.heads = unsubscribe;
          logger.info("following new heads by subscription");
        },
        (error) => {
          if (signal.aborted) return;
          this.resubscribeAt = this.timers.now() + RESUBSCRIBE_AFTER_MS;
          logger.warn("new-head subscription refused; polling the head", {
            error,
            resubscribeInMs: RESUBSCRIBE_AFTER_MS,
          });
        },
      )
      .finally(() => (this.subscribing = undefined));
  }

  /** Waits for the writer lock unless held; false when stopped while waiting. */
  private async holdLock(): Promise<boolean> {
    if (this.lock.held()) return true;
    this.current.state = "waiting-for-lock";
    const acquired = await this.lock.acquire(this.stopping.signal);
    if (acquired) this.options.logger.info("indexer holds the writer lock", { escrow: this.options.escrowAddress });
    return acquired;
  }

  /** One unit of work under the writer lock: a reorg check and one range. Returns whether anything was indexed. */
  async step(): Promise<boolean> {
    if (!(await this.holdLock())) return false;
    const { db, chain, startBlock, config } = this.options;
    const head = await withRetry(() => chain.blockNumber(), this.retry);
    this.current.head = head;
    const checkpoint = (await getCheckpoint(db, this.chainName, CHECKPOINT_NAME)) ?? {
      blockNumber: startBlock - 1,
      blockHash: "",
    };
    this.publish(checkpoint.blockNumber);

    if (checkpoint.blockNumber >= startBlock) {
      const block = await withRetry(() => chain.block(checkpoint.blockNumber), this.retry);
      if (!block || block.hash !== checkpoint.blockHash) {
        await this.rollBack(checkpoint);
        return true;
      }
    }
    const target = head - config.confirmations;
    if (target <= checkpoint.blockNumber) {
      this.current.state = "following";
      return false;
    }
    const from = checkpoint.blockNumber + 1;
    const to = Math.min(target, from + this.range - 1);
    this.current.state = target - to > this.range ? "backfilling" : "following";
    const indexed = await this.indexRange(from, to, checkpoint, target);
    if (!indexed) {
      // The chain moved under the range (a reorg in progress): wait a poll interval, then the reorg check runs.
      this.options.logger.warn("chain changed while reading a range; retrying", { from, to });
      return false;
    }
    this.logProgress(to, target);
    return true;
  }

  /**
   * Fetches, decodes and writes [from, to]. Returns false when the chain changed underneath (retried next step).
   * While `target` lies beyond `to`, the next range's chain reads run during this range's decoding and transaction.
   */
  private async indexRange(from: number, to: number, checkpoint: Checkpoint, target: number): Promise<boolean> {
    const { db, startBlock } = this.options;
    const { logs, factoryLogs, workingRange, headers } = await this.takeOrReadRange(from, to);
    // Only a refusal shrinks the range: a range clipped at the head (to < from + range - 1) is not one.
    if (workingRange < to - from + 1 && workingRange < this.range) {
      this.options.logger.info("node refused a large log range; using a smaller one", { range: workingRange });
      this.range = workingRange;
    }
    if (to < target) this.prefetch(to + 1, Math.min(target, to + this.range));

    // Consistency: the range starts on our checkpoint and every log belongs to the block we read.
    // (Hardhat's hardhat_mine can report a zero parent hash for the empty blocks it mines at once: not a break.)
    const parent = headers.get(from)!.parentHash;
    const linked = parent === checkpoint.blockHash || /^0x0{64}$/.test(parent);
    if (checkpoint.blockNumber >= startBlock && !linked) return false;
    for (const log of [...logs, ...factoryLogs]) {
      if (headers.get(log.blockNumber)!.hash !== log.blockHash.toLowerCase()) return false;
    }

    const events = logs
      .map((log) => decodeEscrowLog(log, headers.get(log.blockNumber)!.timestamp))
      .filter((e): e is StoredEvent => e !== undefined)
      .sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
    const deployFees = factoryLogs.flatMap((log) => {
      const payment = decodeAgentDeployed(log);
      return payment
        ? [
            {
              txHash: log.transactionHash.toLowerCase(),
              logIndex: payment.logIndex,
              payer: payment.payer,
              nonce: Number(payment.nonce),
              blockNumber: log.blockNumber,
              indexedAt: headers.get(log.blockNumber)!.timestamp,
            },
          ]
        : [];
    });

    let pushed = 0;
    await db.transaction(async (trx) => {
      const fresh = await insertNewEvents(trx, this.chainName, events);
      const tasks = await this.applyEvents(trx, fresh);
      pushed = await writeChainEvents(trx, this.chainName, fresh, tasks);
      await recordIndexedDeployFees(trx, this.chainName, deployFees);
      await saveBlocks(trx, this.chainName, [...headers.values()]);
      await setCheckpoint(trx, this.chainName, CHECKPOINT_NAME, { blockNumber: to, blockHash: headers.get(to)!.hash });
      await this.options.faults?.beforeCommit?.({ from, to });
      if (!this.lock.held()) throw new LockLostError("the writer lock was lost during a write");
      this.current.eventsIndexed += fresh.length;
    });
    this.publish(to);
    if (pushed > 0) this.options.onEvents?.();
    return true;
  }

  /** The chain reads of [from, to]: the escrow's (and the factory's) logs, and the headers of their blocks and ends. */
  private async readRange(from: number, to: number): Promise<RangeRead> {
    const { chain, escrowAddress, agentFactoryAddress } = this.options;
    const escrowLogs = await withRetry(() => fetchLogsAdaptive(chain, escrowAddress, from, to, this.retry), this.retry);
    const factoryLogs = agentFactoryAddress
      ? await withRetry(() => fetchLogsAdaptive(chain, agentFactoryAddress, from, to, this.retry), this.retry)
      : { logs: [], workingRange: escrowLogs.workingRange };
    const numbers = new Set<number>([...escrowLogs.logs, ...factoryLogs.logs].map((l) => l.blockNumber));
    numbers.add(from);
    numbers.add(to);
    return {
      logs: escrowLogs.logs,
      factoryLogs: factoryLogs.logs,
      workingRange: Math.min(escrowLogs.workingRange, factoryLogs.workingRange),
      headers: await this.fetchHeaders([...numbers]),
    };
  }

  /**
   * Starts reading [from, to] ahead. What is read ahead goes through the same consistency checks when its range is
   * indexed (its first block's parent must be the checkpoint then), so a reorg meanwhile is caught as for any range.
   */
  private prefetch(from: number, to: number): void {
    const read = this.readRange(from, to);
    // A failure surfaces when the range is taken (and is retried then); a read nobody takes must not go unhandled.
    read.catch(() => undefined);
    this.prefetched = { from, to, read };
  }

  /**
   * The chain reads of [from, to]: the read-ahead of exactly this range if one was started (any other is dropped),
   * else read now. A read-ahead that failed (the chain moved under it, the node failed meanwhile) is read again: its
   * failure is not this step's.
   */
  private async takeOrReadRange(from: number, to: number): Promise<RangeRead> {
    const ahead = this.prefetched;
    this.prefetched = undefined;
    if (ahead && ahead.from === from && ahead.to === to) {
      try {
        return await ahead.read;
      } catch {
        // Read again below, with this step's own retries and errors.
      }
    }
    return this.readRange(from, to);
  }

  private async fetchHeaders(numbers: number[]): Promise<Map<number, BlockHeader>> {
    const { chain } = this.options;
    const out = new Map<number, BlockHeader>();
    const queue = [...numbers];
    const worker = async () => {
      for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
        const number = n;
        const block = await withRetry(() => chain.block(number), this.retry);
        if (!block) throw Object.assign(new Error(`block ${number} not found`), { code: "SERVER_ERROR" });
        out.set(number, { ...block, hash: block.hash.toLowerCase(), parentHash: block.parentHash.toLowerCase() });
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, numbers.length) }, worker));
    return out;
  }

  /** Folds freshly stored events into the projection inside the caller's transaction; answers the touched tasks. */
  private async applyEvents(trx: Knex.Transaction, fresh: StoredEvent[]): Promise<Map<number, TaskRecord>> {
    if (fresh.length === 0) return new Map();
    // A task created in this range has no row and no submission stored yet (only its TaskVerifierSet, in the same
    // transaction, precedes its TaskCreated): only the other tasks the range touches are read. In a backfill those
    // are few.
    const created = new Set<number>();
    const touched = new Set<number>();
    for (const e of fresh) {
      if (e.taskId === null) continue;
      touched.add(e.taskId);
      if (e.eventName === "TaskCreated") created.add(e.taskId);
    }
    const stored = [...touched].filter((id) => !created.has(id));
    const chain = this.chainName;
    const tasks = await getTasks(trx, chain, stored);
    const ctx: FoldContext = {
      chain,
      openSubmissions: await loadOpenSubmissions(trx, chain, stored),
      newSubmissions: [],
    };
    const hasConfig = fresh.some((e) => isConfigEvent(e.eventName));
    const config = hasConfig ? await loadConfig(trx, chain) : emptyConfig();
    const { touchedTasks } = foldEvents(fresh, tasks, config, ctx);
    // The range's new tasks are inserted (their rows cannot exist yet, see above), the others upserted.
    const inserted: TaskRecord[] = [];
    const updated: TaskRecord[] = [];
    for (const id of touchedTasks) (created.has(id) ? inserted : updated).push(tasks.get(id)!);
    await insertTasks(trx, chain, inserted);
    await upsertTasks(trx, chain, updated);
    await insertOpenSubmissions(trx, chain, ctx.newSubmissions);
    if (hasConfig) await saveConfig(trx, chain, config);
    return tasks;
  }

  /** Rolls the index back to the newest stored block still on the chain, then lets the loop re-apply. */
  private async rollBack(checkpoint: Checkpoint): Promise<void> {
    const { db, chain, startBlock, logger } = this.options;
    // A read-ahead may hold the abandoned fork's blocks, linked to a block both forks share.
    this.prefetched = undefined;
    let ancestor: BlockHeader | undefined;
    let cursor = checkpoint.blockNumber;
    search: while (cursor >= startBlock) {
      const stored = await listBlocksDownFrom(db, this.chainName, cursor, 64);
      if (stored.length === 0) break;
      for (const block of stored) {
        const onChain = await withRetry(() => chain.block(block.number), this.retry);
        if (onChain && onChain.hash.toLowerCase() === block.hash) {
          ancestor = block;
          break search;
        }
      }
      cursor = stored[stored.length - 1].number - 1;
    }
    const to: Checkpoint = ancestor
      ? { blockNumber: ancestor.number, blockHash: ancestor.hash }
      : { blockNumber: startBlock - 1, blockHash: "" };
    logger.warn("reorg detected: rolling back", {
      chain: this.chainName,
      from: checkpoint.blockNumber,
      to: to.blockNumber,
    });

    await db.transaction(async (trx) => {
      const chain = this.chainName;
      const removed = await deleteEventsAfter(trx, chain, to.blockNumber);
      await deleteUnspentDeployFeesAfter(trx, chain, to.blockNumber);
      await deleteBlocksAfter(trx, chain, to.blockNumber);
      const affected = [...new Set(removed.filter((e) => e.taskId !== null).map((e) => e.taskId!))];
      await rebuildTasks(trx, affected, chain);
      if (removed.some((e) => isConfigEvent(e.eventName))) {
        const config = emptyConfig();
        foldEvents(await listEventsNamed(trx, chain, Object.keys(CONFIG_HANDLERS)), new Map(), config, {
          chain,
          openSubmissions: new Map(),
          newSubmissions: [],
        });
        await saveConfig(trx, chain, config);
      }
      if (to.blockNumber >= startBlock) await setCheckpoint(trx, chain, CHECKPOINT_NAME, to);
      else await deleteCheckpoint(trx, chain, CHECKPOINT_NAME);
      this.current.eventsIndexed -= removed.length;
    });
    this.current.checkpoint = to.blockNumber;
  }

  private publish(checkpoint: number) {
    this.current.checkpoint = checkpoint;
    for (const waiter of [...this.waiters]) {
      if (checkpoint >= waiter.block) {
        this.waiters.delete(waiter);
        waiter.resolve();
      }
    }
  }

  /** Logs backfill progress at most every 5 s, and once when the index catches up with the head. */
  private logProgress(at: number, target: number) {
    const { startBlock, logger } = this.options;
    const now = Date.now();
    if (at >= target) {
      if (this.caughtUp) return;
      this.caughtUp = true;
      logger.info("indexer caught up with the chain", { block: at, events: this.current.eventsIndexed });
      return;
    }
    this.caughtUp = false;
    if (now - this.lastProgressLog < 5000) return;
    this.lastProgressLog = now;
    const total = Math.max(1, target - startBlock + 1);
    const done = Math.max(0, at - startBlock + 1);
    logger.info("backfill progress", {
      block: at,
      target,
      percent: Math.round((done / total) * 1000) / 10,
      events: this.current.eventsIndexed,
    });
  }
}

/** Recomputes the projection of `taskIds` from their stored events (after a rollback removed some). */
export async function rebuildTasks(trx: Knex.Transaction, taskIds: number[], chain: ChainName = "base"): Promise<void> {
  if (taskIds.length === 0) return;
  await deleteTasks(trx, chain, taskIds);
  await deleteOpenSubmissionsOf(trx, chain, taskIds);
  const events = await listEventsOfTasks(trx, chain, taskIds);
  const tasks = new Map<number, TaskRecord>();
  const ctx: FoldContext = { chain, openSubmissions: new Map(), newSubmissions: [] };
  foldEvents(events, tasks, emptyConfig(), ctx);
  await insertTasks(trx, chain, [...tasks.values()]);
  await insertOpenSubmissions(trx, chain, ctx.newSubmissions);
}

async function loadConfig(trx: Knex.Transaction, chain: ChainName): Promise<EscrowConfigState> {
  // One query at a time: a transaction is one connection.
  return {
    values: await loadConfigValues(trx, chain),
    tokens: await loadTokens(trx, chain),
    pauses: await loadPausePeriods(trx, chain),
  };
}

async function saveConfig(trx: Knex.Transaction, chain: ChainName, config: EscrowConfigState): Promise<void> {
  await replaceConfigValues(trx, chain, config.values);
  await replaceTokens(trx, chain, config.tokens);
  await replacePausePeriods(trx, chain, config.pauses);
}
