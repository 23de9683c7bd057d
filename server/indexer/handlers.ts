/**
 * One handler per escrow event. Task handlers fold an event into the task projection; configuration handlers fold
 * it into the escrow configuration. Handlers are pure: the same events in the same order give the same state, which
 * is what makes replays and reorg rollbacks exact.
 */
import {
  TASK_STATUS,
  ZERO_ADDRESS,
  ZERO_HASH,
  type EscrowConfigState,
  type StoredEvent,
  type OpenSubmissions,
  type ChainName,
  type TaskRecord,
} from "../escrow/records";

export type { OpenSubmissions };

export interface FoldContext {
  /** The chain whose events these are: a task first seen in them is recorded on it. */
  chain: ChainName;
  openSubmissions: OpenSubmissions;
  /** Submissions the fold added, to be written back. */
  newSubmissions: { taskId: number; submitter: string; evidenceHash: string; blockNumber: number }[];
}

type TaskHandler = (task: TaskRecord | undefined, e: StoredEvent, ctx: FoldContext) => TaskRecord | undefined;
type ConfigHandler = (config: EscrowConfigState, e: StoredEvent) => void;

const str = (e: StoredEvent, key: string) => String(e.args[key]);

/** A row for a task whose TaskVerifierSet arrived before its TaskCreated (same transaction). */
function blankTask(e: StoredEvent, chain: ChainName): TaskRecord {
  return {
    chain,
    taskId: e.taskId!,
    poster: ZERO_ADDRESS,
    worker: ZERO_ADDRESS,
    token: ZERO_ADDRESS,
    amount: "0",
    taskHash: ZERO_HASH,
    evidenceHash: ZERO_HASH,
    status: TASK_STATUS.Funded,
    category: "",
    locationZone: "",
    createdAt: 0,
    deadline: 0,
    submissionAttempts: 0,
    disputedAt: 0,
    verifier: ZERO_ADDRESS,
    failedVerdictAt: 0,
    escalated: false,
    isOpen: false,
    openSubmissionCount: 0,
    openPick: ZERO_ADDRESS,
    openPickedAt: 0,
    openOutcome: null,
    heldReleased: false,
    feePaid: null,
    payout: null,
    refund: null,
    createdBlock: e.blockNumber,
    createdTx: e.txHash,
    updatedBlock: e.blockNumber,
  };
}

/** Applies `change` to an existing task; an event for an unknown task is ignored (it cannot happen on-chain). */
const update =
  (change: (t: TaskRecord, e: StoredEvent, ctx: FoldContext) => Partial<TaskRecord>): TaskHandler =>
  (task, e, ctx) =>
    task ? { ...task, ...change(task, e, ctx), updatedBlock: e.blockNumber } : task;

export const TASK_HANDLERS: Record<string, TaskHandler> = {
  TaskVerifierSet: (task, e, ctx) => ({ ...(task ?? blankTask(e, ctx.chain)), verifier: str(e, "verifier") }),
  TaskCreated: (task, e, ctx) => ({
    ...(task ?? blankTask(e, ctx.chain)),
    poster: str(e, "agent"),
    token: str(e, "token"),
    amount: str(e, "amount"),
    taskHash: str(e, "taskHash"),
    category: str(e, "category"),
    locationZone: str(e, "locationZone"),
    createdAt: e.blockTimestamp,
    deadline: Number(e.args.deadline),
    createdBlock: e.blockNumber,
    createdTx: e.txHash,
    updatedBlock: e.blockNumber,
  }),
  OpenTaskCreated: update(() => ({ isOpen: true })),
  WorkerAssigned: update((_t, e) => ({ worker: str(e, "worker"), status: TASK_STATUS.Assigned })),
  EvidenceSubmitted: update((_t, e) => ({
    evidenceHash: str(e, "evidenceHash"),
    submissionAttempts: Number(e.args.attempt),
    status: TASK_STATUS.Submitted,
  })),
  VerificationCompleted: update((_t, e) =>
    // A pass is settled by the TaskCompleted that follows; a fail leaves the task Verified.
    e.args.passed ? {} : { status: TASK_STATUS.Verified, failedVerdictAt: e.blockTimestamp },
  ),
  TEESettled: update(() => ({})),
  TaskCompleted: update((_t, e) => ({
    status: TASK_STATUS.Completed,
    payout: str(e, "workerPayout"),
    feePaid: str(e, "platformFee"),
  })),
  TaskCancelled: update((_t, e) => ({ status: TASK_STATUS.Cancelled, refund: str(e, "refundAmount") })),
  DeadlineExpired: update((_t, e) => ({ status: TASK_STATUS.Cancelled, refund: str(e, "refundAmount") })),
  TaskDisputed: update((_t, e) => ({ status: TASK_STATUS.Disputed, disputedAt: e.blockTimestamp })),
  UnjudgedWorkEscalated: update(() => ({ escalated: true })),
  DisputeResolved: update(() => ({})),
  UnjudgedWorkReleased: update(() => ({})),
  // A commitment (evidence hidden, bond paid): the count follows the escrow's openSubmissionCount, which counts
  // commitments.
  OpenSubmissionCommitted: update((t) => ({ openSubmissionCount: t.openSubmissionCount + 1 })),
  // A revealed commitment: its evidence becomes selectable. The commitment was counted already.
  OpenSubmission: update((t, e, ctx) => {
    const submitter = str(e, "submitter");
    const evidenceHash = str(e, "evidenceHash");
    let byTask = ctx.openSubmissions.get(t.taskId);
    if (!byTask) ctx.openSubmissions.set(t.taskId, (byTask = new Map()));
    byTask.set(submitter, evidenceHash);
    ctx.newSubmissions.push({ taskId: t.taskId, submitter, evidenceHash, blockNumber: e.blockNumber });
    return {};
  }),
  OpenBondsForfeited: update(() => ({})),
  // The poster's pick among several revealed submissions: pending until the contest window passes (then
  // releaseOpenDefault pays it) or a revealed submitter contests it (TaskDisputed, then the judge rules).
  OpenWinnerProposed: update((_t, e) => ({ openPick: str(e, "winner"), openPickedAt: e.blockTimestamp })),
  // The judge's ruling: WinnerSelected and TaskCompleted follow for a winner, TaskCancelled for a refund (zero).
  OpenJudged: update(() => ({ openOutcome: "judged" })),
  // releaseOpenDefault paying a submission the poster did not pick: WinnerSelected and TaskCompleted follow.
  OpenDefaultReleased: update(() => ({ openOutcome: "default" })),
  // A winner paid: by the judge or by default when one of the events above preceded it, else the poster's pick.
  WinnerSelected: update((t, e, ctx) => {
    const winner = str(e, "winner");
    return {
      worker: winner,
      evidenceHash: ctx.openSubmissions.get(t.taskId)?.get(winner) ?? t.evidenceHash,
      openOutcome: t.openOutcome ?? "picked",
    };
  }),
  HeldReleased: update(() => ({ heldReleased: true })),
  // A dispute nobody ruled on, split: the worker side is credited its half less the fee (open tasks record it as the
  // worker), the other half goes to the poster or the poster's pick.
  UnruledSplit: update((_t, e) => ({
    status: TASK_STATUS.Completed,
    worker: str(e, "workerSide"),
    payout: str(e, "workerPayout"),
    feePaid: str(e, "platformFee"),
  })),
  HookFailed: update(() => ({})),
};

const setValue =
  (key: string, arg: string): ConfigHandler =>
  (config, e) => {
    config.values[key] = { value: str(e, arg), updatedBlock: e.blockNumber };
  };

function token(config: EscrowConfigState, address: string, blockNumber: number) {
  const current = config.tokens[address] ?? { allowed: false, minRatedAmount: "0", updatedBlock: blockNumber };
  config.tokens[address] = { ...current, updatedBlock: blockNumber };
  return config.tokens[address];
}

export const CONFIG_HANDLERS: Record<string, ConfigHandler> = {
  TreasuryUpdated: setValue("treasury", "newTreasury"),
  VerifierUpdated: setValue("verifier", "newVerifier"),
  FeeBpsUpdated: setValue("feeBps", "newFeeBps"),
  AdminTransferProposed: setValue("pendingAdmin", "proposedAdmin"),
  AdminTransferCompleted: (config, e) => {
    setValue("admin", "newAdmin")(config, e);
    config.values.pendingAdmin = { value: ZERO_ADDRESS, updatedBlock: e.blockNumber };
  },
  ReputationContractUpdated: setValue("reputationContract", "newContract"),
  TaskRegistryUpdated: setValue("taskRegistry", "newRegistry"),
  TeeSignerUpdated: setValue("teeSigner", "newSigner"),
  Upgraded: setValue("implementation", "implementation"),
  Initialized: setValue("initializedVersion", "version"),
  TokenAllowed: (config, e) => {
    token(config, str(e, "token"), e.blockNumber).allowed = true;
  },
  TokenDisallowed: (config, e) => {
    token(config, str(e, "token"), e.blockNumber).allowed = false;
  },
  MinRatedAmountUpdated: (config, e) => {
    token(config, str(e, "token"), e.blockNumber).minRatedAmount = str(e, "amount");
  },
  Paused: (config, e) => {
    config.values.paused = { value: "true", updatedBlock: e.blockNumber };
    config.pauses.push({
      seq: config.pauses.length + 1,
      startedAt: e.blockTimestamp,
      endedAt: null,
      startedBlock: e.blockNumber,
    });
  },
  Unpaused: (config, e) => {
    config.values.paused = { value: "false", updatedBlock: e.blockNumber };
    const running = config.pauses[config.pauses.length - 1];
    if (running && running.endedAt === null) running.endedAt = e.blockTimestamp;
  },
  PauseStartRecorded: (config, e) => {
    const running = config.pauses[config.pauses.length - 1];
    if (running && running.endedAt === null) running.startedAt = Number(e.args.pauseStart);
  },
};

export function isConfigEvent(name: string): boolean {
  return name in CONFIG_HANDLERS;
}

/** Folds `events` (in chain order) into `tasks` (mutated) and `config` (mutated). Returns the touched task ids. */
export function foldEvents(
  events: readonly StoredEvent[],
  tasks: Map<number, TaskRecord>,
  config: EscrowConfigState,
  ctx: FoldContext,
): { touchedTasks: Set<number>; configChanged: boolean } {
  const touchedTasks = new Set<number>();
  let configChanged = false;
  for (const e of events) {
    const configHandler = CONFIG_HANDLERS[e.eventName];
    if (configHandler) {
      configHandler(config, e);
      configChanged = true;
      continue;
    }
    const taskHandler = TASK_HANDLERS[e.eventName];
    if (!taskHandler || e.taskId === null) continue;
    const next = taskHandler(tasks.get(e.taskId), e, ctx);
    if (next) {
      tasks.set(e.taskId, next);
      touchedTasks.add(e.taskId);
    }
  }
  return { touchedTasks, configChanged };
}

export function emptyConfig(): EscrowConfigState {
  return { values: {}, tokens: {}, pauses: [] };
}
