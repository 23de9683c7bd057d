import type { AnyRoute } from "../route";

export const executorRoutes: AnyRoute[] = [];
