import type { Knex } from "knex";
import { TASK_STATUS, type ChainName, type TaskRecord } from "../../escrow/records";
import { bulkInsert, chunks, inIds, insertChunks, queryRows, toBool, upsertClause, type Queryable } from "./util";

const toRow = (chain: ChainName, t: TaskRecord) => ({
  chain,
  task_id: t.taskId,
  poster: t.poster,
  worker: t.worker,
  token: t.token,
  amount: t.amount,
  task_hash: t.taskHash,
  evidence_hash: t.evidenceHash,
  status: t.status,
  category: t.category,
  location_zone: t.locationZone,
  created_at: t.createdAt,
  deadline: t.deadline,
  submission_attempts: t.submissionAttempts,
  disputed_at: t.disputedAt,
  verifier: t.verifier,
  failed_verdict_at: t.failedVerdictAt,
  escalated: t.escalated,
  is_open: t.isOpen,
  open_submission_count: t.openSubmissionCount,
  open_pick: t.openPick,
  open_picked_at: t.openPickedAt,
  open_outcome: t.openOutcome,
  held_released: t.heldReleased,
  fee_paid: t.feePaid,
  payout: t.payout,
  refund: t.refund,
  created_block: t.createdBlock,
  created_tx: t.createdTx,
  updated_block: t.updatedBlock,
});

/** A `tasks` row as a TaskRecord. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const taskFromRow = (r: any): TaskRecord => ({
  chain: r.chain,
  taskId: Number(r.task_id),
  poster: r.poster,
  worker: r.worker,
  token: r.token,
  amount: String(r.amount),
  taskHash: r.task_hash,
  evidenceHash: r.evidence_hash,
  status: Number(r.status),
  category: r.category,
  locationZone: r.location_zone,
  createdAt: Number(r.created_at),
  deadline: Number(r.deadline),
  submissionAttempts: Number(r.submission_attempts),
  disputedAt: Number(r.disputed_at),
  verifier: r.verifier,
  failedVerdictAt: Number(r.failed_verdict_at),
  escalated: toBool(r.escalated),
  isOpen: toBool(r.is_open),
  openSubmissionCount: Number(r.open_submission_count),
  openPick: r.open_pick,
  openPickedAt: Number(r.open_picked_at),
  openOutcome: r.open_outcome ?? null,
  heldReleased: toBool(r.held_released),
  feePaid: r.fee_paid ?? null,
  payout: r.payout ?? null,
  refund: r.refund ?? null,
  createdBlock: Number(r.created_block),
  createdTx: r.created_tx,
  updatedBlock: Number(r.updated_block),
});

export async function getTasks(
  db: Queryable,
  chain: ChainName,
  taskIds: readonly number[],
): Promise<Map<number, TaskRecord>> {
  const out = new Map<number, TaskRecord>();
  if (taskIds.length === 0) return out;
  const ids = inIds(db, "task_id", taskIds);
  const rows = await queryRows(db, `select * from "tasks" where "chain" = ? and ${ids.sql}`, [chain, ids.binding]);
  for (const r of rows) out.set(Number(r.task_id), taskFromRow(r));
  return out;
}

/** The columns of `tasks`. */
export const TASK_COLUMNS = Object.keys(toRow("base", {} as TaskRecord));
const TASK_UPSERT = upsertClause(["chain", "task_id"], TASK_COLUMNS);
const TASK_PG_TYPES = TASK_COLUMNS.map((c) =>
  ["escalated", "is_open", "held_released"].includes(c)
    ? "boolean"
    : ["status", "submission_attempts", "open_submission_count"].includes(c)
      ? "integer"
      : [
            "task_id",
            "created_at",
            "deadline",
            "disputed_at",
            "failed_verdict_at",
            "open_picked_at",
            "created_block",
            "updated_block",
          ].includes(c)
        ? "bigint"
        : "text",
);

export async function upsertTasks(db: Queryable, chain: ChainName, tasks: readonly TaskRecord[]): Promise<void> {
  await writeTasks(db, chain, tasks, TASK_UPSERT);
}

/**
 * Inserts tasks that have no row yet (the indexer's tasks created in the range it writes, a rebuild's after their
 * delete): a plain insert, without the upsert's conflict handling, and a row already there is an error rather than
 * overwritten.
 */
export async function insertTasks(db: Queryable, chain: ChainName, tasks: readonly TaskRecord[]): Promise<void> {
  await writeTasks(db, chain, tasks, "");
}

async function writeTasks(db: Queryable, chain: ChainName, tasks: readonly TaskRecord[], onConflict: string) {
  for (const chunk of insertChunks(db, tasks, 200)) {
    const rows = chunk.map((t) => Object.values(toRow(chain, t)));
    await bulkInsert(db, "tasks", TASK_COLUMNS, rows, onConflict, TASK_PG_TYPES);
  }
}

export async function deleteTasks(db: Queryable, chain: ChainName, taskIds: readonly number[]): Promise<void> {
  for (const ids of chunks(taskIds, 500)) await db("tasks").where({ chain }).whereIn("task_id", ids).delete();
}

/** The task `taskId` of `chain` (without a chain: the lowest chain name having one, a single-chain reader's view). */
export async function findTaskById(db: Queryable, taskId: number, chain?: ChainName): Promise<TaskRecord | undefined> {
  const [row] = chain
    ? await queryRows(db, `select * from "tasks" where "chain" = ? and "task_id" = ?`, [chain, taskId])
    : await queryRows(db, `select * from "tasks" where "task_id" = ? order by "chain" limit 1`, [taskId]);
  return row ? taskFromRow(row) : undefined;
}

/** Tasks funded with this brief hash, oldest first (the chain does not forbid reusing a hash). */
export async function findTasksByHash(db: Queryable, taskHash: string): Promise<TaskRecord[]> {
  const rows = await queryRows(db, `select * from "tasks" where "task_hash" = ? order by "task_id"`, [
    taskHash.toLowerCase(),
  ]);
  return rows.map(taskFromRow);
}

/**
 * SQL true when no task uses the hash bound twice (lowercase): none listed and none funded, on any chain; the
 * condition taskIdUsingHash answers the task of. A task build's claim runs it inside the claim (claimUnusedHash).
 */
export const taskHashUnusedSql =
  `not exists (select 1 from "listings" where "task_hash" = ?) ` +
  `and not exists (select 1 from "tasks" where "task_hash" = ?)`;

/**
 * The task already using `taskHash`, on any chain: the listed one (the listings table; a hash is listed once across
 * chains), else the oldest funded with it (the indexers' tasks table). One statement: a task build asks this of
 * every hash it cannot claim at once, and a batch of each of its hashes.
 */
export async function taskIdUsingHash(
  db: Queryable,
  taskHash: string,
): Promise<{ taskId: number; chain: ChainName } | undefined> {
  const hash = taskHash.toLowerCase();
  const rows = await queryRows(
    db,
    `select "task_id", "chain", 0 as "funded" from "listings" where "task_hash" = ? ` +
      `union all select "task_id", "chain", 1 as "funded" from "tasks" where "task_hash" = ? ` +
      `order by "funded", "task_id" limit 1`,
    [hash, hash],
  );
  const [row] = rows;
  return row ? { taskId: Number(row.task_id), chain: row.chain as ChainName } : undefined;
}

/**
 * The transactions that funded a task with `taskHash` on `chain` (with their blocks), oldest task first. Sorted by
 * `"task_id" + 0`, an expression: ordered by the column itself, SQLite's planner walks the primary key (chain,
 * task_id) to skip the sort, reading every task of the chain, instead of the few rows of `tasks_task_hash_chain`.
 */
export async function fundingTransactionsOfHash(
  db: Queryable,
  chain: ChainName,
  taskHash: string,
): Promise<{ txHash: string; block: number }[]> {
  const rows = await queryRows(
    db,
    `select "created_tx", "created_block" from "tasks" where "chain" = ? and "task_hash" = ? order by "task_id" + 0`,
    [chain, taskHash.toLowerCase()],
  );
  return rows.map((r) => ({ txHash: r.created_tx, block: Number(r.created_block) }));
}

export interface Page {
  limit: number;
  offset: number;
}

/**
 * SQL for a task's effective deadline: its deadline plus the seconds paused since its creation (the running pause
 * counted up to `now`), as the escrow computes it: escrow/rules.ts effectiveDeadline, which
 * test/server/db/effectiveDeadline.test.ts checks it against.
 */
export function effectiveDeadlineSql(db: Queryable, now: number): Knex.Raw {
  return db.raw(
    `(tasks.deadline + coalesce((select sum(coalesce(p.ended_at, ?) -
        case when p.started_at > tasks.created_at then p.started_at else tasks.created_at end)
      from pause_periods p where p.chain = tasks.chain and coalesce(p.ended_at, ?) > tasks.created_at), 0))`,
    [now, now],
  );
}

export interface OpenTaskFilter extends Page {
  now: number;
  /** Only tasks of this chain (default: every chain's). */
  chain?: ChainName;
  taskIds?: readonly number[];
  /** Only tasks listed on the marketplace (indexed through the API). */
  listedOnly?: boolean;
  /** Only tasks whose required capabilities are all in this set (listed tasks). */
  capabilities?: readonly string[];
  /** Only tasks posted by one of these wallets (lower-case). */
  posters?: readonly string[];
  /** Only listed tasks open to every agent (no targetExecutor): the public open-task list. */
  untargetedOnly?: boolean;
  /** Only listed tasks pinned to this agent (lower-case): its offered work. */
  offeredTo?: string;
  /** Only the listed task with this hash (lower-case), if it is open. */
  taskHash?: string;
  /** Only tasks listed at or after this time (unix seconds). */
  listedSince?: number;
  /** Newest listing first (then the newest task), instead of the newest task first. */
  newestListedFirst?: boolean;
}

/** Funded single-worker tasks before their effective deadline at `now`, newest first (or newest listing first). */
export async function listOpenTasks(
  db: Queryable,
  {
    now,
    chain,
    limit,
    offset,
    taskIds,
    listedOnly,
    capabilities,
    posters,
    untargetedOnly,
    offeredTo,
    taskHash,
    listedSince,
    newestListedFirst,
  }: OpenTaskFilter,
): Promise<{ tasks: TaskRecord[]; total: number }> {
  // With no pause ever recorded, the effective deadline is the deadline: skip the per-row pause subquery.
  const everPaused = (await db("pause_periods").first("seq")) !== undefined;
  const base = () => {
    const q = db("tasks").where({ status: TASK_STATUS.Funded, is_open: false });
    if (everPaused) q.where(effectiveDeadlineSql(db, now), ">", now);
    else q.where("deadline", ">", now);
    if (chain) q.where("tasks.chain", chain);
    if (taskIds) q.whereIn("task_id", taskIds);
    if (posters) q.whereIn("poster", posters.length ? [...posters] : [""]);
    if (
      listedOnly ||
      capabilities ||
      untargetedOnly ||
      offeredTo ||
      taskHash !== undefined ||
      listedSince !== undefined
    ) {
      const listed = db("listings")
        .select(db.raw("1"))
        .whereRaw("listings.task_id = tasks.task_id and listings.chain = tasks.chain");
      if (untargetedOnly) listed.whereNull("listings.target_executor");
      if (offeredTo) listed.where("listings.target_executor", offeredTo);
      if (taskHash !== undefined) listed.where("listings.task_hash", taskHash);
      if (listedSince !== undefined) listed.where("listings.listed_at", ">=", listedSince);
      q.whereExists(listed);
    }
    if (capabilities) {
      q.whereNotExists(
        db("listing_capabilities")
          .select(db.raw("1"))
          .whereRaw("listing_capabilities.task_id = tasks.task_id and listing_capabilities.chain = tasks.chain")
          .whereNotIn("capability", capabilities.length ? [...capabilities] : [""]),
      );
    }
    return q;
  };
  // Sequential: `db` may be a transaction, which is one connection.
  const page = base();
  if (newestListedFirst) {
    page.orderByRaw(
      "(select listings.listed_at from listings where listings.task_id = tasks.task_id and listings.chain = tasks.chain) desc",
    );
  }
  // Then by chain: two chains' tasks of the same id come in a stable order.
  const rows = await page
    .orderBy("task_id", "desc")
    .orderBy("tasks.chain")
    .limit(limit)
    .offset(offset)
    .select("tasks.*");
  const count = await base().count({ n: "*" }).first();
  return { tasks: rows.map(taskFromRow), total: Number(count?.n ?? 0) };
}

export async function listTasksByPoster(
  db: Queryable,
  poster: string,
  { limit, offset, chain }: Page & { chain?: ChainName },
): Promise<{ tasks: TaskRecord[]; total: number }> {
  const where = { poster: poster.toLowerCase(), ...(chain ? { chain } : {}) };
  const rows = await db("tasks").where(where).orderBy("task_id", "desc").orderBy("chain").limit(limit).offset(offset);
  const count = await db("tasks").where(where).count({ n: "*" }).first();
  return { tasks: rows.map(taskFromRow), total: Number(count?.n ?? 0) };
}

/** Open and completed tasks, of one chain or (without one) of every chain. */
export async function taskStats(
  db: Queryable,
  now: number,
  chain?: ChainName,
): Promise<{ openTasks: number; completedTasks: number }> {
  const open = await listOpenTasks(db, { now, chain, limit: 0, offset: 0 });
  const completed = await db("tasks")
    .where({ status: TASK_STATUS.Completed, ...(chain ? { chain } : {}) })
    .count({ n: "*" })
    .first();
  return { openTasks: open.total, completedTasks: Number(completed?.n ?? 0) };
}
