/**
 * Deliverables (table `task_submissions`): one row per task (its chain and on-chain id) and attempt (1..3, the
 * escrow's submission count once the worker's submitEvidence is mined). `result` is the canonical JSON of the result;
 * `evidence_hash` its keccak256.
 * A row is written before its transaction exists, so a row whose attempt is above the chain's count is pending.
 * The verdict columns record who judged an attempt and how (the chain's VerificationCompleted is the truth).
 */
import { isUniqueViolation } from "./listings";
import { TASK_STATUS, type ChainName } from "../../escrow/records";
import { chunks, type Queryable } from "./util";

/** The where clause of one chain's rows, or of every chain's when none is named. */
const onChain = (chain: ChainName | undefined): { chain?: ChainName } => (chain === undefined ? {} : { chain });

export type Verdict = "pass" | "fail";

export interface SubmissionRecord {
  /** The task's settlement chain. */
  chain: ChainName;
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
  chain: r.chain as ChainName,
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
  s: Pick<SubmissionRecord, "chain" | "taskId" | "attempt" | "agent" | "result" | "evidenceHash" | "submittedAt">,
): Promise<boolean> {
  try {
    await db("task_submissions").insert({
      chain: s.chain,
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

/** Attempt `attempt` of the task `taskId` of `chain` (every caller with a chain passes it; without, of any chain). */
export async function findSubmission(
  db: Queryable,
  taskId: number,
  attempt: number,
  chain?: ChainName,
): Promise<SubmissionRecord | undefined> {
  const row = await db("task_submissions")
    .where({ task_id: taskId, attempt, ...onChain(chain) })
    .first();
  return row ? fromRow(row) : undefined;
}

/** Every stored attempt of a task, oldest first. */
export async function listSubmissions(db: Queryable, taskId: number, chain: ChainName): Promise<SubmissionRecord[]> {
  const rows = await db("task_submissions").where({ chain, task_id: taskId }).orderBy("attempt");
  return rows.map(fromRow);
}

/**
 * The newest stored attempt of each task whose attempt is at most `maxAttempt` of that task (the chain's count: a
 * deliverable whose submitEvidence is mined). Keys of `upTo` are task ids of `chain` (every caller with a chain passes
 * it; without, of any chain).
 */
export async function latestSubmissions(
  db: Queryable,
  upTo: ReadonlyMap<number, number>,
  chain?: ChainName,
): Promise<Map<number, SubmissionRecord>> {
  const out = new Map<number, SubmissionRecord>();
  const ids = [...upTo.entries()].filter(([, max]) => max > 0).map(([id]) => id);
  for (const chunk of chunks(ids, 500)) {
    const rows = await db("task_submissions").where(onChain(chain)).whereIn("task_id", chunk).orderBy("attempt");
    for (const row of rows) {
      const s = fromRow(row);
      if (s.attempt <= (upTo.get(s.taskId) ?? 0)) out.set(s.taskId, s);
    }
  }
  return out;
}

/** A verdict on one attempt of a task. */
export interface VerdictWrite {
  chain: ChainName;
  taskId: number;
  attempt: number;
  verdict: Verdict;
  by: string;
  reason: string | null;
  at: number;
}

/**
 * Records the verdict on one attempt unless another verdict is recorded: true when the row now holds `verdict`
 * (newly, or already), false when it holds the other one or does not exist. `chain` names the task's chain (every
 * caller with a chain passes it; without, the attempt of that id on any chain).
 */
export async function recordVerdict(
  db: Queryable,
  v: Omit<VerdictWrite, "chain"> & { chain?: ChainName },
): Promise<boolean> {
  await db("task_submissions")
    .where({ task_id: v.taskId, attempt: v.attempt, ...onChain(v.chain) })
    .whereNull("verdict")
    .update({ verdict: v.verdict, verdict_by: v.by.toLowerCase(), verdict_reason: v.reason, verdict_at: v.at });
  const row = await findSubmission(db, v.taskId, v.attempt, v.chain);
  return row?.verdict === v.verdict;
}

/** Replaces the recorded verdict of one attempt (a verifier agent may change its mind before its transaction). */
export async function overwriteVerdict(db: Queryable, v: VerdictWrite): Promise<boolean> {
  const n = await db("task_submissions")
    .where({ chain: v.chain, task_id: v.taskId, attempt: v.attempt })
    .update({ verdict: v.verdict, verdict_by: v.by.toLowerCase(), verdict_reason: v.reason, verdict_at: v.at });
  return Number(n) > 0;
}

/** Clears a verdict recorded as `verdict` (its chain call could not be made: state unchanged). */
export async function clearVerdict(
  db: Queryable,
  v: Pick<VerdictWrite, "chain" | "taskId" | "attempt" | "verdict">,
): Promise<void> {
  await db("task_submissions")
    .where({ chain: v.chain, task_id: v.taskId, attempt: v.attempt, verdict: v.verdict })
    .update({ verdict: null, verdict_by: null, verdict_reason: null, verdict_at: null });
}

/**
 * Ids of the listed tasks in verification mode `mode` that are Submitted on-chain (their latest deliverable awaits a
 * verdict), oldest first: of `chain` when given, else of every chain. A listing and a projection row match by chain and
 * task hash too (after a reorg an id may differ).
 */
export async function listSubmittedTaskIds(db: Queryable, mode: string, chain?: ChainName): Promise<number[]> {
  const rows = await db("tasks")
    .join("listings", (j) => j.on("listings.chain", "tasks.chain").andOn("listings.task_id", "tasks.task_id"))
    .where(chain === undefined ? {} : { "tasks.chain": chain })
    .where("tasks.status", TASK_STATUS.Submitted)
    .where("listings.verification_mode", mode)
    .whereRaw("listings.task_hash = tasks.task_hash")
    .orderBy("tasks.task_id")
    .select("tasks.task_id");
  return rows.map((r: { task_id: number | string }) => Number(r.task_id));
}
