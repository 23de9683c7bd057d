/**
 * PLACEHOLDER of the hosted-agents skills catalog (the skills helper's catalog replaces this file at merge): one
 * trivial deterministic skill, `echo-summary`, so the agent host's tests run, and the catalog's exported shape
 * (findSkill, capabilitiesFor, judgeWork) the host and its worker call.
 */
import type { SkillDefinition } from "./types";

const echoSummary: SkillDefinition = {
  id: "echo-summary",
  title: "Echo summary",
  description: "The brief's first sentence and its word count.",
  capabilities: ["summarise", "text"],
  requiredSecrets: [],
  parseConfig: (config) => ({ ...((config ?? {}) as Record<string, unknown>) }),
  async run(job) {
    const text = job.briefText.trim();
    return { summary: text.split(/(?<=[.!?])\s/)[0] ?? text, wordCount: text.split(/\s+/).filter(Boolean).length };
  },
};

const SKILLS: SkillDefinition[] = [echoSummary];

export function findSkill(id: string): SkillDefinition | undefined {
  return SKILLS.find((s) => s.id === id);
}

/** The capabilities an install of `skill` gives its agent. */
export function capabilitiesFor(skill: SkillDefinition, _config: Record<string, unknown>): string[] {
  return skill.capabilities;
}

/** The verifier skill's judgement (placeholder: passes any non-null result). */
export async function judgeWork(_criteria: unknown, result: unknown): Promise<{ passed: boolean; reason: string }> {
  return result === null || result === undefined
    ? { passed: false, reason: "no result" }
    : { passed: true, reason: "a result was delivered" };
}
