/**
 * The push event log (table `market_events`): marketplace events with their audience, read by the SSE stream and the
 * webhook fan-out. Ids are the SSE event ids: strictly increasing, and visible in id order (see insertMarketEvents).
 */
import type { ChainName } from "../../escrow/records";
import { bulkInsert, insertChunks, queryRows, toBool, type Queryable } from "./util";

export interface NewMarketEvent {
  /** The task's settlement chain (absent: the column's default, the posting chain the database migrated with). */
  chain?: ChainName;
  type: string;
  taskId: number;
  taskHash: string;
  poster: string;
  worker: string | null;
  target: string | null;
  toPoster: boolean;
  toWorker: boolean;
  toTarget: boolean;
  toExecutors: boolean;
  onChainStatus: number;
  txHash: string | null;
  fields: Record<string, unknown>;
  atMs: number;
  /** What produced the event (`log:<tx>:<index>:<type>`, `listing:<taskId>:<type>`): an event is written once. */
  source: string;
}

export interface MarketEventRecord extends Omit<NewMarketEvent, "source" | "chain"> {
  id: number;
  chain: ChainName;
}

const COLUMNS = `"id", "chain", "type", "task_id", "task_hash", "poster", "worker", "target", "to_poster", "to_worker",
  "to_target", "to_executors", "on_chain_status", "tx_hash", "fields", "at_ms"`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const fromRow = (r: any): MarketEventRecord => ({
  id: Number(r.id),
  chain: r.chain,
  type: r.type,
  taskId: Number(r.task_id),
  taskHash: r.task_hash,
  poster: r.poster,
  worker: r.worker ?? null,
  target: r.target ?? null,
  toPoster: toBool(r.to_poster),
  toWorker: toBool(r.to_worker),
  toTarget: toBool(r.to_target),
  toExecutors: toBool(r.to_executors),
  onChainStatus: Number(r.on_chain_status),
  txHash: r.tx_hash ?? null,
  fields: JSON.parse(String(r.fields)),
  atMs: Number(r.at_ms),
});

/** The columns an event is written with, in the order of `toValues`; `chain` first, left out when absent. */
const INSERT_COLUMNS = [
  "chain",
  "type",
  "task_id",
  "task_hash",
  "poster",
  "worker",
  "target",
  "to_poster",
  "to_worker",
  "to_target",
  "to_executors",
  "on_chain_status",
  "tx_hash",
  "fields",
  "at_ms",
  "source",
];
const INSERT_PG_TYPES = [
  "text",
  "text",
  "bigint",
  "text",
  "text",
  "text",
  "text",
  "boolean",
  "boolean",
  "boolean",
  "boolean",
  "integer",
  "text",
  "text",
  "bigint",
  "text",
];
const SKIP_WRITTEN = `on conflict ("source") do nothing`;

const toValues = (e: NewMarketEvent): unknown[] => [
  e.chain,
  e.type,
  e.taskId,
  e.taskHash,
  e.poster,
  e.worker,
  e.target,
  e.toPoster,
  e.toWorker,
  e.toTarget,
  e.toExecutors,
  e.onChainStatus,
  e.txHash,
  JSON.stringify(e.fields),
  e.atMs,
  e.source,
];

/**
 * Appends events inside the caller's transaction; an event whose source is stored already (or earlier in `events`)
 * is skipped. The events are written in multi-row statements (`INSERT ... ON CONFLICT ("source") DO NOTHING
 * RETURNING "id"`, chunked below the databases' parameter limits) whose rows take ids in the order of `events`. On
 * PostgreSQL the writers of this table are serialised by a transaction-scoped advisory lock taken before the ids are
 * drawn, so rows commit in id order: a reader that saw id N never later finds a new row below N (SQLite has one
 * writer anyway). Returns how many rows were added.
 */
export async function insertMarketEvents(trx: Queryable, events: readonly NewMarketEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  if (trx.client.config.client === "pg") await trx.raw("select pg_advisory_xact_lock(hashtext('market_events'))");
  let added = 0;
  // An event without a chain takes the column's default: runs of events with and without one are written apart,
  // in order, as a statement names the same columns for every row.
  for (let i = 0; i < events.length;) {
    const withChain = events[i].chain !== undefined;
    let j = i + 1;
    while (j < events.length && (events[j].chain !== undefined) === withChain) j++;
    const skip = withChain ? 0 : 1;
    const columns = INSERT_COLUMNS.slice(skip);
    const types = INSERT_PG_TYPES.slice(skip);
    for (const chunk of insertChunks(trx, events.slice(i, j))) {
      const rows = chunk.map((e) => toValues(e).slice(skip));
      added += (await bulkInsert(trx, "market_events", columns, rows, SKIP_WRITTEN, types, ["id"])).length;
    }
    i = j;
  }
  return added;
}

/** The newest event id (0 when the log is empty). */
export async function latestEventId(db: Queryable): Promise<number> {
  const [row] = await queryRows(db, `select max("id") as "id" from "market_events"`);
  return row?.id === null || row?.id === undefined ? 0 : Number(row.id);
}

/** Every event after `after`, oldest first, at most `limit` (the in-process fan-out reads each new row once). */
export async function listEventsAfter(db: Queryable, after: number, limit: number): Promise<MarketEventRecord[]> {
  const rows = await queryRows(db, `select ${COLUMNS} from "market_events" where "id" > ? order by "id" limit ?`, [
    after,
    limit,
  ]);
  return rows.map(fromRow);
}

/**
 * The events `wallet` receives with ids in (after, upTo], oldest first: as poster, worker, target, or (when
 * `executor`) as one of the registered executors an open task is announced to (its own tasks excepted).
 */
export async function listEventsForWallet(
  db: Queryable,
  wallet: string,
  range: { after: number; upTo?: number; limit: number; executor: boolean },
): Promise<MarketEventRecord[]> {
  const who = wallet.toLowerCase();
  const upTo = range.upTo ?? Number.MAX_SAFE_INTEGER;
  const sql =
    `select ${COLUMNS} from "market_events" where "id" > ? and "id" <= ? and (` +
    `("poster" = ? and "to_poster" = ?) or ("worker" = ? and "to_worker" = ?) or ("target" = ? and "to_target" = ?)` +
    (range.executor ? ` or ("to_executors" = ? and "poster" <> ?)` : "") +
    `) order by "id" limit ?`;
  const yes = db.client.config.client === "pg" ? true : 1;
  const bindings: unknown[] = [range.after, upTo, who, yes, who, yes, who, yes];
  if (range.executor) bindings.push(yes, who);
  bindings.push(range.limit);
  return (await queryRows(db, sql, bindings)).map(fromRow);
}

/** Events by id (the webhook sender reads the events of its due deliveries). */
export async function getMarketEvents(db: Queryable, ids: readonly number[]): Promise<Map<number, MarketEventRecord>> {
  if (ids.length === 0) return new Map();
  const rows = await db("market_events").whereIn("id", [...ids]);
  return new Map(rows.map((r) => [Number(r.id), fromRow(r)]));
}

/** Deletes events older than `beforeMs`; returns how many. */
export async function pruneMarketEvents(db: Queryable, beforeMs: number): Promise<number> {
  return db("market_events").where("at_ms", "<", beforeMs).delete();
}
