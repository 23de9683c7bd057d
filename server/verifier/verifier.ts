/**
 * The marketplace verifier: the only part of the service that signs, with the platform verifier's key and no other.
 *
 * Every chain call is an intent in `verifier_intents` before anything is signed. A request inserts the intent
 * (unique key: a retried request finds the existing one), then sends it at once under a per-verifier mutex:
 *
 *   1. `eth_estimateGas` from the verifier's address. A revert means the call cannot succeed now: the intent is
 *      deleted (state unchanged) and VerifierSendError carries the escrow's custom error (`SelfAssignment()`).
 *   2. nonce = max(the chain's pending nonce of the verifier, highest nonce stored for a not-failed intent + 1);
 *      gas limit = estimate + 20%; EIP-1559 fees from the provider (legacy gas price where the chain has none).
 *   3. The transaction is signed and stored (raw_tx, tx_hash, nonce, status sent) BEFORE it is broadcast.
 *   4. Broadcast. A node that refuses the transaction itself (no funds, nonce taken by another transaction, invalid)
 *      never had it: the intent goes back to pending and is deleted (VerifierSendError). Any other failure keeps it
 *      sent; the loop re-broadcasts.
 *
 * One Verifier runs per settlement chain (the same key, its own provider, escrow, nonces and intents): it reads and
 * writes only its chain's rows of `verifier_intents`, so base's `assign:0` and arc's `assign:0` are two intents.
 *
 * The loop (start/stop) looks up the receipt of every sent intent: status 1 -> confirmed, status 0 -> failed
 * ("reverted"); no receipt and unknown to the node -> the stored raw transaction is broadcast again (same nonce, same
 * hash: the chain cannot execute it twice). On start it resumes every sent intent, and sends the pending intents a
 * crash left between their insert and their signature. See docs/marketplace.md ("Verifier operation").
 */
import { Transaction, Wallet, type Provider, type TransactionReceipt, type TransactionRequest } from "ethers";
import { TaskEscrow__factory } from "../../typechain-types";
import type { Knex } from "knex";
import type { ChainName } from "../escrow/records";
import { encodeCompleteVerification, encodeMarketplaceAssign, withMargin } from "../chain/escrowCalls";
import {
  backoffDelay,
  classifyBroadcastError,
  classifyRpcError,
  errorText,
  revertReason,
  sleep,
  withRetry,
} from "../chain/rpcErrors";
import { silentLogger, type Logger } from "../logger";
import {
  deletePendingIntent,
  failPendingIntent,
  findIntent,
  findIntentById,
  highestActiveNonce,
  insertIntent,
  listIntentsByStatus,
  markConfirmed,
  markFailed,
  markSent,
  recordBroadcast,
  retryFailedIntent,
  unsend,
  type IntentRecord,
} from "../db/repositories/verifierIntents";
import {
  VerifierSendError,
  assignKey,
  verdictKey,
  type IntentKind,
  type IntentView,
  type MarketplaceVerifier,
} from "./types";

export interface VerifierOptions {
  db: Knex;
  /** The settlement chain this verifier signs on: its intents and nonces are this chain's. */
  chain: ChainName;
  provider: Provider;
  /** The escrow proxy. */
  escrowAddress: string;
  /** 0x + 64 hex: the platform verifier's key (the escrow's `verifier`). */
  privateKey: string;
  logger?: Logger;
  /** How often the loop looks at sent intents (200 ms on local networks, 2 s elsewhere). */
  pollIntervalMs?: number;
}

/** Checks of a sent intent whose nonce another transaction took before it is declared failed. */
const NONCE_TAKEN_CHECKS = 3;

const nowSeconds = () => Math.floor(Date.now() / 1000);

// ---------------------------------------------------------------------------------------------------------------
// The verifier
// ---------------------------------------------------------------------------------------------------------------

type Mode =
  /** A request is waiting: a refusal deletes the intent (or puts a retried one back to failed) and throws. */
  | { kind: "request"; retry: boolean }
  /** The loop found a pending intent nobody is waiting for: a refusal marks it failed. */
  | { kind: "loop" };

/** A call that cannot be made now. `lasting`: it would revert, or the node refuses the transaction as invalid. */
class Refusal extends Error {
  constructor(
    message: string,
    readonly options: { reason?: string; cause?: unknown; lasting?: boolean } = {},
  ) {
    super(message);
  }
}

export class Verifier implements MarketplaceVerifier {
  readonly address: string;
  readonly chain: ChainName;
  private readonly wallet: Wallet;
  private readonly db: Knex;
  private readonly provider: Provider;
  private readonly escrow: string;
  private readonly logger: Logger;
  private readonly pollMs: number;
  /** The sender mutex: one intent is signed and broadcast at a time. */
  private lock: Promise<unknown> = Promise.resolve();
  /** Requests under way in this process, by intent key (a concurrent duplicate joins the first). */
  private readonly inflight = new Map<string, Promise<IntentView>>();
  /** Consecutive checks of a sent intent that found its nonce taken and no receipt. */
  private readonly nonceTaken = new Map<number, number>();
  private chainId: bigint | undefined;
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private tickDone: Promise<void> = Promise.resolve();
  private failures = 0;

  constructor(options: VerifierOptions) {
    this.wallet = new Wallet(options.privateKey);
    this.address = this.wallet.address;
    this.chain = options.chain;
    this.db = options.db;
    this.provider = options.provider;
    this.escrow = options.escrowAddress;
    this.logger = options.logger ?? silentLogger;
    this.pollMs = Math.max(10, options.pollIntervalMs ?? 200);
  }

  // ----- requests -----------------------------------------------------------------------------------------------

  requestAssign(taskId: number, worker: string): Promise<IntentView> {
    return this.request("assign", taskId, assignKey(taskId), { worker: worker.toLowerCase() });
  }

  requestVerdict(taskId: number, attempt: number, passed: boolean): Promise<IntentView> {
    return this.request("verdict", taskId, verdictKey(taskId, attempt), { attempt, passed });
  }

  async intent(key: string): Promise<IntentView | undefined> {
    const row = await findIntent(this.db, this.chain, key);
    return row ? view(row) : undefined;
  }

  async settled(key: string, timeoutMs = 30_000): Promise<IntentView> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const row = await findIntent(this.db, this.chain, key);
      if (!row) throw new Error(`no verifier intent ${key} on ${this.chain}`);
      if (row.status === "confirmed" || row.status === "failed") return view(row);
      if (Date.now() >= until)
        throw new Error(`verifier intent ${key} on ${this.chain} still ${row.status} after ${timeoutMs} ms`);
      await sleep(Math.min(this.pollMs, 50));
    }
  }

  private request(kind: IntentKind, taskId: number, key: string, args: Record<string, unknown>) {
    const running = this.inflight.get(key);
    if (running) return running;
    const promise = this.record(kind, taskId, key, args).finally(() => this.inflight.delete(key));
    this.inflight.set(key, promise);
    return promise;
  }

  private async record(kind: IntentKind, taskId: number, key: string, args: Record<string, unknown>) {
    const { intent } = await insertIntent(this.db, { chain: this.chain, kind, taskId, key, args, now: nowSeconds() });
    if (intent.status === "pending") {
      return view(await this.exclusive(() => this.send(intent.id, { kind: "request", retry: false })));
    }
    if (intent.status === "failed") {
      // Its transaction can never be mined (it reverted, or another took its nonce): a new request is a new attempt.
      return view(
        await this.exclusive(async () => {
          if (!(await retryFailedIntent(this.db, intent.id, args, nowSeconds()))) return this.reload(intent.id);
          return this.send(intent.id, { kind: "request", retry: true });
        }),
      );
    }
    return view(intent);
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private async reload(id: number): Promise<IntentRecord> {
    const row = await findIntentById(this.db, id);
    if (!row) throw new VerifierSendError(`verifier intent ${id} is gone`);
    return row;
  }

  // ----- sending (under the mutex) ------------------------------------------------------------------------------

  /** Signs, stores and broadcasts the pending intent `id`. Resolves with the row after it (sent, or settled). */
  private async send(id: number, mode: Mode): Promise<IntentRecord> {
    for (let round = 0; ; round++) {
      const row = await this.reload(id);
      if (row.status !== "pending") return row;
      try {
        const outcome = await this.signAndBroadcast(row);
        if (outcome === "again" && round === 0) continue; // the nonce went to another transaction: pick a new one
        if (outcome === "again") throw new Refusal("the verifier's nonce keeps being taken by other transactions");
        return await this.reload(id);
      } catch (error) {
        if (error instanceof Refusal) return this.refuse(row, error, mode);
        if (mode.kind === "loop") throw error;
        // A fault of ours (the database). A row still pending was never broadcast: the request leaves nothing and
        // says so. A sent one may be on its way: the error goes up as is, and the loop settles the intent.
        const undo = mode.retry
          ? failPendingIntent(this.db, row.id, errorText(error), nowSeconds())
          : deletePendingIntent(this.db, row.id);
        if (!(await undo.catch(() => false))) throw error;
        throw new VerifierSendError(`${describeCall(row)}: ${errorText(error)}`, { cause: error });
      }
    }
  }

  private async refuse(row: IntentRecord, refusal: Refusal, mode: Mode): Promise<IntentRecord> {
    const message = `${describeCall(row)}: ${refusal.message}`;
    this.logger.warn("verifier call refused", { key: row.key, error: refusal.message });
    // Still pending: the loop backs off and tries again (no one waits for it; the node may come back, get funds).
    if (mode.kind === "loop" && !refusal.options.lasting) throw refusal;
    if (mode.kind === "request" && !mode.retry) {
      await deletePendingIntent(this.db, row.id);
    } else {
      await failPendingIntent(this.db, row.id, refusal.message, nowSeconds());
    }
    if (mode.kind === "loop") return this.reload(row.id);
    throw new VerifierSendError(message, { reason: refusal.options.reason, cause: refusal.options.cause ?? refusal });
  }

  /**
   * One attempt: estimate, sign, store, broadcast. "again" when the node said the nonce is taken by another
   * transaction (the intent is pending again); throws Refusal when the call cannot be made.
   */
  private async signAndBroadcast(row: IntentRecord): Promise<"done" | "again"> {
    const data = calldata(row);
    const request: TransactionRequest = { from: this.address, to: this.escrow, data };
    const gas = await this.estimate(request);
    let raw: string;
    let nonce: number;
    try {
      const [chainId, fees, pendingNonce, stored] = await Promise.all([
        this.network(),
        withRetry(() => this.provider.getFeeData(), { retries: 2 }),
        withRetry(() => this.provider.getTransactionCount(this.address, "pending"), { retries: 2 }),
        highestActiveNonce(this.db, this.chain),
      ]);
      nonce = Math.max(pendingNonce, stored === null ? 0 : stored + 1);
      const tx: TransactionRequest = { to: this.escrow, data, value: 0n, chainId, nonce, gasLimit: withMargin(gas) };
      if (fees.maxFeePerGas !== null && fees.maxPriorityFeePerGas !== null) {
        Object.assign(tx, {
          type: 2,
          maxFeePerGas: fees.maxFeePerGas,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        });
      } else if (fees.gasPrice !== null) {
        Object.assign(tx, { type: 0, gasPrice: fees.gasPrice });
      } else {
        throw new Error("the node reports no gas price");
      }
      raw = await this.wallet.signTransaction(tx);
    } catch (error) {
      throw new Refusal(`the chain is unavailable: ${errorText(error)}`, { cause: error });
    }
    const txHash = Transaction.from(raw).hash!;
    // Stored before it leaves the process: after a crash from here on, the loop re-broadcasts this very transaction.
    if (!(await markSent(this.db, row.id, { nonce, txHash, rawTx: raw, now: nowSeconds() }))) return "done";
    this.logger.info("verifier transaction signed", { key: row.key, nonce, txHash });

    const failure = await this.broadcast(raw);
    if (failure === null || failure.kind === "known") {
      await recordBroadcast(this.db, row.id, null, nowSeconds());
      return "done";
    }
    if (failure.kind === "retryable") {
      // Maybe the node has it, maybe not: keep it sent; the loop broadcasts it again until a receipt appears.
      await recordBroadcast(this.db, row.id, failure.message, nowSeconds());
      this.logger.warn("verifier broadcast failed, will retry", { key: row.key, txHash, error: failure.message });
      return "done";
    }
    if (failure.kind === "nonce-used") {
      const receipt = await this.receipt(txHash);
      if (receipt) {
        await this.settle({ ...row, status: "sent", txHash }, receipt);
        return "done";
      }
    }
    // The node refused this transaction: it is nowhere, and its nonce is free again.
    await unsend(this.db, row.id, nowSeconds());
    if (failure.kind === "nonce-used" || failure.kind === "underpriced") return "again";
    throw new Refusal(
      failure.kind === "underfunded" ? `the verifier cannot pay the gas: ${failure.message}` : failure.message,
      { cause: failure.error, lasting: failure.kind === "rejected" },
    );
  }

  /** The call's gas; Refusal when it would revert (with the escrow's error) or the node cannot answer. */
  private async estimate(request: TransactionRequest): Promise<bigint> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.provider.estimateGas(request);
      } catch (error) {
        const revert = revertReason(error);
        if (revert)
          throw new Refusal(`would revert: ${revert.text}`, { reason: revert.name, cause: error, lasting: true });
        if (attempt >= 2 || classifyRpcError(error) !== "retryable") {
          throw new Refusal(`the chain is unavailable: ${errorText(error)}`, { cause: error });
        }
        await sleep(backoffDelay(attempt));
      }
    }
  }

  private async broadcast(raw: string) {
    try {
      await this.provider.broadcastTransaction(raw);
      return null;
    } catch (error) {
      return { kind: classifyBroadcastError(error), message: errorText(error), error };
    }
  }

  private async network(): Promise<bigint> {
    this.chainId ??= (await withRetry(() => this.provider.getNetwork(), { retries: 2 })).chainId;
    return this.chainId;
  }

  private receipt(txHash: string): Promise<TransactionReceipt | null> {
    return withRetry(() => this.provider.getTransactionReceipt(txHash), { retries: 2 });
  }

  private async settle(row: IntentRecord, receipt: TransactionReceipt) {
    this.nonceTaken.delete(row.id);
    if (receipt.status === 1) {
      if (await markConfirmed(this.db, row.id, nowSeconds())) {
        this.logger.info("verifier transaction confirmed", {
          key: row.key,
          txHash: row.txHash,
          block: receipt.blockNumber,
        });
      }
    } else if (await markFailed(this.db, row.id, "reverted", nowSeconds())) {
      this.logger.warn("verifier transaction reverted", {
        key: row.key,
        txHash: row.txHash,
        block: receipt.blockNumber,
      });
    }
  }

  // ----- the loop -----------------------------------------------------------------------------------------------

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const escrow = TaskEscrow__factory.connect(this.escrow, this.provider);
      const onChain = await escrow.verifier();
      if (onChain.toLowerCase() !== this.address.toLowerCase()) {
        this.logger.error("VERIFIER_PRIVATE_KEY is not the escrow's verifier: its calls will revert (NotVerifier)", {
          address: this.address,
          escrowVerifier: onChain,
        });
      }
    } catch (error) {
      this.logger.warn("could not read the escrow's verifier", { error });
    }
    // The first pass resumes what a previous run left: sent intents (receipts, re-broadcasts) and pending ones.
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.tickDone;
  }

  private schedule(delayMs: number) {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.tickDone = this.tick()
        .then(() => {
          this.failures = 0;
        })
        .catch((error) => {
          this.failures++;
          this.logger.warn("verifier loop failed, will retry", { error, failures: this.failures });
        })
        .finally(() => {
          const backoff = this.failures === 0 ? this.pollMs : Math.min(30_000, this.pollMs * 2 ** this.failures);
          this.schedule(backoff);
        });
    }, delayMs);
  }

  /** One pass: every sent intent, then every pending intent no request of this process is sending. */
  async tick(): Promise<void> {
    for (const row of await listIntentsByStatus(this.db, this.chain, ["sent"])) {
      if (!this.running) return;
      if (this.inflight.has(row.key)) continue; // its request is broadcasting it right now
      await this.check(row);
    }
    for (const row of await listIntentsByStatus(this.db, this.chain, ["pending"])) {
      if (!this.running) return;
      if (this.inflight.has(row.key)) continue;
      this.logger.info("verifier resumes an unsent intent", { key: row.key });
      await this.exclusive(() => this.send(row.id, { kind: "loop" }));
    }
  }

  /** A sent intent: settle it by its receipt, or broadcast its stored transaction again if the node lost it. */
  private async check(row: IntentRecord): Promise<void> {
    const txHash = row.txHash!;
    const receipt = await this.receipt(txHash);
    if (receipt) return this.settle(row, receipt);
    if (await withRetry(() => this.provider.getTransaction(txHash), { retries: 2 })) return; // waiting in the pool
    const failure = await this.broadcast(row.rawTx!);
    if (failure === null || failure.kind === "known") {
      this.nonceTaken.delete(row.id);
      this.logger.info("verifier re-broadcast its transaction", { key: row.key, nonce: row.nonce, txHash });
      await recordBroadcast(this.db, row.id, null, nowSeconds());
      return;
    }
    if (failure.kind === "nonce-used" || failure.kind === "rejected") {
      // Mined meanwhile? Otherwise another transaction took the nonce (or the node refuses this one): it can never
      // be mined. Declared only after a few checks, so a node that lags behind its peers is not mistaken.
      const late = await this.receipt(txHash);
      if (late) return this.settle(row, late);
      const seen = (this.nonceTaken.get(row.id) ?? 0) + 1;
      this.nonceTaken.set(row.id, seen);
      if (seen >= NONCE_TAKEN_CHECKS) {
        this.nonceTaken.delete(row.id);
        const reason =
          failure.kind === "nonce-used" ? `nonce ${row.nonce} used by another transaction` : failure.message;
        await markFailed(this.db, row.id, reason, nowSeconds());
        this.logger.error("verifier transaction can never be mined", { key: row.key, txHash, error: failure.message });
        return;
      }
    }
    // No funds, a foreign transaction with the same nonce in the pool, the network: keep it and try again.
    await recordBroadcast(this.db, row.id, failure.message, nowSeconds());
    this.logger.warn("verifier re-broadcast failed, will retry", { key: row.key, txHash, error: failure.message });
  }
}

function calldata(row: IntentRecord): string {
  if (row.kind === "assign") {
    return encodeMarketplaceAssign(row.taskId, String(row.args.worker));
  }
  return encodeCompleteVerification(row.taskId, row.args.passed === true);
}

function describeCall(row: IntentRecord): string {
  return row.kind === "assign"
    ? `marketplaceAssign(${row.taskId}, ${String(row.args.worker)})`
    : `completeVerification(${row.taskId}, ${row.args.passed === true})`;
}

function view(row: IntentRecord): IntentView {
  return {
    id: row.id,
    chain: row.chain,
    kind: row.kind,
    taskId: row.taskId,
    key: row.key,
    status: row.status,
    txHash: row.txHash,
    error: row.lastError,
  };
}
