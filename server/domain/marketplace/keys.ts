/**
 * The brief key of a private task, for the agent that takes it. An agent only ever gets its own wrapped key:
 *
 * 1. the key stored for it already (a retried accept answers the same key);
 * 2. the poster's: the listing's `wrappedKeys[agent]`, wrapped by the poster to the agent's public key;
 * 3. custody: the poster wrapped the key to the service's custody key too (`custodyWrappedKey`), and the service is
 *    configured with that key (CUSTODY_PRIVATE_KEY): the key is unwrapped and wrapped again to the agent's public key
 *    (server/domain/briefs.ts), the clear key living only in memory for that moment.
 *
 * Neither possible: NEEDS_WRAP (403). A custody blob that does not open, or a public key that cannot be wrapped to:
 * REWRAP_FAILED (503). Public tasks carry no key material.
 */
import type { Deps } from "../deps";
import { fail } from "../../errors";
import { findAgentKey, type AgentKeySource } from "../../db/repositories/agentKeys";
import { BriefCryptoError, unwrapBriefKey, wrapBriefKey } from "../briefs";
import type { TaskContext } from "./taskContext";

export interface AgentBriefKey {
  /** Hex of the 126-byte ECIES layout of server/domain/briefs.ts, without 0x. */
  wrappedKey: string;
  source: AgentKeySource;
  /** Whether it was already stored for the agent (nothing to write). */
  stored: boolean;
}

const bare = (hex: string) => hex.replace(/^0x/i, "").toLowerCase();

/**
 * Re-wraps the custody-wrapped brief key to `agentPublicKey` with the custody private key. Throws REWRAP_FAILED on
 * any crypto failure (a corrupted blob, a key that is not the custody key's pair, an unusable public key).
 */
export function rewrapFromCustody(
  custodyWrappedKey: string,
  custodyPrivateKey: string,
  agentPublicKey: string,
): string {
  try {
    const briefKey = unwrapBriefKey(custodyWrappedKey, custodyPrivateKey);
    try {
      return wrapBriefKey(briefKey, agentPublicKey);
    } finally {
      briefKey.fill(0);
    }
  } catch (error) {
    const reason = error instanceof BriefCryptoError ? error.message : String((error as Error)?.message ?? error);
    return fail("REWRAP_FAILED", `the brief key could not be re-wrapped from custody: ${reason}`, { cause: error });
  }
}

/**
 * The wrapped brief key of `agent` for a private task (undefined for a public one), by the order above. Writes
 * nothing: the caller stores a new key with the assignment.
 */
export async function agentBriefKey(
  deps: Deps,
  ctx: TaskContext,
  agent: { address: string; publicKey: string },
): Promise<AgentBriefKey | undefined> {
  const { listing } = ctx;
  if (listing.privacy === "public") return undefined;
  const address = agent.address.toLowerCase();
  const stored = await findAgentKey(deps.db, ctx.taskId, address, ctx.chain);
  if (stored) return { wrappedKey: bare(stored.wrappedKey), source: stored.source, stored: true };
  const posterWrapped = listing.wrappedKeys?.[address];
  if (posterWrapped) return { wrappedKey: bare(posterWrapped), source: "poster", stored: false };
  const custodyKey = deps.config.marketplace.custodyPrivateKey;
  if (listing.custodyWrappedKey && custodyKey) {
    return {
      wrappedKey: rewrapFromCustody(listing.custodyWrappedKey, custodyKey, agent.publicKey),
      source: "custody",
      stored: false,
    };
  }
  return fail(
    "NEEDS_WRAP",
    listing.custodyWrappedKey
      ? `the brief key of task ${ctx.taskId} is not wrapped to ${address}, and this service holds no custody key to re-wrap it`
      : `the brief key of task ${ctx.taskId} is not wrapped to ${address} and the poster gave no custody copy; ask the poster`,
  );
}
