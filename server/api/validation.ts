/** zod failures as AppErrors: the first issue's spec code (params.errorCode) or VALIDATION_ERROR, naming the field. */
import type { ZodError, ZodTypeAny, z } from "zod";
import { AppError, fieldName, type ErrorCode } from "../errors";

export function zodToAppError(error: ZodError, location: string): AppError {
  const first = error.issues[0];
  const code = ((first as { params?: { errorCode?: ErrorCode } }).params?.errorCode ?? "VALIDATION_ERROR") as ErrorCode;
  const field = fieldName(location, first.path);
  return new AppError({
    code,
    message: `${field}: ${first.message}`,
    details: {
      issues: error.issues.slice(0, 20).map((i) => ({ field: fieldName(location, i.path), message: i.message })),
    },
  });
}

export function parseOrThrow<S extends ZodTypeAny>(schema: S, value: unknown, location: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw zodToAppError(result.error, location);
  return result.data;
}
