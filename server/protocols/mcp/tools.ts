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
import { taskBuildTermsSchema } from "../../domain/schemas/posting";

export interface ToolCall {
  args: Record<string, unknown>;
  caller: Caller;
  deps: Deps;
  /** The /mcp request (its IP counts against the posting buckets, as on REST). */
  ctx: Context;
}

/** MCP tool annotations: hints a host shows or acts on (confirming before a destructive call, retrying an idempotent one). */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface McpTool {
  name: string;
  description: string;
  readOnly: boolean;
  annotations: ToolAnnotations;
  /** JSON Schema of the arguments (from the zod schemas). */
  inputSchema: Record<string, unknown>;
  /** Read tools: JSON Schema of structuredContent (the operation's data). */
  outputSchema?: Record<string, unknown>;
  /** The operation the tool runs (none for platform_status, which composes two). */
  operation?: AnyOperation;
  run(call: ToolCall): Promise<unknown>;
}

type JsonObjectSchema = { type: "object"; properties: Record<string, unknown>; required?: string[] };
type JsonSchema = Record<string, unknown>;
/** What `.openapi()` records on a zod schema (zod-to-openapi keeps it in `_def.openapi.metadata`). */
type OpenApiMetadata = { description?: string; example?: unknown; type?: string; format?: string; $ref?: string };

/** The `.openapi()` metadata of `schema`, looked for on it and then through its wrappers (optional, default, ...). */
function metadataOf(schema: ZodTypeAny | undefined): OpenApiMetadata {
  const found: OpenApiMetadata = {};
  for (let s: ZodTypeAny | undefined = schema; s;) {
    const def = s._def as { openapi?: { metadata?: OpenApiMetadata }; innerType?: ZodTypeAny; schema?: ZodTypeAny };
    const metadata = def.openapi?.metadata ?? {};
    for (const key of ["description", "example", "type", "format", "$ref"] as const) {
      if (found[key] === undefined && metadata[key] !== undefined)
        (found as Record<string, unknown>)[key] = metadata[key];
    }
    s = def.innerType ?? def.schema;
  }
  return found;
}

/** The fields of an object schema (through refinements), or none. */
function shapeOf(schema: ZodTypeAny | undefined): Record<string, ZodTypeAny> {
  for (let s: ZodTypeAny | undefined = schema; s;) {
    const def = s._def as { shape?: () => Record<string, ZodTypeAny>; schema?: ZodTypeAny; innerType?: ZodTypeAny };
    if (typeof def.shape === "function") return def.shape();
    s = def.schema ?? def.innerType;
  }
  return {};
}

/** The schema inside `schema`'s wrappers (optional, nullable, default, refinements, pipelines), for its kind's parts. */
function unwrapped(schema: ZodTypeAny | undefined): ZodTypeAny | undefined {
  for (let s: ZodTypeAny | undefined = schema; s;) {
    const def = s._def as { innerType?: ZodTypeAny; schema?: ZodTypeAny; in?: ZodTypeAny; typeName?: string };
    const next = def.innerType ?? def.schema ?? def.in;
    if (!next) return s;
    s = next;
  }
  return undefined;
}

/** An array schema's element, a record's value schema (through wrappers), or undefined. */
function elementOf(schema: ZodTypeAny | undefined): ZodTypeAny | undefined {
  const def = unwrapped(schema)?._def as { type?: ZodTypeAny; valueType?: ZodTypeAny } | undefined;
  return def?.type ?? def?.valueType;
}

/**
 * Schemas that a field's element documents by `$ref` only, because its operation validates the entries one by one
 * after the envelope (a batch's tasks, each refusal reported with its index): a tool declares them inline.
 */
const REFERENCED: Record<string, ZodTypeAny> = { "#/components/schemas/TaskBuildTerms": taskBuildTermsSchema };

/**
 * `json` with one JSON type: of alternatives (anyOf, oneOf, a list of types) the string one, else the first that is
 * not null or "absent" (`not: {}`, an optional's converted form); of the steps of a piped value (allOf: parsed, then
 * checked again in the parsed form) the first one's type, which is what the caller sends, with the constraints of the
 * steps of that type (a comma-separated string that becomes an array is declared a string).
 */
function oneType(json: JsonSchema): JsonSchema {
  let property = { ...json };
  const branches = (property.anyOf ?? property.oneOf) as JsonSchema[] | undefined;
  if (branches) {
    const typed = branches.map(oneType).filter((b) => b.type !== "null" && b.not === undefined);
    const pick = typed.find((b) => b.type === "string") ?? typed[0] ?? {};
    const { anyOf: _a, oneOf: _o, ...rest } = property;
    property = { ...rest, ...pick };
  }
  const parts = property.allOf as JsonSchema[] | undefined;
  if (parts) {
    const typed = parts.map(oneType).filter((b) => typeof b.type === "string");
    const first = typed[0]?.type;
    const { allOf: _all, ...rest } = property;
    property = Object.assign({}, ...typed.filter((b) => b.type === first), rest, first ? { type: first } : {});
  }
  if (Array.isArray(property.type)) {
    const types = (property.type as string[]).filter((t) => t !== "null");
    property.type = types.includes("string") ? "string" : types[0];
  }
  return property;
}

/**
 * A property as a tool declares it: one JSON type (function-calling dialects refuse a list of types; REST may accept
 * several, and the tool's arguments still run through REST's parser, so a string of digits is declared a string),
 * never an empty schema (an untyped value takes the type its OpenAPI metadata gives, else object), and the
 * description and example its zod schema carries.
 */
function toolProperty(json: JsonSchema, zod: ZodTypeAny | undefined): JsonSchema {
  const property = oneType(json);
  const metadata = metadataOf(zod);
  if (property.type === undefined && property.properties === undefined && property.items === undefined) {
    property.type = metadata.type ?? "object";
    if (metadata.format && property.format === undefined) property.format = metadata.format;
  }
  if (property.description === undefined && metadata.description) property.description = metadata.description;
  if (property.examples === undefined && metadata.example !== undefined) {
    const example = metadata.example;
    const fits = property.type === "string" ? typeof example === "string" : typeof example !== "string";
    if (fits) property.examples = [example];
  }
  return nested(property, zod);
}

const isEmptySchema = (value: unknown) =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;

/** The properties, array items and record values inside `property`, each declared as a tool property is. */
function nested(property: JsonSchema, zod: ZodTypeAny | undefined): JsonSchema {
  const out = { ...property };
  if (out.properties && typeof out.properties === "object") {
    const shape = shapeOf(zod);
    out.properties = Object.fromEntries(
      Object.entries(out.properties as Record<string, JsonSchema>).map(([name, child]) => [
        name,
        toolProperty(child, shape[name]),
      ]),
    );
  }
  const element = elementOf(zod);
  if (out.items && typeof out.items === "object" && !Array.isArray(out.items)) {
    const ref = metadataOf(element).$ref;
    out.items =
      ref && REFERENCED[ref]
        ? termsOf(REFERENCED[ref], metadataOf(element))
        : toolProperty(out.items as JsonSchema, element);
  }
  // A map whose values may be anything (`{}`) says so by declaring none, JSON Schema's default.
  if (isEmptySchema(out.additionalProperties)) delete out.additionalProperties;
  if (out.additionalProperties && typeof out.additionalProperties === "object") {
    out.additionalProperties = toolProperty(out.additionalProperties as JsonSchema, element);
  }
  return out;
}

/** A referenced object schema declared inline: its fields as tool properties, its description kept. */
function termsOf(schema: ZodTypeAny, metadata: OpenApiMetadata): JsonSchema {
  const { properties, required } = jsonSchemaOf(schema);
  const description = metadata.description ?? metadataOf(schema).description;
  return {
    type: "object",
    ...(description ? { description } : {}),
    properties,
    ...(required && required.length > 0 ? { required } : {}),
  };
}

function jsonSchemaOf(schema: ZodTypeAny | undefined): JsonObjectSchema {
  if (!schema) return { type: "object", properties: {} };
  // The converter's generic types recurse through our schemas' depth: call it untyped.
  const convert = zodToJsonSchema as unknown as (schema: unknown, options: object) => unknown;
  const json = convert(schema, { target: "jsonSchema7", $refStrategy: "none", effectStrategy: "input" }) as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  const shape = shapeOf(schema);
  const properties = Object.fromEntries(
    Object.entries(json.properties ?? {}).map(([name, property]) => [name, toolProperty(property, shape[name])]),
  );
  return { type: "object", properties, required: json.required ?? [] };
}

/** JSON Schema with every `additionalProperties: false` dropped (an answer may carry fields added since). */
function open(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(open);
  if (schema === null || typeof schema !== "object") return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key, value]) => !(key === "additionalProperties" && value === false))
      .map(([key, value]) => [key, open(value)]),
  );
}

/** Keywords that describe a value without constraining it. */
const ANNOTATIONS = new Set(["description", "title", "default", "examples", "example"]);
const ANY_JSON_VALUE = ["object", "array", "string", "number", "boolean", "null"].map((type) => ({ type }));

/**
 * An output schema in the portable spelling (the MCP Inspector's --strict check): a nullable value's list of types
 * as anyOf branches of one type each (the constraints on the non-null branch, the description beside them), and a
 * value that may be any JSON (`{}`) as the branches of every JSON type; a map's values that may be anything are left
 * undeclared (JSON Schema's default).
 */
function portable(node: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...node };
  if (out.properties && typeof out.properties === "object") {
    out.properties = Object.fromEntries(
      Object.entries(out.properties as Record<string, JsonSchema>).map(([name, child]) => [name, portable(child)]),
    );
  }
  if (out.items && typeof out.items === "object" && !Array.isArray(out.items))
    out.items = portable(out.items as JsonSchema);
  const values = out.additionalProperties;
  if (values && typeof values === "object") {
    if (Object.keys(values).every((key) => ANNOTATIONS.has(key))) delete out.additionalProperties;
    else out.additionalProperties = portable(values as JsonSchema);
  }
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    if (Array.isArray(out[key])) out[key] = (out[key] as JsonSchema[]).map(portable);
  }
  if (Array.isArray(out.type)) {
    const notes = Object.fromEntries(Object.entries(out).filter(([key]) => ANNOTATIONS.has(key)));
    const constraints = Object.fromEntries(
      Object.entries(out).filter(([key]) => !ANNOTATIONS.has(key) && key !== "type"),
    );
    const branches = (out.type as string[]).map((type) => (type === "null" ? { type } : { type, ...constraints }));
    return branches.length === 1 ? { ...notes, ...branches[0] } : { ...notes, anyOf: branches };
  }
  if (Object.keys(out).every((key) => ANNOTATIONS.has(key))) return { ...out, anyOf: ANY_JSON_VALUE };
  return out;
}

/** The JSON Schema of an operation's data. */
function dataSchemaOf(response: ZodTypeAny): JsonSchema {
  const convert = zodToJsonSchema as unknown as (schema: unknown, options: object) => unknown;
  const json = open(convert(response, { target: "jsonSchema7", $refStrategy: "none" })) as JsonSchema;
  delete json.$schema;
  return json;
}

/**
 * The schema of a tool's structuredContent: the operation's data (an object, or `{ result }` around anything else,
 * as endpoint.ts answers it), beside the `error` a failed call carries instead. The MCP SDK's client checks error
 * results against it too, so nothing at the top is required.
 */
function outputSchemaOf(response: ZodTypeAny): Record<string, unknown> {
  const json = portable(dataSchemaOf(response));
  const data: Record<string, unknown> =
    json.type === "object" && json.properties ? (json.properties as Record<string, unknown>) : { result: json };
  return {
    type: "object",
    properties: {
      ...data,
      error: {
        type: "object",
        description: "A failed call: the REST error (code, message, details)",
        properties: { code: { type: "string" }, message: { type: "string" } },
      },
    },
  };
}

/**
 * What a tool's operation is, as MCP annotations: a GET only reads; DELETE removes (destructive); GET, PATCH and
 * DELETE give the same outcome when repeated; every tool acts on this marketplace alone (not an open world).
 */
function annotationsOf(operation: AnyOperation): ToolAnnotations {
  return {
    readOnlyHint: operation.method === "get",
    destructiveHint: operation.method === "delete",
    idempotentHint: operation.method !== "post",
    openWorldHint: false,
  };
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
    annotations: annotationsOf(operation),
    inputSchema: mergedSchema(operation),
    ...(reads ? { outputSchema: outputSchemaOf(operation.response) } : {}),
    operation,
    async run({ args, caller, deps, ctx }) {
      // The arguments split in one pass (a call's own cost: three passes of entries and fromEntries were a tenth of
      // a browse_tasks call).
      const params: Record<string, unknown> = {};
      const query: Record<string, unknown> = {};
      const rest: Record<string, unknown> = {};
      for (const key of Object.keys(args)) {
        const path = paramKeys.has(key);
        const inQuery = queryKeys.has(key);
        if (path) put(params, key, args[key]);
        if (inQuery) put(query, key, args[key]);
        if (!path && !inQuery) put(rest, key, args[key]);
      }
      checkAgentTokenAllowed(operation, caller); // before any argument error, as on REST
      if (!operation.request?.body && Object.keys(rest).length > 0) {
        throw new AppError({
          code: "VALIDATION_ERROR",
          message: `arguments: unknown field(s) ${Object.keys(rest).join(", ")}`,
          details: { field: "arguments" },
        });
      }
      // A pre-serialized page stays so: the tool result reuses its JSON text (endpoint.ts toolResult).
      return invoke(
        operation,
        caller,
        {
          params,
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

/** Sets `target[key]` as an own property, as Object.fromEntries would (also for a key named `__proto__`). */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

const platformStatus: McpTool = {
  name: "platform_status",
  description: "Marketplace figures, the settlement record and the indexer's progress in one call",
  readOnly: true,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: { type: "object", properties: {}, additionalProperties: false },
  outputSchema: {
    type: "object",
    properties: {
      stats: portable(dataSchemaOf(statsRoute.response)),
      settlement: portable(dataSchemaOf(settlementRoute.response)),
      indexer: portable({
        type: ["object", "null"],
        description: "The indexer's checkpoint and last error; null when this process runs no indexer",
      }),
      error: { type: "object", description: "A failed call: the REST error (code, message, details)" },
    },
  },
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
