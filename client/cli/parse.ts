/**
 * Parsing of the CLI's own inputs: durations with units, amounts in USDC or raw units, criteria JSON, capability
 * lists, task hashes, and the rows of `post-many` files (CSV with a header, or JSON Lines). Each refusal is a usage
 * error (exit 2) with the code a script can branch on. The service checks the terms again when it builds the task.
 */
import { parseUnits } from "ethers";
import type { VerificationCriteria } from "../sdk/index";
import { usageError } from "./errors";

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** `3600`, `90m`, `1h`, `2d`, `1w` -> whole seconds. */
export function parseDuration(text: string): number {
  const match = /^\s*(\d+)\s*([smhdw]?)\s*$/i.exec(text);
  if (!match) throw usageError("INVALID_DURATION", `--duration ${JSON.stringify(text)} is not seconds or <n>[smhdw]`);
  const seconds = Number(match[1]) * UNIT_SECONDS[(match[2] || "s").toLowerCase()];
  if (!Number.isSafeInteger(seconds)) throw usageError("INVALID_DURATION", `--duration ${text} is too large`);
  return seconds;
}

/** A task's time to deliver, as the escrow takes it: 1 hour to 90 days. */
export const MIN_DURATION_SECONDS = 3_600;
export const MAX_DURATION_SECONDS = 90 * 86_400;

/** `--duration` as a task's time to deliver: parsed, then within 1 hour to 90 days (INVALID_DURATION). */
export function parseTaskDuration(text: string): number {
  const seconds = parseDuration(text);
  if (seconds < MIN_DURATION_SECONDS || seconds > MAX_DURATION_SECONDS) {
    throw usageError(
      "INVALID_DURATION",
      `--duration ${text} is ${seconds} seconds: a task's time to deliver is 1 hour (3600) to 90 days (7776000)`,
    );
  }
  return seconds;
}

/** An amount as given: raw units, or a decimal number of whole tokens (converted once the decimals are known). */
export type AmountInput = { raw: bigint } | { decimal: string };

/** `--amount <USDC>` (a decimal number) or `--amount-raw <units>` (a whole number), checked before any call. */
export function parseAmountInput(options: { amount?: string; amountRaw?: string }): AmountInput {
  if (options.amount !== undefined && options.amountRaw !== undefined) {
    throw usageError("INVALID_AMOUNT", "give --amount or --amount-raw, not both");
  }
  if (options.amountRaw !== undefined) {
    const text = String(options.amountRaw).trim();
    if (!/^\d+$/.test(text)) {
      throw usageError("INVALID_AMOUNT", `--amount-raw ${JSON.stringify(options.amountRaw)} is not a whole number`);
    }
    if (BigInt(text) === 0n) throw usageError("INVALID_AMOUNT", "the amount must be above 0");
    return { raw: BigInt(text) };
  }
  if (options.amount === undefined) throw usageError("INVALID_AMOUNT", "give --amount <USDC> or --amount-raw <units>");
  const text = String(options.amount).trim();
  if (!/^\d+(\.\d+)?$/.test(text)) {
    throw usageError("INVALID_AMOUNT", `--amount ${JSON.stringify(options.amount)} is not a decimal number`);
  }
  if (/^[0.]+$/.test(text)) throw usageError("INVALID_AMOUNT", "the amount must be above 0");
  return { decimal: text };
}

/** The amount in the token's smallest units. */
export function amountRaw(input: AmountInput, decimals: number): bigint {
  if ("raw" in input) return input.raw;
  const fraction = input.decimal.split(".")[1] ?? "";
  if (fraction.length > decimals) {
    throw usageError("INVALID_AMOUNT", `--amount ${input.decimal} has more than ${decimals} decimal places`);
  }
  return parseUnits(input.decimal, decimals);
}

/** Both steps at once, when the decimals are known. */
export function parseAmount(options: { amount?: string; amountRaw?: string }, decimals: number): bigint {
  return amountRaw(parseAmountInput(options), decimals);
}

/**
 * A flag's JSON object text -> the object. `notObject` is the message when it is JSON but not an object; `notJson`
 * (given JSON.parse's reason) when it is not JSON at all, by default `notObject` too.
 */
export function parseJsonObject(
  text: string,
  code: string,
  notObject: string,
  notJson: (reason: string) => string = () => notObject,
): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw usageError(code, notJson((error as Error).message));
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw usageError(code, notObject);
  return parsed as Record<string, unknown>;
}

/** The rule keys of auto verification (the SDK's VerificationCriteria), for naming a misspelt one. */
export const CRITERIA_KEYS = [
  "min_length",
  "contains_keywords",
  "required_fields",
  "regex_pattern",
  "regex_flags",
] as const satisfies readonly (keyof NonNullable<VerificationCriteria>)[];

/** The edit distance of two short words (insertions, deletions, substitutions). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}

/** The known word closest to `word` (ties: the first in `known`). */
export function nearest(word: string, known: readonly string[]): string {
  let best = known[0];
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(word.toLowerCase(), candidate);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/**
 * `--criteria '{"required_fields":["summary"]}'` -> the object. A key that is not a rule is refused here, named with
 * the nearest rule (the service would refuse it too, after the brief was uploaded).
 */
export function parseCriteria(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  const criteria = parseJsonObject(
    text,
    "INVALID_CRITERIA",
    "--criteria must be a JSON object",
    (reason) => `--criteria is not JSON: ${reason}`,
  );
  const unknown = Object.keys(criteria).filter((key) => !(CRITERIA_KEYS as readonly string[]).includes(key));
  if (unknown.length > 0) {
    const named = unknown.map((key) => `${JSON.stringify(key)} (did you mean ${nearest(key, CRITERIA_KEYS)}?)`);
    throw usageError(
      "INVALID_CRITERIA",
      `--criteria has no rule ${named.join(", ")}; the rules are ${CRITERIA_KEYS.join(", ")}`,
    );
  }
  return criteria;
}

/** `--min-reward <units>`: a whole number of the token's smallest units, kept as the text given. */
export function parseMinReward(text: string): string {
  if (!/^\d+$/.test(text)) {
    throw usageError("INVALID_AMOUNT", "--min-reward is a whole number of the token's smallest units");
  }
  return text;
}

/** `a,b, c` -> ["a", "b", "c"] (blanks dropped). */
export function parseList(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  return text
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
}

/** A task as the user names it: its hash, or its on-chain id (`2` or `#2`, as `market post` prints it). */
export type TaskRef = { taskHash: string } | { taskId: number };

export function parseTaskRef(text: string): TaskRef {
  const value = text.trim();
  const id = /^#?([1-9][0-9]{0,14})$/.exec(value);
  if (id) return { taskId: Number(id[1]) };
  if (!/^0x[0-9a-fA-F]{64}$/.test(value)) {
    throw usageError(
      "INVALID_TASK",
      `${JSON.stringify(text)} is not a task: give its hash (0x + 64 hex) or its on-chain id (2 or #2)`,
    );
  }
  return { taskHash: value.toLowerCase() };
}

/** A task is named by its hash (0x + 64 hex), as every marketplace operation takes it. */
export function parseTaskHash(text: string): string {
  const value = text.trim();
  if (!/^0x[0-9a-fA-F]{64}$/.test(value)) {
    throw usageError("INVALID_TASK", `${JSON.stringify(text)} is not a task hash (0x + 64 hex)`);
  }
  return value.toLowerCase();
}

export const MODES = ["manual", "auto", "agent"] as const;
export type Mode = (typeof MODES)[number];

export function parseMode(text: string | undefined): Mode | undefined {
  if (text === undefined || text === "") return undefined;
  const mode = text.trim().toLowerCase();
  if (!(MODES as readonly string[]).includes(mode)) {
    throw usageError("INVALID_INPUT", `--mode ${JSON.stringify(text)} is not one of ${MODES.join(", ")}`);
  }
  return mode as Mode;
}

/** RFC 4180 CSV: quoted fields may hold commas, quotes (doubled) and line breaks. Returns rows of fields. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  let i = 0;
  const body = text.replace(/^\uFEFF/, "");
  while (i < body.length) {
    const c = body[i];
    if (quoted) {
      if (c === '"' && body[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
      i++;
      continue;
    }
    if (c === '"' && field === "") {
      quoted = true;
    } else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && body[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else {
      field += c;
    }
    i++;
  }
  if (quoted) throw usageError("INVALID_ROWS", "the CSV ends inside a quoted field");
  if (field !== "" || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => !(r.length === 1 && r[0].trim() === ""));
}

/** One row of a `post-many` file, as written (strings from CSV, any JSON from JSONL), with its 1-based row number. */
export interface InputRow {
  row: number;
  fields: Record<string, unknown>;
}

/** Reads CSV (first line: the column names) or JSON Lines (one object per line) into rows. */
export function parseRows(text: string, format: "csv" | "jsonl"): InputRow[] {
  if (format === "jsonl") {
    const rows: InputRow[] = [];
    const errors: { row: number; code: string; message: string }[] = [];
    text.split(/\r?\n/).forEach((line, index) => {
      if (line.trim() === "") return;
      try {
        const value = JSON.parse(line) as unknown;
        if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("not a JSON object");
        rows.push({ row: index + 1, fields: value as Record<string, unknown> });
      } catch (error) {
        errors.push({ row: index + 1, code: "INVALID_JSON", message: (error as Error).message });
      }
    });
    if (errors.length) throw invalidRows(errors);
    return rows;
  }
  const [header, ...lines] = parseCsv(text);
  if (!header) return [];
  const names = header.map((name) => name.trim());
  return lines.map((cells, index) => {
    const fields: Record<string, unknown> = {};
    names.forEach((name, column) => {
      const cell = cells[column]?.trim();
      if (cell !== undefined && cell !== "") fields[name] = cell;
    });
    return { row: index + 1, fields };
  });
}

/** The INVALID_ROWS usage error naming each refused row. */
export function invalidRows(errors: { row: number; code: string; message: string }[]) {
  const named = errors
    .slice(0, 5)
    .map((e) => `row ${e.row}: ${e.code} ${e.message}`)
    .join("; ");
  const more = errors.length > 5 ? `; and ${errors.length - 5} more` : "";
  return usageError("INVALID_ROWS", `${errors.length} invalid row(s): ${named}${more}`, undefined, { rows: errors });
}
