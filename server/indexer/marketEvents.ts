/**
 * The push events the escrow's logs mean for listed tasks (docs/api.md, "Events"), derived in the indexer's range
 * transaction so an event row lands exactly when its projection change does. Tasks the marketplace did not list
 * have no events. Listing events (task.listed, task.open, task.offered) are written by the domain when it lists.
 */
import { getListings } from "../db/repositories/listings";
import { insertMarketEvents, type NewMarketEvent } from "../db/repositories/marketEvents";
import type { Queryable } from "../db/repositories/util";
import { TASK_STATUS, ZERO_ADDRESS, type ChainName, type StoredEvent, type TaskRecord } from "../escrow/records";

type Derived = { type: string; status: number; fields: Record<string, unknown>; worker?: string };

/**
 * The push event each escrow event means, by event name: its type, the escrow status after it and the type's own
 * fields. An event not named here is not a push event, and its task's listing is not read.
 */
const DERIVE: Record<string, (e: StoredEvent, task: TaskRecord, ruled: boolean) => Derived> = {
  WorkerAssigned: (e) => ({
    type: "task.assigned",
    status: TASK_STATUS.Assigned,
    fields: {},
    worker: String(e.args.worker),
  }),
  WinnerSelected: (e, task) => ({
    type: "task.assigned",
    status: task.status,
    fields: {},
    worker: String(e.args.winner),
  }),
  EvidenceSubmitted: (e) => ({
    type: "task.submitted",
    status: TASK_STATUS.Submitted,
    fields: { attempt: Number(e.args.attempt), evidenceHash: String(e.args.evidenceHash) },
  }),
  VerificationCompleted: (e, task) => {
    const passed = Boolean(e.args.passed);
    return {
      type: "task.verdict",
      // A pass pays in the same transaction (TaskCompleted follows); a fail leaves the task Verified.
      status: passed ? TASK_STATUS.Completed : TASK_STATUS.Verified,
      fields: { passed, attempt: task.submissionAttempts },
    };
  },
  TaskDisputed: (e, task) => ({
    type: "task.disputed",
    status: TASK_STATUS.Disputed,
    fields: { by: String(e.args.initiator).toLowerCase(), escalated: task.escalated },
  }),
  TaskCompleted: (e) => ({
    type: "task.settled",
    status: TASK_STATUS.Completed,
    fields: { outcome: "paid", payout: String(e.args.workerPayout), fee: String(e.args.platformFee) },
  }),
  DeadlineExpired: (e) => ({
    type: "task.settled",
    status: TASK_STATUS.Cancelled,
    fields: { outcome: "refunded", refund: String(e.args.refundAmount) },
  }),
  // A ruling against the worker refunds the poster; a poster's cancel of an untaken task is a cancellation.
  TaskCancelled: (e, _task, ruled) => ({
    type: "task.settled",
    status: TASK_STATUS.Cancelled,
    fields: { outcome: ruled ? "refunded" : "cancelled", refund: String(e.args.refundAmount) },
  }),
};

/**
 * Writes the push events of `fresh` (chain order) for listed tasks; `tasks` is the projection after the range.
 * Returns how many event rows were added.
 */
export async function writeChainEvents(
  trx: Queryable,
  chain: ChainName,
  fresh: readonly StoredEvent[],
  tasks: ReadonlyMap<number, TaskRecord>,
): Promise<number> {
  // A backfill's task creations are most of its events and none is a push event: their tasks' listings are not read.
  const relevant = fresh.filter((e) => e.taskId !== null && Object.hasOwn(DERIVE, e.eventName) && tasks.has(e.taskId));
  if (relevant.length === 0) return 0;
  const listings = await getListings(trx, [...new Set(relevant.map((e) => e.taskId!))], chain);
  // Transactions that ruled on a task's dispute: their TaskCancelled is a refund.
  const rulings = new Set(fresh.filter((e) => e.eventName === "DisputeResolved").map((e) => `${e.txHash}:${e.taskId}`));
  const rows: NewMarketEvent[] = [];
  for (const e of relevant) {
    const task = tasks.get(e.taskId!)!;
    const listing = listings.get(e.taskId!);
    if (!listing || listing.taskHash !== task.taskHash) continue;
    const d = DERIVE[e.eventName](e, task, rulings.has(`${e.txHash}:${e.taskId}`));
    const worker = (d.worker ?? task.worker).toLowerCase();
    const hasWorker = worker !== ZERO_ADDRESS;
    rows.push({
      chain,
      type: d.type,
      taskId: task.taskId,
      taskHash: task.taskHash,
      poster: task.poster,
      worker: hasWorker ? worker : null,
      target: listing.targetExecutor,
      toPoster: true,
      toWorker: hasWorker,
      toTarget: false,
      toExecutors: false,
      onChainStatus: d.status,
      txHash: e.txHash,
      fields: d.type === "task.assigned" ? { worker } : d.fields,
      atMs: e.blockTimestamp * 1000,
      source: `log:${e.txHash}:${e.logIndex}:${d.type}`,
    });
  }
  return insertMarketEvents(trx, rows);
}
