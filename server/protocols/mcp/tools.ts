/**
 * The MCP tool catalog: everything the REST API lets an agent do, in both roles. Most tools ARE a REST route: their
 * input is the route's own zod schemas (path, query and body fields side by side), validated by the same parser with
 * the same error codes, and their answer is the route's `data`; money-moving tools answer the same unsigned
 * transactions and never sign. A few tools compose domain reads (platform_status, fetch_brief).
 */
import { z, type ZodTypeAny } from "zod";
import { zodToJsonSchema } from "zod-to-json-schema";
import type { Context } from "koa";
import { checkAgentTokenAllowed, type AnyRoute, type Caller } from "../route";
import type { Deps } from "../../domain/deps";
import { SerializedData } from "../../domain/readCache";
import { AppError } from "../../errors";
import { checkJsonStrings, deepFreeze, parseCache, parseOrThrow } from "../validation";
import { takePostingTokens } from "../middleware/rateLimit";
import { allRoutes } from "../routes";
import {
  agentActionRoute,
  createAgentRoute,
  installSkillRoute,
  listAgentsRoute,
  readAgentRoute,
  skillCatalogRoute,
  uninstallSkillRoute,
} from "../routes/agents";
import { settlementRoute, statsRoute } from "../routes/system";
import { indexRoute, offeredTasksRoute, openTasksRoute, postedTasksRoute, taskRoute } from "../routes/listings";
import { listExecutorsRoute, ownExecutorRoute, registerExecutorRoute, heartbeatRoute } from "../routes/executors";
import { leaderboardRoute, reputationRoute } from "../routes/reputation";
import { uploadRoute } from "../routes/storage";
import { buildTaskBatchRoute, buildTaskRoute } from "../routes/tasks";
import { acceptRoute, applicantsRoute, assignRoute, bidRoute, briefRoute, cancelRoute } from "../routes/marketplace";
import {
  declineRoute,
  disputeRoute,
  escalateRoute,
  finalizeRoute,
  reclaimRoute,
  releaseRoute,
  submitRoute,
  verifyRoute,
} from "../routes/delivery";
import {
  createServiceRoute,
  deleteServiceRoute,
  getServiceRoute,
  listServicesRoute,
  updateServiceRoute,
} from "../routes/services";

export interface ToolCall {
  args: Record<string, unknown>;
  caller: Caller;
  deps: Deps;
  /** The /mcp request (its IP counts against the posting buckets, as on REST). */
  ctx: Context;
}

export interface McpTool {
  name: string;
  description: string;
  readOnly: boolean;
  /** JSON Schema of the arguments (from the zod schemas). */
  inputSchema: Record<string, unknown>;
  run(call: ToolCall): Promise<unknown>;
}

type JsonObjectSchema = { type: "object"; properties: Record<string, unknown>; required?: string[] };

function jsonSchemaOf(schema: ZodTypeAny | undefined): JsonObjectSchema {
  if (!schema) return { type: "object", properties: {} };
  // The converter's generic types recurse through our schemas' depth: call it untyped.
  const convert = zodToJsonSchema as unknown as (schema: unknown, options: object) => unknown;
  const json = convert(schema, { target: "jsonSchema7", $refStrategy: "none", effectStrategy: "input" }) as {
    properties?: Record<string, unknown>;
    required?: string[];
  };
  return { type: "object", properties: json.properties ?? {}, required: json.required ?? [] };
}

/** One object schema with the fields of the route's path, query and body schemas side by side. */
function mergedSchema(route: AnyRoute): Record<string, unknown> {
  const parts = [route.request?.params, route.request?.query, route.request?.body].map(jsonSchemaOf);
  const properties = Object.assign({}, ...parts.map((p) => p.properties));
  const required = [...new Set(parts.flatMap((p) => p.required ?? []))];
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

function fieldsOf(schema: ZodTypeAny | undefined): string[] {
  return Object.keys(jsonSchemaOf(schema).properties);
}

/**
 * Each pre-serialized page parsed once (bench:api: parsing the 50-task page on every browse_tasks call cost more than
 * the rest of the tool). The parsed value is shared by every call answering that page, so it is frozen.
 */
const parsedPages = new WeakMap<SerializedData, unknown>();

/** The route's data as plain JSON (a cached page arrives pre-serialized). */
export function plain(data: unknown): unknown {
  if (!(data instanceof SerializedData)) return data;
  let parsed = parsedPages.get(data);
  if (parsed === undefined) {
    parsed = deepFreeze(JSON.parse(data.json));
    parsedPages.set(data, parsed);
  }
  return parsed;
}

/** A tool that calls `route`: the arguments split into path, query and body and parsed by the route's schemas. */
function routeTool(name: string, route: AnyRoute, description?: string): McpTool {
  const paramKeys = new Set(fieldsOf(route.request?.params));
  const queryKeys = new Set(fieldsOf(route.request?.query));
  // Built once per tool, not per call (a zod object costs more to build than to parse an empty argument set).
  const paramsSchema = route.request?.params ?? z.object({});
  const querySchema = route.request?.query ?? z.object({}).strict();
  // A read's path and query arguments parsed once per distinct text (as the router does for query strings).
  const parsedReadArgs = route.method === "get" ? parseCache() : undefined;
  return {
    name,
    description: description ?? `${route.summary} (${route.method.toUpperCase()} ${route.path})`,
    readOnly: route.method === "get",
    inputSchema: mergedSchema(route),
    async run({ args, caller, deps, ctx }) {
      checkAgentTokenAllowed(route, caller);
      checkJsonStrings(args, "arguments");
      const pick = (keys: Set<string>) => Object.fromEntries(Object.entries(args).filter(([k]) => keys.has(k)));
      const rest = Object.fromEntries(Object.entries(args).filter(([k]) => !paramKeys.has(k) && !queryKeys.has(k)));
      const parseArgs = () => ({
        params: parseOrThrow(paramsSchema, pick(paramKeys), "path"),
        query: parseOrThrow(querySchema, pick(queryKeys), "query"),
      });
      const { params, query } = parsedReadArgs ? parsedReadArgs(JSON.stringify(args), parseArgs) : parseArgs();
      const body = route.request?.body ? parseOrThrow(route.request.body, rest, "body") : undefined;
      if (!route.request?.body && Object.keys(rest).length > 0) {
        throw new AppError({
          code: "VALIDATION_ERROR",
          message: `arguments: unknown field(s) ${Object.keys(rest).join(", ")}`,
          details: { field: "arguments" },
        });
      }
      if (route.posting) {
        await takePostingTokens(
          ctx,
          deps.limits,
          deps.config.api.limits,
          caller.wallet,
          route.posting.family,
          route.posting.items(body),
        );
      }
      // A pre-serialized page stays so: the tool result reuses its JSON text (endpoint.ts toolResult).
      return route.handler({ body, query, params, caller, ctx, deps, routes: allRoutes });
    },
  };
}

const platformStatus: McpTool = {
  name: "platform_status",
  description: "Marketplace figures, the settlement record and the indexer's progress in one call",
  readOnly: true,
  inputSchema: { type: "object", properties: {}, additionalProperties: false },
  async run({ deps, caller, ctx }) {
    const input = { body: undefined, query: {}, params: {}, caller, ctx, deps, routes: allRoutes };
    const status = deps.indexer?.status();
    return {
      stats: plain(await statsRoute.handler(input)),
      settlement: plain(await settlementRoute.handler(input)),
      indexer: status ? { checkpoint: status.checkpoint, lastError: status.lastError ?? null } : null,
    };
  },
};

/** The catalog, in the order a worker and a poster meet the tools. */
export const MCP_TOOLS: readonly McpTool[] = [
  platformStatus,
  routeTool("get_settlement", settlementRoute),
  routeTool("browse_tasks", openTasksRoute),
  routeTool("get_task", taskRoute),
  routeTool("browse_services", listServicesRoute),
  routeTool("get_service", getServiceRoute),
  routeTool("get_offered_tasks", offeredTasksRoute),
  routeTool("search_agents", listExecutorsRoute),
  routeTool("get_reputation", reputationRoute),
  routeTool("get_leaderboard", leaderboardRoute),
  routeTool("get_my_posted_tasks", postedTasksRoute),
  routeTool("get_my_executor", ownExecutorRoute),
  routeTool("list_applicants", applicantsRoute),
  routeTool(
    "fetch_brief",
    briefRoute,
    "A task's brief: the uploaded blob (base64) and, for a private task, the caller's own wrapped brief key (only its worker receives one)",
  ),
  routeTool("upload_brief", uploadRoute),
  routeTool("build_task", buildTaskRoute),
  routeTool("build_task_batch", buildTaskBatchRoute),
  routeTool("index_task", indexRoute),
  routeTool("register_executor", registerExecutorRoute),
  routeTool("heartbeat", heartbeatRoute),
  routeTool("create_service", createServiceRoute),
  routeTool("update_service", updateServiceRoute),
  routeTool("deactivate_service", deleteServiceRoute),
  routeTool("bid_on_task", bidRoute),
  routeTool("accept_task", acceptRoute),
  routeTool("assign_worker", assignRoute),
  routeTool("submit_result", submitRoute),
  routeTool("verify_task", verifyRoute),
  routeTool("finalize_task", finalizeRoute),
  routeTool("decline_task", declineRoute),
  routeTool("cancel_task", cancelRoute),
  routeTool("reclaim_task", reclaimRoute),
  routeTool("raise_dispute", disputeRoute),
  routeTool("escalate_work", escalateRoute),
  routeTool("release_work", releaseRoute),
  // The owner's hosted agents (a hosted agent's own token is refused: DELEGATION_DISABLED).
  routeTool("list_skills", skillCatalogRoute),
  routeTool("list_hosted_agents", listAgentsRoute),
  routeTool("get_hosted_agent", readAgentRoute),
  routeTool("create_hosted_agent", createAgentRoute),
  routeTool("hosted_agent_action", agentActionRoute),
  routeTool("install_skill", installSkillRoute),
  routeTool("uninstall_skill", uninstallSkillRoute),
];
