/**
 * The `auto` verification rules, evaluated against a stored deliverable (docs/marketplace.md, "Deliverables and
 * verification"). All rules must hold.
 *
 * - The result text: a string result as is, anything else as its canonical JSON.
 * - `min_length`: the text has at least that many characters (Unicode code points, as the brief's limits count).
 * - `contains_keywords`: every keyword occurs in the text, case-insensitively (both lower-cased); blank keywords are
 *   not rules (as `hasRealRule` decides when the task is built) and are skipped.
 * - `required_fields`: the result is a JSON object (not an array) with every listed top-level key present (any
 *   value, null included); blank names are skipped. A result that is not an object fails the rule.
 * - `regex_pattern` (with `regex_flags`): the pattern matches somewhere in the text (`RegExp.prototype.test`, not
 *   anchored). The pattern was proven free of catastrophic backtracking when the task was built; evaluation is
 *   bounded anyway: it runs in a worker thread that is terminated after REGEX_TIMEOUT_MS, and on at most
 *   MAX_EVAL_CHARS characters of text. A timeout, an over-long text or a pattern that no longer compiles fails the
 *   rule (the deliverable did not prove the pattern within the bounds).
 *
 * @example
 *   await evaluateCriteria({ min_length: 5, contains_keywords: ["haiku"] }, "a haiku about escrow")
 *   // { passed: true, checks: [{ rule: "min_length", passed: true, ... }, { rule: "contains_keywords", ... }] }
 */
import { Worker } from "node:worker_threads";
import type { VerificationCriteria } from "../verification";
import { canonicalJson } from "./canonicalJson";

/** Time budget of one regex evaluation, worker start-up included. */
export const REGEX_TIMEOUT_MS = 1000;
/** Longest text a regex rule is evaluated on (characters, UTF-16 units). Longer: the rule fails. */
export const MAX_EVAL_CHARS = 512 * 1024;

export type RuleName = "min_length" | "contains_keywords" | "required_fields" | "regex_pattern";

export interface RuleCheck {
  rule: RuleName;
  passed: boolean;
  /** Why it failed (or what was found), for the verdict's reason. */
  detail: string;
}

export interface Evaluation {
  passed: boolean;
  checks: RuleCheck[];
}

export interface EvaluateOptions {
  regexTimeoutMs?: number;
  maxEvalChars?: number;
}

/** The text the rules read: a string result as is, anything else as canonical JSON. */
export function resultText(result: unknown): string {
  return typeof result === "string" ? result : canonicalJson(result);
}

/** Runs inside the worker: the pattern against the text, nothing else. Plain JavaScript (no TypeScript loader). */
const REGEX_WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
let reply;
try {
  reply = { ok: true, matched: new RegExp(workerData.pattern, workerData.flags).test(workerData.text) };
} catch (error) {
  reply = { ok: false, error: String(error && error.message || error) };
}
parentPort.postMessage(reply);
`;

export type RegexOutcome =
  | { kind: "matched" }
  | { kind: "no-match" }
  | { kind: "timeout" }
  | { kind: "too-long" }
  | { kind: "error"; message: string };

/**
 * Tests `pattern` against `text` in a worker thread, terminated after `timeoutMs`: a runaway match cannot hold the
 * event loop or the process.
 */
export function testRegexBounded(
  pattern: string,
  flags: string,
  text: string,
  { regexTimeoutMs = REGEX_TIMEOUT_MS, maxEvalChars = MAX_EVAL_CHARS }: EvaluateOptions = {},
): Promise<RegexOutcome> {
  if (text.length > maxEvalChars) return Promise.resolve({ kind: "too-long" });
  return new Promise((resolve) => {
    let done = false;
    const worker = new Worker(REGEX_WORKER_SOURCE, {
      eval: true,
      workerData: { pattern, flags, text },
      // A small heap: the worker only holds the text and the pattern.
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 },
    });
    const finish = (outcome: RegexOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish({ kind: "timeout" }), regexTimeoutMs);
    worker.once("message", (reply: { ok: boolean; matched?: boolean; error?: string }) =>
      finish(
        reply.ok ? { kind: reply.matched ? "matched" : "no-match" } : { kind: "error", message: reply.error ?? "" },
      ),
    );
    worker.once("error", (error) => finish({ kind: "error", message: error.message }));
    worker.once("exit", (code) => finish({ kind: "error", message: `regex worker exited (${code})` }));
  });
}

/** Unicode code points of `s` (what `min_length` counts). */
export const codePoints = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** Evaluates every rule of `criteria` against `result` (a parsed JSON value). */
export async function evaluateCriteria(
  criteria: VerificationCriteria,
  result: unknown,
  options: EvaluateOptions = {},
): Promise<Evaluation> {
  const text = resultText(result);
  const checks: RuleCheck[] = [];

  if (criteria.min_length !== undefined && criteria.min_length > 0) {
    const length = codePoints(text);
    checks.push({
      rule: "min_length",
      passed: length >= criteria.min_length,
      detail: `${length} characters, at least ${criteria.min_length} required`,
    });
  }

  const keywords = (criteria.contains_keywords ?? []).filter((k) => k.trim() !== "");
  if (keywords.length > 0) {
    const lower = text.toLowerCase();
    const missing = keywords.filter((k) => !lower.includes(k.toLowerCase()));
    checks.push({
      rule: "contains_keywords",
      passed: missing.length === 0,
      detail:
        missing.length === 0 ? "every keyword found" : `missing ${missing.map((k) => JSON.stringify(k)).join(", ")}`,
    });
  }

  const fields = (criteria.required_fields ?? []).filter((f) => f.trim() !== "");
  if (fields.length > 0) {
    const isObject = typeof result === "object" && result !== null && !Array.isArray(result);
    const missing = isObject ? fields.filter((f) => !Object.prototype.hasOwnProperty.call(result, f)) : fields;
    checks.push({
      rule: "required_fields",
      passed: isObject && missing.length === 0,
      detail: !isObject
        ? "the result is not a JSON object"
        : missing.length === 0
          ? "every field present"
          : `missing ${missing.map((f) => JSON.stringify(f)).join(", ")}`,
    });
  }

  if (criteria.regex_pattern) {
    const outcome = await testRegexBounded(criteria.regex_pattern, criteria.regex_flags ?? "", text, options);
    const detail = {
      matched: "the pattern matches",
      "no-match": "the pattern does not match",
      timeout: "the pattern did not finish within the time bound",
      "too-long": `the text is longer than ${options.maxEvalChars ?? MAX_EVAL_CHARS} characters`,
      error: `the pattern could not be evaluated${outcome.kind === "error" ? `: ${outcome.message}` : ""}`,
    }[outcome.kind];
    checks.push({ rule: "regex_pattern", passed: outcome.kind === "matched", detail });
  }

  return { passed: checks.length > 0 && checks.every((c) => c.passed), checks };
}

/** Longest verdict reason (characters): what the verify and decline routes accept, and what a verdict stores. */
export const MAX_REASON_LENGTH = 2000;

/**
 * A one-line reason for a verdict: the failed checks, or "all rules hold"; cut to MAX_REASON_LENGTH characters (with
 * "…"), so the auto verifier and a verifier agent's judgeWork give the same reason for the same work.
 */
export function evaluationReason(evaluation: Evaluation): string {
  const failed = evaluation.checks.filter((c) => !c.passed);
  if (evaluation.checks.length === 0) return "no rule to evaluate";
  const reason = failed.length === 0 ? "all rules hold" : failed.map((c) => `${c.rule}: ${c.detail}`).join("; ");
  return reason.length > MAX_REASON_LENGTH ? `${reason.slice(0, MAX_REASON_LENGTH - 1)}…` : reason;
}
