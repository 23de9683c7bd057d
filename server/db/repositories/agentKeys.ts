/**
 * Brief keys wrapped per agent (table `task_agent_keys`): the key the agent that took a private task receives,
 * copied from the poster's wrappedKeys (`poster`) or re-wrapped from the custody key (`custody`). Key material: only
 * ever answered to that agent.
 */
import type { ChainName } from "../../escrow/records";
import type { Queryable } from "./util";

export type AgentKeySource = "poster" | "custody";

export interface AgentKeyRecord {
  /** The task's settlement chain. */
  chain: ChainName;
  taskId: number;
  agent: string;
  /** Hex of the 126-byte ECIES layout (server/domain/briefs.ts), without 0x. */
  wrappedKey: string;
  source: AgentKeySource;
  createdAt: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const fromRow = (r: any): AgentKeyRecord => ({
  chain: r.chain as ChainName,
  taskId: Number(r.task_id),
  agent: r.agent,
  wrappedKey: r.wrapped_key,
  source: r.source as AgentKeySource,
  createdAt: Number(r.created_at),
});

export async function findAgentKey(
  db: Queryable,
  taskId: number,
  agent: string,
  chain: ChainName,
): Promise<AgentKeyRecord | undefined> {
  const row = await db("task_agent_keys").where({ chain, task_id: taskId, agent: agent.toLowerCase() }).first();
  return row ? fromRow(row) : undefined;
}

/** Stores the agent's key, replacing an earlier one of the same agent and task. */
export async function saveAgentKey(db: Queryable, key: AgentKeyRecord): Promise<void> {
  await db("task_agent_keys")
    .insert({
      chain: key.chain,
      task_id: key.taskId,
      agent: key.agent.toLowerCase(),
      wrapped_key: key.wrappedKey,
      source: key.source,
      created_at: key.createdAt,
    })
    .onConflict(["chain", "task_id", "agent"])
    .merge(["wrapped_key", "source", "created_at"]);
}

export async function deleteAgentKey(db: Queryable, taskId: number, agent: string, chain: ChainName): Promise<void> {
  await db("task_agent_keys").where({ chain, task_id: taskId, agent: agent.toLowerCase() }).delete();
}
