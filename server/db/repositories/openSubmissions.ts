import type { ChainName } from "../../escrow/records";
import type { OpenSubmissions } from "../../escrow/records";
import { bulkInsert, chunks, inIds, insertChunks, queryRows, upsertClause, type Queryable } from "./util";

export async function loadOpenSubmissions(
  db: Queryable,
  chain: ChainName,
  taskIds: readonly number[],
): Promise<OpenSubmissions> {
  const out: OpenSubmissions = new Map();
  if (taskIds.length === 0) return out;
  const ids = inIds(db, "task_id", taskIds);
  const rows = await queryRows(
    db,
    `select "task_id", "submitter", "evidence_hash" from "open_submissions" where "chain" = ? and ${ids.sql}`,
    [chain, ids.binding],
  );
  for (const r of rows) {
    const taskId = Number(r.task_id);
    if (!out.has(taskId)) out.set(taskId, new Map());
    out.get(taskId)!.set(r.submitter, r.evidence_hash);
  }
  return out;
}

const SUBMISSION_COLUMNS = ["chain", "task_id", "submitter", "evidence_hash", "block_number"];
const SUBMISSION_PG_TYPES = ["text", "bigint", "text", "text", "bigint"];
const SUBMISSION_UPSERT = upsertClause(["chain", "task_id", "submitter"], SUBMISSION_COLUMNS);

export async function insertOpenSubmissions(
  db: Queryable,
  chain: ChainName,
  rows: readonly { taskId: number; submitter: string; evidenceHash: string; blockNumber: number }[],
): Promise<void> {
  // A submitter twice in one statement would be a second update of one row, which PostgreSQL refuses: the last wins.
  const latest = new Map(rows.map((r) => [`${r.taskId}:${r.submitter}`, r]));
  for (const chunk of insertChunks(db, [...latest.values()])) {
    const values = chunk.map((r) => [chain, r.taskId, r.submitter, r.evidenceHash, r.blockNumber]);
    await bulkInsert(db, "open_submissions", SUBMISSION_COLUMNS, values, SUBMISSION_UPSERT, SUBMISSION_PG_TYPES);
  }
}

/** Forgets the submissions of `taskIds` (a rollback re-folds them from the remaining events). */
export async function deleteOpenSubmissionsOf(
  db: Queryable,
  chain: ChainName,
  taskIds: readonly number[],
): Promise<void> {
  for (const ids of chunks(taskIds, 500))
    await db("open_submissions").where({ chain }).whereIn("task_id", ids).delete();
}
