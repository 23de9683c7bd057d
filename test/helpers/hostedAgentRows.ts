/**
 * Hosted agents written straight into the database (the owner API has its own tests): a row with the wallet key
 * sealed under the configuration's key-encryption key, and skill installs. For the agent host's tests and bench.
 */
import crypto from "node:crypto";
import type { Knex } from "knex";
import { sealSecret, secretLabel } from "../../server/domain/agents/secrets";

export interface InsertedAgent {
  id: string;
  wallet: string;
}

export async function insertHostedAgent(
  db: Knex,
  kek: Buffer,
  agent: {
    privateKey: string;
    wallet: string;
    owner?: string;
    name?: string;
    capabilities?: string[];
    /** The owner's chains (default: the column's, the posting chain of the migration). */
    chains?: string[];
    minReward?: string;
    desiredState?: "stopped" | "running" | "paused";
    skills?: { skill: string; config?: Record<string, unknown>; secrets?: Record<string, string> }[];
    createdAt?: number;
  },
): Promise<InsertedAgent> {
  const id = `agt_${crypto.randomBytes(12).toString("hex")}`;
  const now = agent.createdAt ?? Math.floor(Date.now() / 1000);
  const desired = agent.desiredState ?? "running";
  await db("hosted_agents").insert({
    id,
    slug: id.slice(4, 20),
    owner: (agent.owner ?? `0x${"0a".repeat(20)}`).toLowerCase(),
    name: agent.name ?? "test agent",
    capabilities: JSON.stringify(agent.capabilities ?? []),
    ...(agent.chains ? { chains: JSON.stringify(agent.chains) } : {}),
    min_reward: agent.minReward ?? "0",
    wallet: agent.wallet.toLowerCase(),
    encrypted_key: sealSecret(kek, agent.privateKey, secretLabel.walletKey(id)),
    verifier_opt_in: false,
    desired_state: desired,
    status: desired === "stopped" ? "stopped" : "starting",
    restarts: 0,
    generation: 0,
    created_at: now,
    updated_at: now,
  });
  for (const s of agent.skills ?? []) {
    await db("hosted_agent_skills").insert({
      agent_id: id,
      skill: s.skill,
      config: JSON.stringify(s.config ?? {}),
      encrypted_secrets: s.secrets
        ? sealSecret(kek, JSON.stringify(s.secrets), secretLabel.skillSecrets(id, s.skill))
        : null,
      installed_at: now,
    });
  }
  return { id, wallet: agent.wallet.toLowerCase() };
}

/** The agent's row as the owner would read it. */
export async function hostedAgentRow(db: Knex, id: string) {
  const row = await db("hosted_agents").where({ id }).first();
  return {
    status: row.status as string,
    desiredState: row.desired_state as string,
    restarts: Number(row.restarts),
    lastError: (row.last_error ?? null) as string | null,
    leaseHost: (row.lease_host ?? null) as string | null,
    leaseUntilMs: row.lease_until_ms === null ? null : Number(row.lease_until_ms),
    lastEventId: (row.last_event_id ?? null) as string | null,
  };
}

export async function agentLog(db: Knex, id: string): Promise<{ level: string; message: string }[]> {
  const rows = await db("hosted_agent_logs").where({ agent_id: id }).orderBy("id", "asc");
  return rows.map((r) => ({ level: r.level, message: r.message }));
}
