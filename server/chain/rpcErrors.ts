/**
 * Classification of RPC failures: a retry can help (network, timeouts, rate limits, overloaded nodes), the request
 * asked for too much (a log range to shrink), or it cannot succeed as sent.
 */
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

function collect(error: unknown): { codes: string[]; messages: string[]; rpcCodes: number[] } {
  const codes: string[] = [];
  const messages: string[] = [];
  const rpcCodes: number[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth++) {
    const e = current as Record<string, unknown>;
    if (typeof e.code === "string") codes.push(e.code);
    if (typeof e.code === "number") rpcCodes.push(e.code);
    if (typeof e.message === "string") messages.push(e.message);
    const inner = (e.error ?? e.info) as Record<string, unknown> | undefined;
    if (inner && typeof inner === "object") {
      const nested = (inner.error ?? inner) as Record<string, unknown>;
      if (typeof nested.code === "number") rpcCodes.push(nested.code);
      if (typeof nested.message === "string") messages.push(nested.message);
    }
    current = e.cause;
  }
  return { codes, messages, rpcCodes };
}

const RATE_LIMITED = [/rate limit/i, /too many requests/i, /\b429\b/, /exceeded maximum retry limit/i];
/** JSON-RPC codes of a request that cannot succeed as sent (parse error, invalid request, unknown method, bad params). */
const MALFORMED_REQUEST = new Set([-32700, -32600, -32601, -32602]);

export function classifyRpcError(error: unknown): RpcErrorKind {
  const { codes, messages, rpcCodes } = collect(error);
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
  signal?: { aborted: boolean };
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
      await sleep(delay);
    }
  }
}
