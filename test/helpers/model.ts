/**
 * A reference model of the escrow's on-chain state machine, written from the spec's transition table
 * ("States and transitions", "On-chain escrow interface") and the design decisions of docs/contracts.md, for the
 * stateful property test. It knows nothing of Hardhat: addresses are lowercase-insensitive hex strings, amounts and
 * times are bigints.
 *
 * `apply(op, timestamp)` predicts what one call does when mined at `timestamp`: either the exact revert (custom error
 * name and arguments, or a string revert) and no state change, or success with the new state, the escrow events in
 * order and the transfers. The check order inside each function follows the interface: the pause check first, then
 * the caller, then the status, then the arguments and times.
 */
import { TASK_STATUS } from "../../server/escrow/records";

export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";
export const ZERO_HASH = `0x${"00".repeat(32)}`;
/** The token address that stands for the chain's native currency. */
export const NATIVE = ZERO_ADDRESS;

export const Status = TASK_STATUS;
export type StatusValue = (typeof Status)[keyof typeof Status];

/** Constants of the escrow, as the spec states them. */
export const LIMITS = {
  maxFeeBps: 3000n,
  bpsDenominator: 10_000n,
  minDuration: 3600n,
  maxDuration: 7_776_000n,
  maxSubmissions: 3,
  appealWindow: 3n * 86_400n,
  disputeWindow: 14n * 86_400n,
  escalationGrace: 3n * 86_400n,
  maxPauseBackdate: 86_400n,
  maxBatch: 50,
  maxAmount: (1n << 96n) - 1n,
} as const;

export const NOT_PARTY = "TaskEscrow: not party to task";

export interface TaskRecord {
  poster: string;
  worker: string;
  token: string;
  amount: bigint;
  taskHash: string;
  evidenceHash: string;
  status: StatusValue;
  category: string;
  locationZone: string;
  createdAt: bigint;
  deadline: bigint;
  submissionAttempts: number;
  disputedAt: bigint;
  // Per-task state outside getTask.
  verifierAgent: string;
  failedVerdictAt: bigint;
  escalated: boolean;
}

export interface NewTaskSpec {
  taskHash: string;
  amount: bigint;
  category: string;
  locationZone: string;
  duration: bigint;
  verifierAgent: string;
}

export type Op =
  | { kind: "createTask"; caller: string; token: string; value: bigint; task: NewTaskSpec }
  | { kind: "createTaskWithVerifier"; caller: string; token: string; value: bigint; task: NewTaskSpec }
  | { kind: "createTasks"; caller: string; token: string; value: bigint; tasks: NewTaskSpec[] }
  | { kind: "marketplaceAssign"; caller: string; taskId: bigint; worker: string }
  | { kind: "assignWorker"; caller: string; taskId: bigint; worker: string }
  | { kind: "submitEvidence"; caller: string; taskId: bigint; evidenceHash: string }
  | { kind: "completeVerification"; caller: string; taskId: bigint; passed: boolean }
  | { kind: "cancelTask"; caller: string; taskId: bigint }
  | { kind: "claimTimeout"; caller: string; taskId: bigint }
  | { kind: "raiseDispute"; caller: string; taskId: bigint }
  | { kind: "resolveDispute"; caller: string; taskId: bigint; workerFavored: boolean }
  | { kind: "releaseUnjudgedWork"; caller: string; taskId: bigint }
  | { kind: "splitUnruled"; caller: string; taskId: bigint }
  | { kind: "escalateUnjudgedWork"; caller: string; taskId: bigint }
  | { kind: "recordPauseStart"; caller: string; start: bigint }
  | { kind: "reconcileHeld"; caller: string; maxTasks: bigint }
  | { kind: "releaseSettled"; caller: string; taskIds: bigint[] }
  /** Takes what the caller is owed (pull payments: the halves of a split). */
  | { kind: "withdraw"; caller: string; token: string; to: string }
  | { kind: "pause"; caller: string }
  | { kind: "unpause"; caller: string }
  | { kind: "setFeeBps"; caller: string; feeBps: bigint }
  /** A plain token transfer to the escrow (not an escrow call): surplus only the admin's sweep can take out. */
  | { kind: "donate"; caller: string; token: string; amount: bigint }
  | { kind: "sweepSurplus"; caller: string; token: string; to: string };

export type ExpectedRevert = { kind: "custom"; name: string; args: unknown[] } | { kind: "string"; reason: string };

export interface ExpectedEvent {
  name: string;
  args: unknown[];
}

/** A movement of `amount` of `token` (NATIVE for the chain's currency) between two accounts. */
export interface Transfer {
  token: string;
  from: string;
  to: string;
  amount: bigint;
}

export type Outcome =
  | { ok: false; revert: ExpectedRevert }
  | { ok: true; events: ExpectedEvent[]; transfers: Transfer[]; touched: bigint[]; settled: bigint[] };

export interface ModelConfig {
  escrow: string;
  admin: string;
  verifier: string;
  treasury: string;
  feeBps: bigint;
  allowedTokens: string[];
  /** Block time of the latest block when the model starts. */
  now: bigint;
}

interface PauseInterval {
  start: bigint;
  /** When pause() ran: the latest start recordPauseStart may record. */
  pausedAt: bigint;
  /** undefined while the pause is running. */
  end?: bigint;
}

const TERMINAL: ReadonlySet<StatusValue> = new Set([Status.Completed, Status.Cancelled]);

export function isTerminal(status: StatusValue): boolean {
  return TERMINAL.has(status);
}

/** The record of a never-created id: all zeros. */
export function emptyTask(): TaskRecord {
  return {
    poster: ZERO_ADDRESS,
    worker: ZERO_ADDRESS,
    token: ZERO_ADDRESS,
    amount: 0n,
    taskHash: ZERO_HASH,
    evidenceHash: ZERO_HASH,
    status: Status.Funded,
    category: "",
    locationZone: "",
    createdAt: 0n,
    deadline: 0n,
    submissionAttempts: 0,
    disputedAt: 0n,
    verifierAgent: ZERO_ADDRESS,
    failedVerdictAt: 0n,
    escalated: false,
  };
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

class Revert {
  constructor(readonly revert: ExpectedRevert) {}
}

function fail(name: string, ...args: unknown[]): never {
  throw new Revert({ kind: "custom", name, args });
}

function failString(reason: string): never {
  throw new Revert({ kind: "string", reason });
}

export class EscrowModel {
  readonly escrow: string;
  readonly admin: string;
  readonly verifier: string;
  readonly treasury: string;
  feeBps: bigint;
  paused = false;
  now: bigint;
  nextTaskId = 1n;
  readonly tasks = new Map<bigint, TaskRecord>();
  private readonly allowedTokens: Set<string>;
  private readonly pauses: PauseInterval[] = [];
  /** Per token (lowercase): what was sent to the escrow outside any task and not swept yet. */
  private readonly surplus = new Map<string, bigint>();
  /** Per token (lowercase), per account (lowercase): what the escrow owes, taken with withdraw. */
  private readonly credits = new Map<string, Map<string, bigint>>();
  /** Surplus bookkeeping: tasks below `reconciledBelow` were passed by reconcileHeld; `pending` were counted. */
  reconciledBelow = 0n;
  readonly pending = new Set<bigint>();

  constructor(config: ModelConfig) {
    this.escrow = config.escrow;
    this.admin = config.admin;
    this.verifier = config.verifier;
    this.treasury = config.treasury;
    this.feeBps = config.feeBps;
    this.now = config.now;
    this.allowedTokens = new Set(config.allowedTokens.map((t) => t.toLowerCase()));
  }

  /** An independent copy, for predictions that must not move this model. */
  clone(): EscrowModel {
    const copy = new EscrowModel({
      escrow: this.escrow,
      admin: this.admin,
      verifier: this.verifier,
      treasury: this.treasury,
      feeBps: this.feeBps,
      allowedTokens: [...this.allowedTokens],
      now: this.now,
    });
    copy.paused = this.paused;
    copy.nextTaskId = this.nextTaskId;
    for (const [id, t] of this.tasks) copy.tasks.set(id, { ...t });
    copy.pauses.push(...this.pauses.map((p) => ({ ...p })));
    for (const [token, amount] of this.surplus) copy.surplus.set(token, amount);
    for (const [token, owed] of this.credits) copy.credits.set(token, new Map(owed));
    copy.reconciledBelow = this.reconciledBelow;
    for (const id of this.pending) copy.pending.add(id);
    return copy;
  }

  /** Whether `op` mined at `timestamp` would succeed, without changing this model. */
  wouldSucceed(op: Op, timestamp: bigint): boolean {
    return this.clone().apply(op, timestamp).ok;
  }

  /** The record getTask returns for `taskId` (all zeros for an id never created). */
  task(taskId: bigint): TaskRecord {
    return this.tasks.get(taskId) ?? emptyTask();
  }

  /** Moves the clock, as a block mined at `timestamp` would. */
  advanceTo(timestamp: bigint): void {
    if (timestamp < this.now) throw new Error(`model clock cannot go back from ${this.now} to ${timestamp}`);
    this.now = timestamp;
  }

  /** Sum of the amounts of non-terminal tasks in `token`: what the escrow holds for its tasks. */
  heldAmount(token: string): bigint {
    let total = 0n;
    for (const t of this.tasks.values()) {
      if (same(t.token, token) && !isTerminal(t.status)) total += t.amount;
    }
    for (const owed of this.credits.get(token.toLowerCase())?.values() ?? []) total += owed;
    return total;
  }

  /** Amounts of the tasks in `token` counted by reconcileHeld that have settled and were not released. */
  pendingSettled(token: string): bigint {
    let total = 0n;
    for (const id of this.pending) {
      const t = this.task(id);
      if (same(t.token, token) && isTerminal(t.status)) total += t.amount;
    }
    return total;
  }

  /** The running pause's pause() time, if paused. */
  runningPausedAt(): bigint | undefined {
    return this.paused ? this.pauses[this.pauses.length - 1].pausedAt : undefined;
  }

  /** What the escrow owes `account` in `token` (creditOf(token, account)). */
  creditOf(token: string, account: string): bigint {
    return this.credits.get(token.toLowerCase())?.get(account.toLowerCase()) ?? 0n;
  }

  /** Every account owed something, per token: [token, account] pairs as the model spells them. */
  owed(): [string, string][] {
    const pairs: [string, string][] = [];
    for (const [token, owed] of this.credits) {
      for (const [account, amount] of owed) if (amount > 0n) pairs.push([token, account]);
    }
    return pairs;
  }

  /** Tokens sent to the escrow outside any task and not swept yet. */
  surplusOf(token: string): bigint {
    return this.surplus.get(token.toLowerCase()) ?? 0n;
  }

  /** What the escrow's balance of `token` must be: the held amounts plus the surplus. */
  escrowedAmount(token: string): bigint {
    return this.heldAmount(token) + this.surplusOf(token);
  }

  /** Seconds of [since, now] the escrow spent paused: the intersection with every pause interval. */
  pausedSecondsSince(since: bigint): bigint {
    let total = 0n;
    for (const p of this.pauses) {
      const end = p.end ?? this.now;
      const start = p.start > since ? p.start : since;
      if (end > start) total += end - start;
    }
    return total;
  }

  totalPausedSeconds(): bigint {
    return this.pausedSecondsSince(0n);
  }

  effectiveDeadline(taskId: bigint): bigint {
    const t = this.tasks.get(taskId);
    return t === undefined ? 0n : this.deadlineOf(t);
  }

  /** Worker payout and platform fee of `amount` at the current fee. */
  split(amount: bigint): { workerPayout: bigint; fee: bigint } {
    const fee = (amount * this.feeBps) / LIMITS.bpsDenominator;
    return { workerPayout: amount - fee, fee };
  }

  /**
   * Predicts `op` mined at `timestamp`; on success the model moves to the new state. The clock moves either way (a
   * reverted transaction is still mined).
   */
  apply(op: Op, timestamp: bigint): Outcome {
    this.advanceTo(timestamp);
    try {
      return this.run(op);
    } catch (e) {
      if (e instanceof Revert) return { ok: false, revert: e.revert };
      throw e;
    }
  }

  private deadlineOf(t: TaskRecord): bigint {
    return t.deadline + this.pausedSecondsSince(t.createdAt);
  }

  /** Whether `window` seconds, stretched by the time paused since `start`, have passed since `start`. */
  private windowPassed(start: bigint, window: bigint): boolean {
    return this.now >= start + window + this.pausedSecondsSince(start);
  }

  private whenNotPaused(): void {
    if (this.paused) fail("EnforcedPause");
  }

  private onlyAdmin(caller: string): void {
    if (!same(caller, this.admin)) fail("NotAdmin");
  }

  private run(op: Op): Outcome {
    switch (op.kind) {
      case "createTask":
        return this.create(op.caller, op.token, op.value, [{ ...op.task, verifierAgent: ZERO_ADDRESS }], false);
      case "createTaskWithVerifier":
        return this.create(op.caller, op.token, op.value, [op.task], false);
      case "createTasks":
        return this.create(op.caller, op.token, op.value, op.tasks, true);
      case "marketplaceAssign":
        this.whenNotPaused();
        if (!same(op.caller, this.verifier)) fail("NotVerifier");
        return this.assign(op.taskId, op.worker);
      case "assignWorker":
        this.whenNotPaused();
        if (!same(op.caller, this.task(op.taskId).poster)) fail("NotAgent");
        return this.assign(op.taskId, op.worker);
      case "submitEvidence":
        return this.submitEvidence(op.caller, op.taskId, op.evidenceHash);
      case "completeVerification":
        return this.completeVerification(op.caller, op.taskId, op.passed);
      case "cancelTask":
        return this.cancelTask(op.caller, op.taskId);
      case "claimTimeout":
        return this.claimTimeout(op.caller, op.taskId);
      case "raiseDispute":
        return this.raiseDispute(op.caller, op.taskId);
      case "resolveDispute":
        return this.resolveDispute(op.caller, op.taskId, op.workerFavored);
      case "releaseUnjudgedWork":
        return this.releaseUnjudgedWork(op.caller, op.taskId);
      case "escalateUnjudgedWork": {
        this.whenNotPaused();
        const t = this.task(op.taskId);
        if (!same(op.caller, t.worker)) fail("NotWorker");
        if (t.status !== Status.Submitted) fail("InvalidStatus", t.status, Status.Submitted);
        if (this.now < this.deadlineOf(t) + LIMITS.escalationGrace) fail("DeadlineNotReached");
        const live = this.live(op.taskId);
        live.status = Status.Disputed;
        live.disputedAt = this.now;
        live.escalated = true;
        return success(
          [
            { name: "UnjudgedWorkEscalated", args: [op.taskId] },
            { name: "TaskDisputed", args: [op.taskId, op.caller] },
          ],
          [],
          [op.taskId],
        );
      }
      case "recordPauseStart": {
        this.onlyAdmin(op.caller);
        if (!this.paused) fail("ExpectedPause");
        const running = this.pauses[this.pauses.length - 1];
        const previousEnd = this.pauses.length > 1 ? this.pauses[this.pauses.length - 2].end! : 0n;
        if (
          op.start === 0n ||
          op.start > running.pausedAt ||
          op.start < previousEnd ||
          op.start + LIMITS.maxPauseBackdate < running.pausedAt
        ) {
          fail("InvalidPauseStart");
        }
        running.start = op.start;
        return success([{ name: "PauseStartRecorded", args: [op.start] }]);
      }
      case "reconcileHeld": {
        this.onlyAdmin(op.caller);
        let id = this.reconciledBelow === 0n ? 1n : this.reconciledBelow;
        for (let left = op.maxTasks; id < this.nextTaskId && left > 0n; id++, left--) {
          if (!isTerminal(this.task(id).status)) this.pending.add(id);
        }
        this.reconciledBelow = id;
        return success([{ name: "HeldReconciled", args: [id] }]);
      }
      case "releaseSettled": {
        this.onlyAdmin(op.caller);
        const events: ExpectedEvent[] = [];
        for (const id of op.taskIds) {
          const t = this.task(id);
          if (!this.pending.has(id) || !isTerminal(t.status)) continue;
          this.pending.delete(id);
          events.push({ name: "HeldReleased", args: [id, t.amount] });
        }
        return success(events);
      }
      case "splitUnruled": {
        this.whenNotPaused();
        const t = this.task(op.taskId);
        if (t.status !== Status.Disputed) fail("InvalidStatus", t.status, Status.Disputed);
        if (t.escalated) fail("EscalatedForAdjudication");
        if (!this.windowPassed(t.disputedAt, LIMITS.disputeWindow)) fail("DisputeWindowActive");
        return this.splitUnruled(op.taskId);
      }
      case "withdraw": {
        // Not pause-gated.
        if (same(op.to, ZERO_ADDRESS)) fail("ZeroAddress");
        const amount = this.creditOf(op.token, op.caller);
        if (amount === 0n) fail("NothingOwed");
        this.credits.get(op.token.toLowerCase())!.set(op.caller.toLowerCase(), 0n);
        return success(
          [{ name: "Withdrawn", args: [op.token, op.caller, op.to, amount] }],
          [{ token: op.token, from: this.escrow, to: op.to, amount }],
        );
      }
      case "pause":
        this.onlyAdmin(op.caller);
        if (this.paused) fail("EnforcedPause");
        this.paused = true;
        this.pauses.push({ start: this.now, pausedAt: this.now });
        return success([{ name: "Paused", args: [op.caller] }]);
      case "unpause":
        this.onlyAdmin(op.caller);
        if (!this.paused) fail("ExpectedPause");
        this.pauses[this.pauses.length - 1].end = this.now;
        this.paused = false;
        return success([{ name: "Unpaused", args: [op.caller] }]);
      case "setFeeBps": {
        this.onlyAdmin(op.caller);
        if (op.feeBps > LIMITS.maxFeeBps) fail("FeeExceedsMax");
        const previous = this.feeBps;
        this.feeBps = op.feeBps;
        return success([{ name: "FeeBpsUpdated", args: [previous, op.feeBps] }]);
      }
      case "donate":
        this.surplus.set(op.token.toLowerCase(), this.surplusOf(op.token) + op.amount);
        return success([], [{ token: op.token, from: op.caller, to: this.escrow, amount: op.amount }]);
      case "sweepSurplus": {
        // Admin only, not pause-gated; never a task's funds.
        this.onlyAdmin(op.caller);
        if (same(op.to, ZERO_ADDRESS)) fail("ZeroAddress");
        // Counted tasks that settled but were not released still count as held: the sweep takes that much less.
        const amount = this.surplusOf(op.token) - this.pendingSettled(op.token);
        if (amount <= 0n) fail("NoSurplus");
        this.surplus.set(op.token.toLowerCase(), this.surplusOf(op.token) - amount);
        return success(
          [{ name: "SurplusSwept", args: [op.token, op.to, amount] }],
          [{ token: op.token, from: this.escrow, to: op.to, amount }],
        );
      }
    }
  }

  private create(caller: string, token: string, value: bigint, specs: NewTaskSpec[], batch: boolean): Outcome {
    this.whenNotPaused();
    if (batch) {
      if (specs.length === 0) fail("EmptyBatch");
      if (specs.length > LIMITS.maxBatch) fail("BatchTooLarge", BigInt(specs.length), BigInt(LIMITS.maxBatch));
    }
    // Every task is validated in order before any funds move; the first invalid one decides the revert.
    let total = 0n;
    for (const spec of specs) {
      if (spec.amount === 0n) fail("ZeroAmount");
      if (spec.amount > LIMITS.maxAmount) fail("AmountTooLarge");
      if (spec.taskHash === ZERO_HASH) fail("EmptyHash");
      if (!this.allowedTokens.has(token.toLowerCase())) fail("TokenNotAllowed");
      if (spec.duration < LIMITS.minDuration || spec.duration > LIMITS.maxDuration) fail("InvalidDeadline");
      if (same(spec.verifierAgent, caller)) fail("SelfAssignment");
      total += spec.amount;
    }
    if (same(token, NATIVE)) {
      if (value !== total) fail("NativeValueMismatch", value, total);
    } else if (value !== 0n) {
      fail("ZeroAmount");
    }

    const events: ExpectedEvent[] = [];
    const touched: bigint[] = [];
    for (const spec of specs) {
      const taskId = this.nextTaskId++;
      const deadline = this.now + spec.duration;
      this.tasks.set(taskId, {
        ...emptyTask(),
        poster: caller,
        token,
        amount: spec.amount,
        taskHash: spec.taskHash,
        category: spec.category,
        locationZone: spec.locationZone,
        createdAt: this.now,
        deadline,
        verifierAgent: spec.verifierAgent,
      });
      if (!same(spec.verifierAgent, ZERO_ADDRESS)) {
        events.push({ name: "TaskVerifierSet", args: [taskId, spec.verifierAgent] });
      }
      events.push({
        name: "TaskCreated",
        args: [taskId, caller, token, spec.amount, spec.taskHash, spec.category, spec.locationZone, deadline],
      });
      touched.push(taskId);
    }
    return success(events, [{ token, from: caller, to: this.escrow, amount: total }], touched);
  }

  private assign(taskId: bigint, worker: string): Outcome {
    const t = this.task(taskId);
    if (same(t.poster, ZERO_ADDRESS)) fail("TaskNotFound", taskId);
    if (t.status !== Status.Funded) fail("InvalidStatus", t.status, Status.Funded);
    if (same(worker, ZERO_ADDRESS)) fail("ZeroAddress");
    // The task's judge (its verifier agent, else the marketplace verifier) can never be its worker.
    const judge = same(t.verifierAgent, ZERO_ADDRESS) ? this.verifier : t.verifierAgent;
    if (same(worker, t.poster) || same(worker, judge)) fail("SelfAssignment");
    if (this.now >= this.deadlineOf(t)) fail("DeadlineReached");
    const live = this.live(taskId);
    live.worker = worker;
    live.status = Status.Assigned;
    return success([{ name: "WorkerAssigned", args: [taskId, worker] }], [], [taskId]);
  }

  private submitEvidence(caller: string, taskId: bigint, evidenceHash: string): Outcome {
    this.whenNotPaused();
    const t = this.task(taskId);
    if (!same(caller, t.worker)) fail("NotWorker");
    if (t.status !== Status.Assigned && t.status !== Status.Verified) fail("InvalidStatus", t.status, Status.Assigned);
    if (evidenceHash === ZERO_HASH) fail("EmptyHash");
    if (this.now >= this.deadlineOf(t)) fail("DeadlineReached");
    if (t.submissionAttempts >= LIMITS.maxSubmissions) fail("MaxSubmissionAttemptsReached");
    const live = this.live(taskId);
    live.submissionAttempts += 1;
    live.status = Status.Submitted;
    live.evidenceHash = evidenceHash;
    return success(
      [{ name: "EvidenceSubmitted", args: [taskId, caller, evidenceHash, BigInt(live.submissionAttempts)] }],
      [],
      [taskId],
    );
  }

  private completeVerification(caller: string, taskId: bigint, passed: boolean): Outcome {
    this.whenNotPaused();
    const t = this.task(taskId);
    const judge = same(t.verifierAgent, ZERO_ADDRESS) ? this.verifier : t.verifierAgent;
    if (!same(caller, judge) || same(caller, t.worker)) fail("NotVerifier");
    if (t.status !== Status.Submitted) fail("InvalidStatus", t.status, Status.Submitted);
    const events: ExpectedEvent[] = [{ name: "VerificationCompleted", args: [taskId, passed] }];
    if (passed) return this.payout(taskId, events);
    const live = this.live(taskId);
    live.status = Status.Verified;
    live.failedVerdictAt = this.now;
    return success(events, [], [taskId]);
  }

  private cancelTask(caller: string, taskId: bigint): Outcome {
    this.whenNotPaused();
    const t = this.task(taskId);
    if (!same(caller, t.poster)) fail("NotAgent");
    if (t.status !== Status.Funded) fail("InvalidStatus", t.status, Status.Funded);
    return this.refund(taskId, [], "TaskCancelled");
  }

  private claimTimeout(caller: string, taskId: bigint): Outcome {
    this.whenNotPaused();
    const t = this.task(taskId);
    if (!same(caller, t.poster)) fail("NotAgent");
    if (t.status === Status.Funded || isTerminal(t.status)) fail("InvalidStatus", t.status, Status.Assigned);
    if (this.now < this.deadlineOf(t)) fail("DeadlineNotReached");
    if (t.status === Status.Submitted) {
      const live = this.live(taskId);
      live.status = Status.Disputed;
      live.disputedAt = this.now;
      live.escalated = true;
      return success(
        [
          { name: "UnjudgedWorkEscalated", args: [taskId] },
          { name: "TaskDisputed", args: [taskId, caller] },
        ],
        [],
        [taskId],
      );
    }
    if (t.status === Status.Verified && !this.windowPassed(t.failedVerdictAt, LIMITS.appealWindow)) {
      fail("AppealWindowActive");
    }
    if (t.status === Status.Disputed) {
      if (t.escalated) fail("EscalatedForAdjudication");
      if (!this.windowPassed(t.disputedAt, LIMITS.disputeWindow)) fail("DisputeWindowActive");
      return this.splitUnruled(taskId);
    }
    return this.refund(taskId, [], "DeadlineExpired");
  }

  private raiseDispute(caller: string, taskId: bigint): Outcome {
    this.whenNotPaused();
    const t = this.task(taskId);
    if (!same(caller, t.poster) && !same(caller, t.worker)) failString(NOT_PARTY);
    if (t.status !== Status.Submitted && t.status !== Status.Verified) {
      fail("InvalidStatus", t.status, Status.Submitted);
    }
    if (this.now >= this.deadlineOf(t)) {
      const appeal =
        t.status === Status.Verified &&
        same(caller, t.worker) &&
        !this.windowPassed(t.failedVerdictAt, LIMITS.appealWindow);
      if (!appeal) fail("DeadlineReached");
    }
    const live = this.live(taskId);
    live.status = Status.Disputed;
    live.disputedAt = this.now;
    return success([{ name: "TaskDisputed", args: [taskId, caller] }], [], [taskId]);
  }

  private resolveDispute(caller: string, taskId: bigint, workerFavored: boolean): Outcome {
    // Admin-only and deliberately not pause-gated.
    this.onlyAdmin(caller);
    const t = this.task(taskId);
    if (t.status !== Status.Disputed) fail("InvalidStatus", t.status, Status.Disputed);
    const events: ExpectedEvent[] = [{ name: "DisputeResolved", args: [taskId, workerFavored] }];
    return workerFavored ? this.payout(taskId, events) : this.refund(taskId, events, "TaskCancelled");
  }

  private releaseUnjudgedWork(caller: string, taskId: bigint): Outcome {
    this.whenNotPaused();
    const t = this.task(taskId);
    if (!same(caller, t.worker)) fail("NotWorker");
    if (t.status !== Status.Disputed) fail("InvalidStatus", t.status, Status.Disputed);
    if (!t.escalated) fail("NotEscalated");
    if (!this.windowPassed(t.disputedAt, LIMITS.disputeWindow)) fail("DisputeWindowActive");
    const { workerPayout, fee } = this.split(t.amount);
    return this.payout(taskId, [{ name: "UnjudgedWorkReleased", args: [taskId, workerPayout, fee] }]);
  }

  /**
   * A dispute nobody ruled on: half the reward credited to the worker less the fee on that half, the other half
   * credited to the poster, the fee sent to the treasury; Completed.
   */
  private splitUnruled(taskId: bigint): Outcome {
    const live = this.live(taskId);
    live.status = Status.Completed;
    const half = live.amount / 2n;
    const posterHalf = live.amount - half;
    const fee = (half * this.feeBps) / LIMITS.bpsDenominator;
    const events: ExpectedEvent[] = [];
    for (const [account, amount] of [
      [live.worker, half - fee],
      [live.poster, posterHalf],
    ] as const) {
      if (amount === 0n) continue;
      const key = live.token.toLowerCase();
      const owed = this.credits.get(key) ?? new Map<string, bigint>();
      this.credits.set(key, owed);
      owed.set(account.toLowerCase(), (owed.get(account.toLowerCase()) ?? 0n) + amount);
      events.push({ name: "Credited", args: [live.token, account, amount] });
    }
    events.push({ name: "UnruledSplit", args: [taskId, live.worker, half - fee, live.poster, posterHalf, fee] });
    const transfers: Transfer[] =
      fee > 0n ? [{ token: live.token, from: this.escrow, to: this.treasury, amount: fee }] : [];
    return success(events, transfers, [taskId], [taskId]);
  }

  /** Completes the task: amount - fee to the worker, the fee (read now) to the treasury. */
  private payout(taskId: bigint, events: ExpectedEvent[]): Outcome {
    const live = this.live(taskId);
    const { workerPayout, fee } = this.split(live.amount);
    live.status = Status.Completed;
    const transfers: Transfer[] = [];
    if (workerPayout > 0n)
      transfers.push({ token: live.token, from: this.escrow, to: live.worker, amount: workerPayout });
    if (fee > 0n) transfers.push({ token: live.token, from: this.escrow, to: this.treasury, amount: fee });
    events.push({ name: "TaskCompleted", args: [taskId, workerPayout, fee] });
    return success(events, transfers, [taskId], [taskId]);
  }

  /** Cancels the task and returns the whole amount to the poster; `event` is TaskCancelled or DeadlineExpired. */
  private refund(taskId: bigint, events: ExpectedEvent[], event: "TaskCancelled" | "DeadlineExpired"): Outcome {
    const live = this.live(taskId);
    live.status = Status.Cancelled;
    events.push({ name: event, args: [taskId, live.amount] });
    return success(
      events,
      [{ token: live.token, from: this.escrow, to: live.poster, amount: live.amount }],
      [taskId],
      [taskId],
    );
  }

  private live(taskId: bigint): TaskRecord {
    const t = this.tasks.get(taskId);
    if (t === undefined) throw new Error(`model: task ${taskId} changed state without existing`);
    return t;
  }
}

function success(events: ExpectedEvent[], transfers: Transfer[] = [], touched: bigint[] = [], settled: bigint[] = []) {
  return { ok: true as const, events, transfers, touched, settled };
}

/** Net balance change per token and account implied by `transfers` (zero entries dropped). */
export function netDeltas(transfers: Transfer[]): Map<string, Map<string, bigint>> {
  const byToken = new Map<string, Map<string, bigint>>();
  const add = (token: string, account: string, amount: bigint) => {
    const key = token.toLowerCase();
    const deltas = byToken.get(key) ?? new Map<string, bigint>();
    byToken.set(key, deltas);
    const acct = account.toLowerCase();
    deltas.set(acct, (deltas.get(acct) ?? 0n) + amount);
  };
  for (const { token, from, to, amount } of transfers) {
    add(token, from, -amount);
    add(token, to, amount);
  }
  for (const deltas of byToken.values()) {
    for (const [account, delta] of deltas) if (delta === 0n) deltas.delete(account);
  }
  return byToken;
}
