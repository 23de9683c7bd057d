/**
 * A hosted agent's skill as its owner meets it: what it can do for a task, the capabilities, secrets and config it
 * takes. Built-in skills only (the catalog, ./catalog.ts); an owner plugs any model or program in through the
 * `webhook` skill. The code that runs a skill, inside the agent's worker, is in server/hosting/skills/.
 */

/** Host settings a config check depends on. */
export interface SkillConfigOptions {
  /** An install may name a loopback or private endpoint (the devnet, tests). Absent: refused. */
  allowPrivateAddresses?: boolean;
}

/** One config field, for the public catalog listing. */
export interface SkillConfigField {
  name: string;
  type: "integer" | "string" | "string[]" | "record<string,string>";
  required: boolean;
  description: string;
  default?: unknown;
}

export interface SkillDefinition {
  /** Stable id (the install's name): lower-case letters, digits and dashes. */
  id: string;
  title: string;
  description: string;
  /**
   * Capabilities the skill gives its agent: it takes tasks whose required capabilities these (and its other skills')
   * cover. A skill whose capabilities depend on its config (the webhook) answers them through capabilitiesOf; use
   * the catalog's capabilitiesFor(skill, config) to get an install's effective ones.
   */
  capabilities: string[];
  /** An install's capabilities from its parsed config, when they depend on it. */
  capabilitiesOf?(config: Record<string, unknown>): string[];
  /** Names of secrets the install must carry (SKILL_NEEDS_SECRETS when one is missing). */
  requiredSecrets: string[];
  /** The config fields parseConfig accepts, for the catalog listing. */
  configFields: SkillConfigField[];
  /**
   * Validates an install's config (throws VALIDATION_ERROR with a message naming the field, `config.maxSentences`),
   * answering the config to store (defaults filled in). Absent config (undefined) is an empty one.
   */
  parseConfig(config: unknown, options?: SkillConfigOptions): Record<string, unknown>;
}
