/** This API's OpenAPI document: REST only, as it describes the REST routes themselves. */
import { defineOperation, type AnyOperation } from "../../operations/operation";
import { z } from "../../domain/schemas/common";
import { buildOpenApiDocument } from "../openapi";

const openApiDocumentSchema = z
  .object({ openapi: z.literal("3.0.3"), info: z.object({}).passthrough(), paths: z.object({}).passthrough() })
  .passthrough();

export const openApiRoute = defineOperation({
  mcp: { restOnly: "the document describes the REST routes themselves" },
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
const documents = new WeakMap<readonly AnyOperation[], Map<string, unknown>>();
function openApiDocument(routes: readonly AnyOperation[], url: string) {
  let byUrl = documents.get(routes);
  if (!byUrl) documents.set(routes, (byUrl = new Map()));
  if (!byUrl.has(url)) byUrl.set(url, buildOpenApiDocument(routes, url));
  return byUrl.get(url);
}
