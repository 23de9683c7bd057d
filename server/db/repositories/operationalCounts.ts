/**
 * Counts an operator watches (GET /metrics): rows by state in the tables of the service's background work. Each is
 * one grouped query over an indexed column, read at scrape time, so every process reports the shared database's
 * figures.
 */
import type { Queryable } from "./util";

export interface StateCount {
  state: string;
  count: number;
}

async function countBy(db: Queryable, table: string, column: string): Promise<StateCount[]> {
  const rows = (await db(table).select({ state: column }).count({ count: "*" }).groupBy(column)) as {
    state: string;
    count: number | string;
  }[];
  return rows.map((r) => ({ state: String(r.state), count: Number(r.count) }));
}

/** The marketplace verifiers' intents by chain and status (pending | sent | confirmed | failed). */
export async function countVerifierIntents(db: Queryable): Promise<(StateCount & { chain: string })[]> {
  const rows = (await db("verifier_intents")
    .select({ chain: "chain", state: "status" })
    .count({ count: "*" })
    .groupBy("chain", "status")) as { chain: string; state: string; count: number | string }[];
  return rows.map((r) => ({ chain: String(r.chain), state: String(r.state), count: Number(r.count) }));
}

/** Webhook deliveries kept (finished ones until the retention ends) by status (pending | delivered | failed). */
export function countWebhookDeliveries(db: Queryable): Promise<StateCount[]> {
  return countBy(db, "webhook_deliveries", "status");
}

/** Deliveries due now or overdue: the dispatcher's backlog. */
export async function countDueWebhookDeliveries(db: Queryable, nowMs: number): Promise<number> {
  const row = await db("webhook_deliveries")
    .where({ status: "pending" })
    .andWhere((q) => q.whereNull("next_attempt_at_ms").orWhere("next_attempt_at_ms", "<=", nowMs))
    .count({ count: "*" })
    .first();
  return Number(row?.count ?? 0);
}

export interface HostedAgentCount {
  state: string;
  /** The host holding the agent's lease, or "" when none does. */
  host: string;
  count: number;
}

/** Hosted agents not deleted, by reported status and by the host holding their lease. */
export async function countHostedAgents(db: Queryable): Promise<HostedAgentCount[]> {
  const rows = (await db("hosted_agents")
    .select({ state: "status", host: "lease_host" })
    .count({ count: "*" })
    .whereNull("deleted_at")
    .groupBy("status", "lease_host")) as { state: string; host: string | null; count: number | string }[];
  return rows.map((r) => ({ state: String(r.state), host: r.host ?? "", count: Number(r.count) }));
}
