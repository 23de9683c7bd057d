/**
 * Reading the chain in the page: a provider, and a task's escrow events (its timeline), decoded with the SDK's escrow
 * ABI (client/sdk/abi.ts, the one copy, pinned to the compiled contracts by the SDK's tests).
 */
import { JsonRpcProvider, BrowserProvider, zeroPadValue, toBeHex, type Provider } from "ethers";
import { escrowInterface } from "../../client/sdk/index";
import type { Eip1193Provider } from "./wallet";

/**
 * A provider to read one chain with: the devnet's RPC of that chain when the page knows it, else the signed-in
 * wallet's (whichever chain it is on: `taskTimeline` checks), else none.
 */
export function readProvider(wallet: Eip1193Provider | undefined, chainRpc: string | undefined): Provider | null {
  if (chainRpc) return new JsonRpcProvider(chainRpc, undefined, { staticNetwork: true, batchMaxCount: 1 });
  if (wallet) return new BrowserProvider(wallet);
  return null;
}

export interface TimelineEntry {
  name: string;
  blockNumber: number;
  txHash: string;
  time: number | null;
  args: Record<string, string>;
}

/**
 * Every escrow event about one task (indexed taskId is each event's first topic after the signature), oldest first,
 * read on the task's chain: a provider on another chain (a wallet elsewhere) is an error saying so, never another
 * chain's events under the same id.
 */
export async function taskTimeline(
  provider: Provider,
  chain: { chainId: number; escrow: string },
  taskId: number,
  fromBlock = 0,
): Promise<TimelineEntry[]> {
  const { escrow } = chain;
  const on = Number((await provider.getNetwork()).chainId);
  if (on !== chain.chainId) {
    throw new Error(`the wallet is on chain ${on}; this task's escrow is on chain ${chain.chainId}: switch to read it`);
  }
  const logs = await provider.getLogs({
    address: escrow,
    fromBlock,
    toBlock: "latest",
    topics: [null, zeroPadValue(toBeHex(taskId), 32)],
  });
  const times = new Map<number, number | null>();
  const entries: TimelineEntry[] = [];
  for (const log of logs) {
    const parsed = escrowInterface.parseLog(log);
    if (!parsed) continue;
    if (!times.has(log.blockNumber))
      times.set(log.blockNumber, (await provider.getBlock(log.blockNumber))?.timestamp ?? null);
    const args: Record<string, string> = {};
    parsed.fragment.inputs.forEach((input, i) => {
      if (input.name !== "taskId") args[input.name] = String(parsed.args[i]);
    });
    entries.push({
      name: parsed.name,
      blockNumber: log.blockNumber,
      txHash: log.transactionHash,
      time: times.get(log.blockNumber) ?? null,
      args,
    });
  }
  return entries;
}
