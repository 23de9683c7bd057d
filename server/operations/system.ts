/** Public reads about the service itself: stats, settlement configuration, the OpenAPI document. */
import { defineRoute, type AnyRoute } from "../route";
import { z } from "../../domain/schemas/common";
import { buildOpenApiDocument } from "../openapi";
import { readStats } from "../../domain/stats";
import { statsSchema } from "../../domain/schemas/stats";
import { readSettlement } from "../../domain/settlement";
import { settlementSchema } from "../../domain/schemas/settlement";

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
  handler: ({ ctx, deps, routes }) => {
    const document = openApiDocument(routes, deps.config.api.publicUrl) as z.input<typeof openApiDocumentSchema>;
    ctx.body = document;
    return document;
  },
});

/** Documents built once per route list and public URL (an app built with other routes gets its own). */
const documents = new WeakMap<readonly AnyRoute[], Map<string, unknown>>();
function openApiDocument(routes: readonly AnyRoute[], url: string) {
  let byUrl = documents.get(routes);
  if (!byUrl) documents.set(routes, (byUrl = new Map()));
  if (!byUrl.has(url)) byUrl.set(url, buildOpenApiDocument(routes, url));
  return byUrl.get(url);
}

export const systemRoutes: AnyRoute[] = [statsRoute, settlementRoute, openApiRoute];
