/**
 * The marketplace verifier's interface: the only part of the service that signs, with the platform verifier's key.
 * Callers (the marketplace domain) record intents; the verifier sends each exactly once, across crashes and restarts.
 * One runs per settlement chain with a deployment (deps.verifiers; verifierOn(deps, chain) finds a task's chain's).
 * See docs/marketplace.md ("Marketplace verifier").
 */

import type { IntentKind, IntentStatus } from "../db/repositories/verifierIntents";
import type { ChainName } from "../escrow/records";

export type { IntentKind, IntentStatus };

export interface IntentView {
  id: number;
  /** The chain whose escrow the call goes to (the verifier's). */
  chain: ChainName;
  kind: IntentKind;
  taskId: number;
  /** assign:<taskId> or verdict:<taskId>:<attempt> */
  key: string;
  status: IntentStatus;
  txHash: string | null;
  /** Why it failed (a revert or a refused send), when status is failed. */
  error: string | null;
}

export interface MarketplaceVerifier {
  /** The verifier's address (the escrow's `verifier`; the same key on every chain). */
  readonly address: string;
  /** The settlement chain it signs on: its intents (keys unique per chain) and nonces are this chain's. */
  readonly chain: ChainName;

  /**
   * Records `marketplaceAssign(taskId, worker)` and sends it now. Resolves once the transaction is broadcast (status
   * sent) or confirmed. Throws VerifierSendError (state unchanged: the intent is removed) when it cannot be sent, so
   * the API can answer 503 SETTLEMENT_FAILED. Calling it again for the same task returns the existing intent.
   */
  requestAssign(taskId: number, worker: string): Promise<IntentView>;

  /** Records `completeVerification(taskId, passed)` for submission `attempt` and sends it now, as requestAssign. */
  requestVerdict(taskId: number, attempt: number, passed: boolean): Promise<IntentView>;

  /** The intent with this key on this verifier's chain, if any. */
  intent(key: string): Promise<IntentView | undefined>;

  /** Waits until the intent is confirmed or failed (tests, the example agent). */
  settled(key: string, timeoutMs?: number): Promise<IntentView>;

  /** Starts the loop that re-broadcasts and confirms sent intents (and resumes them after a restart). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** A chain call of the verifier that could not be made; nothing was recorded. */
export class VerifierSendError extends Error {
  override name = "VerifierSendError";
  /** The escrow's custom error when the call would revert (`SelfAssignment`), else undefined. */
  readonly reason?: string;
  constructor(message: string, options?: { reason?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.reason = options?.reason;
  }
}

export const assignKey = (taskId: number) => `assign:${taskId}`;
export const verdictKey = (taskId: number, attempt: number) => `verdict:${taskId}:${attempt}`;
