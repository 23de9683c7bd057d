/**
 * The pure event handlers of the indexer, for the open-submission events of the commit-reveal design: the projection
 * counts commitments as the escrow's openSubmissionCount does, records revealed evidence, and gives the winner its
 * revealed evidence.
 */
import { expect } from "chai";
import { emptyConfig, foldEvents, type FoldContext } from "../../../server/indexer/handlers";
import { TASK_STATUS, type StoredEvent, type TaskRecord } from "../../../server/escrow/records";

const POSTER = "0x00000000000000000000000000000000000000a1";
const FIRST = "0x00000000000000000000000000000000000000b1";
const SECOND = "0x00000000000000000000000000000000000000b2";
const EVIDENCE = `0x${"11".repeat(32)}`;
const OTHER_EVIDENCE = `0x${"22".repeat(32)}`;

let logIndex = 0;
function event(eventName: string, args: Record<string, unknown>, blockNumber = 1): StoredEvent {
  return {
    blockNumber,
    logIndex: logIndex++,
    blockHash: `0x${"00".repeat(32)}`,
    txHash: `0x${"ab".repeat(32)}`,
    txIndex: 0,
    blockTimestamp: 1_700_000_000 + blockNumber,
    eventName,
    taskId: 7,
    args: { taskId: "7", ...args } as StoredEvent["args"],
  };
}

function fold(events: StoredEvent[]): { task: TaskRecord; ctx: FoldContext } {
  const tasks = new Map<number, TaskRecord>();
  const ctx: FoldContext = { chain: "base", openSubmissions: new Map(), newSubmissions: [] };
  foldEvents(events, tasks, emptyConfig(), ctx);
  return { task: tasks.get(7)!, ctx };
}

const created = [
  event("TaskCreated", {
    agent: POSTER,
    token: POSTER,
    amount: "100",
    taskHash: EVIDENCE,
    category: "general",
    locationZone: "global",
    deadline: "1700086400",
  }),
  event("OpenTaskCreated", {}),
];
const commitments = [
  event("OpenSubmissionCommitted", { submitter: FIRST, commitment: EVIDENCE, bond: "5" }, 2),
  event("OpenSubmissionCommitted", { submitter: SECOND, commitment: OTHER_EVIDENCE, bond: "5" }, 2),
];

describe("server/indexer/handlers.ts (open submissions)", () => {
  it("counts each commitment, as the escrow's openSubmissionCount does", () => {
    const { task, ctx } = fold([...created, ...commitments]);
    expect(task.isOpen).to.equal(true);
    expect(task.openSubmissionCount).to.equal(2);
    expect(ctx.newSubmissions).to.deep.equal([]);
  });

  it("records a revealed submission's evidence without counting it again", () => {
    const { task, ctx } = fold([
      ...created,
      ...commitments,
      event("OpenSubmission", { submitter: SECOND, evidenceHash: OTHER_EVIDENCE }, 3),
    ]);
    expect(task.openSubmissionCount).to.equal(2);
    expect(ctx.openSubmissions.get(7)?.get(SECOND)).to.equal(OTHER_EVIDENCE);
    expect(ctx.newSubmissions).to.deep.equal([
      { taskId: 7, submitter: SECOND, evidenceHash: OTHER_EVIDENCE, blockNumber: 3 },
    ]);
  });

  it("gives the winner its revealed evidence, through forfeited bonds, and settles the task", () => {
    const { task } = fold([
      ...created,
      ...commitments,
      event("OpenSubmission", { submitter: SECOND, evidenceHash: OTHER_EVIDENCE }, 3),
      event("WinnerSelected", { winner: SECOND }, 4),
      event("OpenBondsForfeited", { recipient: POSTER, amount: "5" }, 4),
      event("TaskCompleted", { workerPayout: "90", platformFee: "10" }, 4),
    ]);
    expect(task.worker).to.equal(SECOND);
    expect(task.evidenceHash).to.equal(OTHER_EVIDENCE);
    expect(task.status).to.equal(TASK_STATUS.Completed);
    expect(task.updatedBlock).to.equal(4);
  });

  it("completes a dispute nobody ruled on, split, with its submitter side as the worker", () => {
    const { task } = fold([
      ...created,
      ...commitments,
      event("OpenSubmission", { submitter: SECOND, evidenceHash: OTHER_EVIDENCE }, 3),
      event("TaskDisputed", { initiator: POSTER }, 4),
      event(
        "UnruledSplit",
        { workerSide: SECOND, workerPayout: "45", otherSide: POSTER, otherAmount: "50", platformFee: "5" },
        5,
      ),
    ]);
    expect([task.status, task.worker, task.payout, task.feePaid]).to.deep.equal([
      TASK_STATUS.Completed,
      SECOND,
      "45",
      "5",
    ]);
    expect(task.updatedBlock).to.equal(5);
  });
});

describe("server/indexer/handlers.ts (open-task endings and the held count)", () => {
  const revealed = [
    ...created,
    ...commitments,
    event("OpenSubmission", { submitter: FIRST, evidenceHash: EVIDENCE }, 3),
    event("OpenSubmission", { submitter: SECOND, evidenceHash: OTHER_EVIDENCE }, 3),
  ];

  it("shows the poster's pick as pending until it is paid, then as picked", () => {
    const pending = fold([...revealed, event("OpenWinnerProposed", { winner: SECOND }, 4)]).task;
    expect([pending.openPick, pending.openPickedAt, pending.openOutcome, pending.status]).to.deep.equal([
      SECOND,
      1_700_000_004,
      null,
      TASK_STATUS.Funded,
    ]);
    const paid = fold([
      ...revealed,
      event("OpenWinnerProposed", { winner: SECOND }, 4),
      event("WinnerSelected", { winner: SECOND }, 9),
      event("TaskCompleted", { workerPayout: "90", platformFee: "10" }, 9),
    ]).task;
    expect([paid.openOutcome, paid.worker, paid.evidenceHash]).to.deep.equal(["picked", SECOND, OTHER_EVIDENCE]);
  });

  it("records a judged winner, and a judged refund, as judged", () => {
    const won = fold([
      ...revealed,
      event("OpenWinnerProposed", { winner: SECOND }, 4),
      event("TaskDisputed", { initiator: FIRST }, 5),
      event("OpenJudged", { winner: FIRST }, 6),
      event("WinnerSelected", { winner: FIRST }, 6),
      event("TaskCompleted", { workerPayout: "90", platformFee: "10" }, 6),
    ]).task;
    expect([won.openOutcome, won.worker, won.status]).to.deep.equal(["judged", FIRST, TASK_STATUS.Completed]);
    const refunded = fold([
      ...revealed,
      event("TaskDisputed", { initiator: POSTER }, 5),
      event("OpenJudged", { winner: "0x0000000000000000000000000000000000000000" }, 6),
      event("TaskCancelled", { refundAmount: "100" }, 6),
    ]).task;
    expect([refunded.openOutcome, refunded.refund, refunded.status]).to.deep.equal([
      "judged",
      "100",
      TASK_STATUS.Cancelled,
    ]);
  });

  it("records a default release as default, and releaseSettled's HeldReleased on the task", () => {
    const { task } = fold([
      ...created,
      ...commitments,
      event("OpenSubmission", { submitter: FIRST, evidenceHash: EVIDENCE }, 3),
      event("OpenDefaultReleased", { winner: FIRST }, 8),
      event("WinnerSelected", { winner: FIRST }, 8),
      event("TaskCompleted", { workerPayout: "90", platformFee: "10" }, 8),
    ]);
    expect([task.openOutcome, task.worker, task.heldReleased]).to.deep.equal(["default", FIRST, false]);
    const released = fold([
      ...created,
      event("TaskCancelled", { refundAmount: "100" }, 2),
      event("HeldReleased", { amount: "100" }, 3),
    ]);
    expect([released.task.heldReleased, released.task.updatedBlock]).to.deep.equal([true, 3]);
  });
});
