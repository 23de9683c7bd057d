/**
 * The reputation engine: a wallet's score merged from its on-chain outcomes (the indexer's escrow events and task
 * projection), each weighted and decayed by its age.
 *
 * As a worker (the `reputation` of executors, the leaderboard, the offer window's ranking):
 *
 * | Outcome | Event | Weight |
 * | - | - | - |
 * | completed work | TaskCompleted of a task it worked (any payout: pass, dispute won, unjudged work released) | +1 |
 * | failed verdict | VerificationCompleted with passed = false (each attempt) | -0.5 |
 * | dispute lost | DisputeResolved with workerFavored = false | -1 |
 * | timeout | DeadlineExpired of a task it delivered to and that was never disputed (a failed verdict not cured) | -1 |
 *
 * Each outcome counts weight x 0.5^(age / 90 days), age = now - the event's block time (0 for a later event), now =
 * the chain's clock. score = max(0, sum), rounded to 3 decimals. One rule with the escrow's reputation hook
 * (docs/contracts.md "Reputation"): a failure counts only for a worker who acted, that is submitted at least once;
 * an assignment that lapsed undelivered counts for nobody (a poster could assign anyone and let it lapse for free),
 * and so does a refund after a dispute that lapsed without a ruling: neither side was judged.
 *
 * As a poster (the open-task `minReputation` filter): +1 per task it posted that paid out (TaskCompleted), -1 per
 * dispute ruled for the worker (DisputeResolved workerFavored = true), with the same decay and rounding.
 *
 * Every read is one SQL statement (server/db/repositories/reputation.ts).
 */
import type { Knex } from "knex";
import type { Deps } from "./deps";
import {
  reputationAggregates,
  scoreSubquery,
  topReputations,
  walletsWithSumAtLeast,
  type DecayParams,
  type OutcomeRule,
  type ReputationAggregate,
} from "../db/repositories/reputation";
import type { Queryable } from "../db/repositories/util";

export const HALF_LIFE_DAYS = 90;
export const HALF_LIFE_SECONDS = HALF_LIFE_DAYS * 86_400;
export const LEADERBOARD_SIZE = 50;

/** Outcomes of a wallet as a worker. */
export const WORKER_RULES: readonly OutcomeRule[] = [
  { kind: "completed", role: "worker", eventName: "TaskCompleted", weight: 1 },
  {
    kind: "failedVerdict",
    role: "worker",
    eventName: "VerificationCompleted",
    booleanArg: { name: "passed", value: false },
    weight: -0.5,
  },
  {
    kind: "disputeLost",
    role: "worker",
    eventName: "DisputeResolved",
    booleanArg: { name: "workerFavored", value: false },
    weight: -1,
  },
  {
    kind: "timeout",
    role: "worker",
    eventName: "DeadlineExpired",
    neverDisputed: true,
    workerSubmitted: true,
    weight: -1,
  },
];

/** Outcomes of a wallet as a poster. */
export const POSTER_RULES: readonly OutcomeRule[] = [
  { kind: "paidOut", role: "poster", eventName: "TaskCompleted", weight: 1 },
  {
    kind: "posterDisputeLost",
    role: "poster",
    eventName: "DisputeResolved",
    booleanArg: { name: "workerFavored", value: true },
    weight: -1,
  },
];

export interface Reputation {
  address: string;
  /** Decayed worker score: max(0, sum), 3 decimals. */
  score: number;
  /** Raw (undecayed) counts of the worker outcomes. */
  completed: number;
  failedVerdicts: number;
  disputesLost: number;
  timeouts: number;
  /** Block time of the latest worker outcome; null when none. */
  lastActivityAt: number | null;
  asPoster: { score: number; paidOut: number; disputesLost: number; lastActivityAt: number | null };
  halfLifeDays: number;
  /** The chain time the decay was computed at. */
  computedAt: number;
}

export interface LeaderboardEntry {
  rank: number;
  address: string;
  score: number;
  completed: number;
}

const decayAt = (now: number): DecayParams => ({ now, halfLifeSeconds: HALF_LIFE_SECONDS });

/** max(0, sum) rounded to 3 decimals. */
export function toScore(sum: number): number {
  return Math.round(Math.max(0, sum) * 1000) / 1000;
}

/** The decay weight of an outcome `age` seconds old: 0.5^(age / half-life). */
export function decayWeight(ageSeconds: number): number {
  return Math.pow(0.5, Math.max(0, ageSeconds) / HALF_LIFE_SECONDS);
}

/** The full reputation of one wallet (both roles, one statement). An unknown wallet has zeros. */
export async function reputationOf(db: Queryable, address: string, now: number): Promise<Reputation> {
  const wallet = address.toLowerCase();
  const rows = await reputationAggregates(db, [...WORKER_RULES, ...POSTER_RULES], decayAt(now), [wallet]);
  const worker = rows.find((r) => r.role === "worker");
  const poster = rows.find((r) => r.role === "poster");
  return {
    address: wallet,
    score: toScore(worker?.sum ?? 0),
    completed: worker?.counts.completed ?? 0,
    failedVerdicts: worker?.counts.failedVerdict ?? 0,
    disputesLost: worker?.counts.disputeLost ?? 0,
    timeouts: worker?.counts.timeout ?? 0,
    lastActivityAt: worker?.lastActivityAt ?? null,
    asPoster: {
      score: toScore(poster?.sum ?? 0),
      paidOut: poster?.counts.paidOut ?? 0,
      disputesLost: poster?.counts.posterDisputeLost ?? 0,
      lastActivityAt: poster?.lastActivityAt ?? null,
    },
    halfLifeDays: HALF_LIFE_DAYS,
    computedAt: now,
  };
}

/** A wallet's worker score. */
export async function reputationScore(db: Queryable, address: string, now: number): Promise<number> {
  return (await reputationScores(db, [address], now)).get(address.toLowerCase()) ?? 0;
}

/** Worker scores of several wallets in one statement (per chunk of wallets): every requested wallet is in the map. */
export async function reputationScores(
  db: Queryable,
  addresses: readonly string[],
  now: number,
): Promise<Map<string, number>> {
  const wallets = addresses.map((a) => a.toLowerCase());
  const out = new Map<string, number>(wallets.map((w) => [w, 0]));
  if (wallets.length === 0) return out;
  for (const row of await reputationAggregates(db, WORKER_RULES, decayAt(now), wallets)) {
    out.set(row.wallet, toScore(row.sum));
  }
  return out;
}

/** Top workers by decayed score (above 0), ties by completed work then address; ranks 1.. in that order. */
export async function leaderboard(db: Queryable, now: number, size = LEADERBOARD_SIZE): Promise<LeaderboardEntry[]> {
  const rows: ReputationAggregate[] = await topReputations(db, WORKER_RULES, decayAt(now), {
    limit: size,
    tieKind: "completed",
  });
  return rows.map((r, i) => ({ rank: i + 1, address: r.wallet, score: toScore(r.sum), completed: r.counts.completed }));
}

/** The `(wallet, score)` subquery of worker scores at `now`, for listings that order by reputation. */
export function workerScoreSubquery(db: Queryable, now: number): Knex.Raw {
  return scoreSubquery(db, WORKER_RULES, decayAt(now));
}

/** A wallet's decayed score as a poster at `now` (chain time). */
export async function posterReputation(db: Queryable, poster: string, now: number): Promise<number> {
  const rows = await reputationAggregates(db, POSTER_RULES, decayAt(now), [poster.toLowerCase()]);
  return toScore(rows[0]?.sum ?? 0);
}

/**
 * The posters whose poster score (rounded to 3 decimals) is at least `min`, or undefined when `min` excludes nobody
 * (0 or less): the open-task listing's `minReputation` filter.
 */
export async function postersWithReputationAtLeast(
  db: Queryable,
  min: number,
  now: number,
): Promise<string[] | undefined> {
  if (min <= 0) return undefined;
  // round(x, 3) >= min  <=>  x >= min - 0.0005 (half-up rounding of a positive sum).
  return walletsWithSumAtLeast(db, POSTER_RULES, decayAt(now), min - 0.0005);
}

// ---------------------------------------------------------------------------------------------------------------
// Reads for the routes (chain time as "now")
// ---------------------------------------------------------------------------------------------------------------

/** GET /reputation/{address}. */
export async function readReputation(deps: Deps, address: string): Promise<Reputation> {
  return reputationOf(deps.db, address, await deps.clock.chainNow());
}

/** GET /reputation/leaderboard. */
export async function readLeaderboard(
  deps: Deps,
): Promise<{ leaderboard: LeaderboardEntry[]; halfLifeDays: number; computedAt: number }> {
  const now = await deps.clock.chainNow();
  return { leaderboard: await leaderboard(deps.db, now), halfLifeDays: HALF_LIFE_DAYS, computedAt: now };
}
