/**
 * Agents (executors): registration and update with an API key, the caller's own record, a liveness heartbeat, and
 * the public listing with the spec's filters. Thin: every rule lives in server/domain/executors.ts.
 */
import { defineOperation, type AnyOperation } from "./operation";
import {
  executorBodySchema,
  executorsListSchema,
  executorsQuery,
  heartbeatSchema,
  ownExecutorSchema,
  registrationResultSchema,
} from "../domain/schemas/executors";
import { executorHeartbeat, listPublicExecutors, readOwnExecutor, registerExecutor } from "../domain/executors";

export const registerExecutorRoute = defineOperation({
  mcp: { tool: "register_executor" },
  method: "post",
  path: "/api/v1/a2a/executors",
  summary: "Register or update the caller's executor (agent) record",
  description:
    'The wallet is the API key\'s wallet. The body is the whole record: omitted optional fields take their defaults (capabilities [], supportedChains [the posting chain], minReward "0", verifier { optIn: false }). Capabilities are trimmed, lower-cased and deduplicated. Registering also marks the executor as seen (running).',
  tags: ["executors"],
  auth: "required",
  request: { body: executorBodySchema },
  response: registrationResultSchema,
  errors: ["NO_PUBKEY", "VALIDATION_ERROR", "INVALID_CHAIN", "UNAUTHORIZED"],
  handler: ({ body, caller, deps }) => registerExecutor(deps, caller!.wallet, body),
});

export const ownExecutorRoute = defineOperation({
  mcp: { tool: "get_my_executor" },
  method: "get",
  path: "/api/v1/a2a/executors/me",
  summary: "The caller's executor record with its reputation and liveness",
  tags: ["executors"],
  auth: "required",
  response: ownExecutorSchema,
  errors: ["NOT_REGISTERED", "UNAUTHORIZED"],
  handler: ({ caller, deps }) => readOwnExecutor(deps, caller!.wallet),
});

export const heartbeatRoute = defineOperation({
  mcp: { tool: "heartbeat" },
  method: "post",
  path: "/api/v1/a2a/executors/heartbeat",
  summary: "Mark the caller's executor as running",
  description:
    "An executor seen within the last 10 minutes (chain time) is running (GET /a2a/executors/me). Registration and marketplace operations count as being seen too.",
  tags: ["executors"],
  auth: "required",
  response: heartbeatSchema,
  errors: ["NOT_REGISTERED", "UNAUTHORIZED"],
  handler: ({ caller, deps }) => executorHeartbeat(deps, caller!.wallet),
});

export const listExecutorsRoute = defineOperation({
  mcp: { tool: "search_agents" },
  method: "get",
  path: "/api/v1/a2a/executors",
  summary: "Registered executors (public)",
  description:
    "Ordered by reputation (decayed worker score), then address. capabilities: comma-separated, executors declaring all of them; chain: executors settling there; role=verifier: only hosted agents with status running whose owner opted in to verifying, with their verifier name. limit default 100 (max 200), offset default 0; total counts every match.",
  tags: ["public", "executors"],
  auth: "none",
  request: { query: executorsQuery },
  response: executorsListSchema,
  errors: ["VALIDATION_ERROR", "INVALID_CHAIN"],
  handler: ({ query, deps }) => listPublicExecutors(deps, query),
});

export const executorRoutes: AnyOperation[] = [
  registerExecutorRoute,
  ownExecutorRoute,
  heartbeatRoute,
  listExecutorsRoute,
];
