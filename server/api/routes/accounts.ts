import type { AnyRoute } from "../route";

export const accountRoutes: AnyRoute[] = [];
