/**
 * Reading the chain in the page: a provider, and a task's escrow events (its timeline), decoded with the SDK's escrow
 * ABI (client/sdk/abi.ts, the one copy, pinned to the compiled contracts by the SDK's tests).
 */
import { JsonRpcProvider, BrowserProvider, zeroPadValue, toBeHex, type Provider } from "ethers";
import { escrowInterface } from "../../client/sdk/index";
import type { Eip1193Provider } from "./wallet";

/** A provider to read the chain with: the signed-in wallet's, else the devnet's RPC, else none. */
export function readProvider(wallet: Eip1193Provider | undefined, devnetRpc: string | undefined): Provider | null {
  if (wallet) return new BrowserProvider(wallet);
  if (devnetRpc) return new JsonRpcProvider(devnetRpc, undefined, { staticNetwork: true, batchMaxCount: 1 });
  return null;
}

export interface TimelineEntry {
  name: string;
  blockNumber: number;
  txHash: string;
  time: number | null;
  args: Record<string, string>;
}

/** Every escrow event about one task (indexed taskId is each event's first topic after the signature), oldest first. */
export async function taskTimeline(
  provider: Provider,
  escrow: string,
  taskId: number,
  fromBlock = 0,
): Promise<TimelineEntry[]> {
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
