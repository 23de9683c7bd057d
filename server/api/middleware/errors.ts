/**
 * First middleware: gives every request an id, and turns every outcome into the envelope. AppErrors answer their
 * code; anything else is a 500 with a generic message and the request id, logged with its cause.
 */
import crypto from "node:crypto";
import type { Middleware } from "koa";
import { AppError } from "../../errors";
import type { Logger } from "../../logger";

const REQUEST_ID = /^[A-Za-z0-9._-]{8,64}$/;

export function envelope(logger: Logger): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get("x-request-id");
    const requestId = REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    ctx.state.requestId = requestId;
    ctx.set("X-Request-Id", requestId);
    const started = Date.now();
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
          },
        };
        logger.error("unhandled error", { requestId, method: ctx.method, path: ctx.path, error });
      }
    } finally {
      logger.debug("request", {
        requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Date.now() - started,
      });
    }
  };
}
