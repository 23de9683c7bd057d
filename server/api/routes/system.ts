/** Public reads about the service itself: stats, settlement configuration, the OpenAPI document. */
import { defineRoute, type AnyRoute } from "../route";
import { z } from "../../domain/schemas/common";
import { buildOpenApiDocument } from "../openapi";
import { readStats, statsSchema } from "../../domain/stats";
import { readSettlement, settlementSchema } from "../../domain/settlement";

export const statsRoute = defineRoute({
  method: "get",
  path: "/api/v1/stats",
  summary: "Marketplace figures",
  tags: ["public"],
  auth: "none",
  response: statsSchema,
  handler: ({ deps }) => readStats(deps),
});

export const settlementRoute = defineRoute({
  method: "get",
  path: "/api/v1/health/settlement",
  summary: "Posting chain, escrow, settlement token and batch support",
  tags: ["public"],
  auth: "none",
  response: settlementSchema,
  handler: ({ deps }) => readSettlement(deps),
});

const openApiDocumentSchema = z
  .object({ openapi: z.literal("3.0.3"), info: z.object({}).passthrough(), paths: z.object({}).passthrough() })
  .passthrough();

export const openApiRoute = defineRoute({
  method: "get",
  path: "/api/v1/openapi.json",
  summary: "This API's OpenAPI 3.0.3 document (served as the bare document, not in the envelope)",
  tags: ["public"],
  auth: "none",
  response: openApiDocumentSchema,
  rawResponse: { contentType: "application/json", description: "The OpenAPI 3.0.3 document itself" },
  handler: ({ ctx, deps }) => {
    const document = openApiDocument(deps.config.api.publicUrl) as z.input<typeof openApiDocumentSchema>;
    ctx.body = document;
    return document;
  },
});

let cached: { url: string; doc: unknown } | undefined;
function openApiDocument(url: string) {
  if (!cached || cached.url !== url) {
    // Imported lazily: the route list includes this route.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { allRoutes } = require("./index") as { allRoutes: AnyRoute[] };
    cached = { url, doc: buildOpenApiDocument(allRoutes, url) };
  }
  return cached.doc;
}

export const systemRoutes: AnyRoute[] = [statsRoute, settlementRoute, openApiRoute];
