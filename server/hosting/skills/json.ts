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
import { parseSkillConfig } from "../../domain/agents/skills/config";
import { jsonConfig, type JsonReshape } from "../../domain/agents/skills/specs";
import { deletePath, getPath, isJsonObject, parseJsonIn, setPath } from "./jsonPaths";
import type { SkillRun } from "./types";

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

/** The `json` skill's run: the brief reshaped as its config says. */
export const runJson: SkillRun = async (job, context) =>
  reshapeJson(job.briefText, parseSkillConfig(jsonConfig, context.config));
