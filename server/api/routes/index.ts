/**
 * Every REST route: the operation catalog (server/operations), plus the routes that are the HTTP exchange itself
 * (Server-Sent Events, cards at their well-known URLs, the OpenAPI document). The OpenAPI document describes exactly
 * these.
 */
import type { AnyOperation } from "../../operations/operation";
import { operationGroups as op } from "../../operations";
import { deleteAgentRoute } from "../../operations/agents";
import { openApiRoute } from "./openapi";
import { cardRoutes } from "./cards";
import { agentLogsRoute } from "./agentLogs";
import { eventRoutes } from "./events";

export const allRoutes: AnyOperation[] = [
  ...op.system,
  openApiRoute,
  ...op.accounts,
  ...op.storage,
  ...op.taskBuild,
  ...op.listings,
  ...op.executors,
  ...op.reputation,
  ...op.marketplace,
  ...op.delivery,
  ...cardRoutes,
  ...op.services,
  // The log follow beside the owner's other routes of one agent (where the OpenAPI document has always listed it).
  ...op.agents.flatMap((route) => (route === deleteAgentRoute ? [route, agentLogsRoute] : [route])),
  ...eventRoutes,
  ...op.devnet,
];
