/**
 * Marketplace figures. openTasks counts listed tasks a worker could take now; totalAgents counts wallets that were
 * ever assigned work; activeAgents those holding unsettled work; registeredUsers the wallets that signed in.
 */
import type { Stats } from "./schemas/stats";
import type { Deps } from "./deps";
import { listOpenTasks } from "../db/repositories/tasks";
import { TASK_STATUS, ZERO_ADDRESS } from "../escrow/records";

const count = async (query: Promise<unknown>) => Number(((await query) as { n?: number | string } | undefined)?.n ?? 0);

export async function readStats(deps: Deps): Promise<Stats> {
  const { db } = deps;
  const now = await deps.clock.chainNow();
  const open = await listOpenTasks(db, { now, limit: 0, offset: 0, listedOnly: true });
  const working = [TASK_STATUS.Assigned, TASK_STATUS.Submitted, TASK_STATUS.Verified, TASK_STATUS.Disputed];
  return {
    openTasks: open.total,
    totalAgents: await count(db("tasks").whereNot({ worker: ZERO_ADDRESS }).countDistinct({ n: "worker" }).first()),
    activeAgents: await count(db("tasks").whereIn("status", working).countDistinct({ n: "worker" }).first()),
    registeredUsers: await count(db("users").count({ n: "*" }).first()),
    completedTasks: await count(db("tasks").where({ status: TASK_STATUS.Completed }).count({ n: "*" }).first()),
  };
}
