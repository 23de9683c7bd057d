/**
 * Building the unsigned createTask transactions (POST /api/v1/tasks and /api/v1/tasks/batch): the body rules, the
 * settlement token, batch support and the task-hash reservations. The service never signs: it returns calldata for
 * the escrow proxy of the chain the body names (`chain`, the posting chain when absent) that the caller's wallet
 * checks, signs and sends there after approving the reward.
 *
 * Hash rules: building reserves each task hash for the caller for `config.api.hashReservationSeconds` (24 hours),
 * whichever chain it is built for. A hash already on the market (listed, or funded on-chain, on any chain) is
 * TASK_HASH_IN_USE; a hash another poster holds an
 * unexpired reservation on is TASK_HASH_TAKEN; the same poster building again refreshes its reservation. A batch is
 * all or nothing: its claims are taken in one transaction that is rolled back when any task is refused.
 */
import type { Knex } from "knex";
import { ZeroAddress } from "ethers";
import { checkPostingTerms, type PostingTerms } from "./schemas/postingTerms";
import type { Deps } from "./deps";
import type { ChainGateway } from "../chain/gateway";
import {
  TX_GAS_CAP,
  createTasksGasFallback,
  encodeCreateTask,
  encodeCreateTasks,
  withMargin,
  type TaskCall,
} from "../chain/escrowCalls";
import { encodeApprove } from "../chain/erc20Calls";
import { claimHash, claimUnusedHash } from "../db/repositories/hashReservations";
import { taskIdUsingHash } from "../db/repositories/tasks";
import { AppError, fail, type ErrorCode, type ItemError, fieldName } from "../errors";
import { requireSettlesOn } from "./marketplace/chainRules";
import { chainGateway } from "./chainGateways";
import {
  TaskBatchBuild,
  TaskBatchBuildBody,
  TaskBuild,
  TaskBuildBody,
  TaskBuildTerms,
  UnsignedTx,
  taskBuildTermsSchema,
} from "./schemas/posting";

/* ------------------------------------------------------------------------------------------------------------ */
/*                                                    Rules                                                     */
/* ------------------------------------------------------------------------------------------------------------ */

interface Problem {
  code: ErrorCode;
  message: string;
  status?: number;
}

/** Gas estimation gives up after this long and the size-based fallback is used. */
const ESTIMATE_TIMEOUT_MS = 10_000;

/** The settlement token of `chain`; `token` when given must be it (any case). */
function settlementToken(chain: ChainGateway, token: string | undefined): string {
  const settlement = chain.book.token.address;
  if (token !== undefined && token.toLowerCase() !== settlement.toLowerCase()) {
    fail(
      "TOKEN_NOT_SETTLEMENT",
      `token must be the settlement token of chain ${chain.name}, ${settlement} (${chain.book.token.symbol}), got ${token}`,
      { details: { chain: chain.name, token: settlement } },
    );
  }
  return settlement;
}

/** Cross-field rules of one task's terms (the shared posting terms, plus a verifier that is a real address). */
function termsProblem(terms: PostingTerms, poster: string): Problem | undefined {
  if (terms.verifierAddress === ZeroAddress) {
    return { code: "INVALID_VERIFIER", message: "verifierAddress must not be the zero address" };
  }
  return checkPostingTerms(terms, poster);
}

const toCall = (terms: TaskBuildTerms): TaskCall => ({
  taskHash: terms.taskHash,
  amount: BigInt(terms.amount),
  locationZone: terms.locationZone,
  duration: terms.duration,
  verifierAgent: terms.verifierAddress,
});

/**
 * TASK_HASH_IN_USE when the hash is already on the market, on any chain: listed (the listings table) or funded
 * on-chain with it (the indexers' tasks table), whatever the task's status since. A hash is unique across chains.
 */
async function hashInUse(db: Knex, taskHash: string): Promise<Problem | undefined> {
  const used = await taskIdUsingHash(db, taskHash);
  if (used === undefined) return undefined;
  return {
    code: "TASK_HASH_IN_USE",
    message: `taskHash ${taskHash} is already on the market (task ${used.taskId} on ${used.chain}): upload a new brief`,
  };
}

/**
 * Claims `taskHash` for `poster` (atomic), or TASK_HASH_TAKEN while another poster's reservation runs. Only writes
 * until the claim is refused, so a transaction of claims starts with a write (SQLite then waits for the write lock
 * instead of failing on a stale read snapshot).
 */
async function claim(
  db: Knex | Knex.Transaction,
  taskHash: string,
  poster: string,
  now: number,
  ttlSeconds: number,
): Promise<Problem | undefined> {
  const result = await claimHash(db, { taskHash, poster, now, ttlSeconds });
  if (result.claimed) return undefined;
  const until = result.holder ? ` until ${new Date(result.holder.expiresAt * 1000).toISOString()}` : "";
  return { code: "TASK_HASH_TAKEN", message: `taskHash ${taskHash} is reserved by another poster${until}` };
}

/**
 * One task's hash rules: TASK_HASH_IN_USE when it is on the market, else the claim (TASK_HASH_TAKEN while another
 * poster holds it). A build that may claim does so in one statement (claimUnusedHash, which checks the market first);
 * when that claims nothing, the check and the claim run again one by one to tell which refusal it is, so a refused
 * build answers as the separate statements would.
 */
async function reserve(
  db: Knex,
  taskHash: string,
  poster: string,
  now: number,
  ttlSeconds: number,
): Promise<Problem | undefined> {
  if (await claimUnusedHash(db, { taskHash, poster, now, ttlSeconds })) return undefined;
  return (await hashInUse(db, taskHash)) ?? (await claim(db, taskHash, poster, now, ttlSeconds));
}

/**
 * The unsigned `approve(escrow, total)` on the settlement token that lets the escrow pull exactly the build's reward,
 * or null when the poster's allowance already covers it. The allowance is the one at the chain head read during this
 * build (kept per poster per head block, server/chain/allowances.ts), so the first build after a block that spent or
 * lowered it answers the approve. An unreadable allowance still answers the approve: sending it sets the allowance to
 * the same exact amount, so it can never approve more than the build needs.
 */
async function approvalFor(
  chain: ChainGateway,
  token: string,
  poster: string,
  total: bigint,
): Promise<UnsignedTx | null> {
  const allowance = await chain.escrowAllowance(poster).catch(() => undefined);
  if (allowance !== undefined && allowance >= total) return null;
  return { to: token, data: encodeApprove(chain.book.escrow.proxy, total), from: poster, value: "0" };
}

/* ------------------------------------------------------------------------------------------------------------ */
/*                                                   Builds                                                     */
/* ------------------------------------------------------------------------------------------------------------ */

/**
 * The unsigned createTask (or createTaskWithVerifier) transaction of one task, after every rule; reserves the hash.
 *
 * @example await buildTask(deps, "0x7099...", { taskHash, amount: "5000000", locationZone: "global", duration: 86400 })
 */
export async function buildTask(deps: Deps, poster: string, body: TaskBuildBody): Promise<TaskBuild> {
  const chain = chainGateway(deps, body.chain);
  const token = settlementToken(chain, body.token);
  const problem = termsProblem(body, poster);
  if (problem) throw new AppError(problem);
  const { hashReservationSeconds } = deps.config.api;
  if (body.verifierAddress) {
    await requireSettlesOn(deps.db, "VERIFIER_CHAIN_UNSUPPORTED", body.verifierAddress, chain.name, "the task");
  }
  const refused = await reserve(deps.db, body.taskHash, poster, deps.clock.wallNow(), hashReservationSeconds);
  if (refused) throw new AppError(refused);
  const call = toCall(body);
  return {
    unsignedTx: { to: chain.book.escrow.proxy, data: encodeCreateTask(token, call), from: poster, value: "0" },
    approveTx: await approvalFor(chain, token, poster, call.amount),
    chain: chain.name,
    chainId: chain.book.chainId,
  };
}

/** Thrown inside the reservation transaction to roll it back. */
class RollBack extends Error {}

/**
 * The unsigned createTasks transaction of a batch, all or nothing: every task is checked (schema, cross-field
 * rules, one per hash, reservations); any refusal answers INVALID_TASKS listing each refused task by index and keeps
 * no claim taken by this request. A batch whose size-based gas exceeds the per-transaction cap is BATCH_TOO_LARGE.
 * The gas limit is the caller's estimate plus one fifth, or the size-based fallback plus one fifth when estimating
 * fails (the caller has usually not approved the escrow yet), at most the cap.
 */
export async function buildTaskBatch(deps: Deps, poster: string, body: TaskBatchBuildBody): Promise<TaskBatchBuild> {
  const chain = chainGateway(deps, body.chain);
  const token = settlementToken(chain, body.token);
  const maxBatch = await chain.maxBatch();
  if (maxBatch === null) {
    fail(
      "BATCH_UNSUPPORTED",
      `the escrow on chain ${chain.name} has no batch create (createTasks): post the tasks one by one`,
    );
  }
  if (body.tasks.length > maxBatch) {
    fail("BATCH_TOO_LARGE", `tasks: the escrow takes at most ${maxBatch} tasks per batch, got ${body.tasks.length}`);
  }

  const errors: ItemError[] = [];
  const refuse = (index: number, problem: Problem) =>
    errors.push({ index, code: problem.code, message: `task ${index + 1}: ${problem.message}` });

  // Each task: its schema, its cross-field rules, and one task per hash.
  const accepted: { index: number; terms: TaskBuildTerms }[] = [];
  const firstIndexOfHash = new Map<string, number>();
  body.tasks.forEach((raw, index) => {
    const parsed = taskBuildTermsSchema.safeParse(raw);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      const code = (first as { params?: { errorCode?: ErrorCode } }).params?.errorCode ?? "VALIDATION_ERROR";
      const field = first.path.length ? fieldName(String(first.path[0]), first.path.slice(1)) : "task";
      refuse(index, { code, message: `${field}: ${first.message}` });
      return;
    }
    const problem = termsProblem(parsed.data, poster);
    if (problem) return refuse(index, problem);
    const earlier = firstIndexOfHash.get(parsed.data.taskHash);
    if (earlier !== undefined) {
      return refuse(index, { code: "TASK_HASH_IN_USE", message: `taskHash repeats task ${earlier + 1} of this batch` });
    }
    firstIndexOfHash.set(parsed.data.taskHash, index);
    accepted.push({ index, terms: parsed.data });
  });

  // A batch too heavy for one transaction is refused before anything is reserved.
  if (errors.length === 0) {
    const needed = createTasksGasFallback(accepted.map(({ terms }) => toCall(terms)));
    if (needed > TX_GAS_CAP) {
      fail(
        "BATCH_TOO_LARGE",
        `tasks: this batch needs about ${needed} gas, above the per-transaction cap of ${TX_GAS_CAP}: split it or shorten locationZone`,
      );
    }
  }

  // Hashes already on the market.
  const free: typeof accepted = [];
  for (const item of accepted) {
    const inUse = await hashInUse(deps.db, item.terms.taskHash);
    if (inUse) refuse(item.index, inUse);
    else free.push(item);
  }

  // The claims, in one transaction kept only when no task is refused (claims are still tried when some task already
  // is, so that every refusal is reported). Claims go in hash order, so two overlapping batches lock rows in the same
  // order and cannot deadlock on PostgreSQL.
  const { hashReservationSeconds } = deps.config.api;
  const now = deps.clock.wallNow();
  const byHash = free.sort((a, b) => (a.terms.taskHash < b.terms.taskHash ? -1 : 1));
  if (byHash.length > 0) {
    try {
      await deps.db.transaction(async (trx) => {
        for (const { index, terms } of byHash) {
          const taken = await claim(trx, terms.taskHash, poster, now, hashReservationSeconds);
          if (taken) refuse(index, taken);
        }
        if (errors.length > 0) throw new RollBack();
      });
    } catch (error) {
      if (!(error instanceof RollBack)) throw error;
    }
  }
  if (errors.length > 0) {
    errors.sort((a, b) => a.index - b.index);
    fail(
      "INVALID_TASKS",
      `${errors.length} of ${body.tasks.length} tasks refused; nothing was reserved: ${errors[0].message}`,
      {
        details: { errors },
      },
    );
  }

  const calls = accepted.map(({ terms }) => toCall(terms));
  const data = encodeCreateTasks(token, calls);
  const to = chain.book.escrow.proxy;
  const gas = withMargin((await estimate(chain, { from: poster, to, data })) ?? createTasksGasFallback(calls));
  return {
    unsignedTx: { to, data, from: poster, value: "0", gas: gas.toString() },
    approveTx: await approvalFor(
      chain,
      token,
      poster,
      calls.reduce((sum, c) => sum + c.amount, 0n),
    ),
    chain: chain.name,
    chainId: chain.book.chainId,
    taskHashes: calls.map((c) => c.taskHash),
  };
}

/** The node's gas estimate of a call from the caller, or undefined when it reverts, fails or takes too long. */
export async function estimate(
  chain: ChainGateway,
  tx: { from: string; to: string; data: string },
): Promise<bigint | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ESTIMATE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([chain.estimateGas(tx).catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
