/**
 * Every failure the CLI reports is a `CliError`: a stable code (the API's `error.code` when the service refused, else
 * one of the CLI's own codes below), a message, what to do about it, and the exit code. `toCliError` turns whatever
 * was thrown (an SDK error carrying the API's code and status, an ethers error, a network error) into one.
 */
import { EXIT, type ExitCode } from "./exitCodes";

export interface CliErrorFields {
  code: string;
  message: string;
  hint?: string;
  exit?: ExitCode;
  details?: unknown;
  status?: number;
}

export class CliError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  readonly exit: ExitCode;
  readonly details: unknown;
  readonly status: number | undefined;

  constructor(fields: CliErrorFields) {
    super(fields.message);
    this.name = "CliError";
    this.code = fields.code;
    this.hint = fields.hint ?? HINTS[fields.code];
    this.exit = fields.exit ?? EXIT.UNEXPECTED;
    this.details = fields.details;
    this.status = fields.status;
  }

  toJSON() {
    return {
      code: this.code,
      message: this.message,
      ...(this.hint ? { hint: this.hint } : {}),
      ...(this.status !== undefined ? { status: this.status } : {}),
      ...(this.details !== undefined ? { details: this.details } : {}),
      exitCode: this.exit,
    };
  }
}

/** A mistake on the command line or in an input file (exit 2). */
export const usageError = (code: string, message: string, hint?: string, details?: unknown) =>
  new CliError({ code, message, hint, details, exit: EXIT.USAGE });

/** What to do, for the codes a CLI user meets most. Codes not listed get a hint from their HTTP status class. */
const HINTS: Record<string, string> = {
  // The CLI's own codes
  NO_API_KEY: "run `market login` (or set MARKET_API_KEY, or pass --api-key)",
  NO_PRIVATE_KEY: "set MARKET_PRIVATE_KEY or pass --private-key: this command signs with your wallet",
  INVALID_AMOUNT: "give --amount in USDC (e.g. 2.5) or --amount-raw in the token's smallest units (e.g. 2500000)",
  INVALID_DURATION: "give --duration in seconds or with a unit: 3600, 90m, 1h, 2d (1 hour to 90 days)",
  INVALID_CRITERIA: 'give --criteria as a JSON object, e.g. \'{"required_fields":["summary"]}\'',
  INVALID_ROWS: "fix the rows named in details (row numbers count from 1, the header excluded) and run again",
  INVALID_TASK:
    "give the task hash (0x + 64 hex) or its on-chain id (#2), as `market post` or `market tasks` print them",
  INVALID_INPUT: "check the command with `market <command> --help`",
  USAGE: "see `market <command> --help`",
  UNREACHABLE: "check --api-url / MARKET_API_URL (is the service running?) and --rpc-url / MARKET_RPC_URL",
  TIMEOUT: "raise --timeout, or run `market status <task>` later",
  WAIT_TIMEOUT: "raise --timeout, or run `market status <task>` later",
  INTERRUPTED: "run `market watch <task>` again to keep following it",
  TX_CHECK_FAILED: "do not sign: the service built a transaction that is not the one asked for; report it",
  CHAIN_MISMATCH: "point --rpc-url / MARKET_RPC_URL at the chain the service settles on",
  TX_REVERTED: "read the revert reason above; `market status <task>` shows the task's state",
  INSUFFICIENT_FUNDS: "fund the wallet with gas money and the reward's token",
  CONFIG_UNREADABLE: "fix or delete the config file named above (`market login` writes a new one)",
  // API codes
  UNAUTHORIZED: "the API key is missing, unknown or revoked: run `market login` for a new one",
  FORBIDDEN: "this wallet may not do this on this task",
  NOT_POSTER: "only the wallet that funded the task may do this: use the poster's key",
  NOT_FOUND:
    "check the task hash, or the agent's slug (`market hosted` lists yours); a task just posted may need a few seconds to be indexed",
  RATE_LIMIT: "wait the Retry-After seconds in details, then retry",
  RATE_LIMITED: "too many open streams for this key: close one, or wait",
  NOT_INDEXED: "retry in a few seconds: the indexer has not reached the task yet",
  NOT_INDEXED_YET: "retry in a few seconds: the indexer has not reached the task yet",
  ASSIGNMENT_PENDING: "retry in a few seconds: the assignment is being confirmed on-chain",
  NOT_SUBMITTED_ON_CHAIN: "retry in a few seconds: the submission is not on-chain yet",
  SETTLEMENT_FAILED: "retry: the marketplace verifier could not send its transaction",
  USE_CANCEL: "nobody took the task, so there is no work to reclaim: `market cancel <task>` refunds the reward",
  DEADLINE_NOT_REACHED: "wait until details.availableAt (Unix seconds, chain time)",
  APPEAL_WINDOW_ACTIVE: "wait until details.availableAt: the worker may still appeal",
  DISPUTE_WINDOW_ACTIVE: "wait until details.availableAt: the dispute awaits a ruling",
  ESCROW_PAUSED: "the escrow is paused: retry when it is unpaused",
  WRONG_MODE: "review applies to manual tasks; auto tasks are judged by the service, agent tasks by their verifier",
  NOT_REGISTERED: "run `market agent register` first",
  TASK_HASH_IN_USE: "this brief was already posted: change the brief",
  TASK_HASH_TAKEN: "another poster reserved this brief: change the brief",
  AUTO_CRITERIA_REQUIRED: "mode auto needs --criteria with at least one rule",
  VALIDATION_ERROR: "the message names the field to fix",
  INTERNAL_ERROR: "not your fault: retry, and report details.requestId if it persists",
  OWNER_MISMATCH: "the API key and the private key belong to different wallets: use the key of the signing wallet",
  WRONG_CHAIN: "point --rpc-url / MARKET_RPC_URL at the chain the service settles on",
  WRONG_RPC: "point --rpc-url / MARKET_RPC_URL at the chain the service settles on",
  RPC_UNREACHABLE: "check --rpc-url / MARKET_RPC_URL (is the node running?)",
  API_UNREACHABLE: "check --api-url / MARKET_API_URL (is the service running?)",
  INSUFFICIENT_BALANCE: "fund the wallet with the reward's token and gas money (on a devnet: `market faucet`)",
  NOT_DEVNET: "the faucet gives test money on a devnet (`npm run devnet`) only",
  AMOUNT_ABOVE_MAX: "the amount is above the SDK's safety cap: check it",
  TX_MAYBE_SENT: "a transaction may be on its way: run the same command again to resume (it never pays twice)",
  UNCONFIRMED: "the transaction was not confirmed in time: run the same command again to resume",
  ESCROW_MISMATCH: "do not sign: the transaction does not go to the settlement record's escrow; report it",
  TX_MISMATCH: "do not sign: the transaction is not the call asked for; report it",
  WEBHOOKS_UNAVAILABLE: "this service has no /api/v1/webhooks route: upgrade the service",
};

/** Exit codes of the SDK's client-side codes (the spec's list; raised before or instead of a call). */
const CLIENT_CODE_EXIT: Record<string, ExitCode> = {
  INVALID_ROWS: EXIT.USAGE,
  AMOUNT_ABOVE_MAX: EXIT.USAGE,
  DEPLOY_FEE_ABOVE_MAX: EXIT.USAGE,
  QUOTE_REQUIRED: EXIT.USAGE,
  NO_SIGNER: EXIT.CONFIG,
  NO_WALLET: EXIT.CONFIG,
  NO_RPC: EXIT.CONFIG,
  WRONG_RPC: EXIT.CONFIG,
  WRONG_CHAIN: EXIT.CONFIG,
  CHAIN_UNKNOWN: EXIT.CONFIG,
  ESCROW_NOT_PINNED: EXIT.CONFIG,
  OWNER_UNCHECKED: EXIT.CONFIG,
  OWNER_MISMATCH: EXIT.CONFIG,
  RPC_UNREACHABLE: EXIT.RETRY,
  API_UNREACHABLE: EXIT.RETRY,
  UNCONFIRMED: EXIT.RETRY,
  ESCROW_MISMATCH: EXIT.CHAIN,
  TX_MISMATCH: EXIT.CHAIN,
  CHAIN_MISMATCH: EXIT.CHAIN,
  QUOTE_MISMATCH: EXIT.CHAIN,
  TX_MAYBE_SENT: EXIT.CHAIN,
  POSTING_CHAIN_CHANGED: EXIT.REFUSED,
  SETTLEMENT_CHANGED: EXIT.REFUSED,
  SETTLEMENT_NOT_POSTABLE: EXIT.REFUSED,
  UNSUPPORTED_SETTLEMENT: EXIT.REFUSED,
  NOT_POSTING_CHAIN: EXIT.REFUSED,
  INSUFFICIENT_BALANCE: EXIT.REFUSED,
  NO_EXECUTORS: EXIT.REFUSED,
  WAIT_TIMEOUT: EXIT.TIMEOUT,
};

/** 400s that are about the task's state or the caller's record, not the request: refused as it stands (exit 4). */
const STATE_400 = new Set(["DEADLINE_NOT_REACHED", "NO_PUBKEY"]);

const API_STATUS_EXIT = (status: number, code: string): ExitCode => {
  if (code === "UNAUTHORIZED") return EXIT.CONFIG;
  if (code === "TX_REVERTED") return EXIT.CHAIN;
  if (status === 429 || status === 503 || status === 502 || status === 504) return EXIT.RETRY;
  if (code === "NOT_INDEXED_YET") return EXIT.RETRY;
  if (status >= 500) return EXIT.UNEXPECTED;
  if (STATE_400.has(code)) return EXIT.REFUSED;
  if (code === "VALIDATION_ERROR" || status === 400) return EXIT.USAGE;
  return EXIT.REFUSED;
};

const statusHint = (status: number): string | undefined => {
  if (status === 429 || status === 503) return "retry later";
  if (status >= 500) return "not your fault: retry, and report the request id if it persists";
  if (status === 404) return "check the task hash or address";
  if (status === 409) return "the task's state does not allow this now: `market status <task>` shows it";
  if (status >= 400) return "fix the request as the message says";
  return undefined;
};

const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "UND_ERR_SOCKET"]);

type Loose = { [key: string]: unknown };

/** Turns anything thrown into a `CliError` with a code, a message, a hint and an exit code. */
export function toCliError(error: unknown): CliError {
  if (error instanceof CliError) return error;
  const e = (typeof error === "object" && error !== null ? error : { message: String(error) }) as Loose;
  const message = typeof e.message === "string" ? e.message : String(error);
  const cause = (typeof e.cause === "object" && e.cause !== null ? e.cause : {}) as Loose;

  // An API refusal, as the SDK reports it: the envelope's code plus the HTTP status.
  const status = typeof e.status === "number" ? e.status : typeof e.httpStatus === "number" ? e.httpStatus : undefined;
  if (typeof e.code === "string" && status !== undefined) {
    const hint = HINTS[e.code] ?? statusHint(status);
    return new CliError({
      code: e.code,
      message,
      hint,
      status,
      details: e.details,
      exit: API_STATUS_EXIT(status, e.code),
    });
  }
  // The network: fetch wraps the socket error in `cause`; ethers reports its own codes.
  const netCode = typeof cause.code === "string" ? cause.code : typeof e.code === "string" ? e.code : "";
  if (NETWORK_CODES.has(netCode) || (message === "fetch failed" && e.name === "TypeError")) {
    return new CliError({
      code: "UNREACHABLE",
      message: `${message}${netCode ? ` (${netCode})` : ""}`,
      exit: EXIT.RETRY,
    });
  }
  if (e.code === "CALL_EXCEPTION") {
    const reason = typeof e.reason === "string" ? e.reason : (e.revert as Loose | undefined)?.name;
    return new CliError({
      code: "TX_REVERTED",
      message: reason ? `the transaction reverted: ${String(reason)}` : message,
      exit: EXIT.CHAIN,
    });
  }
  if (e.code === "INSUFFICIENT_FUNDS") return new CliError({ code: "INSUFFICIENT_FUNDS", message, exit: EXIT.CHAIN });
  if (typeof e.code === "string" && CLIENT_CODE_EXIT[e.code] !== undefined) {
    return new CliError({ code: e.code, message, details: e.details, exit: CLIENT_CODE_EXIT[e.code] });
  }
  if (typeof e.code === "string" && /^[A-Z][A-Z0-9_]+$/.test(e.code)) {
    return new CliError({ code: e.code, message, details: e.details, exit: EXIT.UNEXPECTED });
  }
  return new CliError({ code: "UNEXPECTED", message, exit: EXIT.UNEXPECTED });
}
