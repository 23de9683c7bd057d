/**
 * POST /a2a/tasks/{hash}/keys: the poster of a private task wraps its brief key to more agents after listing (the
 * answer to "a private listing nobody can read": docs/marketplace.md, "Private briefs"). The listing's first-indexed
 * terms do not change; each key is stored as that agent's key (task_agent_keys, source poster), which accept hands
 * out first (marketplace/keys.ts). Refusals, in order: NOT_POSTER, PUBLIC_TASK_HAS_KEYS, NOT_OPEN, NOT_REGISTERED
 * (every agent named must be a registered executor), INVALID_DATA (a blob that is not a 126-byte version-1 wrapped
 * key), KEY_ALREADY_WRAPPED (an agent already has another key: the same key again is accepted).
 */
import type { Deps } from "../deps";
import { fail } from "../../errors";
import { findAgentKey, saveAgentKey } from "../../db/repositories/agentKeys";
import { findExecutor } from "../../db/repositories/executors";
import { WRAPPED_KEY_BYTES, WRAP_VERSION } from "../briefs";
import { loadTaskContext } from "./taskContext";

const bare = (hex: string) => hex.replace(/^0x/i, "").toLowerCase();

export interface AddedKeys {
  taskHash: string;
  onChainTaskId: number;
  /** The agents that can now read the brief through a key of the poster's (listed ones and added ones). */
  agents: string[];
}

export async function addWrappedKeys(
  deps: Deps,
  wallet: string,
  rawHash: string,
  wrappedKeys: Record<string, string>,
): Promise<AddedKeys> {
  const ctx = await loadTaskContext(deps, rawHash);
  const who = wallet.toLowerCase();
  if (who !== ctx.poster) fail("NOT_POSTER", `only the poster of task ${ctx.taskId} (${ctx.poster}) may add keys`);
  if (ctx.listing.privacy === "public") {
    fail("PUBLIC_TASK_HAS_KEYS", "wrappedKeys: a public task carries no key material (its brief is plaintext)");
  }
  if (ctx.status !== "open") {
    fail("NOT_OPEN", `task ${ctx.taskId} is not open (${ctx.status}): keys for new agents are of no use now`);
  }
  const entries = Object.entries(wrappedKeys).map(([agent, key]) => [agent.toLowerCase(), bare(key)] as const);
  if (entries.length === 0) fail("VALIDATION_ERROR", "wrappedKeys: at least one agent's wrapped key is required");
  for (const [agent, key] of entries) {
    if (!(await findExecutor(deps.db, agent))) {
      fail(
        "NOT_REGISTERED",
        `wrappedKeys: ${agent} is not a registered agent (its public key comes from /a2a/executors)`,
      );
    }
    const bytes = Buffer.from(key, "hex");
    if (key.length !== WRAPPED_KEY_BYTES * 2 || bytes[0] !== WRAP_VERSION) {
      fail(
        "INVALID_DATA",
        `wrappedKeys.${agent}: a wrapped key is ${WRAPPED_KEY_BYTES} bytes (${WRAPPED_KEY_BYTES * 2} hex) starting with version ${WRAP_VERSION}`,
      );
    }
    const listed = ctx.listing.wrappedKeys?.[agent];
    const stored = await findAgentKey(deps.db, ctx.taskId, agent, ctx.chain);
    const existing = stored ? bare(stored.wrappedKey) : listed ? bare(listed) : undefined;
    if (existing !== undefined && existing !== key) {
      fail("KEY_ALREADY_WRAPPED", `wrappedKeys.${agent}: this agent already has a key for task ${ctx.taskId}`);
    }
  }
  const now = deps.clock.wallNow();
  for (const [agent, key] of entries) {
    await saveAgentKey(deps.db, {
      chain: ctx.chain,
      taskId: ctx.taskId,
      agent,
      wrappedKey: key,
      source: "poster",
      createdAt: now,
    });
  }
  const agents = new Set([...Object.keys(ctx.listing.wrappedKeys ?? {}), ...entries.map(([a]) => a)]);
  return { taskHash: ctx.taskHash, onChainTaskId: ctx.taskId, agents: [...agents].sort() };
}
