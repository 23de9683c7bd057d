/**
 * The escrow's rules as the service mirrors them: its constants, the pause accounting, the effective deadline and the
 * windows. One home: the domain, the projection and the repositories' SQL take them from here, and
 * test/server/escrow/rules.test.ts checks each against the contract's own views (TaskEscrow.sol) on a real chain.
 */
import { TASK_STATUS, type PausePeriod, type TaskRecord } from "./records";

/** TaskEscrow.MIN_DURATION: the shortest task (seconds). */
export const MIN_DURATION = 3_600;
/** TaskEscrow.MAX_DURATION: the longest task (90 days, seconds). */
export const MAX_DURATION = 7_776_000;
/** TaskEscrow.MAX_SUBMISSIONS: a worker's attempts at one task. */
export const MAX_SUBMISSIONS = 3;
/** TaskEscrow.APPEAL_WINDOW: the worker's time to appeal a failed verdict. */
export const APPEAL_WINDOW_SECONDS = 3 * 86_400;
/** TaskEscrow.DISPUTE_WINDOW: time for a ruling before a timeout claim or a release. */
export const DISPUTE_WINDOW_SECONDS = 14 * 86_400;
/** TaskEscrow.OPEN_REVEAL_WINDOW: an open task's committers' time to reveal their evidence after the deadline. */
export const OPEN_REVEAL_WINDOW_SECONDS = 86_400;
/** TaskEscrow.OPEN_SELECTION_WINDOW: an open task's poster's time to select a revealed submission after the reveal
 * window; the earliest revealed submission is paid after it. */
export const OPEN_SELECTION_WINDOW_SECONDS = 3 * 86_400;
/** TaskEscrow.OPEN_BOND_BPS: an open-submission commitment's bond, in basis points of the reward (at least 1 unit). */
export const OPEN_BOND_BPS = 500;
/** TaskEscrow.ESCALATION_GRACE: how long after the effective deadline a worker may escalate unjudged work. */
export const ESCALATION_GRACE_SECONDS = 3 * 86_400;
/** TaskEscrow.MAX_FEE_BPS: the highest platform fee, in basis points. */
export const MAX_FEE_BPS = 3_000;

/**
 * Seconds the escrow spent paused after `since`, the running pause counted up to `now`: TaskEscrow's
 * `_pausedSecondsSince` (the intervals never overlap, so summing the parts after `since` is its backwards walk).
 */
export function pausedSecondsSince(pauses: readonly PausePeriod[], since: number, now: number): number {
  let total = 0;
  for (const p of pauses) {
    const end = p.endedAt ?? now;
    if (end <= since) continue;
    total += end - Math.max(p.startedAt, since);
  }
  return total;
}

/** When a window of `length` seconds opened at `start` ends, pauses included: TaskEscrow's `_windowPassed`. */
export function windowEnd(pauses: readonly PausePeriod[], start: number, length: number, now: number): number {
  return start + length + pausedSecondsSince(pauses, start, now);
}

/** The deadline plus the seconds paused since the task's creation: TaskEscrow's `effectiveDeadline(taskId)`. */
export function effectiveDeadline(
  task: Pick<TaskRecord, "createdAt" | "deadline">,
  pauses: readonly PausePeriod[],
  now: number,
): number {
  return task.deadline + pausedSecondsSince(pauses, task.createdAt, now);
}

/**
 * Whether the escrow is paused (every non-admin call reverts EnforcedPause): a recorded pause without an end, or the
 * configuration's `paused` flag (set by the Paused event before the pause period row exists).
 */
export function escrowPaused(pauses: readonly PausePeriod[], pausedFlag?: string): boolean {
  return pausedFlag === "true" || pauses.some((p) => p.endedAt === null);
}

/** Whether a task can still be taken or delivered: Funded or Assigned. */
export function isTakeable(status: number): boolean {
  return status === TASK_STATUS.Funded || status === TASK_STATUS.Assigned;
}
