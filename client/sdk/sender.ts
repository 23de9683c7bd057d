/**
 * Sending transactions with nonces the SDK manages itself. ethers v6 providers cache identical reads for 250 ms, so
 * two sends in a row that each ask the node for the account's nonce (approve, then createTask on an automining
 * devnet) can get the same answer and the second fails NONCE_EXPIRED. The SDK reads the `pending` count once per
 * wallet and chain (straight from the node with `eth_getTransactionCount` when the provider speaks JSON-RPC), then
 * counts up locally; a failed broadcast forgets the count so the next send reads it again. Sends of one wallet are
 * serialized, so concurrent jobs of an agent never share a nonce.
 *
 * A wallet that can sign locally (an ethers Wallet) signs first and hands the signed transaction to `beforeBroadcast`
 * (the posting journal persists it), then broadcasts: a crash anywhere after signing can be resumed by broadcasting
 * the same bytes again, which can never pay twice (same nonce, same hash).
 */
import { Transaction, type Provider, type Signer, type TransactionReceipt, type TransactionRequest } from "ethers";
import { ClientError, MarketError, refuse } from "./errors";

export const DEFAULT_CONFIRM_TIMEOUT_MS = 180_000;

export interface SignedTx {
  hash: string;
  nonce: number;
  /** The signed bytes, when the signer signs locally (absent for signers that only send). */
  raw?: string;
}

export interface SendOptions {
  /** Called with the signed transaction before it is broadcast (after, for signers that cannot sign locally). */
  beforeBroadcast?: (signed: SignedTx) => Promise<void> | void;
}

const nextNonce = new Map<string, number>();
const NONCE_ERROR = /nonce too low|NONCE_EXPIRED|nonce has already been used|nonce.*(lower|expired)/i;
const queues = new Map<string, Promise<unknown>>();

/** Runs `fn` after every earlier call with the same key has settled. */
function serialized<R>(key: string, fn: () => Promise<R>): Promise<R> {
  const previous = queues.get(key) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  queues.set(key, settled);
  void settled.then(() => {
    if (queues.get(key) === settled) queues.delete(key);
  });
  return run;
}

/** The account's pending transaction count, read from the node (not from the provider's 250 ms cache). */
export async function pendingNonce(provider: Provider, address: string): Promise<number> {
  const rpc = provider as Provider & { send?: (method: string, params: unknown[]) => Promise<string> };
  if (typeof rpc.send === "function") {
    return Number(BigInt(await rpc.send("eth_getTransactionCount", [address, "pending"])));
  }
  return provider.getTransactionCount(address, "pending");
}

/** Signs and sends transactions of one signer with managed nonces, and waits for their receipts. */
export class TxSender {
  readonly confirmTimeoutMs: number;

  constructor(
    readonly signer: Signer,
    options: { confirmTimeoutMs?: number } = {},
  ) {
    if (!signer.provider) refuse("NO_RPC", "the signer has no provider");
    this.confirmTimeoutMs = options.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS;
  }

  get provider(): Provider {
    return this.signer.provider!;
  }

  private async key(): Promise<string> {
    const { chainId } = await this.provider.getNetwork();
    return `${chainId}:${(await this.signer.getAddress()).toLowerCase()}`;
  }

  /** Forgets the locally counted nonce (the next send reads it from the node). */
  async resetNonce(): Promise<void> {
    nextNonce.delete(await this.key());
  }

  /** Signs `tx` with the next nonce, hands it to `beforeBroadcast`, broadcasts it; answers its hash and nonce. */
  async send(tx: TransactionRequest, options: SendOptions = {}): Promise<SignedTx> {
    const key = await this.key();
    return serialized(key, async () => {
      const address = await this.signer.getAddress();
      for (let attempt = 0; ; attempt++) {
        const counted = nextNonce.get(key);
        const nonce = counted ?? (await pendingNonce(this.provider, address));
        try {
          const signed = await this.signAndBroadcast({ ...tx, nonce, chainId: BigInt(key.split(":")[0]) }, options);
          nextNonce.set(key, nonce + 1);
          return signed;
        } catch (error) {
          nextNonce.delete(key);
          // The wallet sent something outside the SDK since the count was taken: count again from the node, once.
          // (A transaction refused for its nonce can never be mined, so signing anew cannot pay twice.)
          if (attempt === 0 && counted !== undefined && NONCE_ERROR.test(String(error))) continue;
          throw error;
        }
      }
    });
  }

  private async signAndBroadcast(request: TransactionRequest, options: SendOptions): Promise<SignedTx> {
    const nonce = Number(request.nonce);
    if (canSignLocally(this.signer)) {
      const populated = await this.signer.populateTransaction(request);
      const raw = await this.signer.signTransaction(populated);
      const signed = { hash: Transaction.from(raw).hash!, nonce, raw };
      await options.beforeBroadcast?.(signed);
      await this.broadcast(raw);
      return signed;
    }
    const response = await this.signer.sendTransaction(request);
    const signed = { hash: response.hash, nonce };
    await options.beforeBroadcast?.(signed);
    return signed;
  }

  /** Broadcasts signed bytes; "already known" answers (the same bytes sent before) count as sent. */
  async broadcast(raw: string): Promise<void> {
    try {
      await this.provider.broadcastTransaction(raw);
    } catch (error) {
      if (/already known|known transaction|already imported|nonce too low|NONCE_EXPIRED/i.test(String(error))) {
        const hash = Transaction.from(raw).hash!;
        if (await this.provider.getTransaction(hash).catch(() => null)) return;
        if (await this.provider.getTransactionReceipt(hash).catch(() => null)) return;
      }
      throw error;
    }
  }

  /**
   * Waits for the receipt: UNCONFIRMED when none arrives within the confirm timeout (the transaction may still be
   * mined: `details.txHash`), TX_REVERTED when it reverted.
   */
  async wait(hash: string, timeoutMs = this.confirmTimeoutMs): Promise<TransactionReceipt> {
    // Polls the receipt itself (from 300 ms, backing off to 2 s) rather than waiting on the provider's block
    // polling (4 s by default), and never twice within the provider's 250 ms read cache.
    const deadline = Date.now() + timeoutMs;
    let receipt: TransactionReceipt | null;
    for (let delay = 300; ; delay = Math.min(Math.round(delay * 1.5), 2000)) {
      try {
        receipt = await this.provider.getTransactionReceipt(hash);
      } catch (error) {
        throw new ClientError("RPC_UNREACHABLE", `waiting for ${hash}: ${String(error)}`, { cause: error });
      }
      if (receipt || Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(0, deadline - Date.now()))));
    }
    if (!receipt) {
      refuse("UNCONFIRMED", `transaction ${hash} not confirmed within ${Math.round(timeoutMs / 1000)} s`, {
        details: { txHash: hash, timeoutMs },
      });
    }
    if (receipt.status !== 1) {
      throw new MarketError("TX_REVERTED", `transaction ${hash} reverted`, { details: { txHash: hash } });
    }
    return receipt;
  }

  /** Sends and waits for the receipt. */
  async sendAndWait(tx: TransactionRequest, options: SendOptions = {}): Promise<TransactionReceipt> {
    const signed = await this.send(tx, options);
    return this.wait(signed.hash);
  }
}

function canSignLocally(signer: Signer): boolean {
  return "signingKey" in signer && typeof (signer as { signingKey?: unknown }).signingKey === "object";
}
