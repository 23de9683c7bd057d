/**
 * The `market` CLI's exit codes: a script branches on these, a person reads the error's code and hint. Documented in
 * docs/client.md ("Exit codes"); stable like the API's error codes.
 */
export const EXIT = {
  /** Done: the command did what it was asked (for `watch`, the task reached a final state). */
  OK: 0,
  /** Something unexpected: a bug on our side or the service's (`INTERNAL_ERROR`). Report it with the request id. */
  UNEXPECTED: 1,
  /** The command line or an input file is wrong (unknown flag, missing argument, bad amount, invalid rows). */
  USAGE: 2,
  /** Credentials or configuration are missing or refused (no API key, no private key, `UNAUTHORIZED`). */
  CONFIG: 3,
  /** The service refused the request as it stands (a 4xx code other than credentials: `NOT_POSTER`, `INVALID_STATE`). */
  REFUSED: 4,
  /** Try again later: the service or the chain is unreachable, rate-limited (429) or not ready (503, `NOT_INDEXED`). */
  RETRY: 5,
  /** A transaction was sent and reverted, or a transaction check before signing failed. */
  CHAIN: 6,
  /** `watch --timeout` (or another wait) ran out before the task reached the awaited state. */
  TIMEOUT: 7,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
