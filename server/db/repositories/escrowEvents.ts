import type { ChainName, StoredEvent } from "../../escrow/records";
import { bulkInsert, inIds, insertChunks, queryRows, type Queryable } from "./util";

interface EventRow {
  chain: ChainName;
  block_number: number;
  log_index: number;
  block_hash: string;
  tx_hash: string;
  tx_index: number;
  block_timestamp: number;
  event_name: string;
  task_id: number | null;
  args: string;
}

const toRow = (chain: ChainName, e: StoredEvent): EventRow => ({
  chain,
  block_number: e.blockNumber,
  log_index: e.logIndex,
  block_hash: e.blockHash,
  tx_hash: e.txHash,
  tx_index: e.txIndex,
  block_timestamp: e.blockTimestamp,
  event_name: e.eventName,
  task_id: e.taskId,
  args: JSON.stringify(e.args),
});

const fromRow = (r: EventRow): StoredEvent => ({
  blockNumber: Number(r.block_number),
  logIndex: Number(r.log_index),
  blockHash: r.block_hash,
  txHash: r.tx_hash,
  txIndex: Number(r.tx_index),
  blockTimestamp: Number(r.block_timestamp),
  eventName: r.event_name,
  taskId: r.task_id === null ? null : Number(r.task_id),
  args: JSON.parse(r.args),
});

const EVENT_COLUMNS = Object.keys(toRow("base", { args: {} } as StoredEvent));
const EVENT_PG_TYPES = ["text", "bigint", "integer", "text", "text", "integer", "bigint", "text", "bigint", "text"];
const EVENT_CONFLICT = `on conflict ("chain", "tx_hash", "log_index") do nothing`;

/**
 * Stores the events not stored yet and returns those, in chain order: a replayed range inserts nothing and so
 * folds nothing.
 */
export async function insertNewEvents(
  db: Queryable,
  chain: ChainName,
  events: readonly StoredEvent[],
): Promise<StoredEvent[]> {
  if (events.length === 0) return [];
  const from = events[0].blockNumber;
  const to = events[events.length - 1].blockNumber;
  const existing = await db("escrow_events")
    .where({ chain })
    .whereBetween("block_number", [from, to])
    .select("tx_hash", "log_index");
  const seen = new Set(existing.map((r: { tx_hash: string; log_index: number }) => `${r.tx_hash}:${r.log_index}`));
  const fresh = events.filter((e) => !seen.has(`${e.txHash}:${e.logIndex}`));
  for (const chunk of insertChunks(db, fresh)) {
    const rows = chunk.map((e) => Object.values(toRow(chain, e)));
    await bulkInsert(db, "escrow_events", EVENT_COLUMNS, rows, EVENT_CONFLICT, EVENT_PG_TYPES);
  }
  return fresh;
}

/** Every stored event of the given tasks, in chain order. */
export async function listEventsOfTasks(
  db: Queryable,
  chain: ChainName,
  taskIds: readonly number[],
): Promise<StoredEvent[]> {
  if (taskIds.length === 0) return [];
  const ids = inIds(db, "task_id", taskIds);
  const rows = await queryRows(
    db,
    `select * from "escrow_events" where "chain" = ? and ${ids.sql} order by "block_number", "log_index"`,
    [chain, ids.binding],
  );
  return rows.map(fromRow);
}

/** Every stored event with one of `names`, in chain order. */
export async function listEventsNamed(
  db: Queryable,
  chain: ChainName,
  names: readonly string[],
): Promise<StoredEvent[]> {
  const rows = await db("escrow_events")
    .where({ chain })
    .whereIn("event_name", names)
    .orderBy(["block_number", "log_index"]);
  return rows.map(fromRow);
}

/** Deletes the events above `blockNumber`; returns what was deleted. */
export async function deleteEventsAfter(db: Queryable, chain: ChainName, blockNumber: number): Promise<StoredEvent[]> {
  const rows = await db("escrow_events").where({ chain }).where("block_number", ">", blockNumber);
  await db("escrow_events").where({ chain }).where("block_number", ">", blockNumber).delete();
  return rows.map(fromRow);
}

/** Stored events, of one chain or of all. */
export async function countEvents(db: Queryable, chain?: ChainName): Promise<number> {
  const row = await db("escrow_events")
    .where(chain ? { chain } : {})
    .count({ n: "*" })
    .first();
  return Number(row?.n ?? 0);
}

/**
 * The Credited and Withdrawn events of `account` (lower case), in chain order. The args text is JSON.stringify of
 * lower-case addresses, so the account's own `"account":"0x…"` pair selects its rows.
 */
export async function listCreditEventsOf(db: Queryable, chain: ChainName, account: string): Promise<StoredEvent[]> {
  const rows = await db("escrow_events")
    .where({ chain })
    .whereIn("event_name", ["Credited", "Withdrawn"])
    .where("args", "like", `%"account":"${account.toLowerCase()}"%`)
    .orderBy(["block_number", "log_index"]);
  return rows.map(fromRow);
}
