/**
 * Canonical JSON of a deliverable and its evidence hash.
 *
 * The canonical form follows RFC 8785 (JSON Canonicalization Scheme): object keys sorted by their UTF-16 code units,
 * no whitespace, strings escaped as ECMAScript's JSON.stringify escapes them (only `"`, `\` and control characters;
 * `\b \t \n \f \r` short forms, other controls as lower-case `\u00xx`), numbers in ECMAScript's shortest round-trip
 * form (`1e+30`, `0.002`, `-0` as `0`). The evidence hash is keccak256 of the canonical text's UTF-8 bytes; it is
 * what `submitEvidence` records on-chain.
 *
 * Values JSON cannot carry canonically are refused with a CanonicalJsonError naming the path: non-finite numbers (a
 * body's `1e400` parses as Infinity), lone UTF-16 surrogates (RFC 8785 requires I-JSON), anything that is not a JSON
 * value, and nesting deeper than MAX_DEPTH (a recursion bound, so a hostile body cannot exhaust the stack).
 *
 * @example
 *   canonicalJson({ b: [1, 2.50], a: "x" }) // '{"a":"x","b":[1,2.5]}'
 *   evidenceHash({ answer: 42 })            // keccak256(toUtf8Bytes('{"answer":42}'))
 */
import { keccak256, toUtf8Bytes } from "ethers";

/** Deepest nesting of arrays and objects accepted (the top-level value is depth 1). */
export const MAX_DEPTH = 64;

export class CanonicalJsonError extends Error {
  override name = "CanonicalJsonError";
  /** Where the problem is, as `result.a[2]`. */
  readonly path: string;
  constructor(path: string, message: string) {
    super(`${path}: ${message}`);
    this.path = path;
  }
}

/** A lone (unpaired) UTF-16 surrogate anywhere in `s`. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function checkString(s: string, path: string): void {
  if (LONE_SURROGATE.test(s)) throw new CanonicalJsonError(path, "contains a lone UTF-16 surrogate (not I-JSON)");
}

/** Compares by UTF-16 code units, as RFC 8785 sorts property names (not by locale, not by code point). */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function write(value: unknown, path: string, depth: number, out: string[]): void {
  if (value === null) {
    out.push("null");
    return;
  }
  switch (typeof value) {
    case "boolean":
      out.push(value ? "true" : "false");
      return;
    case "number":
      if (!Number.isFinite(value)) throw new CanonicalJsonError(path, "is not a finite number");
      // ECMAScript Number::toString is RFC 8785's number form; JSON.stringify(-0) is "0".
      out.push(JSON.stringify(value));
      return;
    case "string":
      checkString(value, path);
      out.push(JSON.stringify(value));
      return;
    case "object":
      break;
    default:
      throw new CanonicalJsonError(path, `is not a JSON value (${typeof value})`);
  }
  if (depth >= MAX_DEPTH) throw new CanonicalJsonError(path, `nests deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) {
    out.push("[");
    value.forEach((item, i) => {
      if (i > 0) out.push(",");
      write(item, `${path}[${i}]`, depth + 1, out);
    });
    out.push("]");
    return;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    throw new CanonicalJsonError(path, "is not a plain JSON object");
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort(byCodeUnits);
  out.push("{");
  keys.forEach((key, i) => {
    checkString(key, `${path}.${key}`);
    if (i > 0) out.push(",");
    out.push(JSON.stringify(key), ":");
    write(record[key], `${path}.${key}`, depth + 1, out);
  });
  out.push("}");
}

/**
 * The RFC 8785 canonical JSON of `value` (a parsed JSON value). Throws CanonicalJsonError for what has no canonical
 * form; `path` names the root in messages (default `result`).
 */
export function canonicalJson(value: unknown, path = "result"): string {
  const out: string[] = [];
  write(value, path, 0, out);
  return out.join("");
}

/** keccak256 of the UTF-8 bytes of `canonical` (already canonical JSON), as 0x + 64 lower-case hex. */
export function hashCanonical(canonical: string): string {
  return keccak256(toUtf8Bytes(canonical));
}

/** The evidence hash of a result: keccak256 of its canonical JSON's UTF-8 bytes. */
export function evidenceHash(value: unknown): string {
  return hashCanonical(canonicalJson(value));
}

/** Bytes of `canonical` in UTF-8 (the size limit of a stored result is in bytes). */
export function utf8Length(canonical: string): number {
  return Buffer.byteLength(canonical, "utf8");
}
