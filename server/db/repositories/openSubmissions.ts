import type { ChainName } from "../../escrow/records";
import type { OpenSubmissions } from "../../escrow/records";
import { chunks, type Queryable } from "./util";

export async function loadOpenSubmissions(
  db: Queryable,
  chain: ChainName,
  taskIds: readonly number[],
): Promise<OpenSubmissions> {
  const out: OpenSubmissions = new Map();
  for (const ids of chunks(taskIds, 500)) {
    const rows = await db("open_submissions").where({ chain }).whereIn("task_id", ids);
    for (const r of rows) {
      const taskId = Number(r.task_id);
      if (!out.has(taskId)) out.set(taskId, new Map());
      out.get(taskId)!.set(r.submitter, r.evidence_hash);
    }
  }
  return out;
}

export async function insertOpenSubmissions(
  db: Queryable,
  chain: ChainName,
  rows: readonly { taskId: number; submitter: string; evidenceHash: string; blockNumber: number }[],
): Promise<void> {
  const values = rows.map((r) => ({
    chain,
    task_id: r.taskId,
    submitter: r.submitter,
    evidence_hash: r.evidenceHash,
    block_number: r.blockNumber,
  }));
  for (const chunk of chunks(values)) {
    await db("open_submissions").insert(chunk).onConflict(["chain", "task_id", "submitter"]).merge();
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
