/**
 * Verification terms of a task: the mode and, for `auto`, the rules. Regex rules are analysed with `recheck` (a
 * maintained ReDoS checker: automata analysis plus fuzzing) when the task is built or listed; a pattern that does not
 * compile, or can backtrack catastrophically, is refused with REGEX_PATTERN_UNUSABLE. Evaluation is bounded too
 * (see `evaluateCriteria`).
 */
import { checkSync } from "recheck";

export const VERIFICATION_MODES = ["manual", "auto", "agent", "oracle"] as const;
export type VerificationMode = (typeof VERIFICATION_MODES)[number];

export interface VerificationCriteria {
  min_length?: number;
  contains_keywords?: string[];
  required_fields?: string[];
  regex_pattern?: string;
  /** Flags for regex_pattern among i, m, s, u. */
  regex_flags?: string;
}

export const REGEX_MAX_LENGTH = 500;
/** Time budget of the ReDoS analysis of one pattern. */
const RECHECK_TIMEOUT_MS = 2000;

export type RegexVerdict = { usable: true } | { usable: false; reason: string };

export function analyseRegex(pattern: string, flags = ""): RegexVerdict {
  if (pattern.length > REGEX_MAX_LENGTH) return { usable: false, reason: `longer than ${REGEX_MAX_LENGTH} characters` };
  if (!/^[imsu]*$/.test(flags)) return { usable: false, reason: `flags may only be i, m, s and u, got "${flags}"` };
  try {
    new RegExp(pattern, flags);
  } catch (error) {
    return { usable: false, reason: `does not compile: ${(error as Error).message}` };
  }
  const diagnostics = checkSync(pattern, flags, { timeout: RECHECK_TIMEOUT_MS });
  if (diagnostics.status === "safe") return { usable: true };
  if (diagnostics.status === "vulnerable") {
    return {
      usable: false,
      reason: `can backtrack catastrophically (${diagnostics.complexity.type} complexity, for example on ${JSON.stringify(
        diagnostics.attack.pattern,
      )})`,
    };
  }
  return { usable: false, reason: "could not be proven safe from catastrophic backtracking" };
}

/** Whether `criteria` holds at least one real rule (mode `auto` needs one). */
export function hasRealRule(criteria: VerificationCriteria | undefined): boolean {
  if (!criteria) return false;
  return (
    (criteria.min_length ?? 0) > 0 ||
    (criteria.contains_keywords ?? []).some((k) => k.trim() !== "") ||
    (criteria.required_fields ?? []).some((f) => f.trim() !== "") ||
    Boolean(criteria.regex_pattern)
  );
}
