/**
 * The accept lock (table `accept_locks`): one agent at a time may be accepting a task. A lock is one row per task
 * (its chain and on-chain id) with an expiry (wall-clock Unix seconds), so a crashed accept frees the task by itself.
 * Taking it is one statement (insert, or take over an expired row), which PostgreSQL and SQLite evaluate against the
 * latest row under its lock: of many concurrent takers exactly one gets a row back.
 */
import type { ChainName } from "../../escrow/records";
import type { Queryable } from "./util";

export interface AcceptLock {
  chain: ChainName;
  taskId: number;
  agent: string;
  /** Unix seconds (wall clock); the lock is over at this second. */
  expiresAt: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const fromRow = (r: any): AcceptLock => ({
  chain: r.chain as ChainName,
  taskId: Number(r.task_id),
  agent: r.agent,
  expiresAt: Number(r.expires_at),
});

/**
 * Takes the lock of `taskId` for `agent` until `now + ttlSeconds`, unless another unexpired lock holds it (even the
 * same agent's: two concurrent accepts of one agent do not both pass). Returns the lock taken, or undefined.
 */
export async function acquireAcceptLock(
  db: Queryable,
  lock: { chain: ChainName; taskId: number; agent: string; now: number; ttlSeconds: number },
): Promise<AcceptLock | undefined> {
  const expiresAt = lock.now + lock.ttlSeconds;
  const rows = await db("accept_locks")
    .insert({ chain: lock.chain, task_id: lock.taskId, agent: lock.agent.toLowerCase(), expires_at: expiresAt })
    .onConflict(["chain", "task_id"])
    .merge({ agent: lock.agent.toLowerCase(), expires_at: expiresAt })
    .where("accept_locks.expires_at", "<=", lock.now)
    .returning(["chain", "task_id", "agent", "expires_at"]);
  return rows.length === 1 ? fromRow(rows[0]) : undefined;
}

/** Releases exactly the lock `lock` (an expired lock another agent has since taken is left alone). */
export async function releaseAcceptLock(db: Queryable, lock: AcceptLock): Promise<void> {
  await db("accept_locks")
    .where({ chain: lock.chain, task_id: lock.taskId, agent: lock.agent.toLowerCase(), expires_at: lock.expiresAt })
    .delete();
}

/** The lock row of a task, expired or not. */
export async function findAcceptLock(db: Queryable, taskId: number, chain: ChainName): Promise<AcceptLock | undefined> {
  const row = await db("accept_locks").where({ chain, task_id: taskId }).first();
  return row ? fromRow(row) : undefined;
}
