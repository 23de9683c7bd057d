/**
 * The Koa app factory. It does not listen: tests drive `app.callback()`, server/main.ts listens.
 * Order: request log (request id, one line per request) -> metrics (when enabled) -> CORS of /mcp and the OAuth
 * endpoints (their headers on every answer, errors included; preflights answered) -> envelope (errors) -> /metrics,
 * /health/live, /health/ready -> per-IP window (per-agent for hosted agents' tokens) -> A2A JSON-RPC (/a2a/v1) -> OAuth
 * (MCP authorization: /.well-known/oauth-*, /oauth/register, /oauth/token, /oauth/revoke) -> MCP (/mcp) -> the web app
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
import { oauthEndpoints } from "../protocols/oauth/endpoints";
import { mcpCors } from "../protocols/mcp/cors";
import { webApp } from "./webApp";
import { requestLog } from "../observability/requestLog";
import { createMetrics, metricsRoute, type Metrics } from "../observability/metrics";
import { healthRoutes } from "../observability/health";

export interface AppOptions {
  /** The process's metrics (shared with a METRICS_PORT listener); made here when METRICS=on and none is given. */
  metrics?: Metrics;
  /** True once the process is shutting down: readiness answers 503 so traffic drains. */
  draining?: () => boolean;
}

export function createApp(deps: Deps, routes: readonly AnyOperation[] = allRoutes, options: AppOptions = {}): Koa {
  const app = new Koa({ proxy: deps.config.api.trustProxy });
  app.silent = true; // errors are answered and logged by the envelope middleware
  const router = buildRouter(routes, deps);
  const metrics = options.metrics ?? (deps.config.observability.metricsOnApi ? createMetrics(deps) : undefined);
  app.use(requestLog(deps.config.observability.logRequests ? deps.logger.child({ component: "http" }) : undefined));
  if (metrics) app.use(metrics.middleware());
  app.use(mcpCors());
  app.use(envelope(deps.logger));
  if (metrics && deps.config.observability.metricsOnApi) app.use(metricsRoute(metrics));
  app.use(healthRoutes(deps, { draining: options.draining }));
  app.use(ipWindowLimit(deps.limits, deps.config.api.limits, deps.config.hostedAgents));
  app.use(a2aJsonRpc(deps, deps.logger.child({ component: "a2a" })));
  app.use(oauthEndpoints(deps));
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
