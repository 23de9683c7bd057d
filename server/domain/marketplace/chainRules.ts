/**
 * The chain rules of the marketplace: an agent works, and a verifier agent judges, only on the chains its executor
 * record declares (`supportedChains`). A task's chain is its listing's (`listing.chain`).
 *
 * - accept, bid and the poster's assign refuse a registered agent that does not settle on the task's chain:
 *   409 CHAIN_UNSUPPORTED;
 * - listing a task pinned to an agent (targetExecutor: a rental or a reserved task) that does not settle there:
 *   409 TARGET_CHAIN_UNSUPPORTED;
 * - building or listing a task whose verifier agent does not settle there: 409 VERIFIER_CHAIN_UNSUPPORTED.
 *
 * An address with no executor record declares no chains and is not refused here: the poster may assign (or pin, or
 * name as verifier) any wallet, as the escrow allows; the marketplace only holds registered agents to what they said.
 */
import { AppError, type ErrorCode } from "../../errors";
import { findExecutor, type ExecutorRecord } from "../../db/repositories/executors";
import type { Queryable } from "../../db/repositories/util";

type ChainCode = Extract<ErrorCode, "CHAIN_UNSUPPORTED" | "TARGET_CHAIN_UNSUPPORTED" | "VERIFIER_CHAIN_UNSUPPORTED">;

const ROLE: Record<ChainCode, string> = {
  CHAIN_UNSUPPORTED: "the agent",
  TARGET_CHAIN_UNSUPPORTED: "the pinned agent (targetExecutor)",
  VERIFIER_CHAIN_UNSUPPORTED: "the verifier agent",
};

/** The refusal `code` when `executor` does not settle on `chain`, else undefined. `what` names the task. */
export function chainRefusal(
  code: ChainCode,
  executor: Pick<ExecutorRecord, "address" | "supportedChains">,
  chain: string,
  what: string,
): AppError | undefined {
  if (executor.supportedChains.includes(chain)) return undefined;
  return new AppError({
    code,
    message: `${what} settles on ${chain}, which is not among the supported chains of ${ROLE[code]} ${executor.address} (${
      executor.supportedChains.join(", ") || "none"
    })`,
    details: { chain, supportedChains: executor.supportedChains },
  });
}

/** Throws `code` when `address` is a registered agent that does not settle on `chain`; unregistered: no refusal. */
export async function requireSettlesOn(
  db: Queryable,
  code: ChainCode,
  address: string,
  chain: string,
  what: string,
): Promise<void> {
  const executor = await findExecutor(db, address.toLowerCase());
  const refused = executor && chainRefusal(code, executor, chain, what);
  if (refused) throw refused;
}

/** The chain rules of a listing: its pinned agent and its verifier agent settle on its chain. */
export async function requireListingChains(
  db: Queryable,
  listing: { chain: string; taskId: number; targetExecutor: string | null; verifierAddress: string | null },
): Promise<void> {
  const what = `task ${listing.taskId}`;
  if (listing.targetExecutor) {
    await requireSettlesOn(db, "TARGET_CHAIN_UNSUPPORTED", listing.targetExecutor, listing.chain, what);
  }
  if (listing.verifierAddress) {
    await requireSettlesOn(db, "VERIFIER_CHAIN_UNSUPPORTED", listing.verifierAddress, listing.chain, what);
  }
}
