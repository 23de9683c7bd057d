/**
 * Following and settling tasks: `tasks`, `status`, `watch`, `review`, and the signed operations `cancel`,
 * `reclaim`, `dispute`, `release`.
 */
import { Argument } from "commander";
import type { Context } from "../context";
import { apiOf } from "../clients";
import { parseDuration, parseTaskHash } from "../parse";
import { subscribe, type EventSubscription, type PostedTasks } from "../../sdk";
import { EXIT } from "../exitCodes";
import { table } from "../output";
import { amountText, FINAL_STATES, outcomeOf, shortHash, timeText } from "../format";
import { CliError, toCliError, usageError } from "../errors";

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
  onChainTaskId: number;
  status: string;
  amount: string | null;
  privacy: string;
  mode: string;
  deadline: number | null;
}

export async function list(ctx: Context, which: TaskList, options: { limit: string }): Promise<void> {
  const api = apiOf(ctx);
  const limit = positiveInt(options.limit, "--limit");
  let rows: Row[];
  let total: number;
  if (which === "posted") {
    const page = await api.postedTasks({ limit });
    rows = page.tasks.map((t) => rowOf(t.meta, t.state.status));
    total = page.total;
  } else if (which === "offered") {
    const page = await api.offeredTasks({ limit });
    rows = page.tasks.map((t) => rowOf(t.meta, t.state.status));
    total = page.total;
  } else {
    // The agent's own work list (issue 12; the route may be absent on an older service: NOT_FOUND).
    const page = await api.request<PostedTasks>("GET", "/api/v1/a2a/tasks/working", { query: { limit } });
    rows = page.tasks.map((t) => rowOf(t.meta, t.state.status));
    total = page.total;
  }
  ctx.out.result({ which, tasks: rows, total }, () =>
    rows.length === 0
      ? `No ${which} tasks.`
      : table([
          ["TASK", "ID", "STATE", "REWARD", "PRIVACY", "MODE", "DEADLINE"],
          ...rows.map((r) => [
            r.taskHash,
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
    onChainTaskId: meta.onChainTaskId,
    status,
    amount: meta.amount,
    privacy: meta.privacy,
    mode: meta.verificationMode,
    deadline: meta.effectiveDeadline ?? meta.deadline,
  };
}

export async function status(ctx: Context, task: string): Promise<void> {
  const hash = parseTaskHash(task);
  const detail = await apiOf(ctx, false).task(hash);
  const state = detail.a2aState?.status ?? null;
  const data = {
    taskHash: detail.taskHash,
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
    `Task      ${detail.taskHash} (id ${detail.taskId})`,
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

/** How often `watch` reads the task when the service has no event stream (or as a backstop while it does). */
const POLL_MS = 3_000;
const BACKSTOP_MS = 15_000;

export async function watch(ctx: Context, task: string, options: { timeout: string }): Promise<void> {
  const hash = parseTaskHash(task);
  const timeoutMs = parseDuration(options.timeout) * 1000;
  const api = apiOf(ctx, false);
  const keyed = ctx.config.apiKey !== undefined;
  const changes: { state: string; at: string; via: string; txHash: string | null }[] = [];
  let last: string | undefined;
  let settledTx: string | null = null;

  const final = await ctx.out.step(`watching ${hash}`, async (step) => {
    const seen = (state: string | undefined, via: string, txHash: string | null = null) => {
      if (!state || state === last) return;
      last = state;
      changes.push({ state, at: new Date().toISOString(), via, txHash });
      if (txHash && outcomeOf(state)) settledTx = txHash;
      step.update(`${state}${txHash ? ` (tx ${txHash})` : ""}`);
    };
    const read = async () => {
      const detail = await api.task(hash);
      seen(detail.a2aState?.status ?? "not listed", "read");
      return last;
    };
    if (FINAL_STATES.has((await read()) ?? "")) return last!;

    return new Promise<string>((resolve, reject) => {
      let subscription: EventSubscription | undefined;
      let timer: NodeJS.Timeout | undefined;
      let finished = false;
      const finish = (error?: unknown) => {
        if (finished) return;
        finished = true;
        clearTimeout(deadline);
        clearTimeout(timer);
        void subscription?.close();
        if (error) reject(error);
        else resolve(last!);
      };
      const deadline = setTimeout(
        () =>
          finish(
            new CliError({ code: "TIMEOUT", message: `still ${last} after ${options.timeout}`, exit: EXIT.TIMEOUT }),
          ),
        timeoutMs,
      );
      void ctx.interrupted.then(() =>
        finish(
          new CliError({ code: "INTERRUPTED", message: `stopped watching; the task is ${last}`, exit: EXIT.TIMEOUT }),
        ),
      );
      // Reads: every POLL_MS without a stream, every BACKSTOP_MS with one (events of others' tasks never come).
      let every = POLL_MS;
      const poll = () => {
        timer = setTimeout(async () => {
          try {
            if (FINAL_STATES.has((await read()) ?? "")) return finish();
          } catch (error) {
            const e = toCliError(error);
            if (e.exit !== EXIT.RETRY) return finish(error);
          }
          if (!finished) poll();
        }, every);
      };
      const fallBack = () => {
        // No stream here (404), or it was refused: follow the task by reading it.
        every = POLL_MS;
        clearTimeout(timer);
        if (!finished) poll();
      };
      if (keyed) {
        every = BACKSTOP_MS;
        try {
          subscription = subscribe(api, (event) => {
            if (event.data.taskHash?.toLowerCase() !== hash) return;
            seen(event.data.state, `event ${event.type}`, event.data.txHash);
            if (event.type === "task.settled" || FINAL_STATES.has(event.data.state)) finish();
          });
          subscription.done.catch(fallBack);
        } catch {
          fallBack();
          return;
        }
      }
      poll();
    });
  });
  ctx.out.result(
    { taskHash: hash, state: final, outcome: outcomeOf(final) ?? null, txHash: settledTx, changes },
    `Task ${hash} is ${final} (${outcomeOf(final)}).`,
  );
}
