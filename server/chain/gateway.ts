/**
 * What the API needs from the chain: the deployment it serves (address book), receipts, gas estimates, the
 * escrow's batch support and a poster's allowance to it. Reads that can fail are wrapped with retries; callers map
 * failures to 503 codes.
 */
import { Contract, type Provider, type TransactionReceipt, type TransactionRequest } from "ethers";
import type { AddressBook } from "./addressBook";
import type { ChainName } from "../escrow/records";
import { withRetry } from "./rpcErrors";
import { allowancesPerBlock, providerAllowanceSource } from "./allowances";

export interface ChainGateway {
  /** Which settlement chain this is (`base` or `arc`). */
  readonly name: ChainName;
  readonly book: AddressBook;
  readonly provider: Provider;
  receipt(txHash: string): Promise<TransactionReceipt | null>;
  estimateGas(tx: TransactionRequest): Promise<bigint>;
  /** The escrow's MAX_BATCH, read once and cached; null when the escrow has no batch function (or it is unreadable). */
  maxBatch(): Promise<number | null>;
  /**
   * What `owner` has approved the escrow proxy to move of the settlement token, at the chain head as read after the
   * call began (kept per poster per head block: server/chain/allowances.ts).
   */
  escrowAllowance(owner: string): Promise<bigint>;
}

const BATCH_CACHE_MS = 5 * 60_000;

export function createChainGateway(name: ChainName, book: AddressBook, provider: Provider): ChainGateway {
  let batch: { value: number | null; at: number } | undefined;
  const escrow = new Contract(book.escrow.proxy, ["function MAX_BATCH() view returns (uint256)"], provider);
  const allowanceOf = allowancesPerBlock(providerAllowanceSource(provider, book.token.address, book.escrow.proxy));
  return {
    name,
    book,
    provider,
    receipt: (txHash) => withRetry(() => provider.getTransactionReceipt(txHash), { retries: 2 }),
    estimateGas: (tx) => provider.estimateGas(tx),
    escrowAllowance: (owner) => withRetry(() => allowanceOf(owner), { retries: 2 }),
    async maxBatch() {
      if (batch && Date.now() - batch.at < BATCH_CACHE_MS) return batch.value;
      let value: number | null;
      try {
        value = Number(await escrow.MAX_BATCH());
      } catch {
        value = null;
      }
      batch = { value, at: Date.now() };
      return value;
    },
  };
}
