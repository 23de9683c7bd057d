/**
 * Errors as typed values. Every failure the SDK raises is a `MarketError` whose `code` is stable:
 * - `ApiError`: the service answered the error envelope; `code` is the service's `error.code` (spec "Errors").
 * - `ClientError`: a check the SDK makes itself refused (spec "Client-side codes"), or the API could not be reached.
 * Branch on `error.code`, never on the message.
 */
import type { ServiceErrorCode as ErrorCode } from "./types";

/** The spec's client-side codes, plus API_UNREACHABLE (the API did not answer: network error or timeout). */
export const CLIENT_CODES = [
  "OWNER_MISMATCH",
  "OWNER_UNCHECKED",
  "ESCROW_MISMATCH",
  "TX_MISMATCH",
  "CHAIN_MISMATCH",
  "CHAIN_UNKNOWN",
  "ESCROW_NOT_PINNED",
  "WRONG_CHAIN",
  "WRONG_RPC",
  "NO_RPC",
  "RPC_UNREACHABLE",
  "NO_SIGNER",
  "POSTING_CHAIN_CHANGED",
  "SETTLEMENT_NOT_POSTABLE",
  "INSUFFICIENT_BALANCE",
  "AMOUNT_ABOVE_MAX",
  "DEPLOY_FEE_ABOVE_MAX",
  "UNCONFIRMED",
  "INVALID_ROWS",
  "NO_EXECUTORS",
  "QUOTE_REQUIRED",
  "QUOTE_MISMATCH",
  "NO_WALLET",
  "UNSUPPORTED_SETTLEMENT",
  "NOT_POSTING_CHAIN",
  "SETTLEMENT_CHANGED",
  "TX_MAYBE_SENT",
  "API_UNREACHABLE",
] as const;

export type ClientCode = (typeof CLIENT_CODES)[number];
/** A code the service answers; a newer service may answer codes this SDK does not know yet (still a string). */
export type ApiCode = ErrorCode | (string & NonNullable<unknown>);

/** One refused row of a batch (client INVALID_ROWS, or the service's INVALID_TASKS / INVALID_ITEMS). */
export interface RowError {
  index: number;
  code: string;
  message: string;
}

export interface MarketErrorOptions {
  status?: number;
  reason?: string;
  details?: Record<string, unknown>;
  cause?: unknown;
}

export class MarketError extends Error {
  override name = "MarketError";
  readonly code: string;
  /** HTTP status of an API error; undefined for client errors. */
  readonly status: number | undefined;
  readonly reason: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: string, message: string, options: MarketErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.reason = options.reason;
    this.details = options.details;
  }
}

/** The service answered `{ success: false, error }`. */
export class ApiError extends MarketError {
  override name = "ApiError";
  declare readonly code: ApiCode;
  declare readonly status: number;

  constructor(code: ApiCode, message: string, options: MarketErrorOptions & { status: number }) {
    super(code, message, options);
  }
}

/** A check of the SDK refused, before or instead of a call (nothing was signed unless the code says so). */
export class ClientError extends MarketError {
  override name = "ClientError";
  declare readonly code: ClientCode;

  constructor(code: ClientCode, message: string, options: MarketErrorOptions = {}) {
    super(code, message, options);
  }
}

/** Whether `error` is a MarketError (optionally with one of `codes`). */
export function isMarketError(error: unknown, ...codes: string[]): error is MarketError {
  return error instanceof MarketError && (codes.length === 0 || codes.includes(error.code));
}

/** Throws a ClientError. */
export function refuse(code: ClientCode, message: string, options: MarketErrorOptions = {}): never {
  throw new ClientError(code, message, options);
}
