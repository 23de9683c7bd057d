import type { AnyRoute } from "../route";

export const taskBuildRoutes: AnyRoute[] = [];
