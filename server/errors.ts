/**
 * Errors as typed values with stable codes. `error.code` is the public contract clients branch on (the spec's
 * names); the message may change. Every code the service can answer is listed here with its HTTP status.
 */

export const ERROR_STATUS = {
  // Request framing (any route)
  BAD_REQUEST: 400,
  INVALID_JSON: 400,
  PAYLOAD_TOO_LARGE: 413,
  REQUEST_ABORTED: 400,
  UNSUPPORTED_CHARSET: 415,
  UNSUPPORTED_ENCODING: 415,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_ERROR: 400,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  RATE_LIMIT: 429,
  INTERNAL_ERROR: 500,
  /** GET /health/ready: a part this process needs does not answer (details.failing names each). */
  NOT_READY: 503,
  // Posting
  INVALID_AMOUNT: 400,
  INVALID_DURATION: 400,
  EMPTY_HASH: 400,
  INVALID_HASH: 400,
  INVALID_CHAIN: 400,
  INVALID_TASK_ID: 400,
  INVALID_VERIFIER: 400,
  NO_VERIFIER: 400,
  VERIFIER_NOT_WRAPPED: 400,
  VERIFIER_NOT_OPTED_IN: 409,
  VERIFIER_MODE_MISMATCH: 409,
  VERIFIER_MISMATCH: 409,
  VERIFICATION_MODE_UNSUPPORTED: 400,
  AUTO_CRITERIA_REQUIRED: 400,
  REGEX_PATTERN_UNUSABLE: 400,
  TOKEN_NOT_SETTLEMENT: 400,
  MISSING_DATA: 400,
  INVALID_DATA: 400,
  EMPTY_DATA: 400,
  DATA_TOO_LARGE: 400,
  INVALID_ITEMS: 400,
  INVALID_TASKS: 400,
  BATCH_TOO_LARGE: 400,
  BATCH_UNSUPPORTED: 409,
  TASK_HASH_IN_USE: 409,
  TASK_HASH_TAKEN: 409,
  HASH_MISMATCH: 409,
  HASH_NOT_THIS_TASK: 409,
  CHAIN_NOT_CONFIGURED: 503,
  ESCROW_NOT_CONFIGURED: 503,
  STORAGE_UNAVAILABLE: 503,
  UPLOAD_FAILED: 502,
  NOT_TASK_AGENT: 403,
  NOT_INDEXED_YET: 404,
  NOT_INDEXED: 503,
  RECEIPT_NOT_FOUND: 404,
  TX_REVERTED: 409,
  NO_TASK_CREATED: 409,
  MULTIPLE_TASK_CREATED: 409,
  NOT_IN_RECEIPT: 409,
  PUBLIC_TASK_HAS_KEYS: 400,
  PUBLIC_TASK_HAS_CUSTODY: 400,
  BRIEF_ON_PRIVATE_TASK: 400,
  PRIVACY_IMMUTABLE: 409,
  TERMS_IMMUTABLE: 409,
  CHAIN_IMMUTABLE: 409,
  SERVICE_NO_TARGET: 400,
  SERVICE_AGENT_MISMATCH: 409,
  SERVICE_NOT_ACTIVE: 409,
  SERVICE_TOKEN_MISMATCH: 409,
  UNDERPAID: 409,
  DEPLOY_FEE_NOT_PAID: 402,
  DEPLOY_FEE_REVERTED: 402,
  NO_DEPLOY_CREDIT: 402,
  DEPLOY_FEE_NOT_FOUND: 409,
  DEPLOY_FEE_IN_USE: 409,
  DEPLOY_FEE_UNAVAILABLE: 503,
  DEPLOY_FEE_CHECK_FAILED: 503,
  // Hosted agents
  AGENT_CAPACITY: 503,
  AGENT_RUNNING: 409,
  AGENT_ID_REQUIRED: 400,
  AGENT_ACTION_FAILED: 400,
  ALREADY_INSTALLED: 409,
  NOT_INSTALLED: 404,
  SKILL_NOT_FOUND: 404,
  SKILL_NEEDS_SECRETS: 400,
  SLUG_TAKEN: 409,
  /** A known chain this service does not settle on (not in CHAINS): the hosted agent's `chains`. */
  CHAIN_NOT_SERVED: 400,
  NO_KEY: 409,
  EXPORT_NOT_LOGGED: 503,
  NO_JWT_SECRET: 500,
  DELEGATION_DISABLED: 403,
  NOT_OWNER_SIGNATURE: 403,
  BAD_TOKEN: 401,
  BAD_ADDRESS: 400,
  // Accounts
  BAD_SIGNATURE: 400,
  NONCE_INVALID: 400,
  NONCE_MISMATCH: 400,
  MISSING_FIELDS: 400,
  // Refund and settlement
  USE_CANCEL: 409,
  DEADLINE_NOT_REACHED: 400,
  APPEAL_WINDOW_ACTIVE: 409,
  DISPUTE_WINDOW_ACTIVE: 409,
  ESCALATED_FOR_ADJUDICATION: 409,
  ESCROW_PAUSED: 409,
  CLAIM_TIMEOUT_REJECTED: 409,
  INVALID_STATUS: 409,
  NOT_CONFIRMED: 409,
  NOT_SETTLED_ON_CHAIN: 409,
  NO_SETTLEMENT_EVENT: 409,
  ALREADY_SETTLED: 409,
  VERDICT_MISMATCH: 409,
  STALE_VERDICT: 409,
  NOT_RETRYABLE: 409,
  // Marketplace (accept, deliver, verify)
  NOT_OPEN: 409,
  ACCEPT_LOCKED: 409,
  OFFER_HELD: 409,
  NOT_OFFER_HOLDER: 409,
  ASSIGNMENT_PENDING: 503,
  NOT_ASSIGNED_YET: 503,
  ASSIGNED_ELSEWHERE: 409,
  NEEDS_WRAP: 403,
  // Push (events, webhooks) and later brief keys
  WEBHOOK_URL_NOT_PUBLIC: 400,
  WEBHOOK_LIMIT: 409,
  KEY_LIMIT: 409,
  AGENT_LIMIT: 409,
  KEY_ALREADY_WRAPPED: 409,
  NO_PUBKEY: 400,
  REWRAP_FAILED: 503,
  NOT_REGISTERED: 403,
  NOT_TARGET_EXECUTOR: 403,
  SELF_ACCEPT: 403,
  SELF_BID: 403,
  IS_VERIFIER: 403,
  SAME_OWNER: 403,
  SELF_VERIFICATION: 403,
  ALREADY_APPLIED: 409,
  BELOW_MIN_REWARD: 403,
  REWARD_UNAVAILABLE: 503,
  CHAIN_UNSUPPORTED: 409,
  TARGET_CHAIN_UNSUPPORTED: 409,
  VERIFIER_CHAIN_UNSUPPORTED: 409,
  SETTLEMENT_FAILED: 503,
  DEADLINE_REACHED: 409,
  TASK_EXPIRED: 409,
  TASK_CANCELLED: 409,
  ESCROW_MISMATCH: 409,
  INVALID_STATE: 409,
  WRONG_MODE: 409,
  STATE_CHANGED: 409,
  ON_CHAIN_LOCKED: 409,
  ALREADY_SUBMITTED: 409,
  NOT_SUBMITTED_ON_CHAIN: 503,
  MAX_ATTEMPTS_REACHED: 409,
  NO_ONCHAIN_VERIFIER: 409,
  NOT_VERIFIER: 403,
  NOT_POSTER: 403,
  NO_RESULT_DATA: 400,
  TASK_ID_DEPRECATED: 400,
  NOT_TASK_PARTICIPANT: 403,
  // MCP authorization (docs/oauth.md): the OAuth endpoints answer each OAUTH_* code as its RFC 6749 / 7591 / 8707
  // `error` (the code's rest in lower case); INSUFFICIENT_SCOPE is a token's refusal on an operation its scopes omit.
  OAUTH_INVALID_REQUEST: 400,
  OAUTH_INVALID_CLIENT: 401,
  OAUTH_INVALID_GRANT: 400,
  OAUTH_INVALID_SCOPE: 400,
  OAUTH_INVALID_TARGET: 400,
  OAUTH_UNSUPPORTED_GRANT_TYPE: 400,
  OAUTH_UNSUPPORTED_RESPONSE_TYPE: 400,
  OAUTH_INVALID_CLIENT_METADATA: 400,
  OAUTH_INVALID_REDIRECT_URI: 400,
  INSUFFICIENT_SCOPE: 403,
  // Dependencies
  ON_CHAIN_CHECK_FAILED: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface AppErrorOptions {
  code: ErrorCode;
  message: string;
  /** Overrides the code's usual status where the spec allows two (for example NO_VERIFIER 400 or 409). */
  status?: number;
  reason?: string;
  details?: Record<string, unknown>;
  /** Extra response headers (Retry-After on 429). */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** An error the client can act on: answered as `{ success: false, error: { code, message, reason?, details? } }`. */
export class AppError extends Error {
  override name = "AppError";
  readonly code: ErrorCode;
  readonly status: number;
  readonly reason?: string;
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(options: AppErrorOptions) {
    super(options.message, { cause: options.cause });
    this.code = options.code;
    this.status = options.status ?? ERROR_STATUS[options.code];
    this.reason = options.reason;
    this.details = options.details;
    this.headers = options.headers;
  }
}

/** Shorthand: `fail("NOT_FOUND", "task 7 not found")`. */
export function fail(code: ErrorCode, message: string, extra: Omit<AppErrorOptions, "code" | "message"> = {}): never {
  throw new AppError({ code, message, ...extra });
}

/** One failure of a bulk request, reported in `error.details.errors`. */
export interface ItemError {
  index: number;
  code: ErrorCode;
  message: string;
}

/** A field's name in messages: `body.tasks[2].amount`. */
export function fieldName(location: string, path: (string | number)[]): string {
  return [location, ...path]
    .map((p) => (typeof p === "number" ? `[${p}]` : p))
    .join(".")
    .replace(/\.\[/g, "[");
}
