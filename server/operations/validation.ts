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

/** Freezes a value and everything in it (a parsed value that requests share). */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/** Inputs whose parsed form one cache keeps: hot public reads repeat a few query strings (or tool arguments). */
const PARSE_CACHE_SIZE = 256;

/**
 * The validated form of an input by its raw text, so a repeated input skips parsing and the schema (a tenth of an
 * open-task listing's time; bench:api). Only successes are kept; the values are frozen because requests share them.
 * Use it only where the schema's output depends on the raw text alone.
 */
export function parseCache() {
  const cache = new Map<string, unknown>();
  return <T>(raw: string, parse: () => T): T => {
    const hit = cache.get(raw);
    if (hit !== undefined) return hit as T;
    const parsed = deepFreeze(parse());
    if (cache.size >= PARSE_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(raw, parsed);
    return parsed;
  };
}

/** In a `u` regex a surrogate pair is one code point, so this matches only lone surrogates. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** Keys a JSON body may not carry: they would reach object prototypes in code that copies the body. */
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/**
 * Every string of a parsed JSON value (keys too) must be well-formed UTF-16: a lone surrogate (`"\ud800"`) cannot be
 * encoded as UTF-8, so it could never reach the chain or the database intact. `__proto__` (and `constructor`,
 * `prototype`) keys are refused, as unknown keys are. Throws VALIDATION_ERROR naming the field. Iterative, so a deeply
 * nested body cannot exhaust the stack.
 */
export function checkJsonStrings(root: unknown, location: string): void {
  interface Node {
    value: unknown;
    parent?: Node;
    key?: string | number;
  }
  const pathOf = (node: Node) => {
    const path: (string | number)[] = [];
    for (let n: Node | undefined = node; n?.parent; n = n.parent) path.unshift(n.key!);
    return path;
  };
  const stack: Node[] = [{ value: root }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const { value } = node;
    if (typeof value === "string") {
      if (LONE_SURROGATE.test(value)) {
        throw new AppError({
          code: "VALIDATION_ERROR",
          message: `${fieldName(location, pathOf(node))}: contains a lone UTF-16 surrogate (not I-JSON)`,
        });
      }
    } else if (Array.isArray(value)) {
      value.forEach((item, key) => stack.push({ value: item, parent: node, key }));
    } else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) {
        const child = { value: item, parent: node, key };
        if (FORBIDDEN_KEYS.has(key) || LONE_SURROGATE.test(key)) {
          throw new AppError({
            code: "VALIDATION_ERROR",
            message: `${fieldName(location, pathOf(child))}: key not allowed; remove it`,
          });
        }
        stack.push(child);
      }
    }
  }
}
