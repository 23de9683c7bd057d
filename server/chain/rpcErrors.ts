/**
 * Classification of RPC failures: a retry can help (network, timeouts, rate limits, overloaded nodes), the request
 * asked for too much (a log range to shrink), or it cannot succeed as sent.
 */
import { isHexString } from "ethers";
import { TaskEscrow__factory } from "../../typechain-types";

const escrowInterface = TaskEscrow__factory.createInterface();

export type RpcErrorKind = "retryable" | "range-too-large" | "fatal";

const RANGE_PATTERNS = [
  /block range/i,
  /range (is )?too (large|wide|big)/i,
  /too many (results|logs|blocks)/i,
  /query returned more than/i,
  /response (size )?(exceeded|too large)/i,
  /limit exceeded/i,
  /exceed(s|ed) (the )?max/i,
];
const RETRYABLE_CODES = new Set([
  "NETWORK_ERROR",
  "TIMEOUT",
  "SERVER_ERROR",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
]);
const RETRYABLE_PATTERNS = [
  /fetch failed/i,
  /socket hang up/i,
  /timeout/i,
  /timed out/i,
  /rate limit/i,
  /too many requests/i,
  /\b(429|502|503|504)\b/,
  /header not found/i,
  /temporarily unavailable/i,
  /connect(ion)? (refused|reset)/i,
  /missing response/i,
  /could not coalesce/i,
];

const RATE_LIMITED = [/rate limit/i, /too many requests/i, /\b429\b/, /exceeded maximum retry limit/i];
/** JSON-RPC codes of a request that cannot succeed as sent (parse error, invalid request, unknown method, bad params). */
const MALFORMED_REQUEST = new Set([-32700, -32600, -32601, -32602]);

export function classifyRpcError(error: unknown): RpcErrorKind {
  const { codes, messages, rpcCodes } = unwrap(error);
  const text = messages.join(" | ");
  // A rate limit is retried, never mistaken for a range too large (which would shrink the log range for good).
  if (rpcCodes.includes(429) || RATE_LIMITED.some((p) => p.test(text))) return "retryable";
  if (rpcCodes.includes(-32005) || RANGE_PATTERNS.some((p) => p.test(text))) return "range-too-large";
  // Checked before the text patterns: ethers wraps such errors as "could not coalesce error".
  if (rpcCodes.some((c) => MALFORMED_REQUEST.has(c))) return "fatal";
  if (codes.some((c) => RETRYABLE_CODES.has(c))) return "retryable";
  if (rpcCodes.some((c) => c === -32603 || c === -32000 || c === 429)) return "retryable";
  if (RETRYABLE_PATTERNS.some((p) => p.test(text))) return "retryable";
  return "fatal";
}

export interface RetryOptions {
  retries?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  /** Stops the retries: checked before each wait and after it (a `sleep` that ends early on abort cuts the wait). */
  signal?: { aborted: boolean };
  /** How the wait between attempts is slept (default: a real timer). */
  sleep?: (ms: number) => Promise<void>;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Exponential backoff with full jitter, capped. */
export function backoffDelay(attempt: number, baseDelayMs = 200, maxDelayMs = 30_000): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

/** Runs `fn`, retrying retryable failures with backoff (`retries` times, default 5). Others are thrown at once. */
export async function withRetry<T>(fn: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const retries = options.retries ?? 5;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (classifyRpcError(error) !== "retryable" || attempt >= retries || options.signal?.aborted) throw error;
      const delay = backoffDelay(attempt, options.baseDelayMs, options.maxDelayMs);
      options.onRetry?.(error, attempt + 1, delay);
      await (options.sleep ?? sleep)(delay);
      if (options.signal?.aborted) throw error;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Reading what an error wraps, a revert, a refused broadcast
// ---------------------------------------------------------------------------------------------------------------

/**
 * Codes (ethers' string codes and JSON-RPC numeric codes), messages and revert data of an error and everything it
 * wraps (ethers' info/error, Hardhat's parent, causes), breadth first.
 */
export function unwrap(error: unknown): { codes: string[]; rpcCodes: number[]; messages: string[]; data: string[] } {
  const codes: string[] = [];
  const rpcCodes: number[] = [];
  const messages: string[] = [];
  const data: string[] = [];
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0 && seen.size < 24) {
    const current = queue.shift();
    if (!current || typeof current !== "object" || seen.has(current)) continue;
    seen.add(current);
    const e = current as Record<string, unknown>;
    if (typeof e.code === "string") codes.push(e.code);
    if (typeof e.code === "number") rpcCodes.push(e.code);
    if (typeof e.message === "string") messages.push(e.message);
    if (typeof e.shortMessage === "string") messages.push(e.shortMessage);
    if (typeof e.data === "string" && isHexString(e.data) && e.data.length >= 10) data.push(e.data);
    for (const k of ["error", "info", "cause", "parent", "data"])
      if (e[k] && typeof e[k] === "object") queue.push(e[k]);
  }
  return { codes, rpcCodes, messages, data };
}

/** A revert of `eth_estimateGas`: the escrow's custom error when it can be decoded. */
export interface RevertReason {
  /** The custom error's name (`SelfAssignment`), or undefined for a revert without decodable data. */
  name?: string;
  /** The error with its arguments (`InvalidStatus(1, 0)`), or the node's message. */
  text: string;
}

/** The revert an estimate failed with, or undefined when the failure is not a revert (network, node). */
export function revertReason(error: unknown): RevertReason | undefined {
  const { codes, messages, data } = unwrap(error);
  for (const d of data) {
    try {
      const parsed = escrowInterface.parseError(d);
      if (parsed) return { name: parsed.name, text: `${parsed.name}(${parsed.args.map(String).join(", ")})` };
    } catch {
      // not an escrow error: try the next
    }
  }
  const revert = (error as { revert?: { name?: string; args?: unknown[] } })?.revert;
  if (revert?.name) return { name: revert.name, text: `${revert.name}(${(revert.args ?? []).map(String).join(", ")})` };
  const text = messages.join(" | ");
  const custom = /custom error '([A-Za-z_][A-Za-z0-9_]*)\(/.exec(text);
  if (custom) return { name: custom[1], text: custom[1] + "()" };
  if (codes.includes("CALL_EXCEPTION") || /revert/i.test(text)) return { text: messages[0] ?? "reverted" };
  return undefined;
}

/**
 * How a node answered `eth_sendRawTransaction` with an error:
 * - `known`: it already has this very transaction (same hash): as good as accepted;
 * - `nonce-used`: the nonce is already mined (by this transaction or another: look at the receipt);
 * - `underpriced`: another transaction with this nonce waits in its pool;
 * - `underfunded`: the verifier cannot pay the gas;
 * - `rejected`: the transaction itself is invalid for this chain and never will be valid;
 * - `retryable`: anything else (network, timeouts, overloaded node, an unknown message): trying again may work.
 */
export type BroadcastFailure = "known" | "nonce-used" | "underpriced" | "underfunded" | "rejected" | "retryable";

export function classifyBroadcastError(error: unknown): BroadcastFailure {
  const { codes, messages } = unwrap(error);
  const text = messages.join(" | ");
  if (/already known|known transaction|already imported|alreadyknown|already in (the )?(mem)?pool/i.test(text)) {
    return "known";
  }
  if (codes.includes("NONCE_EXPIRED") || /nonce (is )?too low|nonce has already been used|oldnonce/i.test(text)) {
    return "nonce-used";
  }
  if (
    codes.includes("REPLACEMENT_UNDERPRICED") ||
    /replacement (transaction )?(is )?underpriced|replacement fee/i.test(text)
  ) {
    return "underpriced";
  }
  if (codes.includes("INSUFFICIENT_FUNDS") || /insufficient funds|enough funds/i.test(text)) return "underfunded";
  if (
    /invalid (sender|signature|chain ?id)|incompatible with chain|intrinsic gas too low|exceeds block gas limit|transaction type not supported|only replay-protected|oversized data|exceeds the configured cap/i.test(
      text,
    )
  ) {
    return "rejected";
  }
  return "retryable";
}

/** The first message of an error, at most 500 characters. */
export const errorText = (error: unknown): string => {
  const { messages } = unwrap(error);
  return (messages[0] ?? String(error)).slice(0, 500);
};
