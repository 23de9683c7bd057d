/**
 * The chain head's block number read with raw JSON-RPC (`freshShared` in server/freshShared.ts shares such a read
 * between concurrent callers without answering one older than their asking).
 */
import type { Provider } from "ethers";

/** A provider that also takes raw JSON-RPC (ethers' JsonRpcApiProvider, Hardhat's provider). */
export interface RawRpc {
  send(method: string, params: unknown[]): Promise<unknown>;
}

/** `provider` as a raw JSON-RPC sender when it is one, else undefined. */
export function rawRpcOf(provider: Provider): RawRpc | undefined {
  const send = (provider as Partial<RawRpc>).send;
  return typeof send === "function" ? (provider as unknown as RawRpc) : undefined;
}

/**
 * Reads the head's number with a raw `eth_blockNumber` when the provider takes one: ethers' `getBlockNumber` answers
 * from its own cache for up to a quarter of a second.
 */
export function blockNumberReader(provider: Provider): () => Promise<number> {
  const rpc = rawRpcOf(provider);
  if (!rpc) return () => provider.getBlockNumber();
  return async () => Number(await rpc.send("eth_blockNumber", []));
}
