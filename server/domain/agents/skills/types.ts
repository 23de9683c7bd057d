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
  config: Record<string, unknown>;
  secrets: Record<string, string>;
  log: (message: string) => void;
  /** Aborted when the agent stops: a skill waiting on I/O gives up. */
  signal: AbortSignal;
}

export interface SkillDefinition {
  /** Stable id (the install's name): lower-case letters, digits and dashes. */
  id: string;
  title: string;
  description: string;
  /** Capabilities the skill gives its agent: it takes tasks whose required capabilities these (and its other skills') cover. */
  capabilities: string[];
  /** Names of secrets the install must carry (SKILL_NEEDS_SECRETS when one is missing). */
  requiredSecrets: string[];
  /** Validates an install's config (throws a message naming the field), answering the config to store. */
  parseConfig(config: unknown): Record<string, unknown>;
  /** The result to deliver (any JSON value but null). Throws when it cannot do the job. */
  run(job: SkillJob, context: SkillContext): Promise<unknown>;
}
