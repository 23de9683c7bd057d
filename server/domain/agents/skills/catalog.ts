/**
 * PLACEHOLDER catalog (hosted-api branch only): two trivial skills so the owner API can be built and tested before the
 * skills helper's real catalog lands; the real file replaces this one at merge. Same interface: `SKILLS`,
 * `findSkill(id)`, `catalogView()`, `capabilitiesFor(skill, config)`.
 */
import type { SkillDefinition } from "./types";

function objectConfig(config: unknown): Record<string, unknown> {
  if (config === undefined || config === null) return {};
  if (typeof config !== "object" || Array.isArray(config)) throw new Error("config: must be a JSON object");
  return config as Record<string, unknown>;
}

const lengthCheck: SkillDefinition = {
  id: "length-check",
  title: "Length check",
  description: "Answers whether the brief's text is at most `maxChars` characters long.",
  capabilities: ["length-check"],
  requiredSecrets: [],
  parseConfig(config) {
    const { maxChars = 1000, ...rest } = objectConfig(config);
    if (Object.keys(rest).length > 0) throw new Error(`config.${Object.keys(rest)[0]}: unknown field`);
    if (typeof maxChars !== "number" || !Number.isInteger(maxChars) || maxChars < 1) {
      throw new Error("config.maxChars: must be a whole number above 0");
    }
    return { maxChars };
  },
  async run(job, context) {
    const maxChars = context.config.maxChars as number;
    return { length: job.briefText.length, withinLimit: job.briefText.length <= maxChars };
  },
};

const webhook: SkillDefinition = {
  id: "webhook",
  title: "Webhook",
  description: "Sends the brief to the owner's HTTPS endpoint, signed with HMAC-SHA256, and delivers its answer.",
  capabilities: ["webhook"],
  requiredSecrets: ["signingSecret"],
  parseConfig(config) {
    const { url, ...rest } = objectConfig(config);
    if (Object.keys(rest).length > 0) throw new Error(`config.${Object.keys(rest)[0]}: unknown field`);
    if (typeof url !== "string" || !/^https:\/\/\S+$/.test(url)) throw new Error("config.url: must be an https:// URL");
    return { url };
  },
  async run() {
    throw new Error("placeholder catalog: the webhook skill is not implemented on this branch");
  },
};

export const SKILLS: readonly SkillDefinition[] = [lengthCheck, webhook];

export function findSkill(id: string): SkillDefinition | undefined {
  return SKILLS.find((skill) => skill.id === id);
}

export function catalogView() {
  return SKILLS.map(({ id, title, description, capabilities, requiredSecrets }) => ({
    id,
    title,
    description,
    capabilities,
    requiredSecrets,
  }));
}

/** The capabilities an install of `skill` with `config` gives its agent. */
export function capabilitiesFor(skill: SkillDefinition, _config: Record<string, unknown>): string[] {
  return [...skill.capabilities];
}
