/**
 * The operation catalog: everything the product offers, each declared once. REST serves every one (with its own
 * stream, card and document routes beside them: server/api/routes), the OpenAPI document describes them, and MCP
 * offers each one that names a tool. Adding an operation means adding it to its file's list.
 */
import type { AnyOperation } from "./operation";
import { systemRoutes } from "./system";
import { accountRoutes } from "./accounts";
import { oauthRoutes } from "./oauth";
import { storageRoutes } from "./storage";
import { taskBuildRoutes } from "./tasks";
import { listingRoutes } from "./listings";
import { executorRoutes } from "./executors";
import { reputationRoutes } from "./reputation";
import { marketplaceRoutes } from "./marketplace";
import { deliveryRoutes } from "./delivery";
import { creditRoutes } from "./credits";
import { serviceRoutes } from "./services";
import { agentRoutes } from "./agents";
import { webhookRoutes } from "./webhooks";
import { devnetRoutes } from "./devnet";

/** The catalog by subject, in the order REST mounts them. */
export const operationGroups = {
  system: systemRoutes,
  accounts: accountRoutes,
  oauth: oauthRoutes,
  storage: storageRoutes,
  taskBuild: taskBuildRoutes,
  listings: listingRoutes,
  executors: executorRoutes,
  reputation: reputationRoutes,
  marketplace: marketplaceRoutes,
  delivery: deliveryRoutes,
  credits: creditRoutes,
  services: serviceRoutes,
  agents: agentRoutes,
  webhooks: webhookRoutes,
  devnet: devnetRoutes,
} as const satisfies Record<string, readonly AnyOperation[]>;

export const operations: readonly AnyOperation[] = Object.values(operationGroups).flat();
