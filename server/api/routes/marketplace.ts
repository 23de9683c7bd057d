import type { AnyRoute } from "../route";

export const marketplaceRoutes: AnyRoute[] = [];
