/**
 * Marketplace figures (GET /api/v1/stats), each a count of real records (docs/api.md "Stats"):
 * - openTasks: listed tasks a worker could take now (the open-task list's total);
 * - totalAgents: wallets that are agents: registered executors, and wallets ever assigned work on-chain;
 * - activeAgents: agents active now: registered executors seen in the last RUNNING_WINDOW_SECONDS (10 minutes, the
 *   executor directory's "running"), and wallets holding unsettled work (Assigned, Submitted, Verified, Disputed);
 * - registeredUsers: wallets with an account: signed in, holding an API key, or registered as an executor;
 * - completedTasks: tasks paid out;
 * - byChain: openTasks and completedTasks of each configured chain; the top-level task figures are their sums, the
 *   agent and user figures count wallets once across chains (the same wallet settles on both).
 */
import type { Stats } from "./schemas/stats";
import type { ChainName } from "../escrow/records";
import type { Deps } from "./deps";
import { listOpenTasks } from "../db/repositories/tasks";
import { TASK_STATUS, ZERO_ADDRESS } from "../escrow/records";
import { RUNNING_WINDOW_SECONDS } from "./executors";

/** The number of distinct values of the union of `queries` (each selecting one column named address). */
async function distinctCount(deps: Deps, queries: readonly ReturnType<Deps["db"]>[]): Promise<number> {
  const [first, ...rest] = queries;
  const union = rest.length > 0 ? first.clone().union(rest.map((q) => q.clone())) : first;
  const row = (await deps.db.from(union.as("u")).count({ n: "*" }).first()) as { n?: number | string } | undefined;
  return Number(row?.n ?? 0);
}

export async function readStats(deps: Deps): Promise<Stats> {
  const { db } = deps;
  const now = await deps.clock.chainNow();
  const working = [TASK_STATUS.Assigned, TASK_STATUS.Submitted, TASK_STATUS.Verified, TASK_STATUS.Disputed];
  const seenSince = now - RUNNING_WINDOW_SECONDS; // executors are seen in chain time, like the directory
  const workers = db("tasks").whereNot({ worker: ZERO_ADDRESS }).select({ address: "worker" });
  const byChain: Stats["byChain"] = {};
  for (const { name } of deps.config.chains) byChain[name] = await chainStats(deps, name, now);
  const sum = (figure: "openTasks" | "completedTasks") =>
    Object.values(byChain).reduce((total, chain) => total + chain[figure], 0);
  return {
    openTasks: sum("openTasks"),
    totalAgents: await distinctCount(deps, [db("executors").select("address"), workers]),
    activeAgents: await distinctCount(deps, [
      db("executors").where("last_seen_at", ">=", seenSince).select("address"),
      db("tasks").whereIn("status", working).whereNot({ worker: ZERO_ADDRESS }).select({ address: "worker" }),
    ]),
    registeredUsers: await distinctCount(deps, [
      db("users").select("address"),
      db("api_keys").select("address"),
      db("executors").select("address"),
    ]),
    completedTasks: sum("completedTasks"),
    byChain,
  };
}

/** One chain's task figures: its open listed tasks (the open-task list's total on it) and its paid tasks. */
async function chainStats(deps: Deps, chain: ChainName, now: number) {
  const { db } = deps;
  const open = await listOpenTasks(db, { now, chain, limit: 0, offset: 0, listedOnly: true, untargetedOnly: true });
  const completed = (await db("tasks").where({ chain, status: TASK_STATUS.Completed }).count({ n: "*" }).first()) as
    { n?: number | string } | undefined;
  return { openTasks: open.total, completedTasks: Number(completed?.n ?? 0) };
}
