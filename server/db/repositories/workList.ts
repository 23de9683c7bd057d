/**
 * An agent's work list: the listed tasks it is the on-chain worker of, or holds a marketplace assignment of (an
 * accept on its way to the chain), newest first.
 */
import { TASK_STATUS } from "../../escrow/records";
import { queryRows, type Queryable } from "./util";

export async function listWorkingTaskIds(
  db: Queryable,
  agent: string,
  page: { limit: number; offset: number },
): Promise<{ taskIds: number[]; total: number }> {
  const who = agent.toLowerCase();
  const union =
    `select "t"."task_id" from "tasks" "t" join "listings" "l" on "l"."task_id" = "t"."task_id" and "l"."task_hash" = "t"."task_hash" where "t"."worker" = ?` +
    ` union select "a"."task_id" from "task_assignments" "a" join "listings" "l" on "l"."task_id" = "a"."task_id" where "a"."agent" = ?`;
  const rows = await queryRows(db, `select "task_id" from (${union}) "w" order by "task_id" desc limit ? offset ?`, [
    who,
    who,
    page.limit,
    page.offset,
  ]);
  const [count] = await queryRows(db, `select count(*) as "n" from (${union}) "w"`, [who, who]);
  return { taskIds: rows.map((r) => Number(r.task_id)), total: Number(count?.n ?? 0) };
}

/**
 * A verifier agent's queue: the listed agent-mode tasks naming `verifier` as their verifier agent whose latest
 * submission is on-chain and awaits its verdict (status Submitted), oldest first.
 */
export async function listJudgingTaskIds(
  db: Queryable,
  verifier: string,
  page: { limit: number; offset: number },
): Promise<{ taskIds: number[]; total: number }> {
  const who = verifier.toLowerCase();
  const where =
    `from "tasks" "t" join "listings" "l" on "l"."task_id" = "t"."task_id" and "l"."task_hash" = "t"."task_hash"` +
    ` where "l"."verifier_address" = ? and "l"."verification_mode" = 'agent' and "t"."status" = ?`;
  const rows = await queryRows(db, `select "t"."task_id" ${where} order by "t"."task_id" asc limit ? offset ?`, [
    who,
    TASK_STATUS.Submitted,
    page.limit,
    page.offset,
  ]);
  const [count] = await queryRows(db, `select count(*) as "n" ${where}`, [who, TASK_STATUS.Submitted]);
  return { taskIds: rows.map((r) => Number(r.task_id)), total: Number(count?.n ?? 0) };
}
