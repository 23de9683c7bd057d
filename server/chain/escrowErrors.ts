/**
 * Every error the escrow can revert with (ITaskEscrow's custom errors, OpenZeppelin's, and Error(string)), mapped to
 * the API's stable error.code. The API refuses most of these up front with the same codes; when a transaction the
 * service sends would revert anyway (the marketplace verifier's marketplaceAssign or completeVerification), the
 * answer carries the escrow's error as `reason` and this code as `details.escrowCode`. docs/contracts.md lists the
 * errors outside the specification's table and why they exist.
 */
import type { ErrorCode } from "../errors";

export const ESCROW_ERROR_CODES = {
  // The specification's table.
  NotAdmin: "FORBIDDEN",
  NotAgent: "NOT_POSTER",
  NotWorker: "NOT_TASK_PARTICIPANT",
  NotVerifier: "NOT_VERIFIER",
  NotPendingAdmin: "FORBIDDEN",
  ZeroAddress: "VALIDATION_ERROR",
  ZeroAmount: "INVALID_AMOUNT",
  EmptyHash: "EMPTY_HASH",
  TokenNotAllowed: "TOKEN_NOT_SETTLEMENT",
  InvalidDeadline: "INVALID_DURATION",
  InvalidStatus: "INVALID_STATUS",
  SelfAssignment: "SELF_ACCEPT",
  DeadlineNotReached: "DEADLINE_NOT_REACHED",
  DeadlineReached: "DEADLINE_REACHED",
  DisputeWindowActive: "DISPUTE_WINDOW_ACTIVE",
  MaxSubmissionAttemptsReached: "MAX_ATTEMPTS_REACHED",
  FeeExceedsMax: "VALIDATION_ERROR",
  InvalidTEESignature: "BAD_SIGNATURE",
  TEESignerNotSet: "VERIFICATION_MODE_UNSUPPORTED",
  AppealWindowActive: "APPEAL_WINDOW_ACTIVE",
  EscalatedForAdjudication: "ESCALATED_FOR_ADJUDICATION",
  NotEscalated: "INVALID_STATE",
  InvalidPauseStart: "VALIDATION_ERROR",
  EnforcedPause: "ESCROW_PAUSED",
  ExpectedPause: "INVALID_STATE",
  ReentrancyGuardReentrantCall: "INTERNAL_ERROR",
  SafeERC20FailedOperation: "TX_REVERTED",
  Error: "TX_REVERTED",
  // Outside the table (docs/contracts.md "Errors outside the specification's table").
  EmptyBatch: "INVALID_TASKS",
  BatchTooLarge: "BATCH_TOO_LARGE",
  NotOpenTask: "INVALID_STATE",
  OpenTaskNotAssignable: "INVALID_STATE",
  WrongPhase: "INVALID_STATE",
  AlreadySubmitted: "ALREADY_SUBMITTED",
  NotSubmitter: "VALIDATION_ERROR",
  NativeValueMismatch: "INVALID_AMOUNT",
  TransferAmountMismatch: "TX_REVERTED",
  AmountTooLarge: "INVALID_AMOUNT",
  NativeTransferFailed: "TX_REVERTED",
  NotAContract: "VALIDATION_ERROR",
  OpenTaskHasSubmissions: "INVALID_STATE",
  LabelTooLong: "VALIDATION_ERROR",
  TaskNotFound: "NOT_FOUND",
  InsufficientGasForHook: "TX_REVERTED",
  OpenTask: "INVALID_STATE",
  ContestWindow: "INVALID_STATE",
  NothingOwed: "INVALID_STATE",
  CommitmentMismatch: "VALIDATION_ERROR",
  NoRevealedSubmission: "INVALID_STATE",
  NoSurplus: "INVALID_STATE",
  // OpenZeppelin's upgrade and initialization machinery (admin operations; no API route reaches them).
  AddressEmptyCode: "TX_REVERTED",
  ERC1967InvalidImplementation: "VALIDATION_ERROR",
  ERC1967NonPayable: "TX_REVERTED",
  FailedCall: "TX_REVERTED",
  InvalidInitialization: "INVALID_STATE",
  NotInitializing: "INVALID_STATE",
  UUPSUnauthorizedCallContext: "FORBIDDEN",
  UUPSUnsupportedProxiableUUID: "VALIDATION_ERROR",
} as const satisfies Record<string, ErrorCode>;

/** The API code of an escrow error's name (`InvalidStatus`), or undefined for a name the escrow does not have. */
export function escrowErrorCode(name: string | undefined): ErrorCode | undefined {
  return name !== undefined && Object.hasOwn(ESCROW_ERROR_CODES, name)
    ? ESCROW_ERROR_CODES[name as keyof typeof ESCROW_ERROR_CODES]
    : undefined;
}

/** The `reason` and `details.escrowCode` of an answer about a transaction the escrow refused (reason: its error). */
export function escrowRefusal(reason: string | undefined): { reason?: string; details?: { escrowCode: ErrorCode } } {
  return reason ? { reason, details: { escrowCode: escrowErrorCode(reason) ?? "TX_REVERTED" } } : {};
}
