/**
 * Every REST route: the operation catalog (server/operations), plus the routes that are the HTTP exchange itself
 * (Server-Sent Events, cards at their well-known URLs, the OpenAPI document). The OpenAPI document describes exactly
 * these.
 */
import type { AnyOperation } from "../../operations/operation";
import { operationGroups as op } from "../../operations";
import { deleteAgentRoute } from "../../operations/agents";
import { verifyRoute } from "../../operations/accounts";
import { openApiRoute } from "./openapi";
import { cardRoutes } from "./cards";
import { agentLogsRoute } from "./agentLogs";
import { eventsRoute } from "./events";
import { signOutRoute } from "./signOut";

export const allRoutes: AnyOperation[] = [
  ...op.system,
  openApiRoute,
  // Sign-out beside sign-in (it reads the presented credential itself, so REST holds it).
  ...op.accounts.flatMap((route) => (route === verifyRoute ? [route, signOutRoute] : [route])),
  ...op.oauth,
  ...op.storage,
  ...op.taskBuild,
  ...op.listings,
  ...op.executors,
  ...op.reputation,
  ...op.marketplace,
  ...op.delivery,
  ...op.credits,
  ...cardRoutes,
  ...op.services,
  // The log follow beside the owner's other routes of one agent (where the OpenAPI document has always listed it).
  ...op.agents.flatMap((route) => (route === deleteAgentRoute ? [route, agentLogsRoute] : [route])),
  eventsRoute,
  ...op.webhooks,
  ...op.devnet,
];
