/**
 * A skill as the agent's worker runs it: the owner-side definition (server/domain/agents/skills/) with its `run`.
 */
import type { SkillDefinition } from "../../domain/agents/skills/types";

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

/** Does one job: the result to deliver (any JSON value but null). Throws when it cannot do the job. */
export type SkillRun = (job: SkillJob, context: SkillContext) => Promise<unknown>;

export interface RunnableSkill extends SkillDefinition {
  run: SkillRun;
}
