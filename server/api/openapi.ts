/** The OpenAPI 3.0.3 document, generated from the same route definitions and schemas that validate requests. */
import { OpenAPIRegistry, OpenApiGeneratorV3, type RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "../domain/schemas/common";
import { errorEnvelope } from "../domain/schemas/common";
import { API_VERSION, type AnyOperation } from "../operations/operation";
import { operationErrorCodes } from "../operations/invoke";

export { API_VERSION };

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, "{$1}");

export function buildOpenApiDocument(routes: readonly AnyOperation[], serverUrl: string) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "ApiKey", { type: "apiKey", in: "header", name: "X-API-Key" });
  registry.registerComponent("securitySchemes", "Bearer", { type: "http", scheme: "bearer" });
  registry.register("ErrorEnvelope", errorEnvelope);

  for (const route of routes) {
    const errorResponse = {
      description: `Error envelope. Codes: ${operationErrorCodes(route).join(", ")}`,
      content: { "application/json": { schema: errorEnvelope } },
    };
    const config: RouteConfig = {
      method: route.method,
      path: toOpenApiPath(route.path),
      summary: route.summary,
      description: route.description,
      tags: route.tags,
      security: route.auth === "required" ? [{ ApiKey: [] }, { Bearer: [] }] : undefined,
      request: {
        params: route.request?.params,
        query: route.request?.query,
        body: route.request?.body
          ? { required: true, content: { "application/json": { schema: route.request.body } } }
          : undefined,
      },
      responses: {
        [route.successStatus ?? 200]: route.rawResponse
          ? {
              description: route.rawResponse.description,
              content: { [route.rawResponse.contentType]: { schema: route.response } },
            }
          : {
              description: "Success envelope",
              content: {
                "application/json": { schema: z.object({ success: z.literal(true), data: route.response }) },
              },
            },
        default: errorResponse,
      },
    };
    registry.registerPath(config);
  }

  const document = new OpenApiGeneratorV3(registry.definitions).generateDocument({
    openapi: "3.0.3",
    info: {
      title: "Escrow Task Marketplace API",
      version: API_VERSION,
      description:
        "Escrow task marketplace for software agents. Every response is the envelope { success, data | error }.",
    },
    servers: [{ url: serverUrl }],
  });
  return inlineNullableRefs(document);
}

type Schema = Record<string, unknown>;

const isBareNullable = (part: unknown) =>
  typeof part === "object" && part !== null && Object.keys(part).length === 1 && (part as Schema).nullable === true;

/**
 * zod-to-openapi writes nullable schemas in forms OpenAPI 3.0.3 validators reject, since `nullable` only takes effect
 * beside `type`: `{ allOf: [{ $ref }, { nullable: true }] }`, `{ $ref, nullable: true }` and, for any JSON value,
 * `{ nullable: true }` alone. Each is rewritten so a standard validator accepts the `null` the API sends (for example
 * `verificationCriteria`): a nullable `allOf` of one reference inlines the referenced schema with `nullable: true`;
 * elsewhere a `nullable` without a type (beside a `$ref`, whose siblings are ignored, or on a schema that already
 * admits any value) is dropped.
 */
export function inlineNullableRefs<D extends object>(document: D): D {
  const components = ((document as { components?: { schemas?: Record<string, Schema> } }).components?.schemas ??
    {}) as Record<string, Schema>;
  const typedTarget = (ref: unknown) => {
    const target = typeof ref === "string" ? components[ref.replace("#/components/schemas/", "")] : undefined;
    return target?.type !== undefined ? target : undefined;
  };
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== "object") return node;
    let schema = node as Schema;
    const allOf = schema.allOf as Schema[] | undefined;
    if (allOf?.some(isBareNullable)) {
      const rest = allOf.filter((part) => !isBareNullable(part));
      schema = { ...schema, nullable: true, allOf: rest };
    }
    if (schema.nullable === true && schema.type === undefined) {
      const parts = schema.allOf as Schema[] | undefined;
      const { allOf: _allOf, nullable: _nullable, ...rest } = schema;
      const only = parts?.length === 1 ? parts[0] : undefined;
      const target = only?.type !== undefined ? only : typedTarget(only?.$ref);
      if (target) return visit({ ...structuredClone(target), ...rest, nullable: true });
      // Beside a $ref, siblings are ignored; without any type, the schema already admits null.
      if (!schema.allOf && !schema.anyOf && !schema.oneOf) return visit(rest);
    }
    return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, visit(value)]));
  };
  return visit(document) as D;
}
