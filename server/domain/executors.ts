/**
 * Agents (executors): registration and update by the agent's own API key, liveness, and the public listing.
 *
 * - POST /a2a/executors registers or re-registers the key's wallet. The body is the whole record (replacement, not a
 *   patch): omitted optional fields take their defaults (no capabilities, the posting chain, minReward 0, not a
 *   verifier). `registeredAt` survives updates.
 * - Times are chain time (deps.clock.chainNow()), like every deadline of the marketplace.
 * - "Running": seen within RUNNING_WINDOW_SECONDS (10 minutes). An executor is seen when it registers or updates,
 *   sends a heartbeat (POST /a2a/executors/heartbeat), or performs a marketplace operation (the marketplace calls
 *   `markExecutorSeen`).
 * - The role=verifier listing (spec: "only hosted, running agents whose owner opted in to verifying; adds name") shows
 *   registered executors that are hosted agents with status running (the agent host's report) and the owner's
 *   verifier opt-in, named by the owner's verifier name. A self-registered executor's own opt-in does not list it.
 * - The listing orders by reputation (the worker score of server/domain/reputation.ts), then address.
 */
import type { Deps } from "./deps";
import { fail } from "../errors";
import type { ExecutorBody, ExecutorsQuery, ChainName } from "./schemas/executors";
import {
  findExecutor,
  listExecutors,
  touchExecutor,
  upsertExecutor,
  type ExecutorRecord,
} from "../db/repositories/executors";
import type { Queryable } from "../db/repositories/util";
import { isValidAgentPublicKey } from "./briefs";
import { reputationOf, reputationScore, workerScoreSubquery, type Reputation } from "./reputation";

/** An executor seen within this many seconds is running. */
export const RUNNING_WINDOW_SECONDS = 600;

export interface OwnExecutorView {
  address: string;
  publicKey: string;
  capabilities: string[];
  supportedChains: ChainName[];
  minReward: string;
  verifier: { optIn: boolean; name: string | null };
  reputation: number;
  registeredAt: number;
  updatedAt: number;
  lastSeenAt: number;
  running: boolean;
}

export interface PublicExecutorView {
  address: string;
  publicKey: string;
  capabilities: string[];
  reputation: number;
  supportedChains: ChainName[];
  name?: string;
}

export const isRunning = (executor: Pick<ExecutorRecord, "lastSeenAt">, now: number) =>
  executor.lastSeenAt >= now - RUNNING_WINDOW_SECONDS;

function ownView(executor: ExecutorRecord, reputation: number, now: number): OwnExecutorView {
  return {
    address: executor.address,
    publicKey: executor.publicKey,
    capabilities: executor.capabilities,
    supportedChains: executor.supportedChains as ChainName[],
    minReward: executor.minReward,
    verifier: { optIn: executor.verifierOptIn, name: executor.name },
    reputation,
    registeredAt: executor.registeredAt,
    updatedAt: executor.updatedAt,
    lastSeenAt: executor.lastSeenAt,
    running: isRunning(executor, now),
  };
}

/** POST /a2a/executors: creates or replaces the record of `wallet` (the key's wallet). */
export async function registerExecutor(
  deps: Deps,
  wallet: string,
  body: ExecutorBody,
): Promise<OwnExecutorView & { created: boolean }> {
  if (body.publicKey === undefined)
    return fail("NO_PUBKEY", "publicKey is required: agents receive brief keys wrapped to it");
  if (!isValidAgentPublicKey(body.publicKey)) {
    fail("VALIDATION_ERROR", "body.publicKey: is not an uncompressed point on the secp256k1 curve");
  }
  const now = await deps.clock.chainNow();
  const address = wallet.toLowerCase();
  const record: ExecutorRecord = {
    address,
    publicKey: body.publicKey,
    capabilities: body.capabilities,
    supportedChains: body.supportedChains ?? [deps.config.api.postingChain],
    minReward: body.minReward,
    verifierOptIn: body.verifier.optIn,
    name: body.verifier.name ?? null,
    registeredAt: now,
    updatedAt: now,
    lastSeenAt: now,
  };
  const { created, stored } = await deps.db.transaction(async (trx) => {
    const created = await upsertExecutor(trx, record);
    return { created, stored: (await findExecutor(trx, address))! };
  });
  return { ...ownView(stored, await reputationScore(deps.db, address, now), now), created };
}

/** The registered executor `wallet`, or NOT_REGISTERED (404 here: the resource is absent). */
async function registered(db: Queryable, wallet: string): Promise<ExecutorRecord> {
  const executor = await findExecutor(db, wallet);
  if (!executor) {
    return fail(
      "NOT_REGISTERED",
      `wallet ${wallet.toLowerCase()} is not a registered executor: POST /api/v1/a2a/executors`,
      {
        status: 404,
      },
    );
  }
  return executor;
}

/** GET /a2a/executors/me. */
export async function readOwnExecutor(deps: Deps, wallet: string): Promise<OwnExecutorView> {
  const executor = await registered(deps.db, wallet);
  const now = await deps.clock.chainNow();
  return ownView(executor, await reputationScore(deps.db, executor.address, now), now);
}

/** POST /a2a/executors/heartbeat: marks the caller's executor as seen now. */
export async function executorHeartbeat(
  deps: Deps,
  wallet: string,
): Promise<{ address: string; lastSeenAt: number; running: true }> {
  const now = await deps.clock.chainNow();
  await touchExecutor(deps.db, wallet, now);
  const executor = await registered(deps.db, wallet);
  return { address: executor.address, lastSeenAt: executor.lastSeenAt, running: true };
}

/**
 * Marks `wallet` as seen at `now` when it is a registered executor (no-op otherwise). For the marketplace
 * operations (bid, accept, submit, verify, ...): an agent working through the API counts as running.
 */
export async function markExecutorSeen(db: Queryable, wallet: string, now: number): Promise<void> {
  await touchExecutor(db, wallet, now);
}

/** GET /a2a/executors: public listing with the spec's filters. */
export async function listPublicExecutors(
  deps: Deps,
  query: ExecutorsQuery,
): Promise<{ executors: PublicExecutorView[]; total: number }> {
  const now = await deps.clock.chainNow();
  const verifiers = query.role === "verifier";
  const { executors, total } = await listExecutors(
    deps.db,
    {
      capabilities: query.capabilities,
      chain: query.chain,
      hostedVerifiers: verifiers,
      limit: query.limit,
      offset: query.offset,
    },
    workerScoreSubquery(deps.db, now),
  );
  return {
    executors: executors.map((e) => ({
      address: e.address,
      publicKey: e.publicKey,
      capabilities: e.capabilities,
      reputation: e.score,
      supportedChains: e.supportedChains as ChainName[],
      ...(verifiers && e.name !== null ? { name: e.name } : {}),
    })),
    total,
  };
}

/** A registered agent with its reputation (its public card); NOT_FOUND when the address is not registered. */
export async function readExecutorProfile(
  deps: Deps,
  address: string,
): Promise<{ executor: ExecutorRecord; reputation: Reputation }> {
  const executor = await findExecutor(deps.db, address);
  if (!executor) return fail("NOT_FOUND", `no registered agent has address ${address.toLowerCase()}`);
  return { executor, reputation: await reputationOf(deps.db, executor.address, await deps.clock.chainNow()) };
}
