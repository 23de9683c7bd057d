/**
 * Hosted agents as the owner's API sees them (tables hosted_agents, hosted_agent_skills, hosted_agent_logs,
 * hosted_agent_key_exports; migration 010). The agent host's leases and status reports are server/db/repositories/
 * agentHosts.ts; this file reads agent_hosts only to compare the agents wanted running with the hosts' capacity.
 */
import type { Knex } from "knex";
import { queryRows, toBool, type Queryable } from "./util";
import type { ChainName } from "../../escrow/records";

export type DesiredState = "stopped" | "running" | "paused";

/**
 * The desired states in which an agent that is not deleted may act: its token is honoured and a host runs it. The
 * rule is domain/callers.ts hostedAgentMayAct; the queries here that select such agents use this list.
 */
export const ACTING_DESIRED_STATES = ["running", "paused"] as const satisfies readonly DesiredState[];
export const ACTING_IN_SQL = `(${ACTING_DESIRED_STATES.map((state) => `'${state}'`).join(", ")})`;
export type AgentStatus = "stopped" | "starting" | "running" | "paused" | "crashed" | "deleted";

export interface HostedAgentRow {
  id: string;
  slug: string | null;
  formerSlug: string | null;
  owner: string;
  name: string;
  description: string | null;
  /** The owner's extra capabilities (its skills' come from the catalog). */
  capabilities: string[];
  /** The settlement chains the owner enables, sorted (its executor record's supportedChains). */
  chains: ChainName[];
  minReward: string;
  wallet: string;
  encryptedKey: string | null;
  verifierOptIn: boolean;
  verifierName: string | null;
  desiredState: DesiredState;
  status: AgentStatus;
  restarts: number;
  generation: number;
  lastError: string | null;
  deployTxHash: string | null;
  deployLogIndex: number | null;
  createdAt: number;
  updatedAt: number;
  deletedAt: number | null;
  /** The host running it and until when (ms), and its event stream's resume point: the agent host's columns. */
  leaseHost: string | null;
  leaseUntilMs: number | null;
  lastEventId: string | null;
}

export interface InstalledSkillRow {
  agentId: string;
  skill: string;
  config: Record<string, unknown>;
  encryptedSecrets: string | null;
  installedAt: number;
}

export interface LogRow {
  id: number;
  agentId: string;
  level: string;
  message: string;
  atMs: number;
}

const numberOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** A hosted_agents row as the owner's API and the agent host read it (one mapping for both). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const hostedAgentFromRow = (r: any): HostedAgentRow => ({
  id: r.id,
  slug: r.slug ?? null,
  formerSlug: r.former_slug ?? null,
  owner: r.owner,
  name: r.name,
  description: r.description ?? null,
  capabilities: JSON.parse(r.capabilities),
  chains: JSON.parse(r.chains),
  minReward: String(r.min_reward),
  wallet: r.wallet,
  encryptedKey: r.encrypted_key ?? null,
  verifierOptIn: toBool(r.verifier_opt_in),
  verifierName: r.verifier_name ?? null,
  desiredState: r.desired_state,
  status: r.status,
  restarts: Number(r.restarts),
  generation: Number(r.generation),
  lastError: r.last_error ?? null,
  deployTxHash: r.deploy_tx_hash ?? null,
  deployLogIndex: numberOrNull(r.deploy_log_index),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
  deletedAt: numberOrNull(r.deleted_at),
  leaseHost: r.lease_host ?? null,
  leaseUntilMs: numberOrNull(r.lease_until_ms),
  lastEventId: r.last_event_id ?? null,
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const skillFromRow = (r: any): InstalledSkillRow => ({
  agentId: r.agent_id,
  skill: r.skill,
  config: JSON.parse(r.config),
  encryptedSecrets: r.encrypted_secrets ?? null,
  installedAt: Number(r.installed_at),
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const logFromRow = (r: any): LogRow => ({
  id: Number(r.id),
  agentId: r.agent_id,
  level: r.level,
  message: r.message,
  atMs: Number(r.at_ms),
});

export interface NewHostedAgent {
  id: string;
  slug: string;
  owner: string;
  name: string;
  description: string | null;
  capabilities: string[];
  chains: ChainName[];
  minReward: string;
  wallet: string;
  encryptedKey: string;
  verifierOptIn: boolean;
  verifierName: string | null;
  deployTxHash: string | null;
  deployLogIndex: number | null;
  createdAt: number;
}

export async function insertHostedAgent(db: Queryable, agent: NewHostedAgent): Promise<void> {
  await db("hosted_agents").insert({
    id: agent.id,
    slug: agent.slug,
    owner: agent.owner,
    name: agent.name,
    description: agent.description,
    capabilities: JSON.stringify(agent.capabilities),
    chains: JSON.stringify(agent.chains),
    min_reward: agent.minReward,
    wallet: agent.wallet,
    encrypted_key: agent.encryptedKey,
    verifier_opt_in: agent.verifierOptIn,
    verifier_name: agent.verifierName,
    desired_state: "stopped",
    status: "stopped",
    restarts: 0,
    generation: 0,
    deploy_tx_hash: agent.deployTxHash,
    deploy_log_index: agent.deployLogIndex,
    created_at: agent.createdAt,
    updated_at: agent.createdAt,
  });
}

export async function slugInUse(db: Queryable, slug: string): Promise<boolean> {
  return Boolean(await db("hosted_agents").where({ slug }).first("id"));
}

export async function findHostedAgent(db: Queryable, id: string): Promise<HostedAgentRow | undefined> {
  const row = await db("hosted_agents").where({ id }).first();
  return row ? hostedAgentFromRow(row) : undefined;
}

/** What checking a hosted agent's token needs on every request it makes: no key material, no JSON to parse. */
export interface HostedAgentStanding {
  id: string;
  wallet: string;
  desiredState: DesiredState;
  deletedAt: number | null;
}

export async function findHostedAgentStanding(db: Queryable, id: string): Promise<HostedAgentStanding | undefined> {
  const [row] = await queryRows(
    db,
    `select "id", "wallet", "desired_state", "deleted_at" from "hosted_agents" where "id" = ?`,
    [id],
  );
  return row
    ? { id: row.id, wallet: row.wallet, desiredState: row.desired_state, deletedAt: numberOrNull(row.deleted_at) }
    : undefined;
}

/** The owner's live agent by id or slug (`includeDeleted`: a deleted one too, by id). */
export async function findOwnedAgent(
  db: Queryable,
  owner: string,
  idOrSlug: string,
  includeDeleted = false,
): Promise<HostedAgentRow | undefined> {
  const q = db("hosted_agents")
    .where({ owner: owner.toLowerCase() })
    .where((w) => w.where({ id: idOrSlug }).orWhere({ slug: idOrSlug }));
  if (!includeDeleted) q.whereNull("deleted_at");
  const row = await q.first();
  return row ? hostedAgentFromRow(row) : undefined;
}

/** The owner's live agents, oldest first. */
export async function listOwnedAgents(db: Queryable, owner: string): Promise<HostedAgentRow[]> {
  const rows = await db("hosted_agents")
    .where({ owner: owner.toLowerCase() })
    .whereNull("deleted_at")
    .orderBy([{ column: "created_at" }, { column: "id" }]);
  return rows.map(hostedAgentFromRow);
}

/**
 * Moves an agent from one of `from` desired states to `to` (with `status` when given; `bumpGeneration` for a
 * restart) in one conditional update: false when its desired state was no longer one of `from`.
 */
export async function transitionAgent(
  db: Queryable,
  id: string,
  change: { from: readonly DesiredState[]; to?: DesiredState; status?: AgentStatus; bumpGeneration?: boolean },
  now: number,
): Promise<boolean> {
  const update: Record<string, unknown> = { updated_at: now };
  if (change.to) update.desired_state = change.to;
  if (change.status) update.status = change.status;
  if (change.bumpGeneration) update.generation = db.raw("generation + 1");
  const updated = await db("hosted_agents")
    .where({ id })
    .whereNull("deleted_at")
    .whereIn("desired_state", [...change.from])
    .update(update);
  return updated > 0;
}

/**
 * Sets the owner's settings given (extra capabilities, chains) of a live agent and bumps its generation, so a running
 * worker restarts with them. False when the agent is deleted (or unknown).
 */
export async function updateAgentSettings(
  db: Queryable,
  id: string,
  settings: { capabilities?: string[]; chains?: ChainName[] },
  now: number,
): Promise<boolean> {
  const update: Record<string, unknown> = { updated_at: now, generation: db.raw("generation + 1") };
  if (settings.capabilities) update.capabilities = JSON.stringify(settings.capabilities);
  if (settings.chains) update.chains = JSON.stringify(settings.chains);
  return (await db("hosted_agents").where({ id }).whereNull("deleted_at").update(update)) > 0;
}

export async function bumpGeneration(db: Queryable, id: string, now: number): Promise<void> {
  await db("hosted_agents")
    .where({ id })
    .update({ generation: db.raw("generation + 1"), updated_at: now });
}

/**
 * Marks a stopped agent deleted: its slug is free again (kept as former_slug) and its key is erased. False when it
 * was not stopped (or already deleted).
 */
export async function markAgentDeleted(db: Queryable, id: string, now: number): Promise<boolean> {
  const updated = await db("hosted_agents")
    .where({ id, desired_state: "stopped" })
    .whereNull("deleted_at")
    .update({
      status: "deleted",
      deleted_at: now,
      former_slug: db.raw("slug"),
      slug: null,
      encrypted_key: null,
      updated_at: now,
    });
  return updated > 0;
}

/**
 * Starts a stopped agent (desired running, status starting) only while the agents wanted running or paused are fewer
 * than the capacity of the hosts seen at or after `sinceMs`, and its owner's fewer than `perOwner`: one conditional
 * UPDATE, so concurrent starts never exceed either (SQLite has one writer; on PostgreSQL the starts are serialised by a transaction-scoped
 * advisory lock, as each statement would otherwise count with its own snapshot). False when it did not start: not
 * stopped (or deleted), or no room.
 */
export async function startAgentWithinCapacity(
  db: Knex,
  id: string,
  limits: { sinceMs: number; perOwner: number },
  now: number,
): Promise<boolean> {
  return db.transaction(async (trx) => {
    if (trx.client.config.client === "pg")
      await trx.raw("select pg_advisory_xact_lock(hashtext('hosted_agents.start'))");
    const updated = await trx.raw(
      `update "hosted_agents" set "desired_state" = 'running', "status" = 'starting', "updated_at" = ? ` +
        `where "id" = ? and "deleted_at" is null and "desired_state" = 'stopped' ` +
        `and (select count(*) from "hosted_agents" where "desired_state" in ${ACTING_IN_SQL} ` +
        `and "deleted_at" is null) < (select coalesce(sum("capacity"), 0) from "agent_hosts" where "seen_at_ms" >= ?) ` +
        `and (select count(*) from "hosted_agents" as "mine" where "mine"."owner" = "hosted_agents"."owner" ` +
        `and "mine"."desired_state" in ${ACTING_IN_SQL} and "mine"."deleted_at" is null) < ?`,
      [now, id, limits.sinceMs, limits.perOwner],
    );
    // knex.raw answers { changes } on better-sqlite3 and { rowCount } on pg.
    return Number(updated.rowCount ?? updated.changes ?? 0) > 0;
  });
}

/** Agents the owners want running (desired running or paused), every owner's: what the hosts must hold. */
export async function countAgentsWantedRunning(db: Queryable): Promise<number> {
  const row = (await db("hosted_agents")
    .whereIn("desired_state", ACTING_DESIRED_STATES)
    .whereNull("deleted_at")
    .count({ n: "*" })
    .first()) as { n?: number | string } | undefined;
  return Number(row?.n ?? 0);
}

/** The summed capacity of the agent hosts seen at or after `sinceMs` (alive). */
export async function liveHostCapacity(db: Queryable, sinceMs: number): Promise<number> {
  const row = (await db("agent_hosts").where("seen_at_ms", ">=", sinceMs).sum({ n: "capacity" }).first()) as
    { n?: number | string | null } | undefined;
  return Number(row?.n ?? 0);
}

// --- skills -----------------------------------------------------------------------------------------------------

export async function listInstalledSkills(db: Queryable, agentIds: readonly string[]): Promise<InstalledSkillRow[]> {
  if (agentIds.length === 0) return [];
  const rows = await db("hosted_agent_skills")
    .whereIn("agent_id", [...agentIds])
    .orderBy([{ column: "installed_at" }, { column: "skill" }]);
  return rows.map(skillFromRow);
}

/** Installs a skill; false when the agent has it already (primary key). */
export async function insertInstalledSkill(db: Queryable, skill: InstalledSkillRow): Promise<boolean> {
  const inserted = await db("hosted_agent_skills")
    .insert({
      agent_id: skill.agentId,
      skill: skill.skill,
      config: JSON.stringify(skill.config),
      encrypted_secrets: skill.encryptedSecrets,
      installed_at: skill.installedAt,
    })
    .onConflict(["agent_id", "skill"])
    .ignore()
    .returning("skill");
  return inserted.length > 0;
}

/** Uninstalls a skill; false when it was not installed. */
export async function deleteInstalledSkill(db: Queryable, agentId: string, skill: string): Promise<boolean> {
  return (await db("hosted_agent_skills").where({ agent_id: agentId, skill }).delete()) > 0;
}

// --- logs -------------------------------------------------------------------------------------------------------

/** Lines after `afterId`, oldest first, at most `limit`. */
export async function logsAfter(db: Queryable, agentId: string, afterId: number, limit: number): Promise<LogRow[]> {
  const rows = await db("hosted_agent_logs")
    .where({ agent_id: agentId })
    .where("id", ">", afterId)
    .orderBy("id", "asc")
    .limit(limit);
  return rows.map(logFromRow);
}

/** The last `count` lines of each agent, oldest first. */
export async function recentLogs(db: Queryable, agentId: string, count: number): Promise<LogRow[]> {
  const rows = await db("hosted_agent_logs").where({ agent_id: agentId }).orderBy("id", "desc").limit(count);
  return rows.map(logFromRow).reverse();
}

// --- earnings and key exports -------------------------------------------------------------------------------------

/** What the escrow paid each of `wallets` as worker (the projection's payouts, net of fee): raw units, per wallet. */
export async function payoutsTo(db: Queryable, wallets: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(wallets.map((w) => [w.toLowerCase(), []]));
  if (wallets.length === 0) return out;
  const rows = (await db("tasks")
    .whereIn(
      "worker",
      wallets.map((w) => w.toLowerCase()),
    )
    .whereNotNull("payout")
    .select("worker", "payout")) as { worker: string; payout: string }[];
  for (const r of rows) out.get(String(r.worker).toLowerCase())?.push(String(r.payout));
  return out;
}

/** Records one export of an agent's key (before the key is answered). */
export async function recordKeyExport(
  db: Queryable,
  entry: { agentId: string; owner: string; ip: string | null; atMs: number },
): Promise<void> {
  await db("hosted_agent_key_exports").insert({
    agent_id: entry.agentId,
    owner: entry.owner,
    ip: entry.ip,
    at_ms: entry.atMs,
  });
}

export async function countKeyExports(db: Queryable, agentId: string): Promise<number> {
  const row = (await db("hosted_agent_key_exports").where({ agent_id: agentId }).count({ n: "*" }).first()) as
    { n?: number | string } | undefined;
  return Number(row?.n ?? 0);
}

/** The ids among `ids` of agents that exist, are not deleted and are wanted running or paused (their tokens act). */
export async function standingAgentIds(db: Queryable, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db("hosted_agents")
    .whereIn("id", ids)
    .whereNull("deleted_at")
    .whereIn("desired_state", ["running", "paused"])
    .select("id");
  return rows.map((r: { id: string }) => String(r.id));
}

/** The agents `owner` wants running (desired running or paused). */
export async function countOwnerAgentsWantedRunning(db: Queryable, owner: string): Promise<number> {
  const row = (await db("hosted_agents")
    .where({ owner: owner.toLowerCase() })
    .whereIn("desired_state", ["running", "paused"])
    .whereNull("deleted_at")
    .count({ n: "*" })
    .first()) as { n?: number | string } | undefined;
  return Number(row?.n ?? 0);
}
