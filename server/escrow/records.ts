/** The escrow's records as the service stores them, shared by chain, db, indexer and domain (the lowest layer). Addresses are lower-case; uint256 are strings. */

/** The settlement chains the service knows (the specification's identifiers); which of them are configured is CHAINS. */
export const CHAIN_NAMES = ["base", "arc"] as const;
export type ChainName = (typeof CHAIN_NAMES)[number];

export type EventArgs = Record<string, string | boolean | number>;

/** One escrow log as stored: keyed by (blockNumber, logIndex), unique by (txHash, logIndex). */
export interface StoredEvent {
  blockNumber: number;
  logIndex: number;
  blockHash: string;
  txHash: string;
  txIndex: number;
  blockTimestamp: number;
  eventName: string;
  taskId: number | null;
  args: EventArgs;
}

/** The task projection: every field of getTask plus verifier, failed-verdict time, escalation and settlement. */
export type OpenOutcome = "picked" | "judged" | "default";

export interface TaskRecord {
  /** The settlement chain whose escrow holds the task: on-chain ids are unique per chain only. */
  chain: ChainName;
  taskId: number;
  poster: string;
  worker: string;
  token: string;
  amount: string;
  taskHash: string;
  evidenceHash: string;
  status: number;
  category: string;
  locationZone: string;
  createdAt: number;
  deadline: number;
  submissionAttempts: number;
  disputedAt: number;
  verifier: string;
  failedVerdictAt: number;
  escalated: boolean;
  isOpen: boolean;
  openSubmissionCount: number;
  /** An open task's pick by its poster (OpenWinnerProposed), paid once the contest window passes; zero while none. */
  openPick: string;
  /** When the pick was made (block time), 0 while none. */
  openPickedAt: number;
  /**
   * How an open task's winner was decided: "picked" by the poster, "judged" (OpenJudged: a refund when the worker is
   * zero), "default" (OpenDefaultReleased: the poster let the selection window pass); null while undecided.
   */
  openOutcome: OpenOutcome | null;
  /** releaseSettled took the settled task out of the escrow's held count (HeldReleased). */
  heldReleased: boolean;
  feePaid: string | null;
  payout: string | null;
  refund: string | null;
  createdBlock: number;
  createdTx: string;
  updatedBlock: number;
}

export interface PausePeriod {
  seq: number;
  startedAt: number;
  endedAt: number | null;
  startedBlock: number;
}

export interface TokenConfig {
  allowed: boolean;
  minRatedAmount: string;
  updatedBlock: number;
}

/** The escrow configuration as seen in its events. */
export interface EscrowConfigState {
  values: Record<string, { value: string; updatedBlock: number }>;
  tokens: Record<string, TokenConfig>;
  pauses: PausePeriod[];
}

export interface BlockHeader {
  number: number;
  hash: string;
  parentHash: string;
  timestamp: number;
}

export const TASK_STATUS = {
  Funded: 0,
  Assigned: 1,
  Submitted: 2,
  Verified: 3,
  Completed: 4,
  Cancelled: 5,
  Disputed: 6,
} as const;

export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";
export const ZERO_HASH = "0x0000000000000000000000000000000000000000000000000000000000000000";

/** Submissions to open tasks, by task id then submitter; the fold reads them when a winner is selected. */
export type OpenSubmissions = Map<number, Map<string, string>>;
