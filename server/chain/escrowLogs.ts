/**
 * Reading the escrow's logs: the ChainReader the indexer needs, adaptive log ranges, and decoding into StoredEvent.
 */
import { Interface, type Log, type Provider } from "ethers";
import { TaskEscrow__factory } from "../../typechain-types";
import type { BlockHeader, EventArgs, StoredEvent } from "../indexer/types";
import { classifyRpcError } from "./rpcErrors";

export const escrowInterface: Interface = TaskEscrow__factory.createInterface() as unknown as Interface;

/** The chain reads the indexer makes; an ethers Provider satisfies it through `providerChainReader`. */
export interface ChainReader {
  chainId(): Promise<number>;
  blockNumber(): Promise<number>;
  block(number: number): Promise<BlockHeader | null>;
  logs(address: string, fromBlock: number, toBlock: number): Promise<Log[]>;
}

export function providerChainReader(provider: Provider): ChainReader {
  return {
    chainId: async () => Number((await provider.getNetwork()).chainId),
    blockNumber: () => provider.getBlockNumber(),
    block: async (number) => {
      const b = await provider.getBlock(number);
      return b ? { number: b.number, hash: b.hash!, parentHash: b.parentHash, timestamp: b.timestamp } : null;
    },
    logs: (address, fromBlock, toBlock) => provider.getLogs({ address, fromBlock, toBlock }),
  };
}

/**
 * Logs of [fromBlock, toBlock], splitting the range in halves while the node answers that it is too large.
 * Returns the logs and the largest range that worked, so the caller can keep using it.
 */
export async function fetchLogsAdaptive(
  chain: ChainReader,
  address: string,
  fromBlock: number,
  toBlock: number,
): Promise<{ logs: Log[]; workingRange: number }> {
  try {
    return { logs: await chain.logs(address, fromBlock, toBlock), workingRange: toBlock - fromBlock + 1 };
  } catch (error) {
    if (classifyRpcError(error) !== "range-too-large" || fromBlock === toBlock) throw error;
    const middle = Math.floor((fromBlock + toBlock) / 2);
    const left = await fetchLogsAdaptive(chain, address, fromBlock, middle);
    const right = await fetchLogsAdaptive(chain, address, middle + 1, toBlock);
    return {
      logs: [...left.logs, ...right.logs],
      workingRange: Math.min(left.workingRange, right.workingRange),
    };
  }
}

function jsonValue(value: unknown): string | boolean | number {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "string") return value.startsWith("0x") ? value.toLowerCase() : value;
  if (typeof value === "boolean" || typeof value === "number") return value;
  return String(value);
}

/** Decodes an escrow log; undefined for a log the escrow's ABI does not know. */
export function decodeEscrowLog(log: Log, blockTimestamp: number): StoredEvent | undefined {
  let parsed;
  try {
    parsed = escrowInterface.parseLog({ topics: [...log.topics], data: log.data });
  } catch {
    return undefined;
  }
  if (!parsed) return undefined;
  const args: EventArgs = {};
  parsed.fragment.inputs.forEach((input, i) => {
    args[input.name] = jsonValue(parsed.args[i]);
  });
  const taskId = "taskId" in args ? Number(args.taskId) : null;
  return {
    blockNumber: log.blockNumber,
    logIndex: log.index,
    blockHash: log.blockHash.toLowerCase(),
    txHash: log.transactionHash.toLowerCase(),
    txIndex: log.transactionIndex,
    blockTimestamp,
    eventName: parsed.name,
    taskId,
    args,
  };
}
