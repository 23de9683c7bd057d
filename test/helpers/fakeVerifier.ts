/**
 * A small in-memory MarketplaceVerifier for tests that need to steer the marketplace verifier: it sends
 * marketplaceAssign / completeVerification with the fixture's `verifier` signer (the escrow's verifier) and keeps
 * its intents in memory. Modes:
 *
 * - `send` (default): sends at once; the intent is `sent`, then `confirmed` (or `failed`) once the receipt is read.
 * - `refuse`: every send throws VerifierSendError and records nothing (the real verifier's refused send).
 * - `hold`: records a `pending` intent and sends nothing until `release(key)` (an unconfirmed assignment), or
 *   `failHeld(key)` marks it failed (a reverted transaction).
 *
 * Tests that do not need to steer it use the real verifier (server/verifier) instead.
 */
import type { Signer } from "ethers";
import type { TaskEscrow } from "../../typechain-types";
import {
  VerifierSendError,
  assignKey,
  verdictKey,
  type IntentView,
  type MarketplaceVerifier,
} from "../../server/verifier/types";

import type { ChainName } from "../../server/escrow/records";

export type FakeMode = "send" | "refuse" | "hold";

interface SentTx {
  hash: string;
  wait(): Promise<unknown>;
}

export class FakeVerifier implements MarketplaceVerifier {
  mode: FakeMode = "send";
  readonly address: string;
  readonly chain: ChainName;
  /** Every requestAssign / requestVerdict call, in order. */
  readonly calls: { key: string; args: unknown[] }[] = [];
  private readonly intents = new Map<string, IntentView>();
  private readonly held = new Map<string, () => Promise<SentTx>>();
  private readonly receipts = new Map<string, Promise<void>>();
  private seq = 0;

  constructor(
    private readonly escrow: TaskEscrow,
    private readonly signer: Signer,
    address: string,
    chain: ChainName = "base",
  ) {
    this.address = address.toLowerCase();
    this.chain = chain;
  }

  requestAssign(taskId: number, worker: string): Promise<IntentView> {
    return this.request("assign", taskId, assignKey(taskId), [taskId, worker], () =>
      this.escrow.connect(this.signer).marketplaceAssign(taskId, worker),
    );
  }

  requestVerdict(taskId: number, attempt: number, passed: boolean): Promise<IntentView> {
    return this.request("verdict", taskId, verdictKey(taskId, attempt), [taskId, attempt, passed], () =>
      this.escrow.connect(this.signer).completeVerification(taskId, passed),
    );
  }

  async intent(key: string): Promise<IntentView | undefined> {
    const found = this.intents.get(key);
    return found ? { ...found } : undefined;
  }

  async settled(key: string, timeoutMs = 20_000): Promise<IntentView> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      await this.receipts.get(key);
      const found = this.intents.get(key);
      if (!found) throw new Error(`no intent ${key}`);
      if (found.status === "confirmed" || found.status === "failed") return { ...found };
      if (Date.now() > until) throw new Error(`intent ${key} still ${found.status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Sends a held intent now. */
  async release(key: string): Promise<IntentView> {
    const send = this.held.get(key);
    if (!send) throw new Error(`no held intent ${key}`);
    this.held.delete(key);
    await this.sendNow(this.intents.get(key)!, send);
    return this.settled(key);
  }

  /** Marks a held intent failed, as a reverted transaction would. */
  failHeld(key: string, error = "reverted"): void {
    const found = this.intents.get(key);
    if (!found) throw new Error(`no intent ${key}`);
    this.held.delete(key);
    found.status = "failed";
    found.error = error;
  }

  async start(): Promise<void> {}
  async stop(): Promise<void> {}

  private async request(
    kind: IntentView["kind"],
    taskId: number,
    key: string,
    args: unknown[],
    send: () => Promise<SentTx>,
  ): Promise<IntentView> {
    this.calls.push({ key, args });
    const existing = this.intents.get(key);
    if (existing && existing.status !== "failed") return { ...existing };
    if (this.mode === "refuse") throw new VerifierSendError(`fake verifier: ${key} refused`);
    const view: IntentView = {
      id: ++this.seq,
      chain: this.chain,
      kind,
      taskId,
      key,
      status: "pending",
      txHash: null,
      error: null,
    };
    this.intents.set(key, view);
    if (this.mode === "hold") {
      this.held.set(key, send);
      return { ...view };
    }
    await this.sendNow(view, send);
    return { ...view };
  }

  private async sendNow(view: IntentView, send: () => Promise<SentTx>) {
    let tx;
    try {
      tx = await send();
    } catch (error) {
      this.intents.delete(view.key);
      throw new VerifierSendError(`fake verifier: ${view.key} could not be sent: ${(error as Error).message}`);
    }
    view.status = "sent";
    view.txHash = tx.hash;
    this.receipts.set(
      view.key,
      tx.wait().then(
        () => {
          view.status = "confirmed";
        },
        (error: Error) => {
          view.status = "failed";
          view.error = error.message;
        },
      ),
    );
  }
}
