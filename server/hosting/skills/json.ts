/**
 * The `json` skill: validates a JSON brief and reshapes it. The brief is JSON, or prose holding one JSON object
 * (jsonPaths.ts, parseJsonIn); anything else fails the job with a message saying so.
 *
 * - No `pick`: the whole value, with each `rename` entry moved from its path to its new path.
 * - `pick` (dotted paths): a new object holding only those values, each at its `rename` path if it has one, else at
 *   its own path. Every picked or renamed path must exist in the brief (the validation).
 *
 * @example
 *   config { pick: ["user.name", "id"], rename: { "user.name": "name" } }, brief {"id":7,"user":{"name":"Ada","age":36}}
 *   // { name: "Ada", id: 7 }
 */
import { z } from "../../schemas/common";
import { dottedPath, parseSkillConfig } from "./config";
import { deletePath, getPath, isJsonObject, parseJsonIn, setPath } from "./jsonPaths";
import type { SkillDefinition } from "./types";

const jsonConfig = z
  .object({
    pick: z.array(dottedPath).max(100).default([]),
    rename: z.record(dottedPath, dottedPath).default({}),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (Object.keys(c.rename).length > 100) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["rename"], message: "at most 100 entries" });
    }
    if (c.pick.length === 0) return;
    for (const from of Object.keys(c.rename)) {
      if (!c.pick.includes(from)) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["rename", from], message: "must be one of the pick paths" });
      }
    }
  });

export type JsonReshape = z.output<typeof jsonConfig>;

/** Reshapes the JSON of `briefText` as `config` says; throws when it is not JSON or lacks a named path. */
export function reshapeJson(briefText: string, config: JsonReshape): unknown {
  const parsed = parseJsonIn(briefText);
  if (!parsed) throw new Error("the brief is not valid JSON (nor text holding a JSON object)");
  const source = parsed.value;
  if (source === null) throw new Error("the brief is JSON null: there is nothing to answer");
  const renames = Object.entries(config.rename);
  if ((config.pick.length > 0 || renames.length > 0) && !isJsonObject(source)) {
    throw new Error("the brief is JSON but not an object: pick and rename need one");
  }
  const valueAt = (path: string) => {
    const found = getPath(source, path);
    if (!found.found) throw new Error(`the brief has no field ${path}`);
    return found.value;
  };
  if (config.pick.length > 0) {
    const out: Record<string, unknown> = {};
    for (const path of config.pick) setPath(out, config.rename[path] ?? path, valueAt(path));
    return out;
  }
  if (renames.length === 0) return source;
  const out = structuredClone(source) as Record<string, unknown>;
  const moved = renames.map(([from, to]) => ({ to, value: valueAt(from) }));
  for (const [from] of renames) deletePath(out, from);
  for (const { to, value } of moved) setPath(out, to, value);
  return out;
}

export const jsonSkill: SkillDefinition = {
  id: "json",
  title: "JSON validation and reshaping",
  description:
    "Checks the brief is JSON (or holds a JSON object) and answers it reshaped: `pick` keeps only the listed dotted " +
    "paths, `rename` moves a path to a new one. A brief that is not JSON, or lacks a named path, fails the job.",
  capabilities: ["json"],
  requiredSecrets: [],
  configFields: [
    { name: "pick", type: "string[]", required: false, default: [], description: "Dotted paths to keep (all if none)" },
    {
      name: "rename",
      type: "record<string,string>",
      required: false,
      default: {},
      description: "Dotted path -> new dotted path",
    },
  ],
  parseConfig: (config) => parseSkillConfig(jsonConfig, config),
  async run(job, context) {
    return reshapeJson(job.briefText, parseSkillConfig(jsonConfig, context.config));
  },
};
