/**
 * JSON helpers of the built-in skills: reading a brief that is JSON or holds a JSON object in its text, and getting
 * or setting a value at a dotted path (`user.name`, `items.0.id`). Only own properties are read; paths naming a
 * prototype are refused by the config schema (server/domain/agents/skills/config.ts, dottedPath).
 */

/** Whether `value` is a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The JSON value of `text`: the whole text when it parses, else the object from its first `{` to its last `}` (a
 * JSON object inside prose, as a model writes one). Undefined when neither parses.
 */
export function parseJsonIn(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    const start = text.indexOf("{");
    const end = text.lastIndexOf("}");
    if (start < 0 || end <= start) return undefined;
    try {
      return { value: JSON.parse(text.slice(start, end + 1)) as unknown };
    } catch {
      return undefined;
    }
  }
}

/** The value at `path` in `root`, or `{ found: false }` when a segment is missing. */
export function getPath(root: unknown, path: string): { found: true; value: unknown } | { found: false } {
  let current = root;
  for (const segment of path.split(".")) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9]\d*)$/.test(segment) || Number(segment) >= current.length) return { found: false };
      current = current[Number(segment)];
    } else if (isJsonObject(current) && Object.prototype.hasOwnProperty.call(current, segment)) {
      current = current[segment];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: current };
}

/** Sets `value` at `path` in `root`, making objects for missing segments (an existing non-object is replaced). */
export function setPath(root: Record<string, unknown>, path: string, value: unknown): void {
  const segments = path.split(".");
  let current = root;
  for (const segment of segments.slice(0, -1)) {
    const next = Object.prototype.hasOwnProperty.call(current, segment) ? current[segment] : undefined;
    if (!isJsonObject(next)) current[segment] = {};
    current = current[segment] as Record<string, unknown>;
  }
  current[segments[segments.length - 1]] = value;
}

/** Removes the value at `path` in `root` (objects only; nothing when absent). */
export function deletePath(root: Record<string, unknown>, path: string): void {
  const segments = path.split(".");
  const parent = getPath(root, segments.slice(0, -1).join("."));
  const holder = segments.length === 1 ? root : parent.found ? parent.value : undefined;
  if (isJsonObject(holder)) delete holder[segments[segments.length - 1]];
}

/**
 * The text a text skill works on: with `field`, the string at that path of the JSON brief (an error when the brief is
 * not JSON or the field is not a string); without, the `text` string of a brief that is a JSON object with one, else
 * the brief as is.
 */
export function textOfBrief(briefText: string, field: string | undefined): string {
  if (field === undefined) {
    let whole: unknown;
    try {
      whole = JSON.parse(briefText);
    } catch {
      return briefText;
    }
    return isJsonObject(whole) && typeof whole.text === "string" ? whole.text : briefText;
  }
  const parsed = parseJsonIn(briefText);
  if (!parsed) throw new Error(`the brief is not JSON, so it has no field ${field} (config.field)`);
  const found = getPath(parsed.value, field);
  if (!found.found) throw new Error(`the brief has no field ${field} (config.field)`);
  if (typeof found.value !== "string") throw new Error(`the brief's field ${field} is not a string (config.field)`);
  return found.value;
}
