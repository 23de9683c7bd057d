import type { AnyRoute } from "../route";

export const storageRoutes: AnyRoute[] = [];
