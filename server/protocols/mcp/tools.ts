/**
 * The MCP adapter's tools: every operation of the catalog (server/operations) that names an MCP tool, in both roles.
 * A tool's input is its operation's own zod schemas (path, query and body fields side by side), run by the same
 * pipeline (`invoke`) with the same error codes, and its answer is the operation's `data`; money-moving tools answer
 * the same unsigned transactions and never sign. One tool composes operations: platform_status.
 */
import { zodToJsonSchema } from "zod-to-json-schema";
import type { ZodTypeAny } from "zod";
import type { Context } from "koa";
import type { AnyOperation, Caller } from "../../operations/operation";
import { checkAgentTokenAllowed, invoke } from "../../operations/invoke";
import { operations } from "../../operations";
import { settlementRoute, statsRoute } from "../../operations/system";
import type { Deps } from "../../domain/deps";
import { SerializedData } from "../../domain/readCache";
import { AppError } from "../../errors";
import { deepFreeze } from "../../operations/validation";

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
  /** The operation the tool runs (none for platform_status, which composes two). */
  operation?: AnyOperation;
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
function mergedSchema(route: AnyOperation): Record<string, unknown> {
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

/** The tool offering `operation`: the arguments split into path, query and body and run through `invoke`. */
export function operationTool(name: string, operation: AnyOperation, description?: string): McpTool {
  const paramKeys = new Set(fieldsOf(operation.request?.params));
  const queryKeys = new Set(fieldsOf(operation.request?.query));
  const reads = operation.method === "get";
  return {
    name,
    description: description ?? `${operation.summary} (${operation.method.toUpperCase()} ${operation.path})`,
    readOnly: reads,
    inputSchema: mergedSchema(operation),
    operation,
    async run({ args, caller, deps, ctx }) {
      const pick = (keys: Set<string>) => Object.fromEntries(Object.entries(args).filter(([k]) => keys.has(k)));
      const rest = Object.fromEntries(Object.entries(args).filter(([k]) => !paramKeys.has(k) && !queryKeys.has(k)));
      checkAgentTokenAllowed(operation, caller); // before any argument error, as on REST
      if (!operation.request?.body && Object.keys(rest).length > 0) {
        throw new AppError({
          code: "VALIDATION_ERROR",
          message: `arguments: unknown field(s) ${Object.keys(rest).join(", ")}`,
          details: { field: "arguments" },
        });
      }
      const query = pick(queryKeys);
      // A pre-serialized page stays so: the tool result reuses its JSON text (endpoint.ts toolResult).
      return invoke(
        operation,
        caller,
        {
          params: pick(paramKeys),
          query,
          body: rest,
          strings: { root: args, location: "arguments" },
          // A read's query arguments parsed once per distinct text (as REST does for query strings).
          queryKey: reads ? JSON.stringify(query) : undefined,
        },
        { ctx, deps, routes: operations },
      );
    },
  };
}

const platformStatus: McpTool = {
  name: "platform_status",
  description: "Marketplace figures, the settlement record and the indexer's progress in one call",
  readOnly: true,
  inputSchema: { type: "object", properties: {}, additionalProperties: false },
  async run({ deps, caller, ctx }) {
    const read = (operation: AnyOperation) =>
      invoke(
        operation,
        caller,
        { params: {}, query: {}, body: undefined, strings: { root: undefined, location: "arguments" } },
        { ctx, deps, routes: operations },
      );
    const status = deps.indexer?.status();
    return {
      stats: plain(await read(statsRoute)),
      settlement: plain(await read(settlementRoute)),
      indexer: status ? { checkpoint: status.checkpoint, lastError: status.lastError ?? null } : null,
    };
  },
};

/** The tools: platform_status, then every operation that names a tool, in the catalog's order. */
export const MCP_TOOLS: readonly McpTool[] = [
  platformStatus,
  ...operations.flatMap((operation) =>
    "tool" in operation.mcp ? [operationTool(operation.mcp.tool, operation, operation.mcp.description)] : [],
  ),
];
