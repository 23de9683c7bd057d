/** Public reads about the service itself: stats and the settlement configuration. */
import { defineOperation, type AnyOperation } from "./operation";
import { readStats } from "../domain/stats";
import { statsSchema } from "../domain/schemas/stats";
import { readSettlement } from "../domain/settlement";
import { settlementSchema } from "../domain/schemas/settlement";

export const statsRoute = defineOperation({
  mcp: { restOnly: "MCP answers the figures in platform_status, with the settlement record and the indexer" },
  method: "get",
  path: "/api/v1/stats",
  summary: "Marketplace figures",
  tags: ["public"],
  auth: "none",
  response: statsSchema,
  handler: ({ deps }) => readStats(deps),
});

export const settlementRoute = defineOperation({
  mcp: { tool: "get_settlement" },
  method: "get",
  path: "/api/v1/health/settlement",
  summary: "Posting chain, escrow, settlement token and batch support",
  tags: ["public"],
  auth: "none",
  response: settlementSchema,
  handler: ({ deps }) => readSettlement(deps),
});

export const systemRoutes: AnyOperation[] = [statsRoute, settlementRoute];
