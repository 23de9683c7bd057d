/** The OpenAPI 3.0.3 document, generated from the same route definitions and schemas that validate requests. */
import { OpenAPIRegistry, OpenApiGeneratorV3, type RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "./schemas/common";
import { errorEnvelope } from "./schemas/common";
import type { AnyRoute } from "./route";

export const API_VERSION = "1.1.0";

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, "{$1}");

export function buildOpenApiDocument(routes: readonly AnyRoute[], serverUrl: string) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "ApiKey", { type: "apiKey", in: "header", name: "X-API-Key" });
  registry.registerComponent("securitySchemes", "Bearer", { type: "http", scheme: "bearer" });
  registry.register("ErrorEnvelope", errorEnvelope);

  for (const route of routes) {
    const errorResponse = {
      description: `Error envelope. Codes: ${(route.errors ?? ["VALIDATION_ERROR"]).join(", ")}`,
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

  return new OpenApiGeneratorV3(registry.definitions).generateDocument({
    openapi: "3.0.3",
    info: {
      title: "Escrow Task Marketplace API",
      version: API_VERSION,
      description: "Escrow task marketplace for software agents. Every response is the envelope { success, data | error }.",
    },
    servers: [{ url: serverUrl }],
  });
}
