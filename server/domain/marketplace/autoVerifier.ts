/**
 * The `auto` mode's judge: a loop that, once the indexer shows a listed auto task Submitted (its EvidenceSubmitted
 * indexed), evaluates the stored deliverable of that attempt against the task's rules (./evaluate.ts) and asks the
 * marketplace verifier of the task's chain for `completeVerification(id, passed)`. Every pass covers every chain a
 * marketplace verifier runs on (verifierOn), each with its own tasks, pause state and verifier.
 *
 * Exactly once per attempt: the verifier's intent key is `verdict:<id>:<attempt>` (unique per chain in
 * `verifier_intents`), a
 * task whose intent for its current attempt exists and has not failed is skipped, and a request repeated after a
 * crash returns the existing intent rather than sending again. The verdict is recorded on the submission only after
 * the verifier accepted the request.
 *
 * - A deliverable the service does not hold (submitEvidence sent around the API, or a hash that differs from the
 *   stored result) fails: nothing proves the rules hold.
 * - While a chain's escrow is paused nothing is sent there (the call would revert); the loop resumes after the
 *   unpause. The other chain's verdicts go on.
 * - A refused send (VerifierSendError: state unchanged) or a failed intent (reverted) is retried with a backoff
 *   (RETRY_SECONDS, doubling up to MAX_RETRY_SECONDS) as long as the task stays Submitted on the same attempt.
 *
 * @example
 *   const auto = new AutoVerifier(deps, { pollMs: 1000 });
 *   auto.start();            // runs until stop()
 *   await auto.runOnce();    // one pass (tests)
 */
import type { Deps } from "../deps";
import { getListings } from "../../db/repositories/listings";
import { loadConfigValues } from "../../db/repositories/escrowConfig";
import { findSubmission, listSubmittedTaskIds, recordVerdict } from "../../db/repositories/submissions";
import { getTasks } from "../../db/repositories/tasks";
import type { ChainName, TaskRecord } from "../../escrow/records";
import { escrowPaused } from "../../escrow/rules";
import { loadPausePeriods } from "../../db/repositories/pausePeriods";
import { verdictKey } from "../../verifier/types";
import { verifierOn } from "../verifiers";
import type { VerificationCriteria } from "../verification";
import { evaluateCriteria, evaluationReason, type EvaluateOptions } from "./evaluate";

export const RETRY_SECONDS = 5;
export const MAX_RETRY_SECONDS = 300;

export interface AutoVerifierOptions {
  /** Pause between passes (default 1000 ms). */
  pollMs?: number;
  evaluate?: EvaluateOptions;
}

export interface AutoVerdict {
  chain: ChainName;
  taskId: number;
  attempt: number;
  passed: boolean;
  reason: string;
}

/** `chain`'s listed auto-mode tasks that are Submitted on-chain, oldest first. */
async function submittedAutoTasks(
  deps: Deps,
  chain: ChainName,
): Promise<{ task: TaskRecord; criteria: VerificationCriteria }[]> {
  const ids = await listSubmittedTaskIds(deps.db, "auto", chain);
  if (ids.length === 0) return [];
  const [tasks, listings] = await Promise.all([getTasks(deps.db, chain, ids), getListings(deps.db, ids, chain)]);
  return ids.flatMap((id) => {
    const task = tasks.get(id);
    const listing = listings.get(id);
    return task && listing ? [{ task, criteria: (listing.verificationCriteria ?? {}) as VerificationCriteria }] : [];
  });
}

export class AutoVerifier {
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** Backoff per chain and intent key after a refused or failed send: when to try again and the current delay. */
  private readonly backoff = new Map<string, { at: number; delay: number }>();
  private readonly pollMs: number;

  constructor(
    private readonly deps: Deps,
    private readonly options: AutoVerifierOptions = {},
  ) {
    this.pollMs = Math.max(10, options.pollMs ?? 1000);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        try {
          await this.runOnce();
        } catch (error) {
          this.deps.logger.warn("auto verification pass failed", { error });
        }
        if (!this.running) break;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.pollMs);
          this.wake = () => (clearTimeout(timer), resolve());
        });
        this.wake = undefined;
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    this.loop = undefined;
  }

  /** One pass over the submitted auto tasks of every chain; returns the verdicts requested in it. */
  async runOnce(): Promise<AutoVerdict[]> {
    const done: AutoVerdict[] = [];
    for (const chain of this.deps.chains.keys()) {
      try {
        done.push(...(await this.runOnChain(chain)));
      } catch (error) {
        // One chain's failure (its database rows, its node) leaves the other chains' verdicts going.
        this.deps.logger.warn("auto verification pass failed", { chain, error });
      }
    }
    return done;
  }

  /** One pass over `chain`'s submitted auto tasks, settled by that chain's marketplace verifier. */
  private async runOnChain(chain: ChainName): Promise<AutoVerdict[]> {
    const verifier = verifierOn(this.deps, chain);
    if (!verifier) return [];
    const candidates = await submittedAutoTasks(this.deps, chain);
    if (candidates.length === 0) return [];
    const config = await loadConfigValues(this.deps.db, chain);
    if (escrowPaused(await loadPausePeriods(this.deps.db, chain), config.paused?.value)) return [];
    const done: AutoVerdict[] = [];
    const now = this.deps.clock.wallNowMs();
    for (const { task, criteria } of candidates) {
      const attempt = task.submissionAttempts;
      const key = verdictKey(task.taskId, attempt);
      const backoffKey = `${chain}:${key}`;
      const wait = this.backoff.get(backoffKey);
      if (wait && now < wait.at) continue;
      const existing = await verifier.intent(key);
      if (existing && existing.status !== "failed") continue;
      const verdict = await this.judge(chain, task, criteria, attempt);
      try {
        const intent = await verifier.requestVerdict(task.taskId, attempt, verdict.passed);
        if (intent.status === "failed") throw new Error(intent.error ?? "the verdict transaction failed");
        this.backoff.delete(backoffKey);
      } catch (error) {
        const delay = Math.min(wait ? wait.delay * 2 : RETRY_SECONDS, MAX_RETRY_SECONDS);
        this.backoff.set(backoffKey, { at: now + delay * 1000, delay });
        this.deps.logger.warn("auto verdict not sent; will retry", { chain, key, error, retryInSeconds: delay });
        continue;
      }
      await recordVerdict(this.deps.db, {
        chain,
        taskId: task.taskId,
        attempt,
        verdict: verdict.passed ? "pass" : "fail",
        by: verifier.address,
        reason: verdict.reason,
        at: Math.floor(now / 1000),
      });
      this.deps.logger.info("auto verdict requested", { chain, key, passed: verdict.passed, reason: verdict.reason });
      done.push(verdict);
    }
    return done;
  }

  /** Evaluates the stored deliverable of `attempt`; a deliverable the service does not hold fails. */
  private async judge(
    chain: ChainName,
    task: TaskRecord,
    criteria: VerificationCriteria,
    attempt: number,
  ): Promise<AutoVerdict> {
    const stored = await findSubmission(this.deps.db, task.taskId, attempt, chain);
    if (!stored || stored.evidenceHash !== task.evidenceHash) {
      return {
        chain,
        taskId: task.taskId,
        attempt,
        passed: false,
        reason: "no stored result matches the evidence submitted on-chain (submit through the API)",
      };
    }
    const evaluation = await evaluateCriteria(criteria, JSON.parse(stored.result), this.options.evaluate);
    return { chain, taskId: task.taskId, attempt, passed: evaluation.passed, reason: evaluationReason(evaluation) };
  }
}
