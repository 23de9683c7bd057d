/**
 * Reputation reads over the indexer's tables (escrow_events joined with the tasks projection). Every function is one
 * SQL statement: outcome events are weighted and decayed inside the database and aggregated per wallet, so a
 * leaderboard or a page of executors never costs one query per wallet.
 *
 * The outcome rules (which event counts for whom, with which weight) are the domain's (server/domain/reputation.ts);
 * this module receives them as data and turns them into SQL.
 *
 * Outcomes count on every chain: a wallet's score merges its outcomes on base and on arc (an event joins the task of
 * its own chain; on-chain ids repeat across chains).
 */
import type { Knex } from "knex";
import { ZERO_ADDRESS } from "../../escrow/records";
import { chunks, type Queryable } from "./util";

/** Whose outcome an event is: the task's worker or its poster. */
export type ReputationRole = "worker" | "poster";

/** One kind of outcome: an escrow event (optionally with an argument's value), its role and its weight. */
export interface OutcomeRule {
  kind: string;
  role: ReputationRole;
  eventName: string;
  /** Only events whose JSON args contain this boolean argument with this value. */
  booleanArg?: { name: string; value: boolean };
  /** Only tasks that were never disputed (tasks.disputed_at = 0). */
  neverDisputed?: boolean;
  /** Only tasks whose worker submitted at least once (tasks.submission_attempts > 0). */
  workerSubmitted?: boolean;
  weight: number;
}

export interface DecayParams {
  /** Unix seconds: ages are measured to this instant (events after it have age 0). */
  now: number;
  halfLifeSeconds: number;
}

/** Per wallet and role: the decayed weighted sum, the raw count of each kind, and the latest outcome's time. */
export interface ReputationAggregate {
  wallet: string;
  role: ReputationRole;
  /** Unrounded, unclamped decayed sum. */
  sum: number;
  counts: Record<string, number>;
  lastActivityAt: number | null;
}

const LN2 = Math.LN2;

/** Args are stored by JSON.stringify without spaces (escrowLogs.ts), so a boolean reads as `"name":true`. */
const booleanPattern = (name: string, value: boolean) => `%"${name}":${value}%`;

/**
 * The outcomes subquery: one row per counted event with its wallet, role, kind, weight and time. A UNION ALL of one
 * SELECT per rule keeps each branch on the event_name index.
 */
function outcomesSql(db: Queryable, rules: readonly OutcomeRule[], wallets?: readonly string[]): Knex.Raw {
  const parts: string[] = [];
  const bindings: (string | number)[] = [];
  for (const rule of rules) {
    const walletColumn = rule.role === "worker" ? "t.worker" : "t.poster";
    let sql =
      `select ${walletColumn} as wallet, cast(? as varchar(16)) as role, cast(? as varchar(32)) as kind, ` +
      `cast(? as double precision) as weight, ` +
      `e.block_timestamp as ts from escrow_events e join tasks t on t.chain = e.chain and t.task_id = e.task_id ` +
      `where e.event_name = ? and ${walletColumn} <> ?`;
    bindings.push(rule.role, rule.kind, rule.weight, rule.eventName, ZERO_ADDRESS);
    if (rule.booleanArg) {
      sql += " and e.args like ?";
      bindings.push(booleanPattern(rule.booleanArg.name, rule.booleanArg.value));
    }
    if (rule.neverDisputed) sql += " and t.disputed_at = 0";
    if (rule.workerSubmitted) sql += " and t.submission_attempts > 0";
    if (wallets) {
      sql += ` and ${walletColumn} in (${wallets.map(() => "?").join(", ")})`;
      bindings.push(...wallets);
    }
    parts.push(sql);
  }
  return db.raw(parts.join(" union all "), bindings);
}

/** SQL of the decayed sum: weight x 0.5^(age / half-life) = weight x exp(-ln 2 x age / half-life), age >= 0. */
function decayedSumSql(decay: DecayParams): { sql: string; bindings: number[] } {
  return {
    sql:
      "sum(o.weight * exp(cast(? as double precision) * " +
      "(case when o.ts < ? then ? - o.ts else 0 end) / cast(? as double precision)))",
    bindings: [-LN2, decay.now, decay.now, decay.halfLifeSeconds],
  };
}

/** `round(x, 3)` that both SQLite and PostgreSQL (which has no round(double, int)) accept. */
const round3 = (sql: string) => `round(cast(${sql} as numeric), 3)`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function toAggregate(row: any, kinds: readonly string[]): ReputationAggregate {
  const counts: Record<string, number> = {};
  for (const kind of kinds) counts[kind] = Number(row[`n_${kind}`] ?? 0);
  return {
    wallet: row.wallet,
    role: row.role,
    sum: Number(row.score_sum ?? 0),
    counts,
    lastActivityAt: row.last_at === null || row.last_at === undefined ? null : Number(row.last_at),
  };
}

/** The aggregate query over the outcomes of `rules`, grouped by wallet and role. */
function aggregateQuery(db: Queryable, rules: readonly OutcomeRule[], decay: DecayParams, wallets?: readonly string[]) {
  const kinds = [...new Set(rules.map((r) => r.kind))];
  const decayed = decayedSumSql(decay);
  const q = db
    .from(db.raw("(?) as o", [outcomesSql(db, rules, wallets)]))
    .select("o.wallet", "o.role")
    .select(db.raw(`${decayed.sql} as score_sum`, decayed.bindings))
    .select(db.raw("max(o.ts) as last_at"))
    .groupBy("o.wallet", "o.role");
  for (const kind of kinds) {
    q.select(db.raw(`sum(case when o.kind = ? then 1 else 0 end) as ??`, [kind, `n_${kind}`]));
  }
  return { q, kinds, decayed };
}

/** The aggregates of `wallets` (lower-case), every role of `rules`. Wallets without outcomes are absent. */
export async function reputationAggregates(
  db: Queryable,
  rules: readonly OutcomeRule[],
  decay: DecayParams,
  wallets: readonly string[],
): Promise<ReputationAggregate[]> {
  const out: ReputationAggregate[] = [];
  // Each wallet is bound once per rule: chunks keep a statement under SQLite's bound-variable limit.
  for (const chunk of chunks([...new Set(wallets)], Math.max(1, Math.floor(800 / Math.max(1, rules.length))))) {
    const { q, kinds } = aggregateQuery(db, rules, decay, chunk);
    const rows = await q;
    out.push(...rows.map((r: unknown) => toAggregate(r, kinds)));
  }
  return out;
}

/**
 * The best wallets by score rounded to 3 decimals (only those above 0), then by the raw count of `tieKind`, then by
 * address: one statement.
 */
export async function topReputations(
  db: Queryable,
  rules: readonly OutcomeRule[],
  decay: DecayParams,
  options: { limit: number; tieKind: string },
): Promise<ReputationAggregate[]> {
  const { q, kinds, decayed } = aggregateQuery(db, rules, decay);
  const rounded = round3(decayed.sql);
  const rows = await q
    .havingRaw(`${rounded} > 0`, decayed.bindings)
    .orderByRaw(`${rounded} desc`, decayed.bindings)
    .orderBy(`n_${options.tieKind}`, "desc")
    .orderBy("o.wallet", "asc")
    .limit(options.limit);
  return rows.map((r: unknown) => toAggregate(r, kinds));
}

/** Wallets whose decayed sum over `rules` is at least `min` (before rounding: callers pass min - 0.0005). */
export async function walletsWithSumAtLeast(
  db: Queryable,
  rules: readonly OutcomeRule[],
  decay: DecayParams,
  min: number,
): Promise<string[]> {
  const { q, decayed } = aggregateQuery(db, rules, decay);
  const rows = await q.havingRaw(`${decayed.sql} >= ?`, [...decayed.bindings, min]);
  return [...new Set(rows.map((r: { wallet: string }) => r.wallet))];
}

/**
 * A subquery `(wallet, score)` of rounded decayed scores over `rules`, for joining (the executors listing orders by
 * it). Wallets without outcomes are absent; callers coalesce to 0.
 */
export function scoreSubquery(db: Queryable, rules: readonly OutcomeRule[], decay: DecayParams): Knex.Raw {
  const decayed = decayedSumSql(decay);
  return db.raw(`select o.wallet as wallet, ${round3(decayed.sql)} as score from (?) as o group by o.wallet`, [
    ...decayed.bindings,
    outcomesSql(db, rules),
  ]);
}
