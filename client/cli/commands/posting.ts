/**
 * `market post` and `market post-many`: the inputs of a task from flags or from the rows of a CSV / JSON Lines file,
 * checked before anything is sent, then the SDK's posting flow (upload, build, checks, approve exactly the reward,
 * send, confirm, index) with each step shown as it happens.
 */
import fs from "node:fs";
import path from "node:path";
import type { Context } from "../context";
import { apiOf, walletOf } from "../clients";
import { table } from "../output";
import { amountText, type TokenDisplay } from "../format";
import {
  FileJournal,
  pinSettlement,
  postTasks,
  type ChainName,
  type PostedTask,
  type PostingStage,
  type TaskDraft,
} from "../../sdk/index";
import { CliError, usageError } from "../errors";
import { EXIT } from "../exitCodes";
import { FAUCET_HINT, isDevnet } from "./devnet";
import {
  amountRaw,
  invalidRows,
  parseAmountInput,
  parseCriteria,
  parseList,
  parseMode,
  parseRows,
  parseTaskDuration,
  type AmountInput,
  type InputRow,
  type Mode,
} from "../parse";

/** One task as the CLI collected it, before the settlement record gives the token's decimals. */
export interface TaskInput {
  brief: Buffer;
  /** The brief's text for a public listing (its display copy), when it is UTF-8 text. */
  briefText: string | undefined;
  privacy: "public" | "private";
  mode: Mode;
  criteria: Record<string, unknown> | undefined;
  capabilities: string[];
  amount: AmountInput;
  duration: number;
  targetExecutor: string | undefined;
  verifierAddress: string | undefined;
  /** post-many: the row of the file (1-based: the line of a JSONL file, the record after a CSV header). */
  row?: number;
}

export interface PostFlags {
  text?: string;
  file?: string;
  public?: boolean;
  private?: boolean;
  mode?: string;
  criteria?: string;
  capabilities?: string;
  amount?: string;
  amountRaw?: string;
  duration?: string;
  to?: string;
  verifier?: string;
  /** The settlement chain (`base` or `arc`; commander checks the choice); default the posting chain. */
  chain?: ChainName;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

function readBrief(text: string | undefined, file: string | undefined, baseDir = process.cwd()) {
  if ((text === undefined) === (file === undefined)) {
    throw usageError("INVALID_INPUT", "give the brief with --text <brief> or --file <path> (one of them)");
  }
  if (text !== undefined) {
    if (text.trim() === "") throw usageError("INVALID_INPUT", "the brief is empty");
    return { brief: Buffer.from(text, "utf8"), briefText: text };
  }
  const where = path.resolve(baseDir, file!);
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(where);
  } catch (error) {
    throw usageError("INVALID_INPUT", `cannot read the brief ${where}: ${(error as NodeJS.ErrnoException).code}`);
  }
  if (bytes.length === 0) throw usageError("INVALID_INPUT", `the brief ${where} is empty`);
  const decoded = bytes.toString("utf8");
  return { brief: bytes, briefText: Buffer.from(decoded, "utf8").equals(bytes) ? decoded : undefined };
}

function privacyOf(flags: { public?: boolean; private?: boolean }, value?: unknown): "public" | "private" {
  if (value !== undefined) {
    const text = String(value).trim().toLowerCase();
    if (text === "public" || text === "private") return text;
    throw usageError("INVALID_INPUT", `privacy ${JSON.stringify(value)} is not public or private`);
  }
  if (flags.public) return "public";
  if (flags.private) return "private";
  throw usageError(
    "INVALID_INPUT",
    "say who may read the brief: --public (anyone) or --private (encrypted to the agents that may take it)",
  );
}

function addressOf(value: unknown, flag: string): string | undefined {
  if (value === undefined) return undefined;
  const text = String(value).trim();
  if (!ADDRESS.test(text)) throw usageError("INVALID_INPUT", `${flag} ${JSON.stringify(value)} is not an address`);
  return text.toLowerCase();
}

/** The task of `market post`'s flags. */
export function taskFromFlags(flags: PostFlags): TaskInput {
  const { brief, briefText } = readBrief(flags.text, flags.file);
  return {
    brief,
    briefText,
    privacy: privacyOf(flags),
    mode: parseMode(flags.mode) ?? "manual",
    criteria: parseCriteria(flags.criteria),
    capabilities: parseList(flags.capabilities) ?? [],
    amount: parseAmountInput(flags),
    duration: parseTaskDuration(flags.duration ?? "1d"),
    targetExecutor: addressOf(flags.to, "--to"),
    verifierAddress: addressOf(flags.verifier, "--verifier"),
  };
}

const ROW_FIELDS = new Set([
  "text",
  "file",
  "privacy",
  "mode",
  "criteria",
  "capabilities",
  "amount",
  "amount_raw",
  "duration",
  "to",
  "verifier",
]);

/** The task of one `post-many` row; the flags give the values a row leaves out. */
export function taskFromRow(row: InputRow, defaults: PostFlags, baseDir: string): TaskInput {
  const f = row.fields;
  const unknown = Object.keys(f).filter((k) => !ROW_FIELDS.has(k));
  if (unknown.length) throw usageError("INVALID_INPUT", `unknown column(s) ${unknown.join(", ")}`);
  const str = (v: unknown) => (v === undefined || v === null ? undefined : String(v));
  const { brief, briefText } = readBrief(str(f.text), str(f.file), baseDir);
  const rowAmount = f.amount !== undefined || f.amount_raw !== undefined;
  const criteria =
    f.criteria === undefined
      ? parseCriteria(defaults.criteria)
      : typeof f.criteria === "object"
        ? parseCriteria(JSON.stringify(f.criteria))
        : parseCriteria(String(f.criteria));
  return {
    brief,
    briefText,
    privacy: privacyOf(defaults, f.privacy),
    mode: parseMode(str(f.mode)) ?? parseMode(defaults.mode) ?? "manual",
    criteria,
    capabilities: Array.isArray(f.capabilities)
      ? f.capabilities.map(String)
      : (parseList(str(f.capabilities)) ?? parseList(defaults.capabilities) ?? []),
    amount: rowAmount
      ? parseAmountInput({ amount: str(f.amount), amountRaw: str(f.amount_raw) })
      : parseAmountInput(defaults),
    duration: parseTaskDuration(str(f.duration) ?? defaults.duration ?? "1d"),
    targetExecutor: addressOf(f.to, "to"),
    verifierAddress: addressOf(f.verifier, "verifier"),
  };
}

/** Every row of a `post-many` file as a task, or INVALID_ROWS naming each bad row. */
export function tasksFromFile(file: string, format: "csv" | "jsonl" | undefined, defaults: PostFlags): TaskInput[] {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw usageError("INVALID_INPUT", `cannot read ${file}: ${(error as NodeJS.ErrnoException).code}`);
  }
  const kind = format ?? (/\.(jsonl|ndjson)$/i.test(file) ? "jsonl" : /\.csv$/i.test(file) ? "csv" : undefined);
  if (!kind) throw usageError("INVALID_INPUT", `say --format csv or --format jsonl for ${path.basename(file)}`);
  const rows = parseRows(text, kind);
  if (rows.length === 0) throw usageError("INVALID_ROWS", `${file} has no rows`);
  const tasks: TaskInput[] = [];
  const errors: { row: number; code: string; message: string }[] = [];
  for (const row of rows) {
    try {
      tasks.push({ ...taskFromRow(row, defaults, path.dirname(path.resolve(file))), row: row.row });
    } catch (error) {
      const e = error as CliError;
      errors.push({ row: row.row, code: e.code, message: e.message });
    }
  }
  if (errors.length) throw invalidRows(errors);
  return tasks;
}

/** What preparing did to the briefs of these tasks: a public brief is stored as written, a private one encrypted. */
export function preparedText(privacies: readonly ("private" | "public")[]): string {
  const briefs = privacies.length === 1 ? "brief" : "briefs";
  const privateCount = privacies.filter((p) => p === "private").length;
  if (privateCount === 0) return `${briefs} prepared (public: stored as written, readable by anyone)`;
  if (privateCount === privacies.length) {
    return `${briefs} prepared (private: encrypted, the key wrapped to each agent that may take the task)`;
  }
  return `${briefs} prepared (${privateCount} private: encrypted, the key wrapped to each agent that may take the task)`;
}

/** What each stage of the SDK's posting flow means, for the progress lines (`prepared`: preparedText). */
const STAGE_TEXT: Partial<Record<PostingStage, string>> = {
  uploaded: "brief uploaded; the task hash is its SHA-256",
  "approve-signed": "approval of exactly the reward signed",
  approved: "approval confirmed",
  "create-signed": "funding transaction checked and signed",
  "create-sent": "funding transaction sent",
  confirmed: "funding transaction confirmed",
  indexed: "task listed",
};

/** Tasks in the posting journal's folder next to the config file, so an interrupted `post` resumes when re-run. */
function journalOf(ctx: Context): FileJournal {
  return new FileJournal(path.join(path.dirname(ctx.config.configPath), "postings"));
}

async function postAll(ctx: Context, inputs: TaskInput[], chain?: ChainName) {
  const api = apiOf(ctx);
  const pin = pinSettlement(await api.settlement(), undefined, chain);
  const signer = walletOf(ctx, pin.chain);
  const drafts: TaskDraft[] = inputs.map((input) => ({
    brief: input.brief,
    privacy: input.privacy,
    amount: amountRaw(input.amount, pin.decimals),
    duration: input.duration,
    verificationMode: input.mode,
    ...(input.criteria ? { verificationCriteria: input.criteria as TaskDraft["verificationCriteria"] } : {}),
    requiredCapabilities: input.capabilities,
    ...(input.verifierAddress ? { verifierAddress: input.verifierAddress } : {}),
    ...(input.targetExecutor ? { targetExecutor: input.targetExecutor } : {}),
  }));
  const label = drafts.length === 1 ? "posting the task" : `posting ${drafts.length} tasks`;
  const token = { symbol: pin.symbol, decimals: pin.decimals };
  const posted = await ctx.out
    .step(
      `${label} from ${signer.address} on ${pin.chain} (chain ${pin.chainId})`,
      (step) =>
        postTasks(drafts, {
          api,
          signer,
          journal: journalOf(ctx),
          chain: pin.chain,
          expect: { chain: pin.chain, escrow: pin.escrow, token: pin.token, chainId: pin.chainId },
          onStage: (stage) =>
            step.update(
              stage === "prepared" ? preparedText(inputs.map((input) => input.privacy)) : (STAGE_TEXT[stage] ?? stage),
            ),
        }),
      (tasks) => tasks.map((t) => `#${t.onChainTaskId}`).join(", "),
    )
    .catch(async (error: unknown) => {
      throw await inTokenUnits(error, api, signer.address, token, drafts.length);
    });
  return { posted, token };
}

/**
 * The SDK's INSUFFICIENT_BALANCE counts in the token's smallest units: said again in the token's units, with where
 * to get the token (on a devnet, `market faucet`).
 */
async function inTokenUnits(
  error: unknown,
  api: Parameters<typeof isDevnet>[0],
  wallet: string,
  token: TokenDisplay,
  count: number,
): Promise<unknown> {
  const e = error as { code?: string; details?: { balance?: string; needed?: string } };
  if (e?.code !== "INSUFFICIENT_BALANCE" || e.details?.balance === undefined || e.details.needed === undefined) {
    return error;
  }
  const reward = count === 1 ? "the reward is" : `the ${count} rewards total`;
  return new CliError({
    code: "INSUFFICIENT_BALANCE",
    message: `the wallet ${wallet} holds ${amountText(e.details.balance, token)}, ${reward} ${amountText(e.details.needed, token)}`,
    hint: (await isDevnet(api))
      ? FAUCET_HINT
      : `fund the wallet with ${token.symbol} (and gas money for the transactions)`,
    details: e.details,
    exit: EXIT.REFUSED,
  });
}

/**
 * A single `post` is one task, not a batch of rows: the SDK's INVALID_ROWS of its one draft is reported as that
 * draft's own code and message (INVALID_DURATION, AUTO_CRITERIA_REQUIRED, ...).
 */
function asSingleTask(error: unknown): unknown {
  const e = error as { code?: string; details?: { errors?: { code: string; message: string }[] } };
  const errors = e?.code === "INVALID_ROWS" ? e.details?.errors : undefined;
  if (!Array.isArray(errors) || errors.length !== 1) return error;
  return usageError(errors[0].code, `the task is refused: ${errors[0].message}`);
}

function view(task: PostedTask, token: TokenDisplay) {
  return {
    taskHash: task.taskHash,
    onChainTaskId: task.onChainTaskId,
    txHash: task.txHash,
    chain: task.chain,
    chainId: task.chainId,
    privacy: task.privacy,
    state: task.task.a2aState?.status ?? null,
    amount: task.task.amount,
    amountText: amountText(task.task.amount, token),
    ...(task.briefKey ? { briefKey: task.briefKey } : {}),
  };
}

export async function post(ctx: Context, flags: PostFlags): Promise<void> {
  const input = taskFromFlags(flags);
  const { posted, token } = await postAll(ctx, [input], flags.chain).catch((error: unknown) => {
    throw asSingleTask(error);
  });
  const task = view(posted[0], token);
  ctx.out.result(task, [
    `Task ${task.taskHash}`,
    `  on ${task.chain} (chain id ${task.chainId}), on-chain id ${task.onChainTaskId} (market status #${task.onChainTaskId}), funded by ${task.txHash}`,
    `  ${task.amountText}, ${task.privacy}, state ${task.state}`,
    `Follow it: market watch ${task.taskHash}`,
  ]);
}

export async function postMany(
  ctx: Context,
  file: string,
  flags: PostFlags & { format?: "csv" | "jsonl" },
): Promise<void> {
  const inputs = tasksFromFile(file, flags.format, flags);
  let result;
  try {
    result = await postAll(ctx, inputs, flags.chain);
  } catch (error) {
    throw withFileRows(error, inputs);
  }
  const tasks = result.posted.map((t) => view(t, result.token));
  ctx.out.result({ tasks }, [
    ...table([
      ["ROW", "TASK", "CHAIN", "ID", "REWARD", "STATE"],
      ...tasks.map((t, i) => [
        String(inputs[i].row),
        t.taskHash,
        t.chain,
        String(t.onChainTaskId),
        t.amountText,
        String(t.state),
      ]),
    ]),
    `${tasks.length} task(s) posted; funded by ${[...new Set(tasks.map((t) => t.txHash))].join(", ")}`,
  ]);
}

/** The SDK's INVALID_ROWS names 0-based indexes; the CLI names the file's rows (1-based, header excluded). */
function withFileRows(error: unknown, inputs: TaskInput[]): unknown {
  const e = error as { code?: string; details?: { errors?: { index: number; code: string; message: string }[] } };
  if (e?.code !== "INVALID_ROWS" || !Array.isArray(e.details?.errors)) return error;
  return invalidRows(
    e.details.errors.map((r) => ({ row: inputs[r.index]?.row ?? r.index + 1, code: r.code, message: r.message })),
  );
}
