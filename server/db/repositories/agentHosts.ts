/**
 * The agent host's side of hosted agents (server/hosting): host heartbeats (agent_hosts), leases of agents to hosts
 * (each agent with desired state running or paused runs on exactly one host: a lease is claimed by one atomic UPDATE,
 * renewed while the host lives, and free to take once expired), the host's reports (status, restarts, last error,
 * the event stream's resume point) and the agent's log, kept to its latest lines. The owner's reads and writes are
 * in hostedAgents.ts. Times: *_ms in milliseconds, updated_at in seconds.
 */
import { queryRows, type Queryable } from "./util";
import { ACTING_DESIRED_STATES, ACTING_IN_SQL, hostedAgentFromRow, type HostedAgentRow } from "./hostedAgents";

/** Log lines kept per agent (older lines are deleted as new ones arrive). */
export const AGENT_LOG_LINES_KEPT = 1000;

import type { AgentStatus as HostedStatus, DesiredState } from "./hostedAgents";
export type { HostedStatus, DesiredState };
export type LogLevel = "info" | "warn" | "error";

/** What a host needs of an agent to run it: the agent's row, and whether it was deleted. */
export type HostedAgentRun = HostedAgentRow & { deleted: boolean };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const toRun = (row: any): HostedAgentRun => ({ ...hostedAgentFromRow(row), deleted: row.deleted_at != null });

// ------------------------------------------------------------------------------------------------------- hosts

/** Records that host `id` is alive with `capacity` (the owner API's AGENT_CAPACITY sums live hosts' capacity). */
export async function heartbeatHost(db: Queryable, host: { id: string; capacity: number; nowMs: number }) {
  await db("agent_hosts")
    .insert({ id: host.id, capacity: host.capacity, seen_at_ms: host.nowMs })
    .onConflict("id")
    .merge(["capacity", "seen_at_ms"]);
}

/** A host that stops leaves the sum of live capacity at once. */
export async function removeHost(db: Queryable, id: string): Promise<void> {
  await db("agent_hosts").where({ id }).delete();
}

// ------------------------------------------------------------------------------------------------------ leases

/**
 * Agents a host may claim: desired running or paused, not deleted, with a key, and no live lease; oldest first.
 */
export async function listClaimableAgents(db: Queryable, nowMs: number, limit: number): Promise<HostedAgentRun[]> {
  const rows = await queryRows(
    db,
    `select * from "hosted_agents" where "desired_state" in ${ACTING_IN_SQL} and "deleted_at" is null` +
      ` and "encrypted_key" is not null and ("lease_host" is null or "lease_until_ms" is null or "lease_until_ms" < ?)` +
      ` order by "created_at" asc, "id" asc limit ?`,
    [nowMs, limit],
  );
  return rows.map(toRun);
}

/**
 * Claims agent `agentId` for `host` until `untilMs`, in one UPDATE (atomic on SQLite and PostgreSQL: of two hosts
 * racing for the same expired lease exactly one updates the row). True when the lease is now the host's.
 */
export async function claimAgentLease(
  db: Queryable,
  claim: { agentId: string; host: string; nowMs: number; untilMs: number },
): Promise<boolean> {
  const updated = await db("hosted_agents")
    .where({ id: claim.agentId })
    .whereIn("desired_state", ACTING_DESIRED_STATES)
    .whereNull("deleted_at")
    .where((q) =>
      q
        .whereNull("lease_host")
        .orWhere("lease_host", claim.host)
        .orWhereNull("lease_until_ms")
        .orWhere("lease_until_ms", "<", claim.nowMs),
    )
    .update({ lease_host: claim.host, lease_until_ms: claim.untilMs });
  return Number(updated) === 1;
}

/** Extends the host's leases of `agentIds` (only those it still holds). */
export async function renewAgentLeases(db: Queryable, host: string, agentIds: string[], untilMs: number) {
  if (agentIds.length === 0) return;
  await db("hosted_agents").where({ lease_host: host }).whereIn("id", agentIds).update({ lease_until_ms: untilMs });
}

/** Gives up the host's lease of one agent (another host may claim it at once). */
export async function releaseAgentLease(db: Queryable, host: string, agentId: string): Promise<void> {
  await db("hosted_agents").where({ id: agentId, lease_host: host }).update({ lease_host: null, lease_until_ms: null });
}

/** The run view of agents by id (the host re-reads the agents it runs on every tick). */
export async function findAgentsToRun(db: Queryable, agentIds: string[]): Promise<HostedAgentRun[]> {
  if (agentIds.length === 0) return [];
  const rows = await db("hosted_agents").select("*").whereIn("id", agentIds);
  return rows.map(toRun);
}

// ---------------------------------------------------------------------------------------------- host's reports

/**
 * The host's report of an agent: its status, and optionally the last error and one more restart. Written only while
 * the host holds the agent's lease (a host that lost it does not overwrite the new host's report). True if written.
 */
export async function reportAgentStatus(
  db: Queryable,
  report: {
    agentId: string;
    host: string;
    status: HostedStatus;
    lastError?: string | null;
    restarted?: boolean;
    nowSeconds: number;
  },
): Promise<boolean> {
  const changes: Record<string, unknown> = { status: report.status, updated_at: report.nowSeconds };
  if (report.lastError !== undefined) changes.last_error = report.lastError;
  if (report.restarted) changes.restarts = db.raw(`"restarts" + 1`);
  const updated = await db("hosted_agents")
    .where({ id: report.agentId, lease_host: report.host })
    .whereNull("deleted_at")
    .update(changes);
  return Number(updated) === 1;
}

/** Status stopped for an agent the owner stopped, and its lease released (the host stopped its worker). */
export async function reportAgentStopped(
  db: Queryable,
  stop: { agentId: string; host: string; nowSeconds: number },
): Promise<void> {
  await db("hosted_agents")
    .where({ id: stop.agentId, lease_host: stop.host, desired_state: "stopped" })
    .whereNull("deleted_at")
    .update({ status: "stopped", lease_host: null, lease_until_ms: null, updated_at: stop.nowSeconds });
}

/** The event stream's resume point of the agent (passed back to its worker after a restart). */
export async function saveLastEventId(db: Queryable, agentId: string, host: string, lastEventId: string) {
  await db("hosted_agents").where({ id: agentId, lease_host: host }).update({ last_event_id: lastEventId });
}

// ---------------------------------------------------------------------------------------------------------- log

/** Appends a line to the agent's log, deleting lines beyond the latest `keep`. */
export async function appendAgentLog(
  db: Queryable,
  line: { agentId: string; level: LogLevel; message: string; atMs: number },
  keep = AGENT_LOG_LINES_KEPT,
): Promise<void> {
  await db("hosted_agent_logs").insert({
    agent_id: line.agentId,
    level: line.level,
    message: line.message,
    at_ms: line.atMs,
  });
  // Everything older than the oldest line kept goes (none while the agent has `keep` lines or fewer: the subquery
  // is then NULL). One statement, the same text on SQLite and PostgreSQL.
  await db.raw(
    `delete from "hosted_agent_logs" where "agent_id" = ? and "id" < ` +
      `(select "id" from "hosted_agent_logs" where "agent_id" = ? order by "id" desc limit 1 offset ?)`,
    [line.agentId, line.agentId, keep - 1],
  );
}
