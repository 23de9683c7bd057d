import type { AnyRoute } from "../route";

export const deliveryRoutes: AnyRoute[] = [];
