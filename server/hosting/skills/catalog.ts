/**
 * The built-in skills as the agent's worker runs them: each of the catalog's skills (server/domain/agents/skills/)
 * with the code that does its job.
 */
import { SKILLS } from "../../domain/agents/skills/catalog";
import { runJson } from "./json";
import { runKeywords, runSummary, runTextChecks } from "./text";
import type { RunnableSkill, SkillRun } from "./types";
import { runVerifier } from "./verifier";
import { callWebhook } from "./webhook";

const RUNS: Readonly<Record<string, SkillRun>> = {
  summary: runSummary,
  keywords: runKeywords,
  "text-checks": runTextChecks,
  json: runJson,
  webhook: callWebhook,
  verifier: runVerifier,
};

/** Every skill of the catalog, in its order; one the worker has no code for throws here, at load. */
export const RUNNABLE_SKILLS: readonly RunnableSkill[] = Object.freeze(
  SKILLS.map((skill) => {
    const run = RUNS[skill.id];
    if (!run) throw new Error(`the skill ${skill.id} has no runtime in server/hosting/skills`);
    return { ...skill, run };
  }),
);

/** The skill called `id` with its runtime, or undefined. */
export function findRunnableSkill(id: string): RunnableSkill | undefined {
  return RUNNABLE_SKILLS.find((s) => s.id === id);
}
