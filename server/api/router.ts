/**
 * The REST adapter: mounts the operations (and the REST-only routes) on a Koa router. Per route, in order: the
 * failed-authentication budget (posting routes), the caller (server/domain/callers.ts), body reading, then `invoke`
 * (server/operations/invoke.ts), whose result becomes `{ success: true, data }`.
 */
import Router from "@koa/router";
import type { Context } from "koa";
import { AppError } from "../errors";
import type { AnyOperation, Caller } from "../operations/operation";
import { checkAgentTokenAllowed, invoke } from "../operations/invoke";
import { SerializedData } from "../domain/readCache";
import type { Deps } from "../domain/deps";
import { readJsonBody } from "../protocols/http/body";
import { AuthFailure, authenticate, missingCredential } from "./middleware/auth";
import { checkFailedAuthBudget, countFailedAuth } from "./middleware/rateLimit";

async function resolveCaller(ctx: Context, route: AnyOperation, deps: Deps): Promise<Caller | undefined> {
  const { limits } = deps.config.api;
  if (route.posting) await checkFailedAuthBudget(ctx, deps.limits, limits);
  try {
    const caller = route.auth === "none" ? undefined : await authenticate(ctx, deps, Boolean(route.acceptsSession));
    if (!caller && route.auth === "required") throw missingCredential(Boolean(route.acceptsSession));
    // Before the body is read (invoke checks it again): a refused token is answered before any body error.
    checkAgentTokenAllowed(route, caller);
    return caller;
  } catch (error) {
    if (error instanceof AuthFailure && route.posting) await countFailedAuth(ctx, deps.limits, limits);
    throw error;
  }
}

export function buildRouter(routes: readonly AnyOperation[], deps: Deps): Router {
  const router = new Router();
  for (const route of routes) {
    router[route.method](route.path, async (ctx) => {
      const caller = await resolveCaller(ctx, route, deps);
      const rawBody =
        route.method === "post" || route.method === "patch"
          ? await readJsonBody(ctx, route.bodyLimit ?? deps.config.api.jsonBodyLimitBytes)
          : undefined;
      if (route.request?.body && rawBody === undefined) {
        throw new AppError({ code: "VALIDATION_ERROR", message: "body: a JSON object is required" });
      }
      const data = await invoke(
        route,
        caller,
        {
          params: ctx.params,
          // A repeated query string skips Koa's parsing and the schema.
          get query() {
            return ctx.query;
          },
          body: rawBody,
          strings: { root: rawBody, location: "body" },
          queryKey: `?${ctx.querystring}`,
        },
        { ctx, deps, routes },
      );
      if (ctx.body !== undefined) return; // the handler answered itself (a blob download)
      ctx.status = route.successStatus ?? 200;
      if (data instanceof SerializedData) {
        ctx.type = "application/json";
        ctx.body = data.envelope;
      } else {
        ctx.body = { success: true, data };
      }
    });
  }
  memoizeMatching(router);
  return router;
}

/** Distinct method and path shapes whose matched routes are kept. */
const MATCH_CACHE_SIZE = 1024;

/**
 * Path segments that are an id, an address or a hash: no route has such a literal segment (tested), so paths differing
 * only there match the same layers (the parameters are then read from the path itself), and share one kept match.
 */
const ID_SEGMENT = /\/(?:\d+|0x[0-9a-fA-F]{64}|0x[0-9a-fA-F]{40})(?=\/|$)/g;

/** The shape of a path for the kept matches: id, hash and address segments replaced by a placeholder each. */
export const pathShape = (path: string) =>
  path.replace(ID_SEGMENT, (segment) =>
    !segment.startsWith("/0x") ? "/:id" : segment.length === 43 ? "/:address" : "/:hash",
  );

/**
 * @koa/router tests every route's pattern against each request's path (about a fifth of a cached listing's server
 * time, bench:api); the layers a method and path match depend on nothing else, so they are kept, by the path's shape.
 * Each request gets its own copy of the matched lists (the router stores one on the context, where another router
 * could add to it).
 */
function memoizeMatching(router: Router): void {
  const match = router.match.bind(router);
  const matches = new Map<string, ReturnType<typeof match>>();
  router.match = (path: string, method: string) => {
    const key = `${method} ${pathShape(path)}`;
    let hit = matches.get(key);
    if (hit === undefined) {
      hit = match(path, method);
      if (matches.size >= MATCH_CACHE_SIZE) matches.delete(matches.keys().next().value!);
      matches.set(key, hit);
    }
    return { ...hit, path: [...hit.path], pathAndMethod: [...hit.pathAndMethod] };
  };
}
