/**
 * The database's data version: a value that is different after any write committed by any connection, of this
 * process or another, so that a read cached under one version is never served once something was written since.
 * The hot reads (the open-task pages, one task's rows, the pause periods) key their caches by it: a status change the
 * indexer commits, a listing or an assignment shows at the next read, whichever process wrote it.
 *
 * - SQLite: `total_changes()` counts the rows this connection has written (the one connection of the process) and
 *   `data_version` changes when another connection (another process: a standalone indexer) has committed. Reading
 *   data_version takes the statement's read transaction, so it sees every commit made before the statement.
 * - PostgreSQL: `pg_current_snapshot()`, whose text (xmin:xmax:in-progress ids) changes when any transaction that
 *   wrote commits: a writer that had its id before the snapshot is listed in progress or at or above xmax, and after
 *   its commit it is neither.
 *
 * A version may change without a change the reads care about (any table, or on PostgreSQL another schema's writes):
 * that costs a cache miss, never a stale read. Data read after the version was read is at least as new as it, so an
 * entry computed under a version is never older than its key says.
 */
import type { Knex } from "knex";
import { freshShared } from "../../freshShared";
import { queryArrays } from "./util";

const SQLITE = `select total_changes() || ':' || "data_version" from pragma_data_version()`;
const POSTGRES = `select pg_current_snapshot()::text`;

/** The data version now (one statement). */
export async function readDataVersion(db: Knex): Promise<string> {
  const [row] = await queryArrays(db, db.client.config.client === "pg" ? POSTGRES : SQLITE);
  return String(row[0]);
}

/**
 * Reads of the data version shared by concurrent requests (`freshShared`): a call joins the next read to start, never
 * one already running (which may have begun before the call, and so may miss a write its client has seen committed).
 * The next read starts in the event loop's check phase, so every request whose handler ran in this turn of the loop
 * shares one statement (on SQLite a statement pays about as much in locking as the task's whole row costs:
 * db/repositories/taskRows.ts), and on PostgreSQL one round trip answers every request that arrived while the
 * previous one ran.
 */
const readers = new WeakMap<Knex, () => Promise<string>>();

/** The data version of `db` now, read after this call began (concurrent calls share one read). */
export function dataVersion(db: Knex): Promise<string> {
  let read = readers.get(db);
  if (!read) readers.set(db, (read = freshShared(() => readDataVersion(db), { start: "loopTurn" })));
  return read();
}
