/**
 * The API's outermost middleware: gives the request its id (the caller's sane X-Request-Id, else a fresh one),
 * answers it in the X-Request-Id header, serves the rest of the request inside that id's context (so every log line
 * written for it carries the id) and writes one JSON line per request when its answer is ready.
 */
import type { Middleware } from "koa";
import type { Logger } from "../logger";
import { requestIdFor, runInRequest } from "./requestContext";
import { routeLabel } from "./routeLabel";

/** `logger` undefined: ids and their context only, no request lines (LOG_REQUESTS=off). */
export function requestLog(logger: Logger | undefined): Middleware {
  return (ctx, next) => {
    const requestId = requestIdFor(ctx.get("x-request-id"));
    ctx.state.requestId = requestId;
    ctx.set("X-Request-Id", requestId);
    const started = process.hrtime.bigint();
    return runInRequest({ requestId }, async () => {
      try {
        await next();
      } finally {
        logger?.info("request", {
          method: ctx.method,
          path: ctx.path,
          route: routeLabel(ctx),
          status: ctx.status,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
          ip: ctx.ip,
          ...(ctx.state.rateLimited ? { rateLimited: ctx.state.rateLimited } : {}),
        });
      }
    });
  };
}
