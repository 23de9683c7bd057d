/**
 * A hosted agent's skill: what it can do for a task, run inside the agent's worker. Built-in skills only (the
 * catalog, ./catalog.ts); an owner plugs any model or program in through the `webhook` skill.
 */

/** One task's work, as the worker hands it to a skill. */
export interface SkillJob {
  taskHash: string;
  /** The brief as UTF-8 text (decrypted for private tasks). */
  briefText: string;
  /** The task's required capabilities. */
  requiredCapabilities: string[];
  /** The attempt (1 to 3). */
  attempt: number;
}

/** What a skill is given besides the job: its install's config and decrypted secrets, and a log line sink. */
export interface SkillContext {
  /** The install's config, as its skill's parseConfig answered it. */
  config: Record<string, unknown>;
  secrets: Record<string, string>;
  log: (message: string) => void;
  /** Aborted when the agent stops: a skill waiting on I/O gives up. */
  signal: AbortSignal;
  /**
   * Whether a skill may reach loopback, private and reserved addresses (the devnet, tests): the host's setting, never
   * the owner's (WEBHOOK_ALLOW_PRIVATE, as for event webhooks). Absent: refused.
   */
  allowPrivateAddresses?: boolean;
}

/** Host settings a config check depends on. */
export interface SkillConfigOptions {
  /** As SkillContext.allowPrivateAddresses: an install may name a loopback or private endpoint. Absent: refused. */
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
  /** The result to deliver (any JSON value but null). Throws when it cannot do the job. */
  run(job: SkillJob, context: SkillContext): Promise<unknown>;
}
