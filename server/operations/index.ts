/** Every REST route. Adding a route file means adding its list here; the OpenAPI document follows. */
import type { AnyRoute } from "../route";
import { systemRoutes } from "./system";
import { accountRoutes } from "./accounts";
import { storageRoutes } from "./storage";
import { taskBuildRoutes } from "./tasks";
import { listingRoutes } from "./listings";
import { executorRoutes } from "./executors";
import { reputationRoutes } from "./reputation";
import { marketplaceRoutes } from "./marketplace";
import { deliveryRoutes } from "./delivery";
import { cardRoutes } from "./cards";
import { serviceRoutes } from "./services";
import { agentRoutes } from "./agents";
import { eventRoutes } from "./events";
import { devnetRoutes } from "./devnet";

export const allRoutes: AnyRoute[] = [
  ...systemRoutes,
  ...accountRoutes,
  ...storageRoutes,
  ...taskBuildRoutes,
  ...listingRoutes,
  ...executorRoutes,
  ...reputationRoutes,
  ...marketplaceRoutes,
  ...deliveryRoutes,
  ...cardRoutes,
  ...serviceRoutes,
  ...agentRoutes,
  ...eventRoutes,
  ...devnetRoutes,
];
