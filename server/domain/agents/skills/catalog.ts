/**
 * The built-in skills catalog: what an owner can install on a hosted agent. Text skills are deterministic (same
 * brief and config, same result); the webhook plugs in any model or program; the verifier judges work against a
 * task's criteria. The code that runs each is beside the agent host (server/hosting/skills/catalog.ts).
 */
import { jsonSkill, keywordsSkill, summarySkill, textChecksSkill, verifierSkill, webhookSkill } from "./specs";
import type { SkillConfigField, SkillDefinition } from "./types";

export const SKILLS: readonly SkillDefinition[] = Object.freeze([
  summarySkill,
  keywordsSkill,
  textChecksSkill,
  jsonSkill,
  webhookSkill,
  verifierSkill,
]);

/** The skill called `id`, or undefined (the caller answers SKILL_NOT_FOUND). */
export function findSkill(id: string): SkillDefinition | undefined {
  return SKILLS.find((s) => s.id === id);
}

/**
 * The capabilities an install of `skill` gives its agent: its fixed ones, or those of its config when they depend
 * on it (the webhook's `capabilities`). `config` is the install's stored config (parseConfig's answer).
 */
export function capabilitiesFor(skill: SkillDefinition, config: Record<string, unknown>): string[] {
  return skill.capabilitiesOf ? skill.capabilitiesOf(config) : [...skill.capabilities];
}

export interface SkillView {
  id: string;
  title: string;
  description: string;
  /** Fixed capabilities; empty when they come from the config (configDependentCapabilities). */
  capabilities: string[];
  configDependentCapabilities: boolean;
  requiredSecrets: string[];
  config: SkillConfigField[];
}

/** The public listing of the catalog. */
export function catalogView(): { skills: SkillView[] } {
  return {
    skills: SKILLS.map((s) => ({
      id: s.id,
      title: s.title,
      description: s.description,
      capabilities: [...s.capabilities],
      configDependentCapabilities: Boolean(s.capabilitiesOf),
      requiredSecrets: [...s.requiredSecrets],
      config: s.configFields.map((f) => ({ ...f })),
    })),
  };
}
