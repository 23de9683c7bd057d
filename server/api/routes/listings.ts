import type { AnyRoute } from "../route";

export const listingRoutes: AnyRoute[] = [];
