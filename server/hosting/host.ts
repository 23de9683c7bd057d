/**
 * The agent host (docs/hosting.md): runs hosted agents, one worker thread each (./worker.ts, with its own heap limit),
 * on the agents it holds a lease of in the database, so that several host processes sharing one PostgreSQL database
 * run every agent exactly once.
 *
 * Every leaseMs/3 (and at once on `wake()`), one tick: heartbeat (agent_hosts), renew its leases, re-read its agents
 * and act on what changed (desired stopped or deleted, or the lease lost: stop the worker; generation changed:
 * restart it; desired paused/running: tell the worker), then claim claimable agents (oldest first) while it runs
 * fewer than its capacity.
 *
 * A worker gets the agent's key and its skills' secrets (decrypted here), a credential (`credentialFor`, by default a
 * hosted token refreshed before it expires) and the agent's event stream resume point. Supervision: a worker that
 * exits or fails on its own is `crashed` (last_error, restarts + 1, a log line) and restarted after a back-off of
 * 1 s doubling to 60 s, reset once a worker stayed up 5 minutes; a worker that reports ready is `running` (or
 * `paused`). `stop()` asks every worker to stop (terminating it after a timeout), releases the leases (status
 * stopped only for agents desired stopped: on a whole-service shutdown agents stay desired running and the next host
 * takes them) and leaves agent_hosts. Keys and credentials are never logged.
 */
import { Worker, type WorkerOptions } from "node:worker_threads";
import type { Config } from "../config";
import type { Logger } from "../logger";
import type { Knex } from "knex";
import {
  appendAgentLog,
  claimAgentLease,
  findAgentsToRun,
  heartbeatHost,
  listClaimableAgents,
  releaseAgentLease,
  removeHost,
  renewAgentLeases,
  reportAgentStatus,
  reportAgentStopped,
  saveLastEventId,
  type HostedAgentRun,
  type HostedStatus,
  type LogLevel,
  listInstalledSkills,
} from "../domain/agents/leases";
import { openSecret, secretLabel } from "../domain/agents/secrets";
import { issueAgentToken } from "../domain/agents/tokens";
import { hostedAgentMayAct } from "../domain/callers";
import type { HostToWorker, WorkerInit, WorkerToHost } from "./worker";
import { workerLaunch } from "./workerCode";

/** The credential a worker acts with, and when it expires (unix seconds; none: never refreshed). */
export interface AgentCredential {
  credential: string;
  expiresAt?: number;
}

export interface AgentHostOptions {
  db: Knex;
  config: Readonly<Config>;
  logger: Logger;
  /** The API the workers speak to (its own URL when the host runs in the API process). */
  apiUrl: string;
  clock?: { nowMs(): number };
  /** The worker's credential (default: a hosted token, issueAgentToken). */
  credentialFor?: (agent: HostedAgentRun) => Promise<AgentCredential>;
  /** Crash back-off: first delay, ceiling, and how long a worker must stay up for the delay to start over. */
  backoff?: { initialMs?: number; maxMs?: number; resetAfterMs?: number };
  /** How long a worker asked to stop may take before it is terminated (default 10 s). */
  stopTimeoutMs?: number;
  /** How long a worker's start waits for the posting chain to be postable (default the runtime's 60 s). */
  workerStartTimeoutMs?: number;
}

/** Young generation of a worker's heap, in MB. */
const WORKER_YOUNG_GENERATION_MB = 8;

/**
 * The only variables of the host's environment a worker sees: none it acts on. A worker gets everything it needs in
 * its workerData (its agent's key, token, skills and their secrets), never the host's own secrets (the key-encryption
 * key, the token secret, the verifier's and custody keys, DATABASE_URL) that a skill's bug could leak.
 */
export const WORKER_ENV_KEYS: readonly string[] = ["NODE_ENV", "TZ", "LANG", "LC_ALL"];

/** The thread options of an agent's worker (the host's, exported so a test can start a thread the same way). */
export function workerThreadOptions(
  workerData: unknown,
  memoryMb: number,
  env: NodeJS.ProcessEnv = process.env,
  evalCode = true,
): WorkerOptions {
  return {
    eval: evalCode,
    workerData,
    env: Object.fromEntries(WORKER_ENV_KEYS.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]]]))),
    // Not the parent's --require hooks (hardhat runs with ts-node and hardhat/register: a whole Hardhat runtime
    // and the TypeScript compiler in every agent): the built worker.js, or the bootstrap, brings the code it needs.
    execArgv: [],
    // The young generation capped too: V8's default (up to 3 x 16 MB semi-spaces per isolate) would be most of
    // an idle agent's memory (bench:agents).
    resourceLimits: {
      maxOldGenerationSizeMb: memoryMb,
      maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB,
    },
    // The worker's own output is its log lines (to the database), not the host's stdout.
    stdout: true,
    stderr: true,
  };
}

interface Slot {
  agentId: string;
  generation: number;
  desired: "running" | "paused";
  worker?: Worker;
  ready: boolean;
  startedAtMs: number;
  backoffMs: number;
  /** Set while the host stops the worker on purpose: its exit is not a crash. */
  stopping?: Promise<void>;
  /** A restart (generation) or a crash back-off in progress: the tick leaves the slot alone. */
  busy: boolean;
  restartTimer?: NodeJS.Timeout;
  refreshTimer?: NodeJS.Timeout;
  lastError?: string;
  lastEventId?: string;
  savedEventId?: string;
  /** Log writes in order. */
  logs: Promise<void>;
  /** A start in progress (reading, decrypting, spawning): a second one waits for nothing. */
  starting: boolean;
}

export class AgentHost {
  private readonly slots = new Map<string, Slot>();
  /** Workers being stopped (they count against the capacity until gone). */
  private readonly retiring = new Set<Promise<void>>();
  private readonly hostId: string;
  private readonly clock: { nowMs(): number };
  private readonly backoff: { initialMs: number; maxMs: number; resetAfterMs: number };
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private again = false;

  constructor(private readonly options: AgentHostOptions) {
    this.hostId = options.config.hostedAgents.hostId;
    this.clock = options.clock ?? { nowMs: () => Date.now() };
    this.backoff = {
      initialMs: options.backoff?.initialMs ?? 1000,
      maxMs: options.backoff?.maxMs ?? 60_000,
      resetAfterMs: options.backoff?.resetAfterMs ?? 5 * 60_000,
    };
  }

  private get db() {
    return this.options.db;
  }

  private get settings() {
    return this.options.config.hostedAgents;
  }

  get id(): string {
    return this.hostId;
  }

  /** The agents this host runs now, with whether their worker reported ready. */
  agents(): { agentId: string; ready: boolean; threadId?: number }[] {
    return [...this.slots.values()].map((s) => ({ agentId: s.agentId, ready: s.ready, threadId: s.worker?.threadId }));
  }

  /**
   * Each running worker's own V8 heap (asked of the worker; a worker that does not answer within 2 s is left out).
   * `collect`: after a full garbage collection in each worker (for measurements: it pauses them).
   */
  async heapUsage(collect = false): Promise<{ agentId: string; heapUsedBytes: number; heapTotalBytes: number }[]> {
    const answers = [...this.slots.values()].map(
      (slot) =>
        new Promise<{ agentId: string; heapUsedBytes: number; heapTotalBytes: number } | undefined>((resolve) => {
          const worker = slot.worker;
          if (!worker) return resolve(undefined);
          const timeout = setTimeout(() => (worker.off("message", onMessage), resolve(undefined)), 2000);
          const onMessage = (message: WorkerToHost) => {
            if (message.type !== "memory") return;
            clearTimeout(timeout);
            worker.off("message", onMessage);
            resolve({
              agentId: slot.agentId,
              heapUsedBytes: message.heapUsedBytes,
              heapTotalBytes: message.heapTotalBytes,
            });
          };
          worker.on("message", onMessage);
          worker.postMessage({ type: "memory", collect } satisfies HostToWorker);
        }),
    );
    return (await Promise.all(answers)).filter((a) => a !== undefined);
  }

  /** The worker thread of an agent this host runs (for supervision tools: terminating it counts as a crash). */
  workerOf(agentId: string): Worker | undefined {
    return this.slots.get(agentId)?.worker;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    // From the sources, the workers' code is transpiled once, synchronously: before this host holds any lease, so
    // the event loop it blocks delays no renewal (a CI run with 2 s leases saw leases lapse while it ran at the first
    // spawn). From the build there is nothing to compile.
    const compileStartedAt = Date.now();
    const launch = workerLaunch();
    this.options.logger.info("agent host started", {
      host: this.hostId,
      capacity: this.settings.capacity,
      leaseMs: this.settings.leaseMs,
      workerCode: launch.eval ? "transpiled" : "built",
      workerCodeCompiledMs: Date.now() - compileStartedAt,
    });
    this.schedule(0);
  }

  /** Looks at the agents now (an owner changed one) instead of at the next tick. */
  wake(): void {
    if (this.running) this.schedule(0);
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearTimeout(this.timer);
    await this.inFlight;
    await Promise.all([...this.retiring]);
    const slots = [...this.slots.values()];
    await Promise.all(slots.map((slot) => this.stopWorker(slot)));
    for (const slot of slots) {
      await this.flushEventId(slot);
      await slot.logs;
      // Whole-service shutdown: still desired running (another host takes it); stopped only if the owner stopped it.
      await reportAgentStopped(this.db, { agentId: slot.agentId, host: this.hostId, nowSeconds: this.nowSeconds() });
      await reportAgentStatus(this.db, {
        agentId: slot.agentId,
        host: this.hostId,
        status: "starting",
        nowSeconds: this.nowSeconds(),
      });
      await releaseAgentLease(this.db, this.hostId, slot.agentId);
    }
    this.slots.clear();
    await removeHost(this.db, this.hostId);
    this.options.logger.info("agent host stopped", { host: this.hostId });
  }

  // ------------------------------------------------------------------------------------------------- ticking

  private schedule(ms: number) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.runTick(), ms);
  }

  private async runTick() {
    if (this.inFlight) {
      this.again = true;
      return;
    }
    this.inFlight = this.tick().catch((error) =>
      this.options.logger.warn("agent host tick failed", { host: this.hostId, error }),
    );
    await this.inFlight;
    this.inFlight = undefined;
    if (!this.running) return;
    const next = this.again ? 0 : Math.max(Math.floor(this.settings.leaseMs / 3), 50);
    this.again = false;
    this.schedule(next);
  }

  /** Workers running, starting or stopping. */
  private load() {
    return this.slots.size + this.retiring.size;
  }

  private nowSeconds() {
    return Math.floor(this.clock.nowMs() / 1000);
  }

  private async tick() {
    const now = this.clock.nowMs();
    const leaseUntil = now + this.settings.leaseMs;
    await heartbeatHost(this.db, { id: this.hostId, capacity: this.settings.capacity, nowMs: now });
    const ids = [...this.slots.keys()];
    await renewAgentLeases(this.db, this.hostId, ids, leaseUntil);
    const rows = new Map((await findAgentsToRun(this.db, ids)).map((r) => [r.id, r]));
    for (const slot of [...this.slots.values()]) {
      if (!this.running) return;
      await this.reconcile(slot, rows.get(slot.agentId));
    }
    while (this.running && this.load() < this.settings.capacity) {
      const free = this.settings.capacity - this.load();
      const claimable = (await listClaimableAgents(this.db, now, free + 5)).filter((a) => !this.slots.has(a.id));
      let claimed = 0;
      for (const agent of claimable) {
        if (this.load() >= this.settings.capacity || !this.running) break;
        const mine = await claimAgentLease(this.db, {
          agentId: agent.id,
          host: this.hostId,
          nowMs: now,
          untilMs: leaseUntil,
        });
        if (!mine) continue; // another host was faster
        claimed++;
        this.launch(agent);
      }
      if (claimed === 0) break;
    }
  }

  /** Acts on an agent's row: stop, restart, pause or resume its worker. */
  private async reconcile(slot: Slot, row: HostedAgentRun | undefined) {
    const lost = !row || row.leaseHost !== this.hostId;
    if (lost || !hostedAgentMayAct(row)) {
      // Stopped beside the tick (a worker may take stopTimeoutMs to go: the other leases must be renewed meanwhile);
      // it counts against the capacity until it is gone.
      this.slots.delete(slot.agentId);
      const retired: Promise<void> = this.retire(slot, row, lost)
        .catch((error) => this.options.logger.warn("agent worker not retired cleanly", { agent: slot.agentId, error }))
        .finally(() => this.retiring.delete(retired));
      this.retiring.add(retired);
      return;
    }
    await this.flushEventId(slot);
    if (slot.busy) return;
    if (row.generation !== slot.generation) {
      slot.busy = true;
      slot.generation = row.generation;
      slot.desired = row.desiredState as Slot["desired"];
      this.log(slot, "info", `generation ${row.generation}: restarting the worker`);
      void (async () => {
        await this.stopWorker(slot);
        slot.backoffMs = this.backoff.initialMs;
        if (this.running && this.slots.get(slot.agentId) === slot) await this.startWorker(slot);
        slot.busy = false;
      })();
      return;
    }
    if (row.desiredState !== slot.desired) {
      slot.desired = row.desiredState as Slot["desired"];
      this.send(slot, { type: slot.desired === "paused" ? "pause" : "resume" });
    }
  }

  /** Stops the worker of an agent this host no longer runs; status stopped if its owner stopped it. */
  private async retire(slot: Slot, row: HostedAgentRun | undefined, lost: boolean) {
    await this.stopWorker(slot);
    await this.flushEventId(slot);
    if (lost || !row) {
      this.log(slot, "warn", `lease lost to ${row?.leaseHost ?? "nobody"}: worker stopped on ${this.hostId}`);
      return;
    }
    if (row.deleted) {
      await releaseAgentLease(this.db, this.hostId, slot.agentId);
      return;
    }
    this.log(slot, "info", "stopped by its owner");
    await slot.logs;
    await reportAgentStopped(this.db, { agentId: slot.agentId, host: this.hostId, nowSeconds: this.nowSeconds() });
  }

  // ------------------------------------------------------------------------------------------------ workers

  private launch(agent: HostedAgentRun) {
    const slot: Slot = {
      agentId: agent.id,
      generation: agent.generation,
      desired: agent.desiredState === "paused" ? "paused" : "running",
      ready: false,
      startedAtMs: 0,
      backoffMs: this.backoff.initialMs,
      busy: true,
      logs: Promise.resolve(),
      starting: false,
    };
    this.slots.set(agent.id, slot);
    void this.startWorker(slot).finally(() => (slot.busy = false));
  }

  private async report(
    slot: Slot,
    status: HostedStatus,
    extra: { lastError?: string | null; restarted?: boolean } = {},
  ) {
    await reportAgentStatus(this.db, {
      agentId: slot.agentId,
      host: this.hostId,
      status,
      nowSeconds: this.nowSeconds(),
      ...extra,
    }).catch((error) => this.options.logger.warn("agent status not written", { agent: slot.agentId, error }));
  }

  /** Reads the agent's run view and skills, decrypts its secrets, gets a credential and spawns the worker. */
  private async startWorker(slot: Slot): Promise<void> {
    if (!this.running || this.slots.get(slot.agentId) !== slot || slot.starting || slot.worker) return;
    slot.starting = true;
    try {
      await this.spawn(slot);
    } finally {
      slot.starting = false;
    }
  }

  private async spawn(slot: Slot): Promise<void> {
    let init: WorkerInit;
    let credential: AgentCredential;
    let agent: HostedAgentRun | undefined;
    try {
      await this.report(slot, "starting");
      [agent] = await findAgentsToRun(this.db, [slot.agentId]);
      if (!agent || !agent.encryptedKey) throw new Error("the agent has no key (deleted or erased)");
      slot.generation = agent.generation;
      const kek = this.settings.keyEncryptionKey;
      const privateKey = openSecret(kek, agent.encryptedKey, secretLabel.walletKey(agent.id));
      const skills = (await listInstalledSkills(this.db, [agent.id])).map((s) => ({
        id: s.skill,
        config: s.config,
        secrets: s.encryptedSecrets
          ? (JSON.parse(openSecret(kek, s.encryptedSecrets, secretLabel.skillSecrets(agent!.id, s.skill))) as Record<
              string,
              string
            >)
          : {},
      }));
      credential = await this.credential(agent);
      init = {
        agentId: agent.id,
        privateKey,
        apiUrl: this.options.apiUrl,
        credential: credential.credential,
        rpcUrl: this.options.config.rpcUrl,
        rpcUrls: Object.fromEntries(
          this.options.config.chains
            .filter((c) => c.name !== this.options.config.api.postingChain && agent!.chains.includes(c.name))
            .map((c) => [c.name, c.rpcUrl]),
        ),
        capabilities: agent.capabilities,
        chains: agent.chains,
        minReward: agent.minReward,
        skills,
        lastEventId: slot.lastEventId ?? agent.lastEventId ?? undefined,
        paused: slot.desired === "paused",
        verifier: { optIn: agent.verifierOptIn, name: agent.verifierName },
        allowPrivateAddresses: this.options.config.push.webhooks.allowPrivate,
        startTimeoutMs: this.options.workerStartTimeoutMs,
      };
    } catch (error) {
      await this.crashed(slot, `could not start: ${(error as Error).message}`);
      return;
    }
    // Stopped, or the agent left this host, while its secrets were read: no worker.
    if (!this.running || this.slots.get(slot.agentId) !== slot) return;
    const launch = workerLaunch();
    const worker = new Worker(
      launch.code,
      workerThreadOptions({ ...init, ...launch.data }, this.settings.workerMemoryMb, process.env, launch.eval),
    );
    slot.worker = worker;
    slot.ready = false;
    slot.lastError = undefined;
    slot.startedAtMs = this.clock.nowMs();
    worker.stdout.resume();
    worker.stderr.resume();
    this.scheduleRefresh(slot, agent!, credential.expiresAt);
    worker.on("message", (message: WorkerToHost) => this.onMessage(slot, worker, message));
    worker.on("error", (error) => {
      slot.lastError = error.message;
    });
    worker.on("exit", (code) => {
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      slot.ready = false;
      clearTimeout(slot.refreshTimer);
      if (slot.stopping) return;
      void this.crashed(slot, slot.lastError ?? `the worker exited with code ${code}`);
    });
  }

  private async credential(agent: HostedAgentRun): Promise<AgentCredential> {
    if (this.options.credentialFor) return this.options.credentialFor(agent);
    const { token, expiresAt } = await issueAgentToken(
      this.settings,
      { agentId: agent.id, wallet: agent.wallet },
      this.nowSeconds(),
    );
    return { credential: token, expiresAt };
  }

  /** A new credential for the worker before the current one expires (at 80% of its life, at least 1 s from now). */
  private scheduleRefresh(slot: Slot, agent: HostedAgentRun, expiresAt: number | undefined) {
    clearTimeout(slot.refreshTimer);
    if (expiresAt === undefined) return;
    const lifeMs = expiresAt * 1000 - this.clock.nowMs();
    slot.refreshTimer = setTimeout(
      async () => {
        if (!slot.worker || slot.stopping) return;
        try {
          const fresh = await this.credential(agent);
          this.send(slot, { type: "credential", credential: fresh.credential });
          this.scheduleRefresh(slot, agent, fresh.expiresAt);
        } catch (error) {
          this.log(slot, "error", `credential refresh failed: ${(error as Error).message}`);
          this.scheduleRefresh(slot, agent, this.nowSeconds() + 10);
        }
      },
      Math.max(1000, Math.floor(lifeMs * 0.8)),
    );
  }

  private onMessage(slot: Slot, worker: Worker, message: WorkerToHost) {
    if (slot.worker !== worker) return;
    switch (message.type) {
      case "ready":
        slot.ready = true;
        this.log(slot, "info", `worker ready on ${this.hostId}`);
        void this.report(slot, slot.desired === "paused" ? "paused" : "running");
        break;
      case "paused":
        if (slot.ready) void this.report(slot, message.paused ? "paused" : "running");
        break;
      case "log":
        this.log(slot, message.level, message.message);
        break;
      case "lastEventId":
        slot.lastEventId = message.id;
        break;
      case "memory":
        break;
    }
  }

  private send(slot: Slot, message: HostToWorker) {
    slot.worker?.postMessage(message);
  }

  /** A crash: status crashed, last_error, restarts + 1, a log line, and a restart after the back-off. */
  private async crashed(slot: Slot, error: string) {
    if (this.slots.get(slot.agentId) !== slot) return;
    const now = this.clock.nowMs();
    if (slot.startedAtMs > 0 && now - slot.startedAtMs >= this.backoff.resetAfterMs) {
      slot.backoffMs = this.backoff.initialMs;
    }
    const delay = slot.backoffMs;
    slot.backoffMs = Math.min(slot.backoffMs * 2, this.backoff.maxMs);
    this.log(slot, "error", `worker crashed: ${error}; restart in ${delay} ms`);
    await this.flushEventId(slot);
    await this.report(slot, "crashed", { lastError: error.slice(0, 2000), restarted: true });
    slot.busy = true;
    clearTimeout(slot.restartTimer);
    slot.restartTimer = setTimeout(() => {
      void this.startWorker(slot).finally(() => (slot.busy = false));
    }, delay);
  }

  /** Asks the worker to stop, terminating it after the timeout; resolves once it is gone. */
  private stopWorker(slot: Slot): Promise<void> {
    clearTimeout(slot.restartTimer);
    clearTimeout(slot.refreshTimer);
    const worker = slot.worker;
    if (!worker) return Promise.resolve();
    slot.stopping ??= new Promise<void>((resolve) => {
      const timeout = setTimeout(() => void worker.terminate(), this.options.stopTimeoutMs ?? 10_000);
      worker.once("exit", () => {
        clearTimeout(timeout);
        resolve();
      });
      worker.postMessage({ type: "stop" } satisfies HostToWorker);
    }).finally(() => {
      slot.stopping = undefined;
      slot.worker = undefined;
      slot.ready = false;
    });
    return slot.stopping;
  }

  private async flushEventId(slot: Slot) {
    const id = slot.lastEventId;
    if (id === undefined || id === slot.savedEventId) return;
    slot.savedEventId = id;
    await saveLastEventId(this.db, slot.agentId, this.hostId, id).catch((error) =>
      this.options.logger.warn("agent event id not written", { agent: slot.agentId, error }),
    );
  }

  /** A line of the agent's log (hosted_agent_logs), written in order. */
  private log(slot: Slot, level: LogLevel, message: string) {
    const atMs = this.clock.nowMs();
    slot.logs = slot.logs.then(() =>
      appendAgentLog(this.db, { agentId: slot.agentId, level, message: message.slice(0, 4000), atMs }).catch((error) =>
        this.options.logger.warn("agent log line not written", { agent: slot.agentId, error }),
      ),
    );
  }
}
