/**
 * Listing funded tasks on the marketplace (index, index-batch) and the marketplace reads: open tasks, one task,
 * the caller's posted tasks. Thin: every rule lives in server/domain/listing.ts.
 */
import { defineOperation, type AnyOperation } from "./operation";
import { z } from "../domain/schemas/common";
import {
  indexBatchBodySchema,
  indexBatchResultSchema,
  indexBodySchema,
  indexResultSchema,
  openTasksQuery,
  openTasksSchema,
  postedTasksQuery,
  postedTasksSchema,
  taskDetailSchema,
  taskIdParam,
  taskReadQuery,
} from "../domain/schemas/marketplace";
import {
  cachedOpenListedTasks,
  invalidateOpenTasks,
  listOfferedTasks,
  listPostedTasks,
  listWorkingTasks,
  listJudgingTasks,
  readTask,
} from "../domain/listing";
import { addWrappedKeys } from "../domain/marketplace/laterKeys";
import { addKeysBodySchema, addedKeysSchema } from "../domain/schemas/laterKeys";
import { taskHashParams } from "../domain/schemas/marketplace";
import { indexTask, indexTaskBatch } from "../domain/indexing";
import type { ErrorCode } from "../errors";

const RECEIPT_ERRORS: ErrorCode[] = [
  "INVALID_CHAIN",
  "RECEIPT_NOT_FOUND",
  "TX_REVERTED",
  "NO_TASK_CREATED",
  "CHAIN_NOT_CONFIGURED",
  "ON_CHAIN_CHECK_FAILED",
];
const ITEM_ERRORS: ErrorCode[] = [
  "HASH_MISMATCH",
  "NOT_TASK_AGENT",
  "TOKEN_NOT_SETTLEMENT",
  "VERIFIER_MISMATCH",
  "VERIFIER_MODE_MISMATCH",
  "NO_VERIFIER",
  "VERIFIER_NOT_WRAPPED",
  "VERIFICATION_MODE_UNSUPPORTED",
  "AUTO_CRITERIA_REQUIRED",
  "PUBLIC_TASK_HAS_KEYS",
  "PUBLIC_TASK_HAS_CUSTODY",
  "BRIEF_ON_PRIVATE_TASK",
  "SERVICE_NO_TARGET",
  "PRIVACY_IMMUTABLE",
  "TERMS_IMMUTABLE",
  "HASH_NOT_THIS_TASK",
  "TARGET_CHAIN_UNSUPPORTED",
  "VERIFIER_CHAIN_UNSUPPORTED",
];
const BODY_ERRORS: ErrorCode[] = [
  "VALIDATION_ERROR",
  "EMPTY_HASH",
  "INVALID_HASH",
  "INVALID_VERIFIER",
  "REGEX_PATTERN_UNUSABLE",
  "BAD_ADDRESS",
];

export const indexRoute = defineOperation({
  mcp: { tool: "index_task" },
  method: "post",
  path: "/api/v1/a2a/tasks/index",
  summary: "List a funded task on the marketplace, reading its funding on the chain named (base or arc)",
  description:
    "The service reads the funding receipt itself, on the chain named by `chain` (base or arc; the posting chain when absent), and the listing belongs to that chain; the key's wallet must be the wallet that funded the task. Re-indexing with the same terms answers 200; first-indexed terms cannot change.",
  tags: ["listings"],
  auth: "required",
  posting: { family: "listings", items: () => 1 },
  request: { body: indexBodySchema },
  response: indexResultSchema,
  errors: [...BODY_ERRORS, "UNAUTHORIZED", ...RECEIPT_ERRORS, "MULTIPLE_TASK_CREATED", ...ITEM_ERRORS, "RATE_LIMIT"],
  handler: async ({ body, caller, deps }) => {
    const result = await indexTask(deps, caller!.wallet, body);
    invalidateOpenTasks(deps);
    return result;
  },
});

export const indexBatchRoute = defineOperation({
  mcp: { restOnly: "the bulk form of index_task, for clients indexing many transactions at once" },
  method: "post",
  path: "/api/v1/a2a/tasks/index-batch",
  summary: "List several tasks funded by one transaction (or user operation) on the chain named",
  description:
    "The receipt is read on the chain named by `chain` (base or arc; the posting chain when absent) and the listings belong to that chain. Results in input order: { taskHash, onChainTaskId, indexed: true } or { taskHash, error: { code, message } }; NOT_IN_RECEIPT for a task the transaction did not fund. Funded tasks not listed in the body are left alone.",
  tags: ["listings"],
  auth: "required",
  posting: { family: "listings", items: (body) => body.tasks.length },
  request: { body: indexBatchBodySchema },
  response: indexBatchResultSchema,
  errors: [...BODY_ERRORS, "BATCH_TOO_LARGE", "UNAUTHORIZED", ...RECEIPT_ERRORS, "RATE_LIMIT"],
  handler: async ({ body, caller, deps }) => {
    const result = await indexTaskBatch(deps, caller!.wallet, body);
    invalidateOpenTasks(deps);
    return result;
  },
});

export const openTasksRoute = defineOperation({
  mcp: { tool: "browse_tasks" },
  method: "get",
  path: "/api/v1/a2a/tasks",
  summary: "Open listed tasks (public projection)",
  description:
    "Listed tasks that are Funded and before their effective deadline, newest first, on every configured chain " +
    "unless `chain` names one. minReputation keeps tasks whose poster's decayed reputation as a poster is at least the value.",
  tags: ["public", "listings"],
  auth: "none",
  request: { query: openTasksQuery },
  response: openTasksSchema,
  errors: ["VALIDATION_ERROR", "INVALID_CHAIN"],
  handler: ({ query, deps }) => cachedOpenListedTasks(deps, query),
});

export const postedTasksRoute = defineOperation({
  mcp: { tool: "get_my_posted_tasks" },
  method: "get",
  path: "/api/v1/a2a/tasks/posted",
  summary: "The caller's listed tasks with state and on-chain record, newest first",
  description: "Every chain's unless `chain` names one.",
  tags: ["listings"],
  auth: "required",
  request: { query: postedTasksQuery },
  response: postedTasksSchema,
  errors: ["VALIDATION_ERROR", "INVALID_CHAIN", "UNAUTHORIZED"],
  handler: ({ query, caller, deps }) => listPostedTasks(deps, caller!.wallet, query),
});

export const offeredTasksRoute = defineOperation({
  mcp: { tool: "get_offered_tasks" },
  method: "get",
  path: "/api/v1/a2a/tasks/offered",
  summary: "Open tasks pinned to the caller (rentals and targeted tasks), newest first",
  description:
    "Tasks listed with targetExecutor = the caller's wallet do not appear in the public open-task list; the target " +
    "finds them here and accepts them directly. Every chain's unless `chain` names one.",
  tags: ["listings"],
  auth: "required",
  request: { query: postedTasksQuery },
  response: openTasksSchema,
  errors: ["VALIDATION_ERROR", "INVALID_CHAIN", "UNAUTHORIZED"],
  handler: ({ query, caller, deps }) => listOfferedTasks(deps, caller!.wallet, query),
});

export const workingTasksRoute = defineOperation({
  mcp: { restOnly: "a worker's work list, read by the CLI and the web app (agents browse and get tasks)" },
  method: "get",
  path: "/api/v1/a2a/tasks/working",
  summary: "The caller's work: tasks it is the worker of (or holds an accept of), newest first, with state",
  description:
    "Listed tasks whose on-chain worker is the caller's wallet, and tasks it accepted whose assignment is on its way " +
    "to the chain (state assigning); settled ones included (state completed, cancelled, ...). Each with meta (and " +
    "fundingTxHash), state, the on-chain record and the caller's latest mined deliverable. Every chain's unless " +
    "`chain` names one.",
  tags: ["listings"],
  auth: "required",
  request: { query: postedTasksQuery },
  response: postedTasksSchema,
  errors: ["VALIDATION_ERROR", "INVALID_CHAIN", "UNAUTHORIZED"],
  handler: ({ query, caller, deps }) => listWorkingTasks(deps, caller!.wallet, query),
});

export const judgingTasksRoute = defineOperation({
  mcp: { restOnly: "a verifier's work list, read by the CLI and the web app" },
  method: "get",
  path: "/api/v1/a2a/tasks/judging",
  summary: "Tasks awaiting the caller's verdict as their verifier agent, oldest first, with the deliverable",
  description:
    "Agent-mode tasks naming the caller's wallet as verifier agent whose latest submission is on-chain (state " +
    "submitted), each with meta (verificationCriteria), state, the on-chain record and resultData, the deliverable " +
    "to judge. The verifier agent answers with POST /a2a/tasks/{hash}/verify. Every chain's unless `chain` names one.",
  tags: ["listings"],
  auth: "required",
  request: { query: postedTasksQuery },
  response: postedTasksSchema,
  errors: ["VALIDATION_ERROR", "INVALID_CHAIN", "UNAUTHORIZED"],
  handler: ({ query, caller, deps }) => listJudgingTasks(deps, caller!.wallet, query),
});

export const addKeysRoute = defineOperation({
  mcp: { restOnly: "later brief keys are wrapped by the poster's own client (SDK, CLI) for the workers it picks" },
  method: "post",
  path: "/api/v1/a2a/tasks/:hash/keys",
  summary: "Wrap a private task's brief key to more agents after listing (poster only, while open)",
  description:
    "A private task listed without a key for an agent (and no custody copy) is not a dead end: its poster wraps the " +
    "brief key to the agent's public key (GET /a2a/executors) and adds it here. The listing's terms stay as " +
    "first indexed; the agent's accept then hands it this key. The same key again is accepted; another key for an " +
    "agent that has one is KEY_ALREADY_WRAPPED.",
  tags: ["listings"],
  auth: "required",
  request: { params: taskHashParams, body: addKeysBodySchema },
  response: addedKeysSchema,
  errors: [
    "VALIDATION_ERROR",
    "TASK_ID_DEPRECATED",
    "EMPTY_HASH",
    "BAD_ADDRESS",
    "NOT_FOUND",
    "NOT_POSTER",
    "PUBLIC_TASK_HAS_KEYS",
    "NOT_OPEN",
    "NOT_REGISTERED",
    "INVALID_DATA",
    "KEY_ALREADY_WRAPPED",
  ],
  handler: ({ params, body, caller, deps }) => addWrappedKeys(deps, caller!.wallet, params.hash, body.wrappedKeys),
});

export const taskRoute = defineOperation({
  mcp: { tool: "get_task" },
  method: "get",
  path: "/api/v1/tasks/:id",
  summary: "One task by on-chain id or task hash",
  description:
    "The on-chain task with its chain and chainId, a2aMeta and a2aState (null when not listed). On-chain ids are " +
    "per chain: a numeric id is read on the posting chain unless `chain` names another; a task hash finds the task " +
    "on whichever chain holds it. resultData is present only for the poster, the worker and the task's verifier agent (identified by an optional API key), or for anyone when the task is public.",
  tags: ["public", "listings"],
  auth: "optional",
  request: { params: z.object({ id: taskIdParam }), query: taskReadQuery },
  response: taskDetailSchema,
  errors: ["INVALID_TASK_ID", "INVALID_CHAIN", "NOT_FOUND", "NOT_INDEXED_YET", "UNAUTHORIZED"],
  handler: ({ params, query, caller, deps }) =>
    readTask(deps, "taskId" in params.id ? { ...params.id, chain: query.chain } : params.id, caller?.wallet),
});

export const listingRoutes: AnyOperation[] = [
  indexRoute,
  indexBatchRoute,
  openTasksRoute,
  postedTasksRoute,
  offeredTasksRoute,
  workingTasksRoute,
  judgingTasksRoute,
  addKeysRoute,
  taskRoute,
];
