/**
 * Reputation until the reputation engine lands: a wallet's reputation as a poster is the number of tasks it posted
 * that completed (paid out) on-chain, read from the task projection. A new poster has 0. The merged, time-decayed
 * reputation of the spec replaces these two functions; their callers do not change.
 */
import type { Queryable } from "../db/repositories/util";
import { countCompletedByPoster, postersWithCompletedAtLeast } from "../db/repositories/tasks";

/** A poster's reputation: tasks it posted that completed on-chain. */
export function posterReputation(db: Queryable, poster: string): Promise<number> {
  return countCompletedByPoster(db, poster);
}

/**
 * The posters whose reputation is at least `min`, or undefined when `min` excludes nobody (0 or less): the open-task
 * listing's `minReputation` filter.
 */
export async function postersWithReputationAtLeast(db: Queryable, min: number): Promise<string[] | undefined> {
  if (min <= 0) return undefined;
  return postersWithCompletedAtLeast(db, min);
}
