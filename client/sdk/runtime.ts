/**
 * An agent runtime: registers the agent, finds work through the event stream (falling back to slow polling only
 * when the server has no stream), accepts, fetches and decrypts the brief, runs the agent's work, delivers (checking
 * the submitEvidence transaction before signing it), and follows verdicts and settlement.
 *
 * Restarts lose no accepted work: `start()` first reads the agent's work list (GET /a2a/tasks/working) and picks up
 * every task it is the worker of that is not settled: not delivered yet, it works and delivers (a delivery the
 * chain already has, ALREADY_SUBMITTED, counts as delivered: exactly one submission per attempt); delivered, it
 * follows the verdict. `pause()` stops taking new tasks while accepted ones are followed to the end; `resume()`
 * takes new ones again.
 *
 * Chains: the agent works on the posting chain through `provider`, and on each other chain of `providers` (each
 * with its own escrow, token and nonces, checked against that chain's entry of the settlement record). It registers
 * those chains as its `supportedChains` and takes no task on a chain it has no provider for.
 *
 * Request budget (the service allows 100 requests a minute per IP): with the stream, requests are made only for
 * events (one read of an announced task, its accept, its delivery) plus one catch-up scan of open and offered tasks
 * when a connection opens and a heartbeat every 5 minutes. Without it (404), one discovery request every
 * pollIntervalMs (at least 10 s), alternating open and offered tasks; jobs in progress add their own calls (submit
 * retries while the assignment is pending back off from 1 s to 10 s; a delivered job's state is read once per tick).
 */
import { Wallet, type Provider } from "ethers";
import type { MarketApi } from "./api";
import { escrowInterface } from "./abi";
import { agentPublicKey, openBrief } from "./briefCrypto";
import { evidenceHash } from "./canonicalJson";
import { checkEscrowTx, checkOwner, checkRpc, pinSettlement, pinnedChain, type SettlementPin } from "./checks";
import { ApiError, MarketError, isMarketError } from "./errors";
import { subscribe, type EventSubscription } from "./events";
import { TxSender } from "./sender";
import type { TxAnswer } from "./checks";
import type { AcceptResult, ChainName, MarketEvent, MarketplaceTask, PostedTasks, TaskMeta, UnsignedTx } from "./types";

type WorkingTask = PostedTasks["tasks"][number];

/** The details of an ALREADY_SUBMITTED refusal of a submit, or undefined for any other error. */
function alreadySubmitted(error: unknown) {
  if (!isMarketError(error, "ALREADY_SUBMITTED")) return undefined;
  const details = (error as MarketError).details ?? {};
  const unsignedTx = details.unsignedTx as UnsignedTx | undefined;
  return {
    attempt: typeof details.attempt === "number" ? details.attempt : undefined,
    evidenceHash: typeof details.evidenceHash === "string" ? details.evidenceHash : undefined,
    unsignedTx,
    unsignedTxAnswer: (pin: SettlementPin): TxAnswer => ({
      unsignedTx: unsignedTx!,
      chain: pinnedChain(pin),
      chainId: pin.chainId,
    }),
  };
}

/** The fallback polling interval's floor: at most one discovery request every 10 s. */
export const MIN_POLL_INTERVAL_MS = 10_000;

/** A task the agent took, handed to its work function. */
export interface Job {
  taskHash: string;
  /** The task's settlement chain (its on-chain id is that chain's escrow's). */
  chain: ChainName;
  onChainTaskId: number;
  meta: TaskMeta;
  /** The brief's bytes (decrypted for private tasks). */
  brief: Buffer;
  /** The brief as UTF-8 text. */
  briefText: string;
  /** The attempt this work is for (1 to 3: a failed verdict gives another attempt). */
  attempt: number;
}

export type JobStage = "accepted" | "delivered" | "failed" | "paid" | "refunded" | "cancelled" | "abandoned";

export interface JobView {
  taskHash: string;
  chain: ChainName;
  onChainTaskId: number;
  stage: JobStage;
  attempt: number;
  /** The last error met on this job, if any. */
  error?: string;
}

export interface AgentRuntimeOptions {
  /** The service, with the agent's API key. */
  api: MarketApi;
  /** The agent's wallet key: signs its transactions and unwraps brief keys (its public key is registered). */
  privateKey: string;
  /** An RPC of the posting chain (a plain JsonRpcProvider works). */
  provider: Provider;
  /** RPCs of other settlement chains the agent works on too (`arc: new JsonRpcProvider(arcUrl)`). */
  providers?: Partial<Record<ChainName, Provider>>;
  capabilities: string[];
  /**
   * The chains registered as the agent's (default: the posting chain and every chain of `providers`). It works on
   * those it has a provider for that the settlement record can settle on now; the others are logged and skipped.
   */
  supportedChains?: ChainName[];
  /** Smallest reward the agent takes, in the token's smallest unit (default "0"). */
  minReward?: string;
  /** Registers the agent as a verifier agent too (listed with role=verifier under `name` while it runs). */
  verifier?: { optIn: boolean; name?: string };
  /** The agent's work: the result to deliver (any JSON value but null). */
  work: (job: Job) => unknown | Promise<unknown>;
  /** Which listed tasks to take (default: every task whose required capabilities the agent has). */
  take?: (task: MarketplaceTask) => boolean;
  /**
   * Applying (bid) before accepting: "when-held" (default) bids only when another agent holds the task's exclusive
   * offer window, to compete for it; "always" bids before every accept.
   */
  bid?: "always" | "when-held";
  /** The note sent with a bid (at most 2000 characters). */
  bidMessage?: string;
  /** Fallback polling interval when the server has no event stream; at least MIN_POLL_INTERVAL_MS. */
  pollIntervalMs?: number;
  /** Resume the event stream after this event id (from `lastEventId` of an earlier run). */
  lastEventId?: string;
  /**
   * How long `start()` waits for the posting chain to become postable (a service that just started indexes its
   * configuration first), in ms; SETTLEMENT_NOT_POSTABLE after that. Default 60 s.
   */
  startTimeoutMs?: number;
  /** Reconnect back-off of the event stream. */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  /** Receipt wait of the agent's own transactions (default 180 s). */
  confirmTimeoutMs?: number;
  log?: (message: string) => void;
  /** Every event received on the stream. */
  onEvent?: (event: MarketEvent) => void;
  /** A job changed stage. */
  onJob?: (job: JobView) => void;
}

const HEARTBEAT_MS = 5 * 60_000;
/** Retries of a task read or accept the service answered "retry" to (back-off 1, 2, 4, 8, 10, 10... s). */
const MAX_RETRIES = 8;
/** Longest wait for another agent's offer window to end before asking again (the service's window is 120 s). */
const OFFER_WINDOW_MAX_MS = 130_000;

/** Codes (and statuses) the service answers when the same call may succeed later. */
const RETRY_CODES = [
  "NOT_INDEXED",
  "NOT_INDEXED_YET",
  "ASSIGNMENT_PENDING",
  "NOT_ASSIGNED_YET",
  "ACCEPT_LOCKED",
  "RECEIPT_NOT_FOUND",
  "RATE_LIMIT",
  "API_UNREACHABLE",
];

function retryable(error: unknown): boolean {
  return (
    isMarketError(error, ...RETRY_CODES) || (error instanceof ApiError && (error.status >= 500 || error.status === 429))
  );
}
const MAX_ATTEMPTS = 3;

interface JobState extends JobView {
  meta: TaskMeta;
  wrappedKey?: string;
  delivered: boolean;
  busy: boolean;
  retryMs: number;
  result?: { attempt: number; value: unknown };
}

/** The agent's signer on one chain, and the settlement it checks that chain's transactions against. */
export interface ChainSigner {
  wallet: Wallet;
  sender: TxSender;
  pin: SettlementPin;
}

/** The chain of a task view: its own `chain` (services that settle on one chain may leave it out: the posting chain). */
export function taskChain(meta: TaskMeta, postingChain: ChainName): ChainName {
  return meta.chain ?? postingChain;
}

export class AgentRuntime {
  private readonly wallet: Wallet;
  private readonly signers = new Map<ChainName, ChainSigner>();
  private readonly jobMap = new Map<string, JobState>();
  private readonly refused = new Set<string>();
  private readonly bids = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private pin: SettlementPin | undefined;
  private subscription: EventSubscription | undefined;
  private modeValue: "stream" | "polling" | undefined;
  private running = false;
  private pausedValue = false;
  private tickCount = 0;
  private work: Promise<void> = Promise.resolve();

  constructor(readonly options: AgentRuntimeOptions) {
    this.wallet = new Wallet(options.privateKey, options.provider);
  }

  get address(): string {
    return this.wallet.address;
  }

  /**
   * The posting chain's settlement its transactions are checked against (chain, escrow, token), once started;
   * undefined before. Another chain's: `settlementOn(chain)`.
   */
  get settlement(): SettlementPin | undefined {
    return this.pin;
  }

  /** The settlement of `chain` the agent works on, once started; undefined for a chain it does not work on. */
  settlementOn(chain: ChainName): SettlementPin | undefined {
    return this.signers.get(chain)?.pin;
  }

  /** The chains the agent works on (registered as its supportedChains), once started. */
  get chains(): ChainName[] {
    return [...this.signers.keys()];
  }

  /**
   * The agent's signer on `chain`, with the settlement its transactions there are checked against (MarketError
   * CHAIN_UNSUPPORTED for a chain it does not work on). One sender per chain: its nonces are managed there.
   */
  signerOn(chain: ChainName): ChainSigner {
    const signer = this.signers.get(chain);
    if (!signer) throw new MarketError("CHAIN_UNSUPPORTED", `this agent does not work on ${chain}`);
    return signer;
  }

  /** "stream" while subscribed to /api/v1/events, "polling" on a server without it; undefined before start. */
  get mode(): "stream" | "polling" | undefined {
    return this.modeValue;
  }

  private get api() {
    return this.options.api;
  }

  private log(message: string) {
    this.options.log?.(`[agent ${this.wallet.address.slice(0, 8)}] ${message}`);
  }

  /** The settlement record once its posting chain is postable, retried with back-off up to `startTimeoutMs`. */
  private async postableSettlement() {
    const giveUpAt = Date.now() + (this.options.startTimeoutMs ?? 60_000);
    for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
      const settlement = await this.api.settlement();
      try {
        pinSettlement(settlement);
        return settlement;
      } catch (error) {
        if (!isMarketError(error, "SETTLEMENT_NOT_POSTABLE") || Date.now() + delay > giveUpAt) throw error;
        this.log(
          `the posting chain is not postable yet (the service is indexing its configuration); retry in ${delay} ms`,
        );
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** Registers the agent and starts finding work. */
  async start(): Promise<void> {
    const settlement = await this.postableSettlement();
    this.pin = pinSettlement(settlement);
    const providers: Partial<Record<ChainName, Provider>> = {
      ...this.options.providers,
      [settlement.postingChain]: this.options.provider,
    };
    const chains =
      this.options.supportedChains ??
      settlement.chains.map((c) => c.chain).filter((chain) => providers[chain] !== undefined);
    // Each chain's signer is checked against that chain's entry (its RPC must be that chain's) before any work. A
    // chain it has no RPC for, or that cannot be settled on now (no deployment), is skipped, saying so: it takes no
    // task there.
    for (const chain of chains) {
      const provider = providers[chain];
      if (!provider) {
        this.log(`no RPC for ${chain} (pass it in providers): taking no task there`);
        continue;
      }
      let pin: SettlementPin;
      try {
        pin = pinSettlement(settlement, undefined, chain);
      } catch (error) {
        this.log(`${chain} cannot be settled on now (${(error as Error).message}): taking no task there`);
        continue;
      }
      const wallet = chain === settlement.postingChain ? this.wallet : new Wallet(this.options.privateKey, provider);
      await checkRpc(wallet, pin);
      this.signers.set(chain, {
        wallet,
        pin,
        sender: new TxSender(wallet, { confirmTimeoutMs: this.options.confirmTimeoutMs }),
      });
    }
    if (this.signers.size === 0) {
      throw new MarketError("NO_RPC", `the agent can settle on none of its chains (${chains.join(", ")})`);
    }
    checkOwner((await this.api.whoami()).address, this.wallet.address);
    await this.api.registerExecutor({
      publicKey: agentPublicKey(this.options.privateKey),
      capabilities: this.options.capabilities,
      supportedChains: chains,
      minReward: this.options.minReward ?? "0",
      ...(this.options.verifier ? { verifier: this.options.verifier } : {}),
    });
    this.log(
      `registered with capabilities ${this.options.capabilities.join(", ")}; working on ${this.chains.join(", ")}`,
    );
    this.running = true;
    // Work accepted before a restart first (the queue runs it before any new task).
    this.enqueue(() => this.resumeWork());
    this.every(HEARTBEAT_MS, () => this.api.heartbeat().then(() => undefined));
    this.subscription = subscribe(this.api, (event) => this.onEvent(event), {
      ...this.options.reconnect,
      lastEventId: this.options.lastEventId,
      onOpen: () => {
        this.modeValue = "stream";
        this.log("event stream open");
        this.enqueue(() => this.scan("open").then(() => this.scan("offered")));
      },
      onError: (error, retryInMs) => this.log(`event stream: ${String(error)}; retry in ${retryInMs} ms`),
    });
    this.subscription.done.catch((error) => {
      if (!this.running) return;
      if (error instanceof ApiError && error.status === 404) {
        this.log("the server has no event stream: polling");
        this.startPolling();
      } else this.log(`event stream ended: ${String(error)}`);
    });
  }

  /** Stops finding work and waits for the job in progress. */
  async stop(): Promise<void> {
    this.running = false;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await this.subscription?.close();
    await this.work;
  }

  /** Takes no new task until `resume()`; accepted tasks are still delivered and followed. */
  pause(): void {
    if (this.pausedValue) return;
    this.pausedValue = true;
    this.log("paused: taking no new task");
  }

  /** Takes new tasks again, looking once through the open and offered tasks it skipped while paused. */
  resume(): void {
    if (!this.pausedValue) return;
    this.pausedValue = false;
    this.log("resumed");
    if (this.running && this.modeValue !== undefined) {
      this.enqueue(() => this.scan("open").then(() => this.scan("offered")));
    }
  }

  get paused(): boolean {
    return this.pausedValue;
  }

  /** The last event handled: persist it and pass it as `lastEventId` to resume after a restart. */
  get lastEventId(): string | undefined {
    return this.subscription?.lastEventId ?? this.options.lastEventId;
  }

  jobs(): JobView[] {
    return [...this.jobMap.values()].map(({ taskHash, chain, onChainTaskId, stage, attempt, error }) => ({
      taskHash,
      chain,
      onChainTaskId,
      stage,
      attempt,
      ...(error ? { error } : {}),
    }));
  }

  /** Hashes of the tasks this agent delivered. */
  delivered(): string[] {
    return [...this.jobMap.values()].filter((j) => j.delivered).map((j) => j.taskHash);
  }

  // ------------------------------------------------------------------------------------------ scheduling

  /** Runs `fn` after the work before it (one thing at a time: jobs never race each other's nonces or state). */
  private enqueue(fn: () => Promise<void>) {
    this.work = this.work.then(async () => {
      if (!this.running) return;
      try {
        await fn();
      } catch (error) {
        this.log(`failed: ${String(error)}`);
      }
    });
  }

  private later(ms: number, fn: () => Promise<void>) {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.enqueue(fn);
    }, ms);
    this.timers.add(timer);
  }

  private every(ms: number, fn: () => Promise<void>) {
    const tick = () => {
      if (!this.running) return;
      this.later(ms, async () => {
        await fn();
        tick();
      });
    };
    tick();
  }

  private startPolling() {
    this.modeValue = "polling";
    const interval = Math.max(this.options.pollIntervalMs ?? MIN_POLL_INTERVAL_MS, MIN_POLL_INTERVAL_MS);
    const tick = async () => {
      await this.scan(this.tickCount++ % 2 === 0 ? "open" : "offered");
      for (const job of this.jobMap.values()) if (job.delivered && job.stage === "delivered") await this.follow(job);
    };
    this.enqueue(tick);
    this.every(interval, tick);
  }

  // ----------------------------------------------------------------------------------------------- finding

  private async scan(which: "open" | "offered") {
    const page =
      which === "open"
        ? await this.api.openTasks({ capabilities: this.options.capabilities.join(","), limit: 50 })
        : await this.api.offeredTasks({ limit: 50 });
    for (const task of page.tasks) await this.consider(task);
  }

  private async onEvent(event: MarketEvent) {
    this.options.onEvent?.(event);
    const hash = event.data.taskHash?.toLowerCase();
    if (!hash) return;
    const job = this.jobMap.get(hash);
    switch (event.type) {
      case "task.open":
      case "task.offered":
        if (!job) this.enqueue(() => this.considerHash(hash));
        break;
      case "task.assigned":
        if (job && job.stage === "accepted" && !job.busy) this.enqueue(() => this.deliver(job));
        break;
      case "task.verdict":
        if (job) this.enqueue(() => this.onVerdict(job, event.data.passed === true));
        break;
      case "task.settled":
        if (job) this.settle(job, event.data.outcome);
        break;
    }
  }

  private async considerHash(hash: string, attempt = 0) {
    if (this.jobMap.has(hash) || this.refused.has(hash) || this.pausedValue) return;
    let detail;
    try {
      detail = await this.api.task(hash);
    } catch (error) {
      // An event can arrive before the service's index has the task: read it again, backing off.
      if (
        (retryable(error) || isMarketError(error, "NOT_FOUND")) &&
        this.retry(attempt, () => this.considerHash(hash, attempt + 1))
      ) {
        return;
      }
      throw error;
    }
    if (!detail.a2aMeta || !detail.a2aState) {
      // Funded on-chain but not listed yet: look again later.
      this.retry(attempt, () => this.considerHash(hash, attempt + 1));
      return;
    }
    await this.consider({ meta: detail.a2aMeta, state: detail.a2aState }, attempt);
  }

  /** Schedules `fn` after the back-off of `attempt` (1 s doubling to 10 s); false once attempts are exhausted. */
  private retry(attempt: number, fn: () => Promise<void>): boolean {
    if (attempt >= MAX_RETRIES || !this.running) return false;
    this.later(Math.min(1000 * 2 ** attempt, 10_000), fn);
    return true;
  }

  private takes(task: MarketplaceTask): boolean {
    if (this.options.take) return this.options.take(task);
    const mine = new Set(this.options.capabilities.map((c) => c.toLowerCase()));
    const enough = BigInt(task.meta.amount ?? "0") >= BigInt(this.options.minReward ?? "0");
    return task.state.status === "open" && enough && task.meta.requiredCapabilities.every((c) => mine.has(c));
  }

  private async consider(task: MarketplaceTask, attempt = 0) {
    const hash = task.meta.taskHash.toLowerCase();
    // Paused: not refused for good, `resume()` looks at the open tasks again.
    if (this.jobMap.has(hash) || this.refused.has(hash) || !this.running || this.pausedValue) return;
    // A task on a chain the agent has no signer on is never taken (whatever `take` says): it could not deliver.
    if (!this.signers.has(taskChain(task.meta, this.pin!.postingChain)) || !this.takes(task)) {
      this.refused.add(hash);
      return;
    }
    if (this.options.bid === "always" && !this.bids.has(hash)) await this.bid(hash);
    let accepted: AcceptResult;
    try {
      accepted = await this.api.accept(hash);
    } catch (error) {
      if (isMarketError(error, "OFFER_HELD", "NOT_OFFER_HOLDER")) {
        // Another agent holds the exclusive offer window: apply (a better-scored bid takes the window), and try
        // again when the window ends.
        if (!this.bids.has(hash)) await this.bid(hash);
        const ends = Number((error as MarketError).details?.offerExpiresAt) * 1000 - Date.now();
        const wait = Number.isFinite(ends) && ends > 0 ? Math.min(ends + 500, OFFER_WINDOW_MAX_MS) : 1000;
        if (attempt < MAX_RETRIES) this.later(wait, () => this.consider(task, attempt + 1));
        return;
      }
      if (retryable(error)) {
        // Not indexed yet, someone else is accepting, a passing failure: ask again, backing off.
        if (!this.retry(attempt, () => this.consider(task, attempt + 1)))
          this.log(`accept of ${hash}: ${String(error)}`);
        return;
      }
      this.refused.add(hash); // taken, reserved, not for us: do not ask again
      this.log(`accept of ${hash} refused: ${(error as Error).message}`);
      return;
    }
    const job = this.newJob(hash, accepted.onChainTaskId, task.meta, 1, accepted.wrappedKey);
    this.jobMap.set(hash, job);
    this.changed(job);
    this.log(`accepted ${hash} on ${job.chain}`);
    await this.deliver(job);
  }

  /** Applies for a task (once): the best-scored applicant holds an exclusive offer window. */
  private async bid(hash: string) {
    this.bids.add(hash);
    try {
      await this.api.bid(hash, this.options.bidMessage !== undefined ? { message: this.options.bidMessage } : {});
      this.log(`bid on ${hash}`);
    } catch (error) {
      if (!isMarketError(error, "ALREADY_APPLIED")) this.log(`bid on ${hash} refused: ${String(error)}`);
    }
  }

  // ------------------------------------------------------------------------------------------------ resume

  /** Picks up the unsettled tasks of the agent's work list (see the file's comment). */
  private async resumeWork() {
    const working: WorkingTask[] = [];
    for (let offset = 0; ;) {
      const page = await this.api.workingTasks({ limit: 200, offset });
      working.push(...page.tasks);
      offset += page.tasks.length;
      if (page.tasks.length === 0 || offset >= page.total) break;
    }
    for (const task of working) {
      const hash = task.meta.taskHash.toLowerCase();
      if (this.jobMap.has(hash)) continue;
      const status = task.state.status;
      const attempts = task.onChain?.submissionAttempts ?? 0;
      if (status === "assigning" || status === "assigned") {
        this.log(`resuming ${hash}: accepted, not delivered yet`);
        await this.resumeUndelivered(task, attempts + 1);
      } else if (status === "submitted" || status === "verifying" || status === "verified") {
        this.log(`resuming ${hash}: delivered (attempt ${attempts}), following its verdict`);
        const job = this.newJob(hash, task.onChain?.taskId ?? 0, task.meta, attempts, undefined);
        job.stage = "delivered";
        job.delivered = true;
        this.jobMap.set(hash, job);
        this.changed(job);
        // A verdict given while the agent was down: read the task once.
        await this.follow(job);
      }
    }
  }

  /** An accepted task not delivered yet: accept again (answers the same assignment and its brief key), deliver. */
  private async resumeUndelivered(task: WorkingTask, attempt: number, tries = 0): Promise<void> {
    const hash = task.meta.taskHash.toLowerCase();
    let accepted: AcceptResult;
    try {
      accepted = await this.api.accept(hash);
    } catch (error) {
      if (retryable(error) && this.retry(tries, () => this.resumeUndelivered(task, attempt, tries + 1))) return;
      this.log(`resuming ${hash} failed: ${String(error)}`);
      return;
    }
    const job = this.newJob(hash, accepted.onChainTaskId, task.meta, attempt, accepted.wrappedKey);
    this.jobMap.set(hash, job);
    this.changed(job);
    await this.deliver(job);
  }

  private newJob(
    hash: string,
    onChainTaskId: number,
    meta: TaskMeta,
    attempt: number,
    wrappedKey: string | undefined,
  ): JobState {
    return {
      taskHash: hash,
      chain: taskChain(meta, this.pin!.postingChain),
      onChainTaskId,
      stage: "accepted",
      attempt: Math.max(attempt, 1),
      meta,
      wrappedKey,
      delivered: false,
      busy: false,
      retryMs: 1000,
    };
  }

  // ---------------------------------------------------------------------------------------------- delivery

  private async brief(job: JobState): Promise<Buffer> {
    if (job.meta.privacy !== "public" && !job.wrappedKey) {
      // A job resumed after a restart has no key from an accept: the worker reads its brief and own key again.
      const own = await this.api.brief(job.taskHash);
      job.wrappedKey = own.wrappedKey;
      if (job.wrappedKey)
        return openBrief(Buffer.from(own.blobBase64, "base64"), job.wrappedKey, this.options.privateKey);
    }
    let blob: Buffer | undefined;
    try {
      blob = await this.api.blob(job.meta.rootHash ?? job.taskHash);
    } catch (error) {
      if (job.meta.privacy !== "public" || job.meta.publicBrief === undefined) throw error;
    }
    if (job.meta.privacy === "public") return blob ?? Buffer.from(job.meta.publicBrief!, "utf8");
    if (!job.wrappedKey)
      throw new MarketError("NEEDS_WRAP", `no brief key was wrapped to this agent for ${job.taskHash}`);
    return openBrief(blob!, job.wrappedKey, this.options.privateKey);
  }

  private async deliver(job: JobState) {
    if (job.busy || !this.running || job.stage !== "accepted") return;
    job.busy = true;
    try {
      // The work runs once per attempt; retries of the same attempt (assignment pending) deliver the same result.
      if (job.result?.attempt !== job.attempt) {
        const brief = await this.brief(job);
        const value = await this.options.work({
          taskHash: job.taskHash,
          chain: job.chain,
          onChainTaskId: job.onChainTaskId,
          meta: job.meta,
          brief,
          briefText: brief.toString("utf8"),
          attempt: job.attempt,
        });
        job.result = { attempt: job.attempt, value };
      }
      const result = job.result.value;
      const signer = this.signerOn(job.chain);
      let answer: TxAnswer & { attempt: number };
      let expectedHash = evidenceHash(result);
      try {
        answer = await this.api.submit(job.taskHash, { result });
      } catch (error) {
        if (retryable(error)) {
          // The assignment is not confirmed yet: try again, backing off to 10 s.
          this.later(job.retryMs, () => this.deliver(job));
          job.retryMs = Math.min(job.retryMs * 2, 10_000);
          return;
        }
        const pending = alreadySubmitted(error);
        if (!pending) throw error;
        if (!pending.unsignedTx) {
          // The chain has this attempt already (a run before a restart sent it): delivered, once.
          this.markDelivered(job, pending.attempt ?? job.attempt, "already on-chain");
          return;
        }
        // A run before a restart stored another result for this attempt without sending it: send that one.
        answer = { ...pending.unsignedTxAnswer(signer.pin), attempt: pending.attempt ?? job.attempt };
        expectedHash = pending.evidenceHash!;
      }
      // The careful client's checks: my wallet, the task's chain and its escrow, exactly submitEvidence of my result.
      checkEscrowTx(answer, signer.pin, signer.wallet.address, {
        fn: "submitEvidence",
        taskId: BigInt(job.onChainTaskId),
        evidenceHash: expectedHash,
      });
      let sent;
      try {
        sent = await signer.sender.send({ to: answer.unsignedTx.to, data: answer.unsignedTx.data });
        await signer.sender.wait(sent.hash);
      } catch (error) {
        // Sent by a run before a restart and mined since (the service had not indexed it yet): delivered, once.
        if (await this.onChainAlready(job, answer.attempt)) {
          this.markDelivered(job, answer.attempt, "already on-chain");
          return;
        }
        throw error;
      }
      this.markDelivered(job, answer.attempt, `tx ${sent.hash}`);
    } catch (error) {
      job.error = (error as Error).message;
      job.stage = "abandoned";
      this.changed(job);
      this.log(`delivery of ${job.taskHash} failed: ${job.error}`);
    } finally {
      job.busy = false;
    }
  }

  private markDelivered(job: JobState, attempt: number, how: string) {
    job.attempt = attempt;
    job.stage = "delivered";
    job.delivered = true;
    delete job.error;
    this.changed(job);
    this.log(`delivered ${job.taskHash} (attempt ${attempt}, ${how})`);
  }

  /**
   * Whether the chain has attempt `attempt` of the job's task: the escrow's `getTask`, read through the wallet's
   * provider, answers at once (the service's index may lag the chain by seconds). When the chain cannot be read, the
   * service's view decides.
   */
  private async onChainAlready(job: JobState, attempt: number): Promise<boolean> {
    try {
      const { sender, pin } = this.signerOn(job.chain);
      const data = escrowInterface.encodeFunctionData("getTask", [job.onChainTaskId]);
      const answer = await sender.provider.call({ to: pin.escrow, data });
      const [task] = escrowInterface.decodeFunctionResult("getTask", answer);
      return Number(task.submissionAttempts) >= attempt;
    } catch {
      const detail = await this.api.task(job.taskHash).catch(() => undefined);
      return detail !== undefined && detail.submissionAttempts >= attempt;
    }
  }

  // --------------------------------------------------------------------------------------------- following

  /** Polling mode: reads a delivered job's state. */
  private async follow(job: JobState) {
    const detail = await this.api.task(job.taskHash);
    const status = detail.a2aState?.status;
    if (status === "completed") this.settle(job, "paid");
    else if (status === "cancelled" || status === "expired") this.settle(job, "refunded");
    // A failed verdict on this job's latest attempt (not a stale read from before its redelivery).
    else if (status === "verified" && detail.submissionAttempts === job.attempt) await this.onVerdict(job, false);
  }

  private async onVerdict(job: JobState, passed: boolean) {
    if (passed || job.stage !== "delivered") return;
    if (job.attempt >= MAX_ATTEMPTS) {
      job.stage = "failed";
      this.changed(job);
      return;
    }
    // A failed verdict leaves another attempt: work again and resubmit.
    this.log(`failed verdict on ${job.taskHash} (attempt ${job.attempt}): trying again`);
    job.attempt += 1;
    job.stage = "accepted";
    this.changed(job);
    await this.deliver(job);
  }

  private settle(job: JobState, outcome: unknown) {
    const stage: JobStage = outcome === "paid" ? "paid" : outcome === "cancelled" ? "cancelled" : "refunded";
    if (job.stage === stage) return;
    job.stage = stage;
    this.changed(job);
    this.log(`${job.taskHash} settled: ${stage}`);
  }

  private changed(job: JobState) {
    this.options.onJob?.(this.jobs().find((j) => j.taskHash === job.taskHash)!);
  }
}
