/**
 * One task's rows in one statement: the indexer's record (`tasks`), the marketplace listing with its capabilities
 * (`listings`, `listing_capabilities`) and the marketplace's assignment (`task_assignments`), found by on-chain id or
 * by brief hash. A task read (GET /tasks/{id}) and every marketplace action start here.
 *
 * Why one statement: on SQLite each statement pays a fixed cost before it reads a row (its implicit read transaction
 * takes and drops the WAL read lock and checks the file's size: three system calls), and each row set is built
 * apart; one joined row, read as an array (queryArrays), costs about half of one statement per table (measured in
 * docs/performance.md). The capabilities come joined into one value, so a task is one row.
 */
import { ASSIGNMENT_COLUMNS, assignmentFromRow, type AssignmentRecord } from "./assignments";
import { LISTING_COLUMNS, listingFromRow, type ListingRecord } from "./listings";
import { TASK_COLUMNS, taskFromRow } from "./tasks";
import { queryArrays, type Queryable } from "./util";
import type { ChainName, TaskRecord } from "../../escrow/records";

export interface TaskRows {
  /** The indexed on-chain record, when the indexer has it. */
  task?: TaskRecord;
  /** The marketplace listing, when the task is listed. */
  listing?: ListingRecord;
  /** The marketplace's assignment of the task, when one is stored (whether it still holds is the domain's rule). */
  assignment?: AssignmentRecord;
}

/**
 * One joined table's columns: selected under `alias.column` names (the tables share column names) and read back from
 * the row's values, where they start at `offset`.
 */
class Joined {
  constructor(
    private readonly alias: string,
    private readonly columns: readonly string[],
    readonly offset: number,
  ) {
    this.blank = Object.fromEntries(columns.map((c) => [c, null]));
  }

  get end(): number {
    return this.offset + this.columns.length;
  }

  select(): string {
    return this.columns.map((c) => `"${this.alias}"."${c}" as "${this.alias}.${c}"`).join(", ");
  }

  /** Every column once, null: copied per row, so each row object is built at its final size in one allocation. */
  private readonly blank: Readonly<Record<string, unknown>>;

  /** The table's columns of a joined row under their own names; undefined when the join found no row. */
  read(values: readonly unknown[]): Record<string, unknown> | undefined {
    if (values[this.offset] === null) return undefined; // the first column, task_id, is never null in a stored row
    const out = { ...this.blank };
    for (let i = 0; i < this.columns.length; i++) out[this.columns[i]] = values[this.offset + i];
    return out;
  }
}

const TASK = new Joined("t", TASK_COLUMNS, 0);
const LISTING = new Joined("l", LISTING_COLUMNS, TASK.end);
const CAPABILITIES = LISTING.end;
const ASSIGNMENT = new Joined("a", ASSIGNMENT_COLUMNS, CAPABILITIES + 1);

/** The chain and task id the joins start from: the id itself on its chain, or those of the listing with this hash. */
const BY_ID = `(select cast(? as varchar(8)) as "chain", cast(? as bigint) as "task_id") "k"`;
const BY_HASH = `(select "chain", "task_id" from "listings" where "task_hash" = ?) "k"`;

/**
 * The listing's capabilities as one comma-joined value, in the order the other listing reads give (a capability never
 * holds a comma: capabilitiesSchema), so that a task is one row however many it has: a row per capability repeated
 * the task's 56 values, allocation that makes young-generation collections more frequent (docs/performance.md,
 * item 9). `aggregate` is the dialect's: string_agg on PostgreSQL, group_concat on SQLite (its ORDER BY needs SQLite
 * 3.44: better-sqlite3 12 has 3.53, sqlite3 5.1.7 has 3.44.2).
 */
const capabilities = (aggregate: string) =>
  `(select ${aggregate}("c"."capability", ',' order by "c"."capability") from "listing_capabilities" "c" ` +
  `where "c"."chain" = "k"."chain" and "c"."task_id" = "k"."task_id")`;

const joined = (key: string, aggregate: string) =>
  `select ${TASK.select()}, ${LISTING.select()}, ${capabilities(aggregate)} as "capabilities", ${ASSIGNMENT.select()} ` +
  `from ${key} ` +
  `left join "tasks" "t" on "t"."chain" = "k"."chain" and "t"."task_id" = "k"."task_id" ` +
  `left join "listings" "l" on "l"."chain" = "k"."chain" and "l"."task_id" = "k"."task_id" ` +
  `left join "task_assignments" "a" on "a"."chain" = "k"."chain" and "a"."task_id" = "k"."task_id"`;
const SQLITE = { byId: joined(BY_ID, "group_concat"), byHash: joined(BY_HASH, "group_concat") };
const POSTGRES = { byId: joined(BY_ID, "string_agg"), byHash: joined(BY_HASH, "string_agg") };

/**
 * The rows of the task with this on-chain id on `chain` (default `base`), or of the listed task with this brief hash (a hash nobody listed finds
 * nothing here: the indexer's tasks by hash are `findTasksByHash`). Hashes are matched lower-case.
 */
export async function findTaskRows(
  db: Queryable,
  key: { taskId: number; chain?: ChainName } | { taskHash: string },
): Promise<TaskRows> {
  const sql = db.client.config.client === "pg" ? POSTGRES : SQLITE;
  const [row] =
    "taskId" in key
      ? await queryArrays(db, sql.byId, [key.chain ?? "base", key.taskId])
      : await queryArrays(db, sql.byHash, [key.taskHash.toLowerCase()]);
  if (!row) return { task: undefined, listing: undefined, assignment: undefined };
  const task = TASK.read(row);
  const listing = LISTING.read(row);
  const assignment = ASSIGNMENT.read(row);
  const joinedCapabilities = row[CAPABILITIES] as string | null;
  return {
    task: task && taskFromRow(task),
    listing: listing && listingFromRow(listing, joinedCapabilities ? joinedCapabilities.split(",") : []),
    assignment: assignment && assignmentFromRow(assignment),
  };
}
