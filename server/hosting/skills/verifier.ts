/**
 * The `verifier` skill: judges delivered work against a task's `auto` criteria (min_length, contains_keywords,
 * required_fields, regex_pattern), with the marketplace's own rules (marketplace/evaluate.ts, evaluateCriteria), so a
 * hosted agent can serve as a task's verifier agent (its owner opts it in, with a display name).
 *
 * How the host uses it: the worker of an opted-in agent, for a task naming that agent's wallet as verifier agent
 * (mode `agent`) whose latest attempt is submitted, reads the task's verification criteria and the delivered result,
 * calls `judgeWork(criteria, result)`, and POSTs the verdict as is to /api/v1/a2a/tasks/{hash}/verify (its body is
 * exactly `{ passed, reason }`, verifyBodySchema); then it signs and sends the completeVerification the route answers.
 *
 * As a skill (capability `verify`) it also takes tasks whose brief is JSON `{ criteria, result }` and answers the
 * same verdict.
 */
import { evaluateCriteria, evaluationReason, type EvaluateOptions } from "../../domain/marketplace/evaluate";
import { verificationCriteriaSchema } from "../../domain/schemas/postingTerms";
import { z } from "../../domain/schemas/common";
import type { VerificationCriteria } from "../../domain/verification";
import { fieldName } from "../../errors";
import { isJsonObject, parseJsonIn } from "./jsonPaths";
import type { SkillRun } from "./types";

/** A verdict, shaped as the verify route's body (verifyBodySchema). */
export interface Judgement {
  passed: boolean;
  /** Why: "all rules hold", or each failed rule and what it found. At most MAX_REASON_LENGTH characters. */
  reason: string;
}

/**
 * Judges `result` (the delivered JSON value) against `criteria` (the task's, null when it has none): passed when
 * every rule holds. No criteria, or criteria without a real rule ("no rule to evaluate"), fail: this verifier only
 * passes work it could check.
 */
export async function judgeWork(
  criteria: VerificationCriteria | null,
  result: unknown,
  options: EvaluateOptions = {},
): Promise<Judgement> {
  if (!criteria) return { passed: false, reason: "the task gives no criteria to judge the work by" };
  const evaluation = await evaluateCriteria(criteria, result, options);
  return { passed: evaluation.passed, reason: evaluationReason(evaluation) };
}

const verifierBrief = z
  .object({
    criteria: verificationCriteriaSchema,
    result: z.unknown().refine((r) => r !== undefined && r !== null, "must be the delivered result, not null"),
  })
  .strict();

/** Judges a brief `{ criteria, result }`; throws naming the brief's bad field. */
export async function judgeBrief(briefText: string): Promise<Judgement> {
  const parsed = parseJsonIn(briefText);
  if (!parsed || !isJsonObject(parsed.value)) {
    throw new Error("the brief must be a JSON object { criteria, result } for the verifier");
  }
  const brief = verifierBrief.safeParse(parsed.value);
  if (!brief.success) {
    const issue = brief.error.issues[0];
    throw new Error(`${fieldName("brief", issue.path)}: ${issue.message}`);
  }
  return judgeWork(brief.data.criteria, brief.data.result);
}

/** The `verifier` skill's run, as a task: the brief `{ criteria, result }` judged. */
export const runVerifier: SkillRun = (job) => judgeBrief(job.briefText);
