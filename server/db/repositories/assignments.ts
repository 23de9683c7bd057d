/**
 * Who the marketplace assigned (table `task_assignments`): one row per task, keyed by the task id, so of many
 * concurrent accepts at most one records an assignment. `via` is `accept` (the marketplace verifier performs
 * marketplaceAssign, intent `intentId`) or `poster` (the poster's own assignWorker, seen on-chain).
 */
import { isUniqueViolation } from "./listings";
import { placeholders, queryRows, type Queryable } from "./util";
import type { ChainName } from "../../escrow/records";

export type AssignmentVia = "accept" | "poster";

export interface AssignmentRecord {
  taskId: number;
  agent: string;
  via: AssignmentVia;
  intentId: number | null;
  /** Unix seconds (wall clock). */
  acceptedAt: number;
}

/** The columns of `task_assignments`. */
export const ASSIGNMENT_COLUMNS = ["task_id", "agent", "via", "intent_id", "accepted_at", "chain"] as const;

/** A `task_assignments` row as an AssignmentRecord. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const assignmentFromRow = (r: any): AssignmentRecord => ({
  taskId: Number(r.task_id),
  agent: r.agent,
  via: r.via as AssignmentVia,
  intentId: r.intent_id === null || r.intent_id === undefined ? null : Number(r.intent_id),
  acceptedAt: Number(r.accepted_at),
});

/**
 * Records an assignment; false when the task has one already (the primary key decides between concurrent
 * writers). Inside a PostgreSQL transaction a refused insert aborts the transaction: roll it back on false.
 */
export async function insertAssignment(db: Queryable, a: AssignmentRecord): Promise<boolean> {
  try {
    await db("task_assignments").insert({
      task_id: a.taskId,
      agent: a.agent.toLowerCase(),
      via: a.via,
      intent_id: a.intentId,
      accepted_at: a.acceptedAt,
    });
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

export async function findAssignment(db: Queryable, taskId: number): Promise<AssignmentRecord | undefined> {
  const row = await db("task_assignments").where({ task_id: taskId }).first();
  return row ? assignmentFromRow(row) : undefined;
}

export async function setAssignmentIntent(
  db: Queryable,
  taskId: number,
  agent: string,
  intentId: number,
): Promise<void> {
  await db("task_assignments").where({ task_id: taskId, agent: agent.toLowerCase() }).update({ intent_id: intentId });
}

/** Deletes exactly this assignment (matched on agent and time, so a newer one is never removed by mistake). */
export async function deleteAssignment(db: Queryable, a: Pick<AssignmentRecord, "taskId" | "agent" | "acceptedAt">) {
  await db("task_assignments")
    .where({ task_id: a.taskId, agent: a.agent.toLowerCase(), accepted_at: a.acceptedAt })
    .delete();
}

/** Assignments of the given tasks of `chain` (without one: whichever chain's), by task id. */
export async function getAssignments(
  db: Queryable,
  taskIds: readonly number[],
  chain?: ChainName,
): Promise<Map<number, AssignmentRecord>> {
  if (taskIds.length === 0) return new Map();
  const rows = await queryRows(
    db,
    `select * from "task_assignments" where "task_id" in (${placeholders(taskIds.length)})` +
      (chain ? ` and "chain" = ?` : ""),
    chain ? [...taskIds, chain] : taskIds,
  );
  return new Map(rows.map((r) => [Number(r.task_id), assignmentFromRow(r)]));
}
