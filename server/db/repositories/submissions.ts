/**
 * Deliverables (table `task_submissions`): one row per task and attempt (1..3, the escrow's submission count once
 * the worker's submitEvidence is mined). `result` is the canonical JSON of the result; `evidence_hash` its keccak256.
 * A row is written before its transaction exists, so a row whose attempt is above the chain's count is pending.
 * The verdict columns record who judged an attempt and how (the chain's VerificationCompleted is the truth).
 */
import { isUniqueViolation } from "./listings";
import { TASK_STATUS, type ChainName } from "../../escrow/records";
import { chunks, type Queryable } from "./util";

export type Verdict = "pass" | "fail";

export interface SubmissionRecord {
  taskId: number;
  attempt: number;
  agent: string;
  /** Canonical JSON of the result. */
  result: string;
  evidenceHash: string;
  verdict: Verdict | null;
  verdictBy: string | null;
  verdictReason: string | null;
  /** Unix seconds (chain time). */
  submittedAt: number;
  verdictAt: number | null;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const fromRow = (r: any): SubmissionRecord => ({
  taskId: Number(r.task_id),
  attempt: Number(r.attempt),
  agent: r.agent,
  result: r.result,
  evidenceHash: r.evidence_hash,
  verdict: (r.verdict ?? null) as Verdict | null,
  verdictBy: r.verdict_by ?? null,
  verdictReason: r.verdict_reason ?? null,
  submittedAt: Number(r.submitted_at),
  verdictAt: r.verdict_at === null || r.verdict_at === undefined ? null : Number(r.verdict_at),
});

/**
 * Stores attempt `s.attempt` of a task; false when that attempt is stored already (the primary key decides between
 * concurrent submits). Inside a PostgreSQL transaction a refused insert aborts the transaction.
 */
export async function insertSubmission(
  db: Queryable,
  s: Pick<SubmissionRecord, "taskId" | "attempt" | "agent" | "result" | "evidenceHash" | "submittedAt">,
): Promise<boolean> {
  try {
    await db("task_submissions").insert({
      task_id: s.taskId,
      attempt: s.attempt,
      agent: s.agent.toLowerCase(),
      result: s.result,
      evidence_hash: s.evidenceHash.toLowerCase(),
      verdict: null,
      verdict_by: null,
      verdict_reason: null,
      submitted_at: s.submittedAt,
      verdict_at: null,
    });
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

export async function findSubmission(
  db: Queryable,
  taskId: number,
  attempt: number,
): Promise<SubmissionRecord | undefined> {
  const row = await db("task_submissions").where({ task_id: taskId, attempt }).first();
  return row ? fromRow(row) : undefined;
}

/** Every stored attempt of a task, oldest first. */
export async function listSubmissions(db: Queryable, taskId: number): Promise<SubmissionRecord[]> {
  const rows = await db("task_submissions").where({ task_id: taskId }).orderBy("attempt");
  return rows.map(fromRow);
}

/**
 * The newest stored attempt of each task whose attempt is at most `maxAttempt` of that task (the chain's count: a
 * deliverable whose submitEvidence is mined). Keys of `upTo` are task ids of `chain` (without one: whichever chain's).
 */
export async function latestSubmissions(
  db: Queryable,
  upTo: ReadonlyMap<number, number>,
  chain?: ChainName,
): Promise<Map<number, SubmissionRecord>> {
  const out = new Map<number, SubmissionRecord>();
  const ids = [...upTo.entries()].filter(([, max]) => max > 0).map(([id]) => id);
  for (const chunk of chunks(ids, 500)) {
    const rows = await db("task_submissions")
      .where(chain ? { chain } : {})
      .whereIn("task_id", chunk)
      .orderBy("attempt");
    for (const row of rows) {
      const s = fromRow(row);
      if (s.attempt <= (upTo.get(s.taskId) ?? 0)) out.set(s.taskId, s);
    }
  }
  return out;
}

/**
 * Records the verdict on one attempt unless another verdict is recorded: true when the row now holds `verdict`
 * (newly, or already), false when it holds the other one or does not exist.
 */
export async function recordVerdict(
  db: Queryable,
  v: { taskId: number; attempt: number; verdict: Verdict; by: string; reason: string | null; at: number },
): Promise<boolean> {
  await db("task_submissions")
    .where({ task_id: v.taskId, attempt: v.attempt })
    .whereNull("verdict")
    .update({ verdict: v.verdict, verdict_by: v.by.toLowerCase(), verdict_reason: v.reason, verdict_at: v.at });
  const row = await findSubmission(db, v.taskId, v.attempt);
  return row?.verdict === v.verdict;
}

/** Replaces the recorded verdict of one attempt (a verifier agent may change its mind before its transaction). */
export async function overwriteVerdict(
  db: Queryable,
  v: { taskId: number; attempt: number; verdict: Verdict; by: string; reason: string | null; at: number },
): Promise<boolean> {
  const n = await db("task_submissions")
    .where({ task_id: v.taskId, attempt: v.attempt })
    .update({ verdict: v.verdict, verdict_by: v.by.toLowerCase(), verdict_reason: v.reason, verdict_at: v.at });
  return Number(n) > 0;
}

/** Clears a verdict recorded as `verdict` (its chain call could not be made: state unchanged). */
export async function clearVerdict(db: Queryable, taskId: number, attempt: number, verdict: Verdict): Promise<void> {
  await db("task_submissions")
    .where({ task_id: taskId, attempt, verdict })
    .update({ verdict: null, verdict_by: null, verdict_reason: null, verdict_at: null });
}

/**
 * Ids of the listed tasks in verification mode `mode` that are Submitted on-chain (their latest deliverable awaits a
 * verdict), oldest first. A listing and a projection row match by task hash too (after a reorg an id may differ).
 */
export async function listSubmittedTaskIds(db: Queryable, mode: string): Promise<number[]> {
  const rows = await db("tasks")
    .join("listings", "listings.task_id", "tasks.task_id")
    .where("tasks.status", TASK_STATUS.Submitted)
    .where("listings.verification_mode", mode)
    .whereRaw("listings.task_hash = tasks.task_hash")
    .orderBy("tasks.task_id")
    .select("tasks.task_id");
  return rows.map((r: { task_id: number | string }) => Number(r.task_id));
}
