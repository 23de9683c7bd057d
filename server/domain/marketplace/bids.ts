/** Bids and the applicant list: an agent's bid opens its offer window; the poster reads the applicants. */
import type { Deps } from "../deps";
import { chainRefusal } from "./chainRules";
import { fail } from "../../errors";
import { findExecutor } from "../../db/repositories/executors";
import { findBid, insertBid, listBids } from "../../db/repositories/bids";
import { claimOffer, findOpenOffer } from "../../db/repositories/offers";
import { reputationScore, reputationScores } from "../reputation";
import { loadTaskContext } from "./taskContext";
import {
  Applicant,
  ApplicantsResult,
  BidResult,
  eligibility,
  isTaskVerifier,
  requireRegisteredExecutor,
  requirePoster,
} from "./accept";

/**
 * POST /a2a/tasks/{hash}/bid: records an application with the agent's reputation score. The bid takes the
 * exclusive offer window when none is open or its score is higher than the holder's, provided the agent could
 * accept the task (target, minimum reward, chain). Refusals, in order: NOT_REGISTERED, SELF_BID, IS_VERIFIER,
 * ALREADY_APPLIED, NOT_OPEN.
 */
export async function bidOnTask(
  deps: Deps,
  wallet: string,
  rawHash: string,
  body: { message?: string },
): Promise<BidResult> {
  const agent = wallet.toLowerCase();
  const executor = await requireRegisteredExecutor(deps, agent);
  const ctx = await loadTaskContext(deps, rawHash);
  if (agent === ctx.poster) fail("SELF_BID", `you posted task ${ctx.taskId}: a poster cannot bid on its own task`);
  if (isTaskVerifier(ctx, agent))
    fail("IS_VERIFIER", `you are the verifier agent of task ${ctx.taskId}: you cannot bid on it`);
  const wrongChain = chainRefusal("CHAIN_UNSUPPORTED", executor, ctx.chain, `task ${ctx.taskId}`);
  if (wrongChain) throw wrongChain;
  if (await findBid(deps.db, ctx.taskId, agent, ctx.chain))
    fail("ALREADY_APPLIED", `you already applied to task ${ctx.taskId}`);
  if (ctx.status !== "open") fail("NOT_OPEN", `task ${ctx.taskId} is not open (${ctx.status})`);

  const score = await reputationScore(deps.db, agent, ctx.now);
  const bidAt = deps.clock.wallNow();
  const recorded = await insertBid(deps.db, {
    chain: ctx.chain,
    taskId: ctx.taskId,
    agent,
    message: body.message ?? null,
    score: String(score),
    createdAt: bidAt,
  });
  if (!recorded) fail("ALREADY_APPLIED", `you already applied to task ${ctx.taskId}`);

  if (!eligibility(ctx, executor)) {
    await claimOffer(deps.db, {
      chain: ctx.chain,
      taskId: ctx.taskId,
      agent,
      score: String(score),
      now: bidAt,
      windowSeconds: deps.config.marketplace.offerWindowSeconds,
    });
  }
  const offer = await findOpenOffer(deps.db, ctx.taskId, deps.clock.wallNow(), ctx.chain);
  return {
    taskHash: ctx.taskHash,
    onChainTaskId: ctx.taskId,
    agent,
    score,
    bidAt,
    offer: offer ? { agent: offer.agent, expiresAt: offer.expiresAt } : null,
  };
}

/** GET /a2a/tasks/{hash}/applicants: the bids, oldest first, each with the agent's reputation now. Poster only. */
export async function listApplicants(
  deps: Deps,
  wallet: string,
  rawHash: string,
  page: { limit: number; offset: number },
): Promise<ApplicantsResult> {
  const ctx = await loadTaskContext(deps, rawHash);
  requirePoster(ctx, wallet.toLowerCase());
  const bids = await listBids(deps.db, ctx.taskId, ctx.chain);
  const shown = bids.slice(page.offset, page.offset + page.limit);
  const scores = await reputationScores(
    deps.db,
    shown.map((b) => b.agent),
    ctx.now,
  );
  const offer = await findOpenOffer(deps.db, ctx.taskId, ctx.wallNow, ctx.chain);
  const applicants: Applicant[] = [];
  for (const bid of shown) {
    const executor = await findExecutor(deps.db, bid.agent);
    applicants.push({
      agent: bid.agent,
      publicKey: executor?.publicKey ?? null,
      capabilities: executor?.capabilities ?? [],
      message: bid.message,
      bidAt: bid.createdAt,
      scoreAtBid: Number(bid.score),
      reputation: scores.get(bid.agent) ?? 0,
      offerHolder: offer?.agent === bid.agent,
    });
  }
  return {
    taskHash: ctx.taskHash,
    onChainTaskId: ctx.taskId,
    applicants,
    total: bids.length,
    offer: offer ? { agent: offer.agent, expiresAt: offer.expiresAt } : null,
  };
}
