/**
 * Following and settling tasks: `tasks`, `status`, `watch`, `review`, and the signed operations `cancel`,
 * `reclaim`, `dispute`, `release`.
 */
import { Argument } from "commander";
import type { Context } from "../context";
import { apiOf, walletOf } from "../clients";
import { parseDuration, parseTaskHash, parseTaskRef } from "../parse";
import {
  resolveDispute,
  sendTaskOperation,
  subscribe,
  waitForTask,
  type MarketApi,
  type TaskDetail,
  type TaskOperation,
} from "../../sdk/index";
import type { ChainName } from "../../sdk/types";
import { EXIT } from "../exitCodes";
import { table } from "../output";
import { amountText, FINAL_STATES, outcomeOf, shortHash, timeText } from "../format";
import { CliError, usageError } from "../errors";

export const TASK_LISTS = ["posted", "offered", "working"] as const;
export type TaskList = (typeof TASK_LISTS)[number];

export const whichArgument = () =>
  new Argument("[which]", "posted (your tasks), offered (to you), working (your work)")
    .choices(TASK_LISTS)
    .default("posted");

function positiveInt(text: string, flag: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) throw usageError("INVALID_INPUT", `${flag} must be a positive integer`);
  return Number(text);
}

interface Row {
  taskHash: string;
  /** The settlement chain (`base` or `arc`): on-chain ids are per chain. */
  chain: string;
  onChainTaskId: number;
  status: string;
  amount: string | null;
  privacy: string;
  mode: string;
  deadline: number | null;
}

export async function list(
  ctx: Context,
  which: TaskList,
  options: { limit: string; chain?: ChainName },
): Promise<void> {
  const api = apiOf(ctx);
  const limit = positiveInt(options.limit, "--limit");
  const query = { limit, ...(options.chain ? { chain: options.chain } : {}) };
  let rows: Row[];
  let total: number;
  if (which === "posted") {
    const page = await api.postedTasks(query);
    rows = page.tasks.map((t) => rowOf(t.meta, t.state.status));
    total = page.total;
  } else if (which === "offered") {
    const page = await api.offeredTasks(query);
    rows = page.tasks.map((t) => rowOf(t.meta, t.state.status));
    total = page.total;
  } else {
    // The agent's own work list (a service without the route answers NOT_FOUND).
    const page = await api.workingTasks(query);
    rows = page.tasks.map((t) => rowOf(t.meta, t.state.status));
    total = page.total;
  }
  ctx.out.result({ which, tasks: rows, total }, () =>
    rows.length === 0
      ? `No ${which} tasks.`
      : table([
          ["TASK", "CHAIN", "ID", "STATE", "REWARD", "PRIVACY", "MODE", "DEADLINE"],
          ...rows.map((r) => [
            r.taskHash,
            r.chain,
            String(r.onChainTaskId),
            r.status,
            amountText(r.amount),
            r.privacy,
            r.mode,
            timeText(r.deadline),
          ]),
        ]).concat(total > rows.length ? [`(${rows.length} of ${total}; --limit for more)`] : []),
  );
}

function rowOf(
  meta: {
    taskHash: string;
    chain: string;
    onChainTaskId: number;
    amount: string | null;
    privacy: string;
    verificationMode: string;
    effectiveDeadline: number | null;
    deadline: number | null;
  },
  status: string,
): Row {
  return {
    taskHash: meta.taskHash,
    chain: meta.chain,
    onChainTaskId: meta.onChainTaskId,
    status,
    amount: meta.amount,
    privacy: meta.privacy,
    mode: meta.verificationMode,
    deadline: meta.effectiveDeadline ?? meta.deadline,
  };
}

/** The chain a numeric task id is read on (`--chain`; without it, the service's posting chain). */
type IdChain = { chain?: ChainName };

/** The task `text` names (hash, `2` or `#2`, the id on `--chain`): its detail, read once. */
async function readTask(api: MarketApi, text: string, { chain }: IdChain): Promise<TaskDetail> {
  const ref = parseTaskRef(text);
  return "taskHash" in ref ? api.task(ref.taskHash) : api.task(ref.taskId, { chain });
}

/** The hash of the task `text` names: a hash as given, an on-chain id (of `--chain`) looked up on the service. */
async function taskHashOf(api: MarketApi, text: string, { chain }: IdChain): Promise<string> {
  const ref = parseTaskRef(text);
  if ("taskHash" in ref) return ref.taskHash;
  return (await api.task(ref.taskId, { chain })).taskHash.toLowerCase();
}

export async function status(ctx: Context, task: string, options: IdChain = {}): Promise<void> {
  const detail = await readTask(apiOf(ctx, false), task, options);
  const state = detail.a2aState?.status ?? null;
  const data = {
    taskHash: detail.taskHash,
    chain: detail.chain,
    chainId: detail.chainId,
    onChainTaskId: detail.taskId,
    state,
    onChainStatus: detail.status,
    outcome: state ? (outcomeOf(state) ?? null) : null,
    poster: detail.poster,
    worker: detail.worker,
    amount: detail.amount,
    deadline: detail.effectiveDeadline,
    attempts: detail.submissionAttempts,
    meta: detail.a2aMeta,
    resultData: detail.resultData ?? null,
  };
  ctx.out.result(data, [
    `Task      ${detail.taskHash} (id ${detail.taskId} on ${data.chain}, chain id ${data.chainId ?? "unknown"})`,
    `State     ${state ?? "not listed"}${data.outcome ? ` (${data.outcome})` : ""}`,
    `Reward    ${amountText(detail.amount)}`,
    `Poster    ${detail.poster}`,
    `Worker    ${/^0x0{40}$/.test(detail.worker) ? "-" : detail.worker}`,
    `Deadline  ${timeText(detail.effectiveDeadline)}`,
    `Attempts  ${detail.submissionAttempts}`,
    ...(detail.a2aMeta
      ? [
          `Listing   ${detail.a2aMeta.privacy}, mode ${detail.a2aMeta.verificationMode}, needs ${detail.a2aMeta.requiredCapabilities.join(", ") || "-"}`,
        ]
      : []),
    ...(data.resultData !== null ? [`Result    ${JSON.stringify(data.resultData)}`] : []),
  ]);
}

export async function review(
  ctx: Context,
  task: string,
  options: { pass?: boolean; fail?: boolean; reason?: string },
): Promise<void> {
  const hash = parseTaskHash(task);
  if (!options.pass && !options.fail) throw usageError("INVALID_INPUT", "give --pass or --fail");
  const api = apiOf(ctx);
  const verdict = await ctx.out.step(
    options.pass ? `accepting the delivery of ${shortHash(hash)}` : `refusing the delivery of ${shortHash(hash)}`,
    () => (options.pass ? api.finalize(hash) : api.decline(hash, options.reason ? { reason: options.reason } : {})),
    (v) => `verdict ${v.passed ? "pass" : "fail"} on attempt ${v.attempt}, ${v.intent.status}`,
  );
  ctx.out.result(
    {
      taskHash: verdict.taskHash,
      onChainTaskId: verdict.onChainTaskId,
      attempt: verdict.attempt,
      passed: verdict.passed,
      state: verdict.state,
      txHash: verdict.intent.txHash,
    },
    `The marketplace verifier settles the verdict (${verdict.passed ? "pay the worker" : "fail"}): \`market watch ${verdict.taskHash}\` follows it.`,
  );
}

/** How often `watch` reads the task (the event stream, when the service has one, reports changes at once). */
const READ_INTERVAL_MS = 5_000;

/** After the final state is read, how long `watch` waits for the stream's task.settled to name the settling tx. */
const SETTLED_EVENT_WAIT_MS = 15_000;

/**
 * The hash of the transaction that settled `hash` (paid or refunded), from the caller's event stream replayed from
 * its start: its task.settled event. Resolves to null when the stream is not available (no key, an older service).
 */
function settlingTx(api: MarketApi, hash: string) {
  let found: (txHash: string | null) => void = () => undefined;
  const txHash = new Promise<string | null>((resolve) => (found = resolve));
  if (!api.apiKey) {
    found(null);
    return { txHash, close: async () => undefined };
  }
  const sub = subscribe(
    api,
    (event) => {
      if (event.data.taskHash?.toLowerCase() === hash && event.data.type === "task.settled") found(event.data.txHash);
    },
    { lastEventId: "0" },
  );
  sub.done.then(
    () => found(null),
    () => found(null),
  );
  return { txHash, close: () => sub.close() };
}

export async function watch(ctx: Context, task: string, options: { timeout: string } & IdChain): Promise<void> {
  const timeoutMs = parseDuration(options.timeout) * 1000;
  const api = apiOf(ctx, false);
  const hash = await taskHashOf(api, task, options);
  // The chain the task settles on (a hash names the task on either chain), from the reads that follow it.
  let chain: ChainName | null = null;
  const settled = settlingTx(api, hash);
  ctx.onClose(() => settled.close());
  const changes: { state: string; at: string; via: string }[] = [];
  const abort = new AbortController();
  void ctx
    .interrupted()
    .then(() => abort.abort(new CliError({ code: "INTERRUPTED", message: "stopped watching", exit: EXIT.TIMEOUT })));
  const final = await ctx.out.step(
    `watching ${hash}`,
    (step) =>
      waitForTask(api, hash, {
        until: (state, detail) => {
          chain = detail.chain;
          return FINAL_STATES.has(state.status);
        },
        timeoutMs,
        readIntervalMs: READ_INTERVAL_MS,
        signal: abort.signal,
        onChange: (state, via) => {
          changes.push({ state: state.status, at: new Date().toISOString(), via });
          step.update(state.status);
        },
      }),
    (result) => `${result.state.status} (${outcomeOf(result.state.status)})`,
  );
  const state = final.state.status;
  const outcome = outcomeOf(state) ?? null;
  let settledBy: string | null = null;
  if (outcome) {
    let timer: NodeJS.Timeout | undefined;
    settledBy = await Promise.race([
      settled.txHash,
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), SETTLED_EVENT_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }
  ctx.out.result({ taskHash: hash, chain, state, outcome, txHash: settledBy ?? final.txHash, changes }, [
    `Task ${hash}${chain ? ` on ${chain}` : ""} is ${state} (${outcome}).`,
    ...(settledBy ? [`Settled by transaction ${settledBy}.`] : []),
  ]);
}

const OPERATION_TEXT: Record<TaskOperation, string> = {
  cancel: "cancelling",
  reclaim: "reclaiming",
  dispute: "raising a dispute on",
  escalate: "escalating the unjudged work of",
  release: "releasing the payment of",
};

/** `cancel`, `reclaim`, `dispute`, `escalate`, `release`: the SDK builds, checks, signs and confirms the call. */
export function operation(name: TaskOperation) {
  return async (ctx: Context, task: string, options: IdChain = {}): Promise<void> => {
    const api = apiOf(ctx);
    const hash = await taskHashOf(api, task, options);
    // The wallet signs on the task's own chain (through that chain's RPC: MARKET_ARC_RPC_URL on arc).
    const signer = walletOf(ctx, (await api.task(hash)).chain);
    const done = await ctx.out
      .step(
        `${OPERATION_TEXT[name]} ${hash}`,
        () => sendTaskOperation({ api, signer }, name, hash),
        (r) => `tx ${r.txHash}`,
      )
      .catch(async (error: unknown) => {
        throw name === "reclaim" ? await reclaimAdvice(api, hash, error) : error;
      });
    ctx.out.result({ operation: name, ...done }, [
      `${name}: task ${done.taskHash} (#${done.onChainTaskId}), transaction ${done.txHash} confirmed.`,
      ...(done.outcome ? [`Outcome: ${done.outcome === "refund" ? "the reward came back" : "escalated"}.`] : []),
      `market status ${done.taskHash} shows the task.`,
    ]);
  };
}

/**
 * `reclaim` is for work that was taken: on a task nobody took (USE_CANCEL), the advice names `market cancel` with
 * the task, and says whether its deadline has passed (an expired, untaken task is cancelled, not reclaimed).
 */
async function reclaimAdvice(api: MarketApi, hash: string, error: unknown): Promise<unknown> {
  if ((error as { code?: string })?.code !== "USE_CANCEL") return error;
  const detail = await api.task(hash).catch(() => undefined);
  const deadline = detail?.effectiveDeadline ?? null;
  const expired = detail?.a2aState?.status === "expired" || (deadline !== null && deadline * 1000 < Date.now());
  return new CliError({
    code: "USE_CANCEL",
    message: expired
      ? `nobody took task ${hash} before its deadline (${timeText(deadline)}): there is no work to reclaim, cancel it to get the reward back`
      : `nobody has taken task ${hash} yet: there is no work to reclaim; cancel it to get the reward back`,
    hint: `market cancel ${hash} refunds the whole reward to you`,
    status: (error as { status?: number }).status,
    exit: EXIT.REFUSED,
  });
}

/** `admin resolve`: the escrow admin rules on a dispute (the devnet's admin is Hardhat account #0). */
export async function resolve(ctx: Context, task: string, options: { worker?: boolean; poster?: boolean }) {
  const hash = parseTaskHash(task);
  if (!options.worker && !options.poster) throw usageError("INVALID_INPUT", "give --worker or --poster");
  const signer = walletOf(ctx, (await apiOf(ctx, false).task(hash)).chain);
  const done = await ctx.out.step(
    `ruling for the ${options.worker ? "worker" : "poster"} on ${hash}`,
    () => resolveDispute({ api: apiOf(ctx, false), signer }, hash, Boolean(options.worker)),
    (r) => `tx ${r.txHash}`,
  );
  ctx.out.result(
    { ...done, workerFavored: Boolean(options.worker) },
    `Dispute on ${done.taskHash} resolved for the ${options.worker ? "worker (paid)" : "poster (refunded)"}: ${done.txHash}.`,
  );
}
