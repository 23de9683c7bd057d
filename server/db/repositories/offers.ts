/**
 * Exclusive offer windows (table `task_offers`): while a window is open only its agent may accept the task. A bid
 * takes the window when none is open or when its score is higher than the holder's; the comparison and the write are
 * one statement (insert, or take over the row under its lock), so concurrent bids cannot both win.
 */
import type { ChainName } from "../../escrow/records";
import type { Queryable } from "./util";

export interface OfferRecord {
  /** The task's settlement chain. */
  chain: ChainName;
  taskId: number;
  agent: string;
  /** The holder's reputation score (a decimal string). */
  score: string;
  /** Unix seconds (wall clock); the window is over at this second. */
  expiresAt: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const fromRow = (r: any): OfferRecord => ({
  chain: r.chain as ChainName,
  taskId: Number(r.task_id),
  agent: r.agent,
  score: String(r.score),
  expiresAt: Number(r.expires_at),
});

/**
 * Gives `agent` the window of `taskId` until `now + windowSeconds` when no window is open at `now` or `score` is
 * higher than the open window's. Returns the window taken, or undefined when the holder keeps it.
 */
export async function claimOffer(
  db: Queryable,
  offer: { chain: ChainName; taskId: number; agent: string; score: string; now: number; windowSeconds: number },
): Promise<OfferRecord | undefined> {
  const row = {
    chain: offer.chain,
    task_id: offer.taskId,
    agent: offer.agent.toLowerCase(),
    score: offer.score,
    expires_at: offer.now + offer.windowSeconds,
  };
  const rows = await db("task_offers")
    .insert(row)
    .onConflict(["chain", "task_id"])
    .merge({ agent: row.agent, score: row.score, expires_at: row.expires_at })
    .where((q) =>
      q
        .where("task_offers.expires_at", "<=", offer.now)
        .orWhereRaw("cast(task_offers.score as double precision) < cast(? as double precision)", [offer.score]),
    )
    .returning(["chain", "task_id", "agent", "score", "expires_at"]);
  return rows.length === 1 ? fromRow(rows[0]) : undefined;
}

/** The open window of a task at `now`, if any. */
export async function findOpenOffer(
  db: Queryable,
  taskId: number,
  now: number,
  chain: ChainName,
): Promise<OfferRecord | undefined> {
  const row = await db("task_offers").where({ chain, task_id: taskId }).andWhere("expires_at", ">", now).first();
  return row ? fromRow(row) : undefined;
}
