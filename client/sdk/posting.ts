/**
 * The posting flow in one call (spec "What the service does", posting flow; docs/api.md): check the key's wallet and
 * the settlement record, encrypt and wrap private briefs, upload, build, check the built transaction, approve exactly
 * the reward, send, confirm, index, and answer the listed tasks. Resumable through a PostingJournal.
 */
import type { Signer } from "ethers";
import type { MarketApi } from "./api";
import type { SettlementPin } from "./checks";
import type { PostingJournal, PostingStage } from "./journal";
import type { ChainName, TaskDetail, VerificationCriteria } from "./types";

export const DEFAULT_DURATION_SECONDS = 86_400;
export const DEFAULT_LOCATION_ZONE = "global";

/** One task to post. */
export interface TaskDraft {
  /** The brief: text (UTF-8) or bytes. Private briefs are encrypted before upload; public ones are uploaded as-is. */
  brief: string | Uint8Array;
  /** Default private. */
  privacy?: "private" | "public";
  /** Reward in the token's smallest unit (USDC: 6 decimals). */
  amount: bigint | string | number;
  /** Seconds, 3600 to 7776000 (default 86400). */
  duration?: number | string;
  /** Default "global". */
  locationZone?: string;
  verificationMode?: "manual" | "auto" | "agent";
  verificationCriteria?: NonNullable<VerificationCriteria>;
  requiredCapabilities?: string[];
  verifierAddress?: string;
  /** Pin the task to one agent (rent flow); with serviceId, a rental of that service. */
  targetExecutor?: string;
  serviceId?: number;
  /** Public tasks: the display copy (default: the brief's text, cut to 4000 characters). */
  publicBrief?: string;
  /**
   * Private tasks: who may read the brief. Default: every executor the executors endpoint lists for the task's
   * required capabilities on the posting chain (plus targetExecutor and verifierAddress).
   */
  recipients?: { address: string; publicKey: string }[];
}

export interface PostOptions {
  api: MarketApi;
  /** The key's wallet, connected to an RPC of the posting chain (a plain JsonRpcProvider + Wallet works). */
  signer?: Signer;
  /** Where the posting's progress is saved (default: in memory). Use a FileJournal to survive a crash. */
  journal?: PostingJournal;
  /** The posting's id in the journal (default: derived from the wallet and the drafts). */
  postingId?: string;
  /** Give up waiting for a receipt after this long: UNCONFIRMED (default 180 s). */
  confirmTimeoutMs?: number;
  /** Refuse rewards totalling more than this (AMOUNT_ABOVE_MAX). */
  maxAmount?: bigint;
  /** The settlement a client was built against: anything else refuses (POSTING_CHAIN_CHANGED, SETTLEMENT_CHANGED). */
  expect?: Partial<SettlementPin>;
  /** Also wrap private briefs' keys to the service's custody key (so it can re-wrap for agents who register later). */
  custodyPublicKey?: string;
  /** Called after each stage is saved (progress reports; tests throw here to simulate a crash). */
  onStage?: (stage: PostingStage, postingId: string) => void | Promise<void>;
}

/** A posted and listed task. */
export interface PostedTask {
  taskHash: string;
  onChainTaskId: number;
  /** The funding transaction. */
  txHash: string;
  chain: ChainName;
  chainId: number;
  privacy: "private" | "public";
  /** Private tasks: the brief key (hex), to read the brief again. */
  briefKey?: string;
  /** The listed task as the service answers it (GET /api/v1/tasks/{hash}). */
  task: TaskDetail;
}

/** Posts one task: see postTasks. */
export async function postTask(draft: TaskDraft, options: PostOptions): Promise<PostedTask> {
  const [posted] = await postTasks([draft], options);
  return posted;
}

/**
 * Posts tasks: one funding transaction for the batch when the escrow takes batches (one by one otherwise), each
 * task listed. Refuses invalid rows before anything is uploaded (INVALID_ROWS, `details.errors`). Resumable: after
 * an interruption once a funding transaction may have been sent, the error is TX_MAYBE_SENT; calling postTasks again
 * with the same drafts and journal (or postingId) finishes the posting without paying twice.
 */
export async function postTasks(drafts: readonly TaskDraft[], options: PostOptions): Promise<PostedTask[]> {
  void drafts;
  void options;
  throw new Error("not implemented yet");
}
