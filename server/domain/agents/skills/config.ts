/**
 * Config checks shared by the built-in skills: one zod schema per skill validates an install's config and fills in
 * its defaults; the first problem is answered as VALIDATION_ERROR naming the field (`config.maxSentences: ...`).
 */
import { fail, fieldName } from "../../../errors";
import { z } from "../../schemas/common";

/** Parses `raw` (undefined: an empty config) with `schema`, or fails naming the first bad field. */
export function parseSkillConfig<S extends z.ZodTypeAny>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  return fail("VALIDATION_ERROR", `${fieldName("config", issue.path)}: ${issue.message}`);
}

/** A dotted path into JSON objects (`user.name`, `items.0.id`): no empty segment, nothing that reaches a prototype. */
export const dottedPath = z
  .string()
  .min(1, "must not be empty")
  .max(200, "must be at most 200 characters")
  .refine((p) => p.split(".").every((s) => s !== ""), "must not have an empty segment (a.b, not a..b)")
  .refine(
    (p) => p.split(".").every((s) => !["__proto__", "prototype", "constructor"].includes(s)),
    "must not name __proto__, prototype or constructor",
  );
