/**
 * One task's rows in one statement: the indexer's record (`tasks`), the marketplace listing with its capabilities
 * (`listings`, `listing_capabilities`) and the marketplace's assignment (`task_assignments`), found by on-chain id or
 * by brief hash. A task read (GET /tasks/{id}) and every marketplace action start here.
 *
 * Why one statement: on SQLite each statement pays about 7 µs before it reads a row (its implicit read transaction
 * takes and drops the WAL read lock and checks the file's size: three system calls), and each row set is built
 * apart. Read as arrays (queryArrays), the joined row costs 26 µs in sequence on bench:api's database against 50 for
 * the three statements it replaces (docs/performance.md, item 7).
 */
import { ASSIGNMENT_COLUMNS, assignmentFromRow, type AssignmentRecord } from "./assignments";
import { LISTING_COLUMNS, listingFromRow, type ListingRecord } from "./listings";
import { TASK_COLUMNS, taskFromRow } from "./tasks";
import { queryArrays, type Queryable } from "./util";
import type { TaskRecord } from "../../escrow/records";

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
  ) {}

  get end(): number {
    return this.offset + this.columns.length;
  }

  select(): string {
    return this.columns.map((c) => `"${this.alias}"."${c}" as "${this.alias}.${c}"`).join(", ");
  }

  /** The table's columns of a joined row under their own names; undefined when the join found no row. */
  read(values: readonly unknown[]): Record<string, unknown> | undefined {
    if (values[this.offset] === null) return undefined; // the first column, task_id, is never null in a stored row
    const out: Record<string, unknown> = {};
    for (let i = 0; i < this.columns.length; i++) out[this.columns[i]] = values[this.offset + i];
    return out;
  }
}

const TASK = new Joined("t", TASK_COLUMNS, 0);
const LISTING = new Joined("l", LISTING_COLUMNS, TASK.end);
const CAPABILITY = LISTING.end;
const ASSIGNMENT = new Joined("a", ASSIGNMENT_COLUMNS, CAPABILITY + 1);

/** The task id the joins start from: the id itself, or the task id of the listing with this hash. */
const BY_ID = `(select cast(? as bigint) as "task_id") "k"`;
const BY_HASH = `(select "task_id" from "listings" where "task_hash" = ?) "k"`;

const joined = (key: string) =>
  `select ${TASK.select()}, ${LISTING.select()}, "c"."capability" as "capability", ${ASSIGNMENT.select()} ` +
  `from ${key} ` +
  `left join "tasks" "t" on "t"."task_id" = "k"."task_id" ` +
  `left join "listings" "l" on "l"."task_id" = "k"."task_id" ` +
  `left join "listing_capabilities" "c" on "c"."task_id" = "k"."task_id" ` +
  `left join "task_assignments" "a" on "a"."task_id" = "k"."task_id" ` +
  `order by "c"."capability"`;
const SQL_BY_ID = joined(BY_ID);
const SQL_BY_HASH = joined(BY_HASH);

/**
 * The rows of the task with this on-chain id, or of the listed task with this brief hash (a hash nobody listed finds
 * nothing here: the indexer's tasks by hash are `findTasksByHash`). Hashes are matched lower-case.
 */
export async function findTaskRows(db: Queryable, key: { taskId: number } | { taskHash: string }): Promise<TaskRows> {
  const rows =
    "taskId" in key
      ? await queryArrays(db, SQL_BY_ID, [key.taskId])
      : await queryArrays(db, SQL_BY_HASH, [key.taskHash.toLowerCase()]);
  const first = rows[0];
  if (!first) return { task: undefined, listing: undefined, assignment: undefined };
  const task = TASK.read(first);
  const listing = LISTING.read(first);
  const assignment = ASSIGNMENT.read(first);
  const capabilities = rows.flatMap((r) => (r[CAPABILITY] === null ? [] : [r[CAPABILITY] as string]));
  return {
    task: task && taskFromRow(task),
    listing: listing && listingFromRow(listing, capabilities),
    assignment: assignment && assignmentFromRow(assignment),
  };
}
