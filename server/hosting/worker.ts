/**
 * A hosted agent's worker thread (started by the agent host, ./host.ts, through a bootstrap that loads precompiled
 * code, ./workerCode.ts): the SDK's AgentRuntime with the agent's own key, speaking to the API over HTTP with the
 * credential the host gives it (a hosted token, replaced by the host before it expires), and a work function that runs
 * the installed skill covering the task's required capabilities. Everything it reports goes to the host by message:
 * `ready`, log lines, the event stream's resume point, pause state; the host writes them to the database. The key and
 * the credential never leave the thread in a message or a log line.
 */
import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { parentPort, workerData } from "node:worker_threads";
import { JsonRpcProvider } from "ethers";
import { AgentRuntime, MarketApi, checkEscrowTx, taskChain, type ChainName, type Job } from "../../client/sdk/index";
import { capabilitiesFor } from "../domain/agents/skills/catalog";
import { verifierSkill } from "../domain/agents/skills/specs";
import { findRunnableSkill } from "./skills/catalog";
import { judgeWork } from "./skills/verifier";
import type { RunnableSkill } from "./skills/types";

/** What the host hands a worker (workerData). */
export interface WorkerInit {
  agentId: string;
  /** The agent's wallet key (0x hex), decrypted by the host. */
  privateKey: string;
  apiUrl: string;
  /** The bearer credential the worker acts with (a hosted token; an API key in tests). */
  credential: string;
  /** The posting chain's JSON-RPC URL. */
  rpcUrl: string;
  /** The JSON-RPC URL of every other chain in `chains` (the agent signs there through it). */
  rpcUrls: Partial<Record<ChainName, string>>;
  /** The agent's own capabilities, added to its skills'. */
  capabilities: string[];
  /** The settlement chains its owner enables: registered as its executor record's supportedChains. */
  chains: ChainName[];
  minReward: string;
  skills: { id: string; config: Record<string, unknown>; secrets: Record<string, string> }[];
  lastEventId?: string;
  paused: boolean;
  verifier: { optIn: boolean; name: string | null };
  /** Skills may call loopback and private addresses (WEBHOOK_ALLOW_PRIVATE: the devnet, tests), never in production. */
  allowPrivateAddresses: boolean;
  /** How long start() waits for the posting chain to be postable. */
  startTimeoutMs?: number;
  /** With the verifier skill: how often it reads the tasks awaiting its verdict (default 5 s). */
  judgeIntervalMs?: number;
}

export type HostToWorker =
  | { type: "credential"; credential: string }
  | { type: "pause" }
  | { type: "resume" }
  | { type: "stop" }
  /** Answer the heap; `collect`: after a full garbage collection (measurements only: it pauses the worker). */
  | { type: "memory"; collect?: boolean };

export type WorkerToHost =
  | { type: "ready" }
  | { type: "log"; level: "info" | "warn" | "error"; message: string }
  | { type: "lastEventId"; id: string }
  | { type: "paused"; paused: boolean }
  /** The worker's V8 heap (its own isolate), answering `memory`. */
  | { type: "memory"; heapUsedBytes: number; heapTotalBytes: number };

interface InstalledSkill {
  skill: RunnableSkill;
  config: Record<string, unknown>;
  secrets: Record<string, string>;
  capabilities: string[];
}

/** The installed skill covering every required capability (the first in install order), if any. */
export function skillFor(installed: InstalledSkill[], required: string[]): InstalledSkill | undefined {
  const wanted = required.map((c) => c.toLowerCase());
  return installed.find((s) => wanted.every((c) => s.capabilities.includes(c)));
}

async function main(init: WorkerInit, port: NonNullable<typeof parentPort>) {
  const post = (message: WorkerToHost) => port.postMessage(message);
  const log = (message: string, level: "info" | "warn" | "error" = "info") => post({ type: "log", level, message });
  const stopping = new AbortController();

  const installed: InstalledSkill[] = [];
  for (const s of init.skills) {
    const skill = findRunnableSkill(s.id);
    if (!skill) {
      log(`skill ${s.id} is not in this service's catalog: skipped`, "warn");
      continue;
    }
    const caps = capabilitiesFor(skill, s.config).map((c) => c.toLowerCase());
    installed.push({ skill, config: s.config, secrets: s.secrets, capabilities: caps });
  }
  const capabilities = [
    ...new Set([...installed.flatMap((s) => s.capabilities), ...init.capabilities.map((c) => c.toLowerCase())]),
  ].sort();

  const work = async (job: Job) => {
    const chosen = skillFor(installed, job.meta.requiredCapabilities);
    if (!chosen) {
      throw new Error(`no installed skill covers ${job.meta.requiredCapabilities.join(", ") || "this task"}`);
    }
    log(`running skill ${chosen.skill.id} on ${job.taskHash} (attempt ${job.attempt})`);
    return chosen.skill.run(
      {
        taskHash: job.taskHash,
        briefText: job.briefText,
        requiredCapabilities: job.meta.requiredCapabilities,
        attempt: job.attempt,
      },
      {
        config: chosen.config,
        secrets: chosen.secrets,
        log: (message) => log(`[${chosen.skill.id}] ${message}`),
        signal: stopping.signal,
        allowPrivateAddresses: init.allowPrivateAddresses,
      },
    );
  };

  const api = new MarketApi({ baseUrl: init.apiUrl, token: init.credential });
  const provider = new JsonRpcProvider(init.rpcUrl, undefined, { staticNetwork: true });
  const providers = Object.fromEntries(
    Object.entries(init.rpcUrls).map(([chain, url]) => [
      chain,
      new JsonRpcProvider(url, undefined, { staticNetwork: true }),
    ]),
  ) as Partial<Record<ChainName, JsonRpcProvider>>;
  const runtime = new AgentRuntime({
    api,
    privateKey: init.privateKey,
    provider,
    providers,
    capabilities,
    supportedChains: init.chains,
    minReward: init.minReward,
    lastEventId: init.lastEventId,
    // Opted in as a verifier agent: registered so (role=verifier lists it while it runs).
    verifier: init.verifier.optIn && init.verifier.name ? { optIn: true, name: init.verifier.name } : { optIn: false },
    startTimeoutMs: init.startTimeoutMs,
    work,
    log: (message) => log(message),
    onEvent: (event) => {
      if (event.id) post({ type: "lastEventId", id: event.id });
    },
  });
  if (init.paused) runtime.pause();

  let stopped: Promise<void> | undefined;
  const stopHooks: (() => Promise<void>)[] = [];
  const stop = () =>
    (stopped ??= (async () => {
      stopping.abort();
      for (const hook of stopHooks) await hook();
      await runtime.stop();
      provider.destroy();
      for (const other of Object.values(providers)) other?.destroy();
      // Ends this thread only (not the host's process).
      process.exit(0);
    })());

  port.on("message", (message: HostToWorker) => {
    switch (message.type) {
      case "credential":
        api.setToken(message.credential);
        break;
      case "pause":
        runtime.pause();
        post({ type: "paused", paused: true });
        break;
      case "resume":
        runtime.resume();
        post({ type: "paused", paused: false });
        break;
      case "stop":
        void stop();
        break;
      case "memory": {
        if (message.collect) {
          setFlagsFromString("--expose-gc");
          (runInNewContext("gc") as () => void)();
        }
        const heap = getHeapStatistics();
        post({ type: "memory", heapUsedBytes: heap.used_heap_size, heapTotalBytes: heap.total_heap_size });
        break;
      }
    }
  });

  await runtime.start();
  // Installing the verifier skill makes the agent judge the tasks naming it as verifier agent.
  if (installed.some((s) => s.skill.id === verifierSkill.id)) {
    const judge = startJudging(init, api, runtime, log, stopping.signal);
    stopHooks.push(judge);
  }
  post({ type: "ready" });
}

/**
 * A verifier agent's duty: every judgeIntervalMs, the tasks awaiting its verdict (GET /a2a/tasks/judging), each
 * judged once per attempt with the verifier skill's judgeWork against the task's criteria, the verdict recorded
 * (POST /a2a/tasks/{hash}/verify) and the answered completeVerification checked (my wallet, the task's chain and
 * its escrow, exactly this task and verdict) and sent with the agent's own key through the runtime's signer of that
 * chain (one sender per chain: the judge's and the worker's transactions share its nonces). Answers a function that
 * stops it.
 */
function startJudging(
  init: WorkerInit,
  api: MarketApi,
  runtime: AgentRuntime,
  log: (message: string, level?: "info" | "warn" | "error") => void,
  signal: AbortSignal,
): () => Promise<void> {
  const judged = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();

  const judgeOne = async (task: Awaited<ReturnType<MarketApi["judgingTasks"]>>["tasks"][number]) => {
    const onChain = task.onChain;
    if (!onChain) return;
    const key = `${task.meta.taskHash}:${onChain.submissionAttempts}`;
    if (judged.has(key)) return;
    const verdict = await judgeWork(task.meta.verificationCriteria, task.resultData);
    // The verdict as judgeWork gives it: its reason is cut to what the route accepts (evaluationReason).
    const answer = await api.verify(task.meta.taskHash, verdict);
    const { pin, wallet, sender } = runtime.signerOn(taskChain(task.meta, runtime.settlement!.postingChain));
    checkEscrowTx(answer, pin, wallet.address, {
      fn: "completeVerification",
      taskId: BigInt(onChain.taskId),
      passed: verdict.passed,
    });
    const sent = await sender.send({ to: answer.unsignedTx.to, data: answer.unsignedTx.data });
    await sender.wait(sent.hash);
    judged.add(key);
    log(`judged ${task.meta.taskHash} attempt ${onChain.submissionAttempts}: ${verdict.passed ? "passed" : "failed"}`);
  };

  const tick = async () => {
    if (signal.aborted) return;
    try {
      const page = await api.judgingTasks({ limit: 50 });
      for (const task of page.tasks) {
        if (signal.aborted) return;
        await judgeOne(task).catch((error) =>
          log(`verdict on ${task.meta.taskHash} failed: ${(error as Error).message}`, "warn"),
        );
      }
    } catch (error) {
      log(`reading the tasks to judge failed: ${(error as Error).message}`, "warn");
    }
    if (!signal.aborted) timer = setTimeout(() => (round = tick()), init.judgeIntervalMs ?? 5000);
  };
  round = tick();
  log("judging the tasks that name this agent as verifier");
  return async () => {
    clearTimeout(timer);
    await round;
  };
}

if (parentPort && workerData) {
  const port = parentPort;
  main(workerData as WorkerInit, port).catch((error) => {
    port.postMessage({ type: "log", level: "error", message: `worker failed: ${String(error)}` } as WorkerToHost);
    process.exit(1);
  });
}
