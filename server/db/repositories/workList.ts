/**
 * An agent's work list: the listed tasks it is the on-chain worker of, or holds a marketplace assignment of (an
 * accept on its way to the chain), newest first. A task is its chain and on-chain id (ids repeat across chains).
 */
import { TASK_STATUS, type ChainName } from "../../escrow/records";
import { queryRows, type Queryable } from "./util";

/** A task of a work list: its chain and its on-chain id there. */
export interface ChainTaskId {
  chain: ChainName;
  taskId: number;
}

type Page = { limit: number; offset: number; chain?: ChainName };

const chainTaskId = (r: Record<string, unknown>): ChainTaskId => ({
  chain: r.chain as ChainName,
  taskId: Number(r.task_id),
});

export async function listWorkingTaskIds(
  db: Queryable,
  agent: string,
  page: Page,
): Promise<{ tasks: ChainTaskId[]; total: number }> {
  const who = agent.toLowerCase();
  const onChain = page.chain ? ` and "t"."chain" = ?` : "";
  const assigned = page.chain ? ` and "a"."chain" = ?` : "";
  const union =
    `select "t"."chain", "t"."task_id" from "tasks" "t" join "listings" "l" on "l"."chain" = "t"."chain" ` +
    `and "l"."task_id" = "t"."task_id" and "l"."task_hash" = "t"."task_hash" where "t"."worker" = ?${onChain}` +
    ` union select "a"."chain", "a"."task_id" from "task_assignments" "a" join "listings" "l" ` +
    `on "l"."chain" = "a"."chain" and "l"."task_id" = "a"."task_id" where "a"."agent" = ?${assigned}`;
  const bindings = page.chain ? [who, page.chain, who, page.chain] : [who, who];
  const rows = await queryRows(
    db,
    `select "chain", "task_id" from (${union}) "w" order by "task_id" desc, "chain" limit ? offset ?`,
    [...bindings, page.limit, page.offset],
  );
  const [count] = await queryRows(db, `select count(*) as "n" from (${union}) "w"`, bindings);
  return { tasks: rows.map(chainTaskId), total: Number(count?.n ?? 0) };
}

/**
 * A verifier agent's queue: the listed agent-mode tasks naming `verifier` as their verifier agent whose latest
 * submission is on-chain and awaits its verdict (status Submitted), oldest first.
 */
export async function listJudgingTaskIds(
  db: Queryable,
  verifier: string,
  page: Page,
): Promise<{ tasks: ChainTaskId[]; total: number }> {
  const who = verifier.toLowerCase();
  const where =
    `from "tasks" "t" join "listings" "l" on "l"."chain" = "t"."chain" and "l"."task_id" = "t"."task_id" ` +
    `and "l"."task_hash" = "t"."task_hash"` +
    ` where "l"."verifier_address" = ? and "l"."verification_mode" = 'agent' and "t"."status" = ?` +
    (page.chain ? ` and "t"."chain" = ?` : "");
  const bindings = page.chain ? [who, TASK_STATUS.Submitted, page.chain] : [who, TASK_STATUS.Submitted];
  const rows = await queryRows(
    db,
    `select "t"."chain", "t"."task_id" ${where} order by "t"."task_id" asc, "t"."chain" limit ? offset ?`,
    [...bindings, page.limit, page.offset],
  );
  const [count] = await queryRows(db, `select count(*) as "n" ${where}`, bindings);
  return { tasks: rows.map(chainTaskId), total: Number(count?.n ?? 0) };
}
