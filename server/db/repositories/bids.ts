/**
 * Applicants of a task (table `task_bids`): one bid per agent and task (the primary key refuses a second, so
 * ALREADY_APPLIED is race-free), with the agent's reputation score when it bid.
 */
import { isUniqueViolation } from "./listings";
import type { ChainName } from "../../escrow/records";
import type { Queryable } from "./util";

export interface BidRecord {
  /** The task's settlement chain. */
  chain: ChainName;
  taskId: number;
  agent: string;
  message: string | null;
  /** The agent's reputation score when it bid (a decimal string). */
  score: string;
  /** Unix seconds (wall clock). */
  createdAt: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const fromRow = (r: any): BidRecord => ({
  chain: r.chain as ChainName,
  taskId: Number(r.task_id),
  agent: r.agent,
  message: r.message ?? null,
  score: String(r.score),
  createdAt: Number(r.created_at),
});

/** Records a bid; false when the agent has applied to the task already. */
export async function insertBid(db: Queryable, bid: BidRecord): Promise<boolean> {
  try {
    await db("task_bids").insert({
      chain: bid.chain,
      task_id: bid.taskId,
      agent: bid.agent.toLowerCase(),
      message: bid.message,
      score: bid.score,
      created_at: bid.createdAt,
    });
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

export async function findBid(
  db: Queryable,
  taskId: number,
  agent: string,
  chain: ChainName,
): Promise<BidRecord | undefined> {
  const row = await db("task_bids").where({ chain, task_id: taskId, agent: agent.toLowerCase() }).first();
  return row ? fromRow(row) : undefined;
}

/** A task's bids, oldest first. */
export async function listBids(db: Queryable, taskId: number, chain: ChainName): Promise<BidRecord[]> {
  const rows = await db("task_bids")
    .where({ chain, task_id: taskId })
    .orderBy([{ column: "created_at" }, { column: "agent" }]);
  return rows.map(fromRow);
}
