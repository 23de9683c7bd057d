/**
 * Stateful property test of the escrow: random sequences of every lifecycle operation, by random callers, with pauses,
 * fee changes and time jumps, checked step by step against the transition-table model of test/helpers/model.ts.
 *
 * Each run starts from a clean deployment (loadFixture). Every transaction is mined at a chosen timestamp (one second
 * after the previous block), so the model knows the block time of each call. For every step the model predicts either
 * the exact revert or success with the events, the transfers and the new state; then every task record, the escrow's
 * balances and the global state are compared with the model and these invariants are checked:
 *   (a) the escrow holds, per token, exactly the sum of the amounts of its non-terminal tasks plus what was sent to it
 *       directly (the surplus), and the admin's sweep takes exactly that surplus, never a task's funds;
 *   (b) each payout sends amount - floor(amount * feeBps / 10000) to the worker and the fee to the treasury, with the
 *       fee read from the contract just before the payout;
 *   (c) no task settles twice: a terminal record never changes again and each task has at most one TaskCompleted,
 *       TaskCancelled, DeadlineExpired or UnruledSplit event (exactly one once terminal);
 *   (d) funds never freeze: after the random steps, honest calls (the poster's cancel or timeout claim, a passing
 *       verdict, the admin's ruling, then every owed account's withdraw and the admin's sweep) leave the escrow holding
 *       nothing at all.
 * What the escrow owes (the halves of a dispute nobody ruled on, split) counts as held until withdrawn. The steps also
 * draw the worker's escalation, backdated pause starts and the admin's reconcileHeld / releaseSettled bookkeeping (a
 * counted task that settled but was not released makes the sweep take that much less). Open-submission tasks are not
 * modelled: their own suites cover them (TaskEscrow.open, TaskEscrow.reaudit, TaskEscrow.guards).
 *
 * Knobs (environment): PROPERTY_SEED (replay a failure), PROPERTY_RUNS (default 25), PROPERTY_STEPS (default 40),
 * PROPERTY_SHRINK=1 (let fast-check shrink a failure; slow), PROPERTY_VERBOSE=1 (print which transitions were hit).
 */
import { expect } from "chai";
import fc from "fast-check";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import type { ContractTransactionResponse } from "ethers";
import { DAY, EVIDENCE_HASH, HOUR, USDC, deployEscrowFixture, getTaskView } from "../helpers/fixtures";
import {
  EscrowModel,
  LIMITS,
  NATIVE,
  Status,
  ZERO_ADDRESS,
  ZERO_HASH,
  isTerminal,
  netDeltas,
  type ExpectedRevert,
  type NewTaskSpec,
  type Op,
  type Outcome,
  type TaskRecord,
} from "../helpers/model";

const RUNS = Number(process.env.PROPERTY_RUNS ?? 25);
const STEPS = Number(process.env.PROPERTY_STEPS ?? 40);
const SEED = process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : Math.floor(Math.random() * 0x7fffffff);
const SHRINK = process.env.PROPERTY_SHRINK === "1";
const VERBOSE = process.env.PROPERTY_VERBOSE === "1";

/** A token nobody allowlisted. */
const UNLISTED_TOKEN = ethers.getAddress(`0x${"de".repeat(20)}`);
/** Native amounts above this are only generated to hit AmountTooLarge; the call then sends no value. */
const NATIVE_VALUE_CAP = ethers.parseEther("1");
/** One more task than a batch may hold. */
const OVERSIZED_BATCH = LIMITS.maxBatch + 1;
const MINUTE = 60;
/** Statuses in which each operation can succeed: the generator's bias towards deep states. */
const FIT_STATUSES: Partial<Record<string, number[]>> = {
  marketplaceAssign: [Status.Funded],
  assignWorker: [Status.Funded],
  cancelTask: [Status.Funded],
  submitEvidence: [Status.Assigned, Status.Verified],
  completeVerification: [Status.Submitted],
  claimTimeout: [Status.Assigned, Status.Submitted, Status.Verified, Status.Disputed],
  raiseDispute: [Status.Submitted, Status.Verified],
  resolveDispute: [Status.Disputed],
  releaseUnjudgedWork: [Status.Disputed],
  splitUnruled: [Status.Disputed],
  escalateUnjudgedWork: [Status.Submitted],
};
const SETTLEMENT_EVENTS = new Set(["TaskCompleted", "TaskCancelled", "DeadlineExpired", "UnruledSplit"]);

/** The escrow deployment of the fixtures, with every actor funded and approved and native currency allowlisted. */
async function propertyFixture() {
  const base = await deployEscrowFixture();
  const { escrow, usdc, admin, verifier, verifierAgent } = base;
  const escrowAddress = await escrow.getAddress();
  for (const account of [admin, verifier, verifierAgent]) {
    await usdc.mint(account.address, USDC(1_000_000));
    await usdc.connect(account).approve(escrowAddress, ethers.MaxUint256);
  }
  await escrow.connect(admin).allowToken(NATIVE);
  return base;
}

/*//////////////////////////////////////////////////////////////
                     STEP DESCRIPTORS (GENERATED)
//////////////////////////////////////////////////////////////*/

// Steps are generated without looking at the state; they are resolved against the model when they run (which task,
// which "natural" caller), so fast-check can shrink them freely.

const ACTOR_NAMES = ["admin", "verifier", "poster", "worker", "verifierAgent", "stranger"] as const;
type ActorName = (typeof ACTOR_NAMES)[number];
const ACTOR = Object.fromEntries(ACTOR_NAMES.map((name, i) => [name, i])) as Record<ActorName, number>;

/** "natural" is the caller the operation expects for the chosen task (its poster, worker, judge, the admin...). */
type CallerSel = "natural" | number;
/**
 * Which task: one whose status the operation accepts ("fit", to reach deep states), a non-terminal one, any created
 * one, or an id that was never created. Each falls back to the next when empty.
 */
type TaskSel = { pool: "fit" | "live" | "any" | "missing" | "id"; index: number; id?: bigint };
type AddressSel = number | "zero";
type TokenSel = "usdc" | "native" | "unlisted";
type ValueSel = "exact" | "more" | "less";
interface TaskGen {
  hash: string;
  amount: bigint;
  category: string;
  locationZone: string;
  duration: number;
  verifierAgent: AddressSel;
}

type Step =
  | { kind: "createTask" | "createTaskWithVerifier"; caller: number; token: TokenSel; value: ValueSel; task: TaskGen }
  | { kind: "createTasks"; caller: number; token: TokenSel; value: ValueSel; tasks: TaskGen[] }
  | { kind: "marketplaceAssign" | "assignWorker"; caller: CallerSel; task: TaskSel; worker: AddressSel }
  | { kind: "submitEvidence"; caller: CallerSel; task: TaskSel; evidenceHash: string }
  | { kind: "completeVerification"; caller: CallerSel; task: TaskSel; passed: boolean }
  | {
      kind:
        | "cancelTask"
        | "claimTimeout"
        | "raiseDispute"
        | "releaseUnjudgedWork"
        | "splitUnruled"
        | "escalateUnjudgedWork";
      caller: CallerSel;
      task: TaskSel;
    }
  /** Takes what the caller is owed (in USDC or native) to an actor. */
  | { kind: "withdraw"; caller: number; token: "usdc" | "native"; to: AddressSel }
  /** Moves the running pause's start `back` seconds before its pause() (0: the invalid start 0). */
  | { kind: "recordPauseStart"; caller: CallerSel; back: number }
  | { kind: "reconcileHeld"; caller: CallerSel; maxTasks: number }
  /** Releases the created tasks at these indices (modulo the count) and one id never created. */
  | { kind: "releaseSettled"; caller: CallerSel; picks: number[]; ids?: bigint[] }
  | { kind: "resolveDispute"; caller: CallerSel; task: TaskSel; workerFavored: boolean }
  | { kind: "pause" | "unpause"; caller: CallerSel }
  | { kind: "setFeeBps"; caller: CallerSel; feeBps: number }
  /** A plain USDC transfer to the escrow by an actor. */
  | { kind: "donate"; caller: number; amount: bigint }
  | { kind: "sweepSurplus"; caller: CallerSel; token: "usdc" | "native"; to: number }
  | { kind: "timeJump"; seconds: number }
  /**
   * Moves the clock to `offset` seconds from an instant that matters to a live task (its effective deadline, the end of
   * its appeal or dispute window) and probes it there with a time-sensitive call: off-by-one checks of every window.
   */
  | { kind: "boundaryJump"; index: number; which: number; offset: -1 | 0 | 1 }
  /** The next natural operation of a live task (assign, submit, judge, dispute, rule...), chosen by `choice`. */
  | {
      kind: "advance";
      index: number;
      choice: number;
      flag: boolean;
      evidenceHash: string;
      /** Funded (as the poster) when no task is live. */
      fallback: { token: "usdc" | "native"; task: TaskGen };
    };

/** Operations that push a live task forward, per status; `advance` steps pick one of them. */
const NEXT_OPS: Record<number, (TaskOpKind | "failVerification")[]> = {
  [Status.Funded]: [
    "marketplaceAssign",
    "marketplaceAssign",
    "marketplaceAssign",
    "assignWorker",
    "assignWorker",
    "cancelTask",
  ],
  [Status.Assigned]: ["submitEvidence", "submitEvidence", "submitEvidence", "claimTimeout"],
  [Status.Submitted]: [
    "completeVerification",
    "failVerification",
    "failVerification",
    "raiseDispute",
    "claimTimeout",
    "claimTimeout",
    "escalateUnjudgedWork",
  ],
  [Status.Verified]: ["submitEvidence", "submitEvidence", "submitEvidence", "raiseDispute", "claimTimeout"],
  [Status.Disputed]: [
    "resolveDispute",
    "releaseUnjudgedWork",
    "releaseUnjudgedWork",
    "claimTimeout",
    "claimTimeout",
    "splitUnruled",
  ],
};
type TaskOpKind = Extract<Step, { task: TaskSel }>["kind"];
/** A step that is one contract call. */
type ConcreteStep = Exclude<Step, { kind: "timeJump" | "boundaryJump" | "advance" }>;

const actorArb = fc.integer({ min: 0, max: ACTOR_NAMES.length - 1 });
const callerArb: fc.Arbitrary<CallerSel> = fc.oneof(
  { weight: 6, arbitrary: fc.constant("natural" as const) },
  { weight: 1, arbitrary: actorArb },
);
const taskSelArb: fc.Arbitrary<TaskSel> = fc.record({
  pool: fc.oneof(
    { weight: 6, arbitrary: fc.constant("fit" as const) },
    { weight: 2, arbitrary: fc.constant("live" as const) },
    { weight: 2, arbitrary: fc.constant("any" as const) },
    { weight: 1, arbitrary: fc.constant("missing" as const) },
  ),
  index: fc.nat(),
});
const hashArb = (zeroWeight: number) =>
  fc.oneof(
    { weight: 20, arbitrary: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => ethers.hexlify(b)) },
    { weight: zeroWeight, arbitrary: fc.constant(ZERO_HASH) },
  );
const amountArb = fc.oneof(
  { weight: 12, arbitrary: fc.bigInt(1n, USDC(1_000)) },
  { weight: 3, arbitrary: fc.bigInt(1n, 50n) }, // fees that floor to zero or to a few units
  { weight: 1, arbitrary: fc.constant(0n) },
  { weight: 1, arbitrary: fc.constant(LIMITS.maxAmount + 1n) },
);
const durationArb = fc.oneof(
  { weight: 10, arbitrary: fc.integer({ min: HOUR, max: 3 * DAY }) },
  { weight: 4, arbitrary: fc.integer({ min: 3 * DAY, max: 10 * DAY }) },
  { weight: 1, arbitrary: fc.integer({ min: 10 * DAY, max: 90 * DAY }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      Number(LIMITS.minDuration) - 1,
      Number(LIMITS.minDuration),
      Number(LIMITS.maxDuration),
      Number(LIMITS.maxDuration) + 1,
    ),
  },
);
const labelArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("general", "global") },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
);
const verifierAgentArb: fc.Arbitrary<AddressSel> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(ACTOR.verifierAgent) },
  { weight: 1, arbitrary: fc.constant("zero" as const) },
  { weight: 2, arbitrary: actorArb },
);
const taskGenArb: fc.Arbitrary<TaskGen> = fc.record({
  hash: hashArb(1),
  amount: amountArb,
  category: labelArb,
  locationZone: labelArb,
  duration: durationArb,
  verifierAgent: verifierAgentArb,
});
const creatorArb = fc.oneof({ weight: 4, arbitrary: fc.constant(ACTOR.poster) }, { weight: 2, arbitrary: actorArb });
const tokenArb: fc.Arbitrary<TokenSel> = fc.oneof(
  { weight: 10, arbitrary: fc.constant("usdc" as const) },
  { weight: 6, arbitrary: fc.constant("native" as const) },
  { weight: 1, arbitrary: fc.constant("unlisted" as const) },
);
const valueArb: fc.Arbitrary<ValueSel> = fc.oneof(
  { weight: 18, arbitrary: fc.constant("exact" as const) },
  { weight: 1, arbitrary: fc.constantFrom("more" as const, "less" as const) },
);
const workerArb: fc.Arbitrary<AddressSel> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(ACTOR.worker) },
  { weight: 2, arbitrary: fc.constant(ACTOR.stranger) },
  { weight: 2, arbitrary: actorArb },
  { weight: 1, arbitrary: fc.constant("zero" as const) },
);
const timeJumpArb = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: MINUTE, max: HOUR }) },
  { weight: 3, arbitrary: fc.integer({ min: HOUR, max: 2 * DAY }) },
  { weight: 2, arbitrary: fc.integer({ min: 2 * DAY, max: 20 * DAY }) },
);

const creationArb = <K extends "createTask" | "createTaskWithVerifier">(kind: K) =>
  fc.record({ kind: fc.constant(kind), caller: creatorArb, token: tokenArb, value: valueArb, task: taskGenArb });
const onTaskArb = <
  K extends
    "cancelTask" | "claimTimeout" | "raiseDispute" | "releaseUnjudgedWork" | "splitUnruled" | "escalateUnjudgedWork",
>(
  kind: K,
) => fc.record({ kind: fc.constant(kind), caller: callerArb, task: taskSelArb });
const assignArb = <K extends "marketplaceAssign" | "assignWorker">(kind: K) =>
  fc.record({ kind: fc.constant(kind), caller: callerArb, task: taskSelArb, worker: workerArb });

/** Every operation, with its weight in the mix (tuned so that runs reach escalations, appeals and rulings). */
const STEP_MIX: { weight: number; arbitrary: fc.Arbitrary<Step> }[] = [
  { weight: 1, arbitrary: creationArb("createTask") },
  { weight: 1, arbitrary: creationArb("createTaskWithVerifier") },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("createTasks" as const),
      caller: creatorArb,
      token: tokenArb,
      value: valueArb,
      tasks: fc.oneof(
        { weight: 12, arbitrary: fc.array(taskGenArb, { minLength: 1, maxLength: 3 }) },
        { weight: 1, arbitrary: fc.constant([]) },
        { weight: 1, arbitrary: taskGenArb.map((t) => Array.from({ length: OVERSIZED_BATCH }, () => t)) },
      ),
    }),
  },
  { weight: 5, arbitrary: assignArb("marketplaceAssign") },
  { weight: 2, arbitrary: assignArb("assignWorker") },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("submitEvidence" as const),
      caller: callerArb,
      task: taskSelArb,
      evidenceHash: hashArb(1),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("completeVerification" as const),
      caller: callerArb,
      task: taskSelArb,
      passed: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: onTaskArb("cancelTask") },
  { weight: 3, arbitrary: onTaskArb("claimTimeout") },
  { weight: 3, arbitrary: onTaskArb("raiseDispute") },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("resolveDispute" as const),
      caller: callerArb,
      task: taskSelArb,
      workerFavored: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: onTaskArb("releaseUnjudgedWork") },
  { weight: 2, arbitrary: onTaskArb("splitUnruled") },
  { weight: 2, arbitrary: onTaskArb("escalateUnjudgedWork") },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("recordPauseStart" as const),
      caller: callerArb,
      back: fc.oneof(fc.integer({ min: 0, max: 2 * DAY }), fc.constantFrom(-1, DAY, DAY + 1)),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("reconcileHeld" as const),
      caller: callerArb,
      maxTasks: fc.integer({ min: 0, max: 6 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("releaseSettled" as const),
      caller: callerArb,
      picks: fc.array(fc.nat(), { maxLength: 4 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("withdraw" as const),
      caller: fc.constantFrom(ACTOR.poster, ACTOR.worker, ACTOR.stranger),
      token: fc.constantFrom("usdc" as const, "native" as const),
      to: fc.oneof({ weight: 5, arbitrary: actorArb }, { weight: 1, arbitrary: fc.constant("zero" as const) }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("pause" as const), caller: callerArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("unpause" as const), caller: callerArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("setFeeBps" as const),
      caller: callerArb,
      feeBps: fc.integer({ min: 0, max: Number(LIMITS.maxFeeBps) + 500 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("donate" as const),
      caller: fc.constantFrom(ACTOR.poster, ACTOR.worker, ACTOR.stranger),
      amount: fc.bigInt({ min: 1n, max: USDC(50) }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("sweepSurplus" as const),
      caller: callerArb,
      token: fc.constantFrom("usdc" as const, "native" as const),
      to: fc.constantFrom(ACTOR.stranger, ACTOR.verifierAgent),
    }),
  },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("timeJump" as const), seconds: timeJumpArb }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("boundaryJump" as const),
      index: fc.nat(),
      which: fc.nat(),
      offset: fc.constantFrom(-1 as const, 0 as const, 1 as const),
    }),
  },
  {
    weight: 24,
    arbitrary: fc.record({
      kind: fc.constant("advance" as const),
      index: fc.nat(),
      choice: fc.nat(),
      flag: fc.boolean(),
      evidenceHash: hashArb(0),
      fallback: fc.record({
        token: fc.constantFrom("usdc" as const, "native" as const),
        task: fc.record({
          hash: hashArb(0),
          amount: fc.bigInt(1n, USDC(1_000)),
          category: labelArb,
          locationZone: labelArb,
          duration: fc.integer({ min: HOUR, max: 10 * DAY }),
          verifierAgent: verifierAgentArb.filter((v) => v !== ACTOR.poster),
        }),
      }),
    }),
  },
];
const stepArb: fc.Arbitrary<Step> = fc.oneof(...STEP_MIX);

/*//////////////////////////////////////////////////////////////
                              THE RUNNER
//////////////////////////////////////////////////////////////*/

type Fixture = Awaited<ReturnType<typeof propertyFixture>>;

/** Which transitions and reverts the runs reached (printed with PROPERTY_VERBOSE=1). */
class Coverage {
  private readonly counts = new Map<string, number>();

  add(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  print(): void {
    const rows = [...this.counts.entries()].sort(([a], [b]) => a.localeCompare(b));
    console.log(rows.map(([key, n]) => `    ${key}: ${n}`).join("\n"));
  }
}

/** JSON with bigints as decimal strings and addresses lowercased, for exact comparisons. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === "bigint") return v.toString();
    if (typeof v === "number") return v.toString();
    if (typeof v === "string" && /^0x[0-9a-fA-F]{40}$/.test(v)) return v.toLowerCase();
    return v;
  });
}

/** The getTask fields of a model record. */
const viewOf = (t: TaskRecord) => getTaskView(t);

class Run {
  private readonly model: EscrowModel;
  private readonly signers: HardhatEthersSigner[];
  private readonly names = new Map<string, string>();
  private readonly trace: string[] = [];
  /** Canonical getTask record of each task at the moment it became terminal. */
  private readonly terminalRecords = new Map<bigint, string>();
  /** TaskCompleted + TaskCancelled + DeadlineExpired events seen per task. */
  private readonly settlements = new Map<bigint, number>();
  /** The task the latest successful call touched. */
  private focus: bigint | undefined;
  private readonly escrowAddress: string;
  private readonly usdcAddress: string;

  constructor(
    private readonly f: Fixture,
    addresses: { escrow: string; usdc: string },
    now: bigint,
    private readonly coverage: Coverage,
  ) {
    const { admin, verifier, poster, worker, verifierAgent, stranger, treasury } = f;
    this.signers = [admin, verifier, poster, worker, verifierAgent, stranger];
    this.escrowAddress = addresses.escrow;
    this.usdcAddress = addresses.usdc;
    this.signers.forEach((s, i) => this.names.set(s.address.toLowerCase(), ACTOR_NAMES[i]));
    this.names.set(treasury.address.toLowerCase(), "treasury");
    this.names.set(ZERO_ADDRESS, "zero");
    this.names.set(addresses.usdc.toLowerCase(), "usdc");
    this.names.set(UNLISTED_TOKEN.toLowerCase(), "unlisted");
    this.model = new EscrowModel({
      escrow: addresses.escrow,
      admin: admin.address,
      verifier: verifier.address,
      treasury: treasury.address,
      feeBps: 0n, // replaced below from the contract
      allowedTokens: [addresses.usdc, NATIVE],
      now,
    });
  }

  async init(): Promise<void> {
    this.model.feeBps = await this.f.escrow.feeBps();
  }

  async execute(steps: Step[]): Promise<void> {
    const fromBlock = await ethers.provider.getBlockNumber();
    try {
      for (const [i, step] of steps.entries()) await this.step(i, step);
      await this.drain(steps.length);
      await this.checkSettlementEvents(fromBlock + 1);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(
        `${message}\n  steps of this run (seed ${SEED}):\n${this.trace.map((l) => `    ${l}`).join("\n")}`,
        { cause: error },
      );
    }
  }

  /**
   * (d) Settles every live task by honest calls (each checked against the model like any step), lets every owed account
   * withdraw and the admin sweep what was sent directly: the escrow must then hold nothing in either token.
   */
  private async drain(first: number): Promise<void> {
    let index = first;
    const model = this.model;
    if (model.paused) await this.call(index++, { kind: "unpause", caller: "natural" });
    for (const [id, t] of [...model.tasks.entries()].filter(([, r]) => !isTerminal(r.status))) {
      const task: TaskSel = { pool: "id", id, index: 0 };
      // A timeout claim waits for the effective deadline and, after a failed verdict, for the appeal window.
      let end = t.status === Status.Assigned || t.status === Status.Verified ? model.effectiveDeadline(id) : 0n;
      if (t.status === Status.Verified) {
        const appealEnd = t.failedVerdictAt + LIMITS.appealWindow + model.pausedSecondsSince(t.failedVerdictAt);
        if (appealEnd > end) end = appealEnd;
      }
      if (model.now + 1n < end) await this.jump(index++, end - 1n, "drain: to the timeout");
      const honest: Record<number, ConcreteStep> = {
        [Status.Funded]: { kind: "cancelTask", caller: "natural", task },
        [Status.Assigned]: { kind: "claimTimeout", caller: "natural", task },
        [Status.Submitted]: { kind: "completeVerification", caller: "natural", task, passed: true },
        [Status.Verified]: { kind: "claimTimeout", caller: "natural", task },
        [Status.Disputed]: { kind: "resolveDispute", caller: "natural", task, workerFavored: true },
      };
      await this.call(index++, honest[t.status]);
      expect(isTerminal(model.task(id).status), `task ${id} settled by honest calls`).to.equal(true);
    }
    for (const [token, account] of model.owed()) {
      const caller = this.signers.findIndex((s) => s.address.toLowerCase() === account);
      await this.call(index++, { kind: "withdraw", caller, token: token === NATIVE ? "native" : "usdc", to: caller });
    }
    if (model.pending.size > 0) {
      await this.call(index++, { kind: "releaseSettled", caller: "natural", picks: [], ids: [...model.pending] });
    }
    for (const token of ["usdc", "native"] as const) {
      if (model.surplusOf(this.tokenAddress(token)) > 0n) {
        await this.call(index++, { kind: "sweepSurplus", caller: "natural", token, to: ACTOR.stranger });
      }
    }
    expect(await this.f.usdc.balanceOf(this.escrowAddress), "USDC left after the honest ending").to.equal(0n);
    expect(await ethers.provider.getBalance(this.escrowAddress), "native left after the honest ending").to.equal(0n);
  }

  private name(address: string): string {
    return this.names.get(address.toLowerCase()) ?? address;
  }

  private signerOf(address: string): HardhatEthersSigner {
    const signer = this.signers.find((s) => s.address.toLowerCase() === address.toLowerCase());
    if (signer === undefined) throw new Error(`no signer for ${address}`);
    return signer;
  }

  private pickTask(kind: Step["kind"], sel: TaskSel): bigint {
    if (sel.pool === "id") return sel.id!;
    const created = [...this.model.tasks.keys()];
    const live = created.filter((id) => !isTerminal(this.model.task(id).status));
    const fit = live.filter((id) => FIT_STATUSES[kind]?.includes(this.model.task(id).status));
    if (sel.pool === "fit" && fit.length > 0) return fit[sel.index % fit.length];
    if ((sel.pool === "fit" || sel.pool === "live") && live.length > 0) return live[sel.index % live.length];
    if (sel.pool !== "missing" && created.length > 0) return created[sel.index % created.length];
    return sel.index % 2 === 0 ? this.model.nextTaskId : 0n;
  }

  private address(sel: AddressSel): string {
    return sel === "zero" ? ZERO_ADDRESS : this.signers[sel].address;
  }

  /** The caller the operation expects on `taskId`, or the random actor the step asked for. */
  private caller(sel: CallerSel, natural: string): HardhatEthersSigner {
    if (sel !== "natural") return this.signers[sel];
    if (natural === ZERO_ADDRESS) return this.signers[ACTOR.stranger];
    return this.signerOf(natural);
  }

  private naturalCaller(step: Extract<Step, { task: TaskSel }>, taskId: bigint): string {
    const t = this.model.task(taskId);
    switch (step.kind) {
      case "marketplaceAssign":
        return this.f.verifier.address;
      case "assignWorker":
      case "cancelTask":
      case "claimTimeout":
        return t.poster;
      case "submitEvidence":
      case "releaseUnjudgedWork":
      case "splitUnruled":
      case "escalateUnjudgedWork":
        return t.worker;
      case "completeVerification":
        return t.verifierAgent !== ZERO_ADDRESS ? t.verifierAgent : this.f.verifier.address;
      case "raiseDispute":
        return step.task.index % 2 === 0 ? t.poster : t.worker;
      case "resolveDispute":
        return this.f.admin.address;
    }
  }

  private tokenAddress(sel: TokenSel): string {
    return sel === "usdc" ? this.usdcAddress : sel === "native" ? NATIVE : UNLISTED_TOKEN;
  }

  private spec(gen: TaskGen): NewTaskSpec {
    return {
      taskHash: gen.hash,
      amount: gen.amount,
      category: gen.category,
      locationZone: gen.locationZone,
      duration: BigInt(gen.duration),
      verifierAgent: this.address(gen.verifierAgent),
    };
  }

  private value(token: string, sel: ValueSel, total: bigint): bigint {
    if (token !== NATIVE) return sel === "exact" ? 0n : 1n;
    if (total > NATIVE_VALUE_CAP) return 0n;
    if (sel === "more") return total + 1n;
    if (sel === "less" && total > 0n) return total - 1n;
    return total;
  }

  /** Turns a generated step into the model's operation and the transaction that performs it. */
  private resolve(step: ConcreteStep): { op: Op; send: () => Promise<ContractTransactionResponse> } {
    const { escrow } = this.f;
    switch (step.kind) {
      case "createTask":
      case "createTaskWithVerifier": {
        const signer = this.signers[step.caller];
        const token = this.tokenAddress(step.token);
        const task = this.spec(step.task);
        if (step.kind === "createTask") task.verifierAgent = ZERO_ADDRESS;
        const value = this.value(token, step.value, task.amount);
        const op: Op = { kind: step.kind, caller: signer.address, token, value, task };
        const args = [task.taskHash, token, task.amount, task.category, task.locationZone, task.duration] as const;
        const send =
          step.kind === "createTask"
            ? () => escrow.connect(signer).createTask(...args, { value })
            : () => escrow.connect(signer).createTaskWithVerifier(...args, task.verifierAgent, { value });
        return { op, send };
      }
      case "createTasks": {
        const signer = this.signers[step.caller];
        const token = this.tokenAddress(step.token);
        const tasks = step.tasks.map((g) => this.spec(g));
        const value = this.value(
          token,
          step.value,
          tasks.reduce((sum, t) => sum + t.amount, 0n),
        );
        return {
          op: { kind: "createTasks", caller: signer.address, token, value, tasks },
          send: () => escrow.connect(signer).createTasks(token, tasks, { value }),
        };
      }
      case "donate": {
        const signer = this.signers[step.caller];
        const token = this.usdcAddress;
        return {
          op: { kind: "donate", caller: signer.address, token, amount: step.amount },
          send: () => this.f.usdc.connect(signer).transfer(this.escrowAddress, step.amount),
        };
      }
      case "recordPauseStart": {
        const signer = this.caller(step.caller, this.f.admin.address);
        // back -1 stands for the invalid start 0; otherwise `back` seconds before the running pause's pause().
        const pausedAt = this.model.runningPausedAt() ?? this.model.now;
        const start = step.back < 0 || BigInt(step.back) > pausedAt ? 0n : pausedAt - BigInt(step.back);
        return {
          op: { kind: "recordPauseStart", caller: signer.address, start },
          send: () => escrow.connect(signer).recordPauseStart(start),
        };
      }
      case "reconcileHeld": {
        const signer = this.caller(step.caller, this.f.admin.address);
        const maxTasks = BigInt(step.maxTasks);
        return {
          op: { kind: "reconcileHeld", caller: signer.address, maxTasks },
          send: () => escrow.connect(signer).reconcileHeld(maxTasks),
        };
      }
      case "releaseSettled": {
        const signer = this.caller(step.caller, this.f.admin.address);
        const created = this.model.nextTaskId - 1n;
        const taskIds = step.ids ?? [
          ...step.picks.map((pick) => (created > 0n ? (BigInt(pick) % created) + 1n : 1n)),
          this.model.nextTaskId,
        ];
        return {
          op: { kind: "releaseSettled", caller: signer.address, taskIds },
          send: () => escrow.connect(signer).releaseSettled(taskIds),
        };
      }
      case "withdraw": {
        const signer = this.signers[step.caller];
        const token = this.tokenAddress(step.token);
        const to = this.address(step.to);
        return {
          op: { kind: "withdraw", caller: signer.address, token, to },
          send: () => escrow.connect(signer).withdraw(token, to),
        };
      }
      case "sweepSurplus": {
        const signer = this.caller(step.caller, this.f.admin.address);
        const token = this.tokenAddress(step.token);
        const to = this.signers[step.to].address;
        return {
          op: { kind: "sweepSurplus", caller: signer.address, token, to },
          send: () => escrow.connect(signer).sweepSurplus(token, to),
        };
      }
      case "pause":
      case "unpause":
      case "setFeeBps": {
        const signer = this.caller(step.caller, this.f.admin.address);
        if (step.kind === "setFeeBps") {
          const feeBps = BigInt(step.feeBps);
          return {
            op: { kind: "setFeeBps", caller: signer.address, feeBps },
            send: () => escrow.connect(signer).setFeeBps(feeBps),
          };
        }
        return {
          op: { kind: step.kind, caller: signer.address },
          send: step.kind === "pause" ? () => escrow.connect(signer).pause() : () => escrow.connect(signer).unpause(),
        };
      }
      default: {
        const taskId = this.pickTask(step.kind, step.task);
        const signer = this.caller(step.caller, this.naturalCaller(step, taskId));
        const caller = signer.address;
        const e = escrow.connect(signer);
        switch (step.kind) {
          case "marketplaceAssign":
          case "assignWorker": {
            const worker = this.address(step.worker);
            return {
              op: { kind: step.kind, caller, taskId, worker },
              send: () =>
                step.kind === "marketplaceAssign"
                  ? e.marketplaceAssign(taskId, worker)
                  : e.assignWorker(taskId, worker),
            };
          }
          case "submitEvidence":
            return {
              op: { kind: step.kind, caller, taskId, evidenceHash: step.evidenceHash },
              send: () => e.submitEvidence(taskId, step.evidenceHash),
            };
          case "completeVerification":
            return {
              op: { kind: step.kind, caller, taskId, passed: step.passed },
              send: () => e.completeVerification(taskId, step.passed),
            };
          case "resolveDispute":
            return {
              op: { kind: step.kind, caller, taskId, workerFavored: step.workerFavored },
              send: () => e.resolveDispute(taskId, step.workerFavored),
            };
          case "cancelTask":
            return { op: { kind: step.kind, caller, taskId }, send: () => e.cancelTask(taskId) };
          case "claimTimeout":
            return { op: { kind: step.kind, caller, taskId }, send: () => e.claimTimeout(taskId) };
          case "raiseDispute":
            return { op: { kind: step.kind, caller, taskId }, send: () => e.raiseDispute(taskId) };
          case "releaseUnjudgedWork":
            return { op: { kind: step.kind, caller, taskId }, send: () => e.releaseUnjudgedWork(taskId) };
          case "splitUnruled":
            return { op: { kind: step.kind, caller, taskId }, send: () => e.splitUnruled(taskId) };
          case "escalateUnjudgedWork":
            return { op: { kind: step.kind, caller, taskId }, send: () => e.escalateUnjudgedWork(taskId) };
        }
      }
    }
  }

  /**
   * The concrete step an `advance` stands for: a natural next operation of a live task, by its natural caller,
   * mostly one the model says succeeds now (so runs reach escalations, appeals and releases).
   */
  private advance(step: Extract<Step, { kind: "advance" }>): ConcreteStep {
    // While paused nothing moves: usually lift the pause first, sometimes backdate its start (within a day or not).
    if (this.model.paused && step.choice % 4 === 1) {
      return { kind: "recordPauseStart", caller: "natural", back: step.index % (DAY + 2) };
    }
    if (this.model.paused && step.choice % 4 !== 0) return { kind: "unpause", caller: "natural" };
    const live = [...this.model.tasks.entries()].filter(([, t]) => !isTerminal(t.status));
    if (live.length === 0) {
      const { token, task } = step.fallback;
      return { kind: "createTaskWithVerifier", caller: ACTOR.poster, token, value: "exact", task };
    }
    // Two advances in three follow the task the last successful call touched, so that single tasks go deep
    // (three failed rounds, appeals, escalations); the others pick any live task.
    const focused = live.find(([id]) => id === this.focus);
    const [id, t] = focused !== undefined && step.index % 3 !== 0 ? focused : live[step.index % live.length];
    // For raiseDispute the index parity picks the natural party: poster (even) or worker (odd).
    const task: TaskSel = { pool: "id", id, index: step.flag ? 1 : 0 };
    const candidates = NEXT_OPS[t.status].map((kind): ConcreteStep => {
      switch (kind) {
        case "marketplaceAssign":
        case "assignWorker":
          return { kind, caller: "natural", task, worker: step.flag ? ACTOR.worker : ACTOR.stranger };
        case "submitEvidence":
          return { kind, caller: "natural", task, evidenceHash: step.evidenceHash };
        case "completeVerification":
          return { kind, caller: "natural", task, passed: step.flag };
        case "failVerification":
          return { kind: "completeVerification", caller: "natural", task, passed: false };
        case "resolveDispute":
          return { kind, caller: "natural", task, workerFavored: step.flag };
        default:
          return { kind, caller: "natural", task };
      }
    });
    const next = this.model.now + 1n;
    const succeeding = candidates.filter((c) => this.model.wouldSucceed(this.resolve(c).op, next));
    // One advance in five ignores the prediction, to reach the reverts of deep states (a fourth submission...).
    const explore = step.choice % 5 === 0;
    const pool = succeeding.length > 0 && !explore ? succeeding : candidates;
    return pool[Math.floor(step.choice / 5) % pool.length];
  }

  private describe(op: Op): string {
    const parts = Object.entries(op)
      .filter(([key]) => key !== "kind")
      .map(([key, v]) => {
        if (key === "tasks") return `tasks=[${(v as NewTaskSpec[]).map((t) => this.describeSpec(t)).join(", ")}]`;
        if (key === "task") return `task=${this.describeSpec(v as NewTaskSpec)}`;
        return `${key}=${typeof v === "string" && v.length === 42 ? this.name(v) : String(v)}`;
      });
    return `${op.kind}(${parts.join(" ")})`;
  }

  private describeSpec(t: NewTaskSpec): string {
    return `{amount=${t.amount} duration=${t.duration} verifier=${this.name(t.verifierAgent)}${
      t.taskHash === ZERO_HASH ? " hash=0" : ""
    }}`;
  }

  /**
   * Instants at which a live task's possible transitions change (its effective deadline, the end of its appeal or
   * dispute window, with the paused time so far), each with the time-sensitive calls to probe right there.
   */
  private boundaries(): { instant: bigint; probes: ConcreteStep[] }[] {
    const model = this.model;
    const result: { instant: bigint; probes: ConcreteStep[] }[] = [];
    for (const [id, t] of model.tasks) {
      if (isTerminal(t.status)) continue;
      const task = (party: "poster" | "worker"): TaskSel => ({ pool: "id", id, index: party === "poster" ? 0 : 1 });
      const claim: ConcreteStep = { kind: "claimTimeout", caller: "natural", task: task("poster") };
      const submit: ConcreteStep = {
        kind: "submitEvidence",
        caller: "natural",
        task: task("worker"),
        evidenceHash: EVIDENCE_HASH,
      };
      const disputeBy = (party: "poster" | "worker"): ConcreteStep => ({
        kind: "raiseDispute",
        caller: "natural",
        task: task(party),
      });
      const deadlineProbes: Record<number, ConcreteStep[]> = {
        [Status.Funded]: [{ kind: "marketplaceAssign", caller: "natural", task: task("poster"), worker: ACTOR.worker }],
        [Status.Assigned]: [submit, claim],
        [Status.Submitted]: [claim, disputeBy("poster"), disputeBy("worker")],
        [Status.Verified]: [submit, claim, disputeBy("poster"), disputeBy("worker")],
        [Status.Disputed]: [claim],
      };
      result.push({ instant: model.effectiveDeadline(id), probes: deadlineProbes[t.status] });
      if (t.status === Status.Submitted) {
        result.push({
          instant: model.effectiveDeadline(id) + LIMITS.escalationGrace,
          probes: [{ kind: "escalateUnjudgedWork", caller: "natural", task: task("worker") }],
        });
      }
      if (t.status === Status.Verified) {
        const instant = t.failedVerdictAt + LIMITS.appealWindow + model.pausedSecondsSince(t.failedVerdictAt);
        result.push({ instant, probes: [claim, disputeBy("worker")] });
      }
      if (t.status === Status.Disputed) {
        const instant = t.disputedAt + LIMITS.disputeWindow + model.pausedSecondsSince(t.disputedAt);
        result.push({
          instant,
          probes: [
            claim,
            { kind: "releaseUnjudgedWork", caller: "natural", task: task("worker") },
            { kind: "splitUnruled", caller: "natural", task: task("worker") },
          ],
        });
      }
    }
    return result;
  }

  private async jump(index: number, target: bigint, label: string): Promise<void> {
    await time.increaseTo(target);
    this.model.advanceTo(target);
    this.trace.push(`#${index} ${label} -> ${target}`);
    this.coverage.add(label.split(" ")[0]);
    await this.checkState([]);
  }

  private async step(index: number, step: Step): Promise<void> {
    if (step.kind === "timeJump") {
      await this.jump(index, this.model.now + BigInt(step.seconds), `timeJump +${step.seconds}s`);
      return;
    }
    if (step.kind === "boundaryJump") {
      // The probe is mined one second after the block this jump mines: at instant + offset.
      const ahead = this.boundaries().filter(({ instant }) => instant + BigInt(step.offset) - 1n > this.model.now);
      if (ahead.length === 0) {
        this.trace.push(`#${index} boundaryJump: no boundary ahead`);
        return;
      }
      const { instant, probes } = ahead[step.index % ahead.length];
      await this.jump(
        index,
        instant + BigInt(step.offset) - 1n,
        `boundaryJump to ${instant} ${step.offset >= 0 ? "+" : ""}${step.offset}s`,
      );
      await this.call(index, probes[step.which % probes.length]);
      return;
    }
    await this.call(index, step.kind === "advance" ? this.advance(step) : step);
  }

  /** Sends one call, checks it against the model's prediction, then checks the whole state. */
  private async call(index: number, step: ConcreteStep): Promise<void> {
    const { op, send } = this.resolve(step);
    const timestamp = this.model.now + 1n;
    // The fee the contract will read at a payout in this block.
    const feeBefore = await this.f.escrow.feeBps();
    await time.setNextBlockTimestamp(timestamp);
    const outcome = this.model.apply(op, timestamp);
    this.trace.push(`#${index} @${timestamp} ${this.describe(op)} -> ${this.describeOutcome(outcome)}`);

    if (!outcome.ok) {
      this.coverage.add(`${op.kind} reverts ${outcome.revert.kind === "custom" ? outcome.revert.name : "string"}`);
      await this.expectRevert(send(), outcome.revert);
      expect(BigInt(await time.latest()), "a reverted call is still mined at the chosen time").to.equal(timestamp);
      await this.checkState([]);
      return;
    }

    this.coverage.add(`${op.kind} ok${this.transitionLabel(outcome)}`);
    const tx = await send();
    const receipt = await tx.wait();
    expect(BigInt(await time.latest()), "mined at the chosen time").to.equal(timestamp);

    // Events: exactly the predicted escrow events, in order.
    const actual = receipt!.logs
      .filter((log) => log.address.toLowerCase() === this.escrowAddress.toLowerCase())
      .map((log) => this.f.escrow.interface.parseLog(log))
      .map((parsed) => ({ name: parsed!.name, args: [...parsed!.args] }));
    expect(canonical(actual), "escrow events").to.equal(canonical(outcome.events));

    // (b) payouts: amount - floor(amount * fee / 10000) to the worker and the fee to the treasury, fee read live.
    for (const event of outcome.events.filter((e) => e.name === "TaskCompleted")) {
      const [taskId, workerPayout, fee] = event.args as [bigint, bigint, bigint];
      const amount = this.model.task(taskId).amount;
      expect(fee, "fee at the fee read before the payout").to.equal((amount * feeBefore) / LIMITS.bpsDenominator);
      expect(workerPayout + fee).to.equal(amount);
    }

    // Balance changes of every account the model says the step moves funds between, to the unit.
    for (const [token, deltas] of netDeltas(outcome.transfers)) {
      // Checksummed: the matcher recognises the sender (whose gas it leaves out) by exact string.
      const accounts = [...deltas.keys()].map((a) => ethers.getAddress(a));
      const changes = [...deltas.values()];
      if (token === NATIVE) {
        await expect(tx).to.changeEtherBalances(accounts, changes);
      } else {
        await expect(tx).to.changeTokenBalances(this.f.usdc, accounts, changes);
      }
    }

    // (c) count the settlement events the chain emitted (not the predicted ones).
    if (outcome.touched.length > 0) this.focus = outcome.touched[outcome.touched.length - 1];
    for (const event of actual.filter((e) => SETTLEMENT_EVENTS.has(e.name))) {
      const taskId = event.args[0] as bigint;
      this.settlements.set(taskId, (this.settlements.get(taskId) ?? 0) + 1);
    }
    await this.checkState(outcome.touched);
  }

  private transitionLabel(outcome: Outcome & { ok: true }): string {
    const names = outcome.events
      .filter((e) => e.name !== "TaskCreated" && e.name !== "TaskVerifierSet")
      .map((e) => (e.name === "EvidenceSubmitted" ? `${e.name} attempt ${e.args[3]}` : e.name));
    return names.length > 0 ? ` (${names.join(", ")})` : "";
  }

  private describeOutcome(outcome: Outcome): string {
    if (outcome.ok) return `ok ${outcome.events.map((e) => e.name).join(",")}`;
    const r = outcome.revert;
    return r.kind === "custom" ? `revert ${r.name}(${r.args.map(String).join(", ")})` : `revert "${r.reason}"`;
  }

  private async expectRevert(promise: Promise<ContractTransactionResponse>, revert: ExpectedRevert): Promise<void> {
    if (revert.kind === "string") {
      await expect(promise).to.be.revertedWith(revert.reason);
    } else if (revert.args.length === 0) {
      await expect(promise).to.be.revertedWithCustomError(this.f.escrow, revert.name);
    } else {
      await expect(promise)
        .to.be.revertedWithCustomError(this.f.escrow, revert.name)
        .withArgs(...revert.args);
    }
  }

  /** Compares the chain with the model after a step and checks the invariants. */
  private async checkState(touched: bigint[]): Promise<void> {
    const { escrow, usdc } = this.f;
    const model = this.model;

    // Global state.
    expect(await escrow.paused(), "paused").to.equal(model.paused);
    expect(await escrow.feeBps(), "feeBps").to.equal(model.feeBps);
    expect(await escrow.nextTaskId(), "nextTaskId").to.equal(model.nextTaskId);
    expect(await escrow.totalPausedSeconds(), "totalPausedSeconds").to.equal(model.totalPausedSeconds());

    // Every task record, and the never-created next id, equal the model's.
    for (let id = 1n; id <= model.nextTaskId; id++) {
      const chain = await escrow.getTask(id);
      const record = canonical({
        poster: chain.poster,
        worker: chain.worker,
        token: chain.token,
        amount: chain.amount,
        taskHash: chain.taskHash,
        evidenceHash: chain.evidenceHash,
        status: chain.status,
        category: chain.category,
        locationZone: chain.locationZone,
        createdAt: chain.createdAt,
        deadline: chain.deadline,
        submissionAttempts: chain.submissionAttempts,
        disputedAt: chain.disputedAt,
      });
      const expected = model.task(id);
      expect(record, `task ${id}`).to.equal(canonical(viewOf(expected)));
      // (c) a terminal record never changes again.
      if (isTerminal(expected.status)) {
        const frozen = this.terminalRecords.get(id);
        if (frozen === undefined) this.terminalRecords.set(id, record);
        else expect(record, `terminal task ${id} changed`).to.equal(frozen);
      }
    }

    // Per-task state outside getTask, for the tasks the step touched.
    for (const id of touched) {
      const t = model.task(id);
      expect(await escrow.failedVerdictAt(id), `failedVerdictAt(${id})`).to.equal(t.failedVerdictAt);
      expect(await escrow.isEscalated(id), `isEscalated(${id})`).to.equal(t.escalated);
      expect((await escrow.taskVerifier(id)).toLowerCase(), `taskVerifier(${id})`).to.equal(
        t.verifierAgent.toLowerCase(),
      );
      expect(await escrow.effectiveDeadline(id), `effectiveDeadline(${id})`).to.equal(model.effectiveDeadline(id));
    }

    // (a) the escrow holds exactly the non-terminal amounts, per token.
    expect(await usdc.balanceOf(this.escrowAddress), "escrowed USDC").to.equal(model.escrowedAmount(this.usdcAddress));
    expect(await ethers.provider.getBalance(this.escrowAddress), "escrowed native").to.equal(
      model.escrowedAmount(NATIVE),
    );

    // (c) at most one settlement per task.
    for (const [id, count] of this.settlements) expect(count, `settlements of task ${id}`).to.equal(1);
  }

  /** (c) over the whole run, from the logs: one settlement event per terminal task, none for the others. */
  private async checkSettlementEvents(fromBlock: number): Promise<void> {
    const { escrow } = this.f;
    const counts = new Map<bigint, number>();
    for (const filter of [
      escrow.filters.TaskCompleted,
      escrow.filters.TaskCancelled,
      escrow.filters.DeadlineExpired,
      escrow.filters.UnruledSplit,
    ]) {
      for (const event of await escrow.queryFilter(filter(), fromBlock)) {
        const id = event.args[0] as bigint;
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
    }
    for (const [id, t] of this.model.tasks) {
      expect(counts.get(id) ?? 0, `settlement events of task ${id}`).to.equal(isTerminal(t.status) ? 1 : 0);
    }
    expect(
      [...counts.keys()].every((id) => this.model.tasks.has(id)),
      "settlement events of unknown tasks",
    ).to.equal(true);
  }
}

describe("TaskEscrow", () => {
  describe("state machine (property)", () => {
    it("follows the transition-table model, holds exactly the open amounts and settles each task once", async function () {
      // 25 runs x 40 steps take about a minute on two cores; leave room for slow machines and larger knobs.
      this.timeout(Math.max(600_000, RUNS * STEPS * 1_000));
      const coverage = new Coverage();
      const stepsArb = fc.array(stepArb, { minLength: STEPS, maxLength: STEPS });
      const details = await fc.check(
        fc.asyncProperty(stepsArb, async (steps) => {
          const f = await loadFixture(propertyFixture);
          const addresses = { escrow: await f.escrow.getAddress(), usdc: await f.usdc.getAddress() };
          const run = new Run(f, addresses, BigInt(await time.latest()), coverage);
          await run.init();
          await run.execute(steps);
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: !SHRINK },
      );
      if (details.failed) {
        // The failing run's error carries the concrete steps; the generated counterexample adds nothing readable.
        const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.error);
        throw new Error(
          `property failed on run ${details.numRuns} of ${RUNS} (seed ${details.seed}, path "${details.counterexamplePath}", ` +
            `shrunk ${details.numShrinks} times); replay with PROPERTY_SEED=${details.seed}\n${cause}`,
        );
      }
      if (VERBOSE) {
        console.log(`    seed ${SEED}, ${RUNS} runs x ${STEPS} steps`);
        coverage.print();
      }
    });
  });
});
