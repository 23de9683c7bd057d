/** Task building: unsigned createTask / createTaskWithVerifier / createTasks transactions for the caller to sign. */
import { defineOperation, type AnyOperation } from "./operation";
import { buildTask, buildTaskBatch } from "../domain/posting";
import {
  taskBatchBuildBodySchema,
  taskBatchBuildSchema,
  taskBuildBodySchema,
  taskBuildSchema,
} from "../domain/schemas/posting";
import type { ErrorCode } from "../errors";

const TASK_RULE_ERRORS: ErrorCode[] = [
  "VALIDATION_ERROR",
  "INVALID_AMOUNT",
  "INVALID_DURATION",
  "EMPTY_HASH",
  "INVALID_HASH",
  "INVALID_VERIFIER",
  "NO_VERIFIER",
  "VERIFIER_NOT_WRAPPED",
  "VERIFICATION_MODE_UNSUPPORTED",
  "AUTO_CRITERIA_REQUIRED",
  "REGEX_PATTERN_UNUSABLE",
  "BAD_ADDRESS",
  "TASK_HASH_IN_USE",
  "TASK_HASH_TAKEN",
];

export const buildTaskRoute = defineOperation({
  mcp: { tool: "build_task" },
  method: "post",
  path: "/api/v1/tasks",
  summary: "Build the unsigned createTask transaction of one task, on the chain named (base or arc)",
  description:
    "Checks the task's terms, reserves its taskHash for the caller for 24 hours, and returns the unsigned call to the " +
    "escrow proxy of the chain named by `chain` (base or arc; the posting chain when absent), createTaskWithVerifier " +
    "when verifierAddress is given, with approveTx: approve(escrow, exactly the amount) on that chain's settlement " +
    "token, null when the wallet's allowance already covers it. Sign and send approveTx first, then unsignedTx, from " +
    "the key's wallet on the answer's chainId. A taskHash listed or funded on either chain is TASK_HASH_IN_USE.",
  tags: ["posting"],
  auth: "required",
  posting: { family: "builds", items: () => 1 },
  request: { body: taskBuildBodySchema },
  response: taskBuildSchema,
  errors: [
    ...TASK_RULE_ERRORS,
    "INVALID_CHAIN",
    "TOKEN_NOT_SETTLEMENT",
    "VERIFIER_CHAIN_UNSUPPORTED",
    "UNAUTHORIZED",
    "RATE_LIMIT",
    "CHAIN_NOT_CONFIGURED",
  ],
  handler: ({ body, caller, deps }) => buildTask(deps, caller!.wallet, body),
});

export const buildTaskBatchRoute = defineOperation({
  mcp: { tool: "build_task_batch" },
  method: "post",
  path: "/api/v1/tasks/batch",
  summary: "Build the unsigned createTasks transaction of up to 50 tasks, on the chain named (base or arc)",
  description:
    "All or nothing: every task gets the single-build checks plus one task per taskHash; any refusal answers " +
    "INVALID_TASKS with error.details.errors [{ index, code, message }] and keeps no reservation. The batch goes to " +
    "the escrow of the chain named by `chain` (base or arc; the posting chain when absent). The unsignedTx " +
    "carries a gas limit; approveTx approves the escrow for exactly the sum of the amounts (null when the " +
    "allowance already covers it): send it first, on the answer's chainId.",
  tags: ["posting"],
  auth: "required",
  posting: { family: "builds", items: (body) => body.tasks.length },
  request: { body: taskBatchBuildBodySchema },
  response: taskBatchBuildSchema,
  errors: [
    "VALIDATION_ERROR",
    "INVALID_CHAIN",
    "INVALID_TASKS",
    "BATCH_TOO_LARGE",
    "TOKEN_NOT_SETTLEMENT",
    "UNAUTHORIZED",
    "BATCH_UNSUPPORTED",
    "RATE_LIMIT",
    "CHAIN_NOT_CONFIGURED",
  ],
  handler: ({ body, caller, deps }) => buildTaskBatch(deps, caller!.wallet, body),
});

export const taskBuildRoutes: AnyOperation[] = [buildTaskRoute, buildTaskBatchRoute];
