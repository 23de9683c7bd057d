/**
 * The Koa app factory. It does not listen: tests drive `app.callback()`, server/main.ts listens.
 * Order: envelope (errors, request id) -> per-IP window (per-agent for hosted agents' tokens) -> A2A JSON-RPC (/a2a/v1) -> MCP (/mcp) -> the web app
 * (any other GET path outside /api/) -> routes -> 404/405.
 */
import Koa from "koa";
import { AppError } from "../errors";
import { ipWindowLimit } from "./middleware/rateLimit";
import { buildRouter } from "./router";
import { allRoutes } from "./routes";
import type { AnyOperation } from "../operations/operation";
import type { Deps } from "../domain/deps";
import { envelope } from "./middleware/errors";
import { a2aJsonRpc } from "../protocols/a2a/jsonRpc";
import { mcpEndpoint } from "../protocols/mcp/endpoint";
import { webApp } from "./webApp";

export function createApp(deps: Deps, routes: readonly AnyOperation[] = allRoutes): Koa {
  const app = new Koa({ proxy: deps.config.api.trustProxy });
  app.silent = true; // errors are answered and logged by the envelope middleware
  const router = buildRouter(routes, deps);
  app.use(envelope(deps.logger));
  app.use(ipWindowLimit(deps.limits, deps.config.api.limits, deps.config.hostedAgents));
  app.use(a2aJsonRpc(deps, deps.logger.child({ component: "a2a" })));
  app.use(mcpEndpoint(deps));
  app.use(webApp(deps));
  app.use(router.routes());
  app.use(
    router.allowedMethods({
      throw: true,
      methodNotAllowed: () => new AppError({ code: "METHOD_NOT_ALLOWED", message: "method not allowed on this path" }),
      notImplemented: () => new AppError({ code: "METHOD_NOT_ALLOWED", message: "method not implemented" }),
    }),
  );
  return app;
}
