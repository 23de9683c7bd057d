/**
 * Turns every outcome into the envelope. AppErrors answer their code; anything else is a 500 with a generic message,
 * logged with its cause. Every error envelope carries the request id (`error.requestId`, also the X-Request-Id
 * header) that the request log line has (server/observability/requestLog.ts gives it, before this middleware).
 */
import type { Middleware } from "koa";
import { AppError } from "../../errors";
import type { Logger } from "../../logger";
import { requestIdFor } from "../../observability/requestContext";

export function envelope(logger: Logger): Middleware {
  return async (ctx, next) => {
    const requestId: string = ctx.state.requestId ?? requestIdFor(ctx.get("x-request-id"));
    ctx.state.requestId = requestId;
    ctx.set("X-Request-Id", requestId);
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError({ code: "NOT_FOUND", message: `no route ${ctx.method} ${ctx.path}` });
      }
    } catch (error) {
      if (error instanceof AppError) {
        ctx.status = error.status;
        for (const [name, value] of Object.entries(error.headers ?? {})) ctx.set(name, value);
        ctx.body = {
          success: false,
          error: {
            code: error.code,
            message: error.message,
            ...(error.reason ? { reason: error.reason } : {}),
            ...(error.details ? { details: error.details } : {}),
            requestId,
          },
        };
      } else {
        ctx.status = 500;
        ctx.body = {
          success: false,
          error: {
            code: "INTERNAL_ERROR",
            message: `internal error; quote request id ${requestId} when reporting it`,
            details: { requestId },
            requestId,
          },
        };
        logger.error("unhandled error", { requestId, method: ctx.method, path: ctx.path, error });
      }
    }
  };
}
