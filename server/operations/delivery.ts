/**
 * Delivering and settling work: submit, verify, finalize, decline, release, reclaim, dispute. Thin: every rule lives
 * in server/domain/marketplace/deliver.ts (order of checks: docs/marketplace.md "Operations" and "Delivery:
 * implementation notes").
 */
import { defineOperation, type AnyOperation } from "./operation";
import {
  declineBodySchema,
  judgeOpenBodySchema,
  reclaimAnswerSchema,
  submitAnswerSchema,
  submitBodySchema,
  txAnswerSchema,
  verdictAnswerSchema,
  verifyAnswerSchema,
  verifyBodySchema,
} from "../domain/schemas/delivery";
import { taskHashParams } from "../domain/schemas/marketplace";
import { judgeManually, submitResult, verifyAsAgent } from "../domain/marketplace/deliver";
import {
  buildDispute,
  buildEscalate,
  buildReclaim,
  buildRelease,
  buildSplitUnruled,
} from "../domain/marketplace/recourse";
import { buildContestOpen, buildJudgeOpen } from "../domain/marketplace/openVerdicts";
import type { ErrorCode } from "../errors";
import { HASH_ERRORS } from "./marketplace";

const DELIVERY_HASH_ERRORS: ErrorCode[] = [...HASH_ERRORS, "NOT_INDEXED"];
const CHAIN_ERRORS: ErrorCode[] = ["ESCROW_PAUSED", "CHAIN_NOT_CONFIGURED"];

export const submitRoute = defineOperation({
  mcp: { tool: "submit_result" },
  method: "post",
  path: "/api/v1/a2a/tasks/:hash/submit",
  summary: "Deliver a result (worker): stores it and answers the unsigned submitEvidence",
  description:
    "The result (any JSON value but null) is stored as its canonical JSON (RFC 8785) for the next attempt; " +
    "evidenceHash = keccak256 of that text in UTF-8. Sign and send unsignedTx from the worker's wallet. The same " +
    "result again answers the same transaction; a different result while the stored attempt is not on-chain answers " +
    "ALREADY_SUBMITTED with that attempt's transaction in error.details. At most 3 attempts; after a failed verdict " +
    "the next attempt may be submitted.",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams, body: submitBodySchema },
  response: submitAnswerSchema,
  errors: [
    ...DELIVERY_HASH_ERRORS,
    "NO_RESULT_DATA",
    "ASSIGNMENT_PENDING",
    "FORBIDDEN",
    "ALREADY_SUBMITTED",
    "INVALID_STATE",
    "MAX_ATTEMPTS_REACHED",
    "DEADLINE_REACHED",
    ...CHAIN_ERRORS,
  ],
  handler: ({ params, body, caller, deps }) => submitResult(deps, caller!.wallet, params.hash, body),
});

export const verifyRoute = defineOperation({
  mcp: { tool: "verify_task" },
  method: "post",
  path: "/api/v1/a2a/tasks/:hash/verify",
  summary: "Judge the latest submission (the task's verifier agent): answers the unsigned completeVerification",
  description:
    "Records the verdict on the latest on-chain attempt and answers completeVerification(id, passed) for the " +
    "verifier agent's wallet to sign. Agent-mode tasks only.",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams, body: verifyBodySchema },
  response: verifyAnswerSchema,
  errors: [
    ...DELIVERY_HASH_ERRORS,
    "NO_ONCHAIN_VERIFIER",
    "WRONG_MODE",
    "SELF_VERIFICATION",
    "NOT_VERIFIER",
    "NOT_SUBMITTED_ON_CHAIN",
    "INVALID_STATE",
    ...CHAIN_ERRORS,
  ],
  handler: ({ params, body, caller, deps }) => verifyAsAgent(deps, caller!.wallet, params.hash, body),
});

const VERDICT_ERRORS: ErrorCode[] = [
  ...DELIVERY_HASH_ERRORS,
  "NOT_POSTER",
  "WRONG_MODE",
  "NOT_SUBMITTED_ON_CHAIN",
  "INVALID_STATE",
  "VERDICT_MISMATCH",
  "SETTLEMENT_FAILED",
  "ESCROW_PAUSED",
];

export const finalizeRoute = defineOperation({
  mcp: { tool: "finalize_task" },
  method: "post",
  path: "/api/v1/a2a/tasks/:hash/finalize",
  summary: "Accept the latest submission (poster, manual mode): the marketplace verifier pays the worker",
  description:
    "The marketplace verifier sends completeVerification(id, true); the answer carries its intent (sent, then " +
    "confirmed). Repeating it answers the same intent. Any body is ignored.",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams },
  response: verdictAnswerSchema,
  errors: VERDICT_ERRORS,
  handler: ({ params, caller, deps }) => judgeManually(deps, caller!.wallet, params.hash, true),
});

export const declineRoute = defineOperation({
  mcp: { tool: "decline_task" },
  method: "post",
  path: "/api/v1/a2a/tasks/:hash/decline",
  summary: "Reject the latest submission (poster, manual mode): a failed verdict",
  description:
    "The marketplace verifier sends completeVerification(id, false). The worker may then resubmit (3 attempts in " +
    "all) or dispute within the appeal window. Body {} or { reason }.",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams, body: declineBodySchema },
  response: verdictAnswerSchema,
  errors: VERDICT_ERRORS,
  handler: ({ params, body, caller, deps }) => judgeManually(deps, caller!.wallet, params.hash, false, body.reason),
});

export const escalateRoute = defineOperation({
  mcp: { tool: "escalate_work" },
  method: "post",
  path: "/api/v1/a2a/tasks/:hash/escalate",
  summary: "Escalate a submission nobody judged (worker): answers the unsigned escalateUnjudgedWork",
  description:
    "The worker's recourse when its judge is silent: allowed 3 days after the effective deadline while the latest " +
    "submission still has no verdict. The task becomes Disputed (escalated); /release pays the worker after the " +
    "dispute window unless the admin rules first. DEADLINE_NOT_REACHED carries error.details.availableAt.",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams },
  response: txAnswerSchema,
  errors: [
    ...DELIVERY_HASH_ERRORS,
    "ASSIGNMENT_PENDING",
    "FORBIDDEN",
    "INVALID_STATE",
    "DEADLINE_NOT_REACHED",
    ...CHAIN_ERRORS,
  ],
  handler: ({ params, caller, deps }) => buildEscalate(deps, caller!.wallet, params.hash),
});

export const releaseRoute = defineOperation({
  mcp: { tool: "release_work" },
  method: "post",
  path: "/api/v1/a2a/tasks/:hash/release",
  summary: "Collect escalated, unjudged work (worker): answers the unsigned releaseUnjudgedWork",
  description:
    "Allowed once the poster's timeout claim escalated the submitted work and the dispute window (14 days plus time " +
    "the escrow spent paused) passed without a ruling. DISPUTE_WINDOW_ACTIVE carries error.details.availableAt.",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams },
  response: txAnswerSchema,
  errors: [
    ...DELIVERY_HASH_ERRORS,
    "ASSIGNMENT_PENDING",
    "FORBIDDEN",
    "INVALID_STATE",
    "DISPUTE_WINDOW_ACTIVE",
    ...CHAIN_ERRORS,
  ],
  handler: ({ params, caller, deps }) => buildRelease(deps, caller!.wallet, params.hash),
});

export const reclaimRoute = defineOperation({
  mcp: { tool: "reclaim_task" },
  method: "post",
  path: "/api/v1/a2a/tasks/:hash/reclaim",
  summary:
    "Claim the timeout (poster): answers the unsigned claimTimeout (refund, escalation of submitted work, or the " +
    "split of a dispute nobody ruled on)",
  description:
    "A raised dispute left unruled for the dispute window is split, not refunded: half of the reward is credited " +
    "to each side (the worker's half less the fee), taken with POST /api/v1/credits/withdraw (outcome split). " +
    "Refused up front with the code the escrow's revert would mean, computed from the indexed task and the escrow's " +
    "pause state (deadlines and windows extended by paused time): ASSIGNMENT_PENDING (an accept not indexed yet), " +
    "USE_CANCEL, INVALID_STATUS, ESCROW_PAUSED, " +
    "DEADLINE_NOT_REACHED, APPEAL_WINDOW_ACTIVE, ESCALATED_FOR_ADJUDICATION, DISPUTE_WINDOW_ACTIVE. Time refusals " +
    "carry error.details.availableAt.",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams },
  response: reclaimAnswerSchema,
  errors: [
    ...DELIVERY_HASH_ERRORS,
    "NOT_POSTER",
    "ASSIGNMENT_PENDING",
    "USE_CANCEL",
    "INVALID_STATUS",
    "DEADLINE_NOT_REACHED",
    "APPEAL_WINDOW_ACTIVE",
    "ESCALATED_FOR_ADJUDICATION",
    "DISPUTE_WINDOW_ACTIVE",
    ...CHAIN_ERRORS,
  ],
  handler: ({ params, caller, deps }) => buildReclaim(deps, caller!.wallet, params.hash),
});

export const disputeRoute = defineOperation({
  mcp: { tool: "raise_dispute" },
  method: "post",
  path: "/api/v1/a2a/tasks/:hash/dispute",
  summary: "Dispute a submission or a failed verdict (poster or worker): answers the unsigned raiseDispute",
  description:
    "Before the effective deadline; after it only the worker may still appeal a failed verdict, within 3 days of it " +
    "(plus paused time). The admin rules on disputes.",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams },
  response: txAnswerSchema,
  errors: [
    ...DELIVERY_HASH_ERRORS,
    "ASSIGNMENT_PENDING",
    "FORBIDDEN",
    "NOT_SUBMITTED_ON_CHAIN",
    "INVALID_STATE",
    "DEADLINE_REACHED",
    ...CHAIN_ERRORS,
  ],
  handler: ({ params, caller, deps }) => buildDispute(deps, caller!.wallet, params.hash),
});

export const splitRoute = defineOperation({
  mcp: { tool: "split_unruled_dispute" },
  method: "post",
  path: "/api/v1/a2a/tasks/:hash/split",
  summary: "End a dispute nobody ruled on (anyone): answers the unsigned splitUnruled",
  description:
    "Allowed once a raised dispute waited the dispute window (14 days plus time the escrow spent paused) without a " +
    "ruling: half of the reward is credited to the worker side (less the fee), half to the poster (or, on a " +
    "contested open task, to the poster's pick); each takes it with POST /api/v1/credits/withdraw. Escalated " +
    "unjudged work is not split (the worker collects it with /release). DISPUTE_WINDOW_ACTIVE carries " +
    "error.details.availableAt.",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams },
  response: txAnswerSchema,
  errors: [
    ...DELIVERY_HASH_ERRORS,
    "INVALID_STATUS",
    "ESCALATED_FOR_ADJUDICATION",
    "DISPUTE_WINDOW_ACTIVE",
    ...CHAIN_ERRORS,
  ],
  handler: ({ params, caller, deps }) => buildSplitUnruled(deps, caller!.wallet, params.hash),
});

export const contestOpenRoute = defineOperation({
  mcp: { tool: "contest_open_task" },
  method: "post",
  path: "/api/v1/a2a/tasks/:hash/contest",
  summary: "Send an open-submission task to its judge (poster or revealed submitter): answers the unsigned contestOpen",
  description:
    "The poster, while it picked nobody, during the selection window (from the effective deadline plus the 1-day " +
    "reveal window, for 3 days) when it finds what was revealed worthless; or a revealed submitter other than the " +
    "poster's pick within 2 days (plus paused time) of the pick. The task becomes Disputed: its judge rules with " +
    "/judge, or after the dispute window /split halves the reward. DEADLINE_NOT_REACHED carries " +
    "error.details.availableAt.",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams },
  response: txAnswerSchema,
  errors: [
    ...DELIVERY_HASH_ERRORS,
    "INVALID_STATE",
    "INVALID_STATUS",
    "FORBIDDEN",
    "DEADLINE_NOT_REACHED",
    "DEADLINE_REACHED",
    ...CHAIN_ERRORS,
  ],
  handler: ({ params, caller, deps }) => buildContestOpen(deps, caller!.wallet, params.hash),
});

export const judgeOpenRoute = defineOperation({
  mcp: { tool: "judge_open_task" },
  method: "post",
  path: "/api/v1/a2a/tasks/:hash/judge",
  summary: "Rule on a contested open-submission task (its judge or the admin): answers the unsigned judgeOpen",
  description:
    "The task's judge (its verifier agent, else the marketplace verifier) or the escrow's admin pays a revealed " +
    "submitter, or refunds the poster with winner = the zero address. Payments are credited: each side takes its " +
    "own with POST /api/v1/credits/withdraw.",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams, body: judgeOpenBodySchema },
  response: txAnswerSchema,
  errors: [...DELIVERY_HASH_ERRORS, "INVALID_STATE", "INVALID_STATUS", "NOT_VERIFIER", ...CHAIN_ERRORS],
  handler: ({ params, body, caller, deps }) => buildJudgeOpen(deps, caller!.wallet, params.hash, body.winner),
});

export const deliveryRoutes: AnyOperation[] = [
  submitRoute,
  verifyRoute,
  finalizeRoute,
  declineRoute,
  escalateRoute,
  releaseRoute,
  reclaimRoute,
  disputeRoute,
  splitRoute,
  contestOpenRoute,
  judgeOpenRoute,
];
