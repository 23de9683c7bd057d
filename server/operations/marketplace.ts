/**
 * Taking work: bid, applicants, accept, the brief, and the poster's assign and cancel. Thin: every rule lives in
 * server/domain/marketplace/accept.ts (order of checks: docs/marketplace.md "Accept").
 */
import { defineOperation, type AnyOperation } from "./operation";
import {
  acceptResultSchema,
  applicantsQuery,
  applicantsSchema,
  assignBodySchema,
  bidBodySchema,
  bidResultSchema,
  briefResultSchema,
  posterTxSchema,
} from "../domain/schemas/accept";
import { taskHashParams } from "../domain/schemas/marketplace";
import { acceptTask } from "../domain/marketplace/accept";
import { fetchBrief } from "../domain/marketplace/brief";
import { bidOnTask, listApplicants } from "../domain/marketplace/bids";
import { buildAssignWorker, buildCancelTask } from "../domain/marketplace/posterMoves";
import type { ErrorCode } from "../errors";

/** What resolving the {hash} path parameter can answer (taskContext.parseTaskHash, loadTaskContext). */
export const HASH_ERRORS: ErrorCode[] = [
  "VALIDATION_ERROR",
  "TASK_ID_DEPRECATED",
  "EMPTY_HASH",
  "UNAUTHORIZED",
  "NOT_FOUND",
];

export const bidRoute = defineOperation({
  mcp: { tool: "bid_on_task" },
  method: "post",
  path: "/api/v1/a2a/tasks/:hash/bid",
  summary: "Apply for an open task",
  description:
    "Records the application with your reputation score. A bid takes the task's exclusive offer window " +
    "(OFFER_WINDOW_SECONDS) when none is open or your score is higher than the holder's, provided you could accept " +
    "the task (target, minimum reward). An agent whose supportedChains lack the task's chain is refused " +
    "(CHAIN_UNSUPPORTED). The body may be {}.",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams, body: bidBodySchema },
  response: bidResultSchema,
  errors: [
    ...HASH_ERRORS,
    "NOT_REGISTERED",
    "SELF_BID",
    "IS_VERIFIER",
    "CHAIN_UNSUPPORTED",
    "ALREADY_APPLIED",
    "NOT_OPEN",
  ],
  handler: ({ params, body, caller, deps }) => bidOnTask(deps, caller!.wallet, params.hash, body),
});

export const applicantsRoute = defineOperation({
  mcp: { tool: "list_applicants" },
  method: "get",
  path: "/api/v1/a2a/tasks/:hash/applicants",
  summary: "The applicants of your task, with each agent's reputation",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams, query: applicantsQuery },
  response: applicantsSchema,
  errors: [...HASH_ERRORS, "NOT_POSTER"],
  handler: ({ params, query, caller, deps }) => listApplicants(deps, caller!.wallet, params.hash, query),
});

export const acceptRoute = defineOperation({
  mcp: { tool: "accept_task" },
  method: "post",
  path: "/api/v1/a2a/tasks/:hash/accept",
  summary: "Take an open task",
  description:
    "Checks, in order: NOT_REGISTERED, NO_PUBKEY, SELF_ACCEPT, IS_VERIFIER, TASK_CANCELLED, TASK_EXPIRED, NOT_OPEN, " +
    "ASSIGNED_ELSEWHERE, NOT_TARGET_EXECUTOR, BELOW_MIN_REWARD, CHAIN_UNSUPPORTED, OFFER_HELD / NOT_OFFER_HOLDER, " +
    "ACCEPT_LOCKED, NEEDS_WRAP / REWRAP_FAILED. Then the marketplace verifier sends marketplaceAssign; if it cannot, " +
    "nothing is kept (503 SETTLEMENT_FAILED). A retried accept of the winner answers the same again; the worker a " +
    "poster assigned on-chain may accept to receive its brief key.",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams },
  response: acceptResultSchema,
  errors: [
    ...HASH_ERRORS,
    "NOT_REGISTERED",
    "NO_PUBKEY",
    "SELF_ACCEPT",
    "IS_VERIFIER",
    "NOT_INDEXED",
    "TASK_CANCELLED",
    "TASK_EXPIRED",
    "NOT_OPEN",
    "ASSIGNED_ELSEWHERE",
    "NOT_TARGET_EXECUTOR",
    "BELOW_MIN_REWARD",
    "CHAIN_UNSUPPORTED",
    "OFFER_HELD",
    "NOT_OFFER_HOLDER",
    "ACCEPT_LOCKED",
    "NEEDS_WRAP",
    "REWRAP_FAILED",
    "SETTLEMENT_FAILED",
  ],
  handler: ({ params, caller, deps }) => acceptTask(deps, caller!.wallet, params.hash),
});

export const assignRoute = defineOperation({
  mcp: { tool: "assign_worker" },
  method: "post",
  path: "/api/v1/tasks/:hash/assign",
  summary: "Build the unsigned assignWorker of your task",
  description:
    "The poster assigns the task itself. Nothing is recorded: the listing stays open until the transaction is " +
    "mined; then other agents' accepts answer ASSIGNED_ELSEWHERE. A registered agent whose supportedChains lack the " +
    "task's chain is refused (CHAIN_UNSUPPORTED).",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams, body: assignBodySchema },
  response: posterTxSchema,
  errors: [
    ...HASH_ERRORS,
    "NOT_POSTER",
    "CHAIN_UNSUPPORTED",
    "NOT_INDEXED",
    "NOT_OPEN",
    "INVALID_STATE",
    "ESCROW_PAUSED",
    "CHAIN_NOT_CONFIGURED",
  ],
  handler: ({ params, body, caller, deps }) => buildAssignWorker(deps, caller!.wallet, params.hash, body.worker),
});

export const cancelRoute = defineOperation({
  mcp: { tool: "cancel_task" },
  method: "post",
  path: "/api/v1/a2a/tasks/:hash/cancel",
  summary: "Build the unsigned cancelTask of your task (full refund)",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams },
  response: posterTxSchema,
  errors: [
    ...HASH_ERRORS,
    "NOT_POSTER",
    "NOT_INDEXED",
    "INVALID_STATUS",
    "ASSIGNMENT_PENDING",
    "ESCROW_PAUSED",
    "CHAIN_NOT_CONFIGURED",
  ],
  handler: ({ params, caller, deps }) => buildCancelTask(deps, caller!.wallet, params.hash),
});

export const briefRoute = defineOperation({
  mcp: {
    tool: "fetch_brief",
    description:
      "A task's brief: the uploaded blob (base64) and, for a private task, the caller's own wrapped brief key (only its worker receives one)",
  },
  method: "get",
  path: "/api/v1/a2a/tasks/:hash/brief",
  summary: "A task's brief, with your brief key when you are the worker of a private task",
  description:
    "The blob the poster uploaded under the task's root hash (base64). A public brief is anyone's; a private one is " +
    "encrypted, and only its worker (the agent whose accept is held or on-chain) receives wrappedKey, the brief key " +
    "wrapped to its registered public key: what an agent reads again after a restart to redo work after a failed " +
    "verdict. Others get NOT_TASK_PARTICIPANT.",
  tags: ["marketplace"],
  auth: "required",
  request: { params: taskHashParams },
  response: briefResultSchema,
  errors: [
    ...HASH_ERRORS,
    "NOT_TASK_PARTICIPANT",
    "NOT_REGISTERED",
    "NEEDS_WRAP",
    "REWRAP_FAILED",
    "STORAGE_UNAVAILABLE",
  ],
  handler: ({ params, caller, deps }) => fetchBrief(deps, caller!.wallet, params.hash),
});

export const marketplaceRoutes: AnyOperation[] = [
  bidRoute,
  applicantsRoute,
  acceptRoute,
  briefRoute,
  assignRoute,
  cancelRoute,
];
