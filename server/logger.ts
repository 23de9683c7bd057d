/**
 * Structured logging on pino: one JSON line per entry on stderr (`time` ISO-8601, `level` by name, `msg`, the base
 * and child fields, then the entry's fields). The service's `Logger` keeps the (message, fields) call shape so that
 * call sites read as sentences; errors under `error`, `err` or `cause` are serialized with their stack and causes,
 * bigints as exact numbers, and credentials under the redacted keys below never reach the log. A line written while
 * serving a request carries that request's `requestId` (server/observability/requestContext.ts).
 */
import pino, { type DestinationStream } from "pino";
import { currentRequest } from "./observability/requestContext";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

/** Keys whose values are replaced by "[redacted]" wherever they appear (top level or one object down). */
export const REDACTED_KEYS = ["privateKey", "apiKey", "authorization", "password", "secret", "sessionToken"] as const;

function wrap(logger: pino.Logger): Logger {
  return {
    debug: (msg, fields) => logger.debug(fields ?? {}, msg),
    info: (msg, fields) => logger.info(fields ?? {}, msg),
    warn: (msg, fields) => logger.warn(fields ?? {}, msg),
    error: (msg, fields) => logger.error(fields ?? {}, msg),
    child: (fields) => wrap(logger.child(fields)),
  };
}

/** A logger at `level` with `base` fields on every line, writing to stderr (or `destination`, for tests). */
export function createLogger(
  level: LogLevel = "info",
  base: Record<string, unknown> = {},
  destination: DestinationStream = pino.destination({ fd: 2, sync: true }),
): Logger {
  const root = pino(
    {
      level,
      base,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => {
        const request = currentRequest();
        return request ? { requestId: request.requestId } : {};
      },
      serializers: { error: pino.stdSerializers.err, err: pino.stdSerializers.err, cause: pino.stdSerializers.err },
      redact: {
        paths: REDACTED_KEYS.flatMap((key) => [key, `*.${key}`]),
        censor: "[redacted]",
      },
    },
    destination,
  );
  return wrap(root);
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = createLogger("silent");
