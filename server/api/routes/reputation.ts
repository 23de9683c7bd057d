import type { AnyRoute } from "../route";

export const reputationRoutes: AnyRoute[] = [];
