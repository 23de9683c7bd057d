/**
 * PLACEHOLDER of the hosted-agents skills catalog (the skills helper's catalog replaces this file at merge): a
 * trivial deterministic skill, `echo-summary`, and a `verifier` skill, so the agent host's tests run, and the
 * catalog's exported shape (findSkill, capabilitiesFor, judgeWork) the host and its worker call.
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

/** Makes its agent a verifier agent: the worker judges tasks naming it with judgeWork. */
const verifier: SkillDefinition = {
  id: "verifier",
  title: "Verifier",
  description: "Judges deliveries against the task's criteria, as the task's verifier agent.",
  capabilities: ["verify"],
  requiredSecrets: [],
  parseConfig: (config) => ({ ...((config ?? {}) as Record<string, unknown>) }),
  async run(job) {
    return { verdict: "use judgeWork", taskHash: job.taskHash };
  },
};

const SKILLS: SkillDefinition[] = [echoSummary, verifier];

export function findSkill(id: string): SkillDefinition | undefined {
  return SKILLS.find((s) => s.id === id);
}

/** The capabilities an install of `skill` gives its agent. */
export function capabilitiesFor(skill: SkillDefinition, _config: Record<string, unknown>): string[] {
  return skill.capabilities;
}

/** The verifier skill's judgement (placeholder: the criteria's required_fields present in an object result). */
export async function judgeWork(criteria: unknown, result: unknown): Promise<{ passed: boolean; reason: string }> {
  if (result === null || typeof result !== "object") return { passed: false, reason: "the result is not an object" };
  const required = ((criteria as { required_fields?: string[] } | null)?.required_fields ?? []).filter(
    (f) => !(f in (result as Record<string, unknown>)),
  );
  return required.length === 0
    ? { passed: true, reason: "every required field is present" }
    : { passed: false, reason: `missing ${required.join(", ")}` };
}
