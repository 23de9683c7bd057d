/**
 * Reading the escrow's logs: the ChainReader the indexer needs, adaptive log ranges, and decoding into StoredEvent.
 */
import { Interface, type EventFragment, type Log, type Provider } from "ethers";
import { TaskEscrow__factory } from "../../typechain-types";
import type { BlockHeader, EventArgs, StoredEvent } from "../escrow/records";
import { classifyRpcError, withRetry, type RetryOptions } from "./rpcErrors";
import type { HeadSource } from "./heads";

export const escrowInterface: Interface = TaskEscrow__factory.createInterface() as unknown as Interface;

/** The chain reads the indexer makes; an ethers Provider satisfies it through `providerChainReader`. */
export interface ChainReader {
  chainId(): Promise<number>;
  blockNumber(): Promise<number>;
  block(number: number): Promise<BlockHeader | null>;
  logs(address: string, fromBlock: number, toBlock: number): Promise<Log[]>;
  /** New heads pushed by the node, where it offers a subscription; without it the indexer polls the head. */
  heads?: HeadSource;
}

/** A log as `eth_getLogs` answers it (quantities as hex strings). */
export interface RpcLog {
  blockNumber: string;
  logIndex: string;
  blockHash: string;
  transactionHash: string;
  transactionIndex: string;
  address: string;
  topics: string[];
  data: string;
  removed?: boolean;
}

/**
 * The indexer's Log from the JSON-RPC answer as is: ethers' formatLog checksums every address (a keccak256 per log)
 * and builds Log objects the indexer does not need.
 */
export function logFromRpc(l: RpcLog): Log {
  return {
    blockNumber: Number(l.blockNumber),
    index: Number(l.logIndex),
    blockHash: l.blockHash,
    transactionHash: l.transactionHash,
    transactionIndex: Number(l.transactionIndex),
    address: l.address,
    topics: l.topics,
    data: l.data,
  } as unknown as Log;
}

/** Reads through `provider`; `heads`, when given, is where new heads are pushed from (server/chain/heads.ts). */
export function providerChainReader(provider: Provider, heads?: HeadSource): ChainReader {
  return {
    heads,
    chainId: async () => Number((await provider.getNetwork()).chainId),
    blockNumber: () => provider.getBlockNumber(),
    block: async (number) => {
      const b = await provider.getBlock(number);
      return b ? { number: b.number, hash: b.hash!, parentHash: b.parentHash, timestamp: b.timestamp } : null;
    },
    logs: async (address, fromBlock, toBlock) => {
      const send = (provider as unknown as { send?: (m: string, p: unknown[]) => Promise<RpcLog[]> }).send;
      if (typeof send !== "function") return provider.getLogs({ address, fromBlock, toBlock });
      const raw = await send.call(provider, "eth_getLogs", [
        { address, fromBlock: "0x" + fromBlock.toString(16), toBlock: "0x" + toBlock.toString(16) },
      ]);
      return raw.filter((l) => !l.removed).map(logFromRpc);
    },
  };
}

/**
 * Logs of [fromBlock, toBlock], splitting the range in halves while the node answers that it is too large.
 * Returns the logs and the largest range that worked, so the caller can keep using it. `retry` is each call's
 * withRetry options (the caller's signal and timers).
 */
export async function fetchLogsAdaptive(
  chain: ChainReader,
  address: string,
  fromBlock: number,
  toBlock: number,
  retry: RetryOptions = {},
): Promise<{ logs: Log[]; workingRange: number }> {
  try {
    // Each call is retried on its own, so a transient failure inside a split does not discard what was learned.
    const logs = await withRetry(() => chain.logs(address, fromBlock, toBlock), retry);
    return { logs, workingRange: toBlock - fromBlock + 1 };
  } catch (error) {
    if (classifyRpcError(error) !== "range-too-large" || fromBlock === toBlock) throw error;
    const middle = Math.floor((fromBlock + toBlock) / 2);
    const left = await fetchLogsAdaptive(chain, address, fromBlock, middle, retry);
    const right = await fetchLogsAdaptive(chain, address, middle + 1, toBlock, retry);
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

/**
 * The escrow's events by topic, computed once. Interface.parseLog scans every event fragment and hashes its
 * signature (EventFragment.topicHash is a getter: format + keccak256 on each access) until one matches, then builds
 * ethers Results behind Proxies: most of a backfill's time. Every escrow event has only address, bool, bytes32,
 * uint/int and string parameters, which are decoded here straight from the hex.
 */
interface EventPlan {
  name: string;
  fragment: EventFragment;
  inputs: PlannedInput[];
  simple: boolean;
}
interface PlannedInput {
  name: string;
  type: string;
  indexed: boolean;
  /** For integers: the width in bits, and whether signed. */
  bits: number;
  signed: boolean;
}
const SIMPLE = /^(address|bool|bytes32|u?int\d*|string)$/;
const EVENT_PLANS = new Map<string, EventPlan>();
escrowInterface.forEachEvent((fragment) => {
  const inputs = fragment.inputs.map((p) => ({
    name: p.name,
    type: p.type,
    indexed: p.indexed === true,
    bits: /^u?int/.test(p.type) ? Number(p.type.replace(/^u?int/, "") || 256) : 0,
    signed: p.type.startsWith("int"),
  }));
  const simple = !fragment.anonymous && inputs.every((p) => SIMPLE.test(p.type) && !(p.indexed && p.type === "string"));
  EVENT_PLANS.set(fragment.topicHash, { name: fragment.name, fragment, inputs, simple });
});

const ZERO_WORD = "0".repeat(64);
const ONE_WORD = "0".repeat(63) + "1";
const ADDRESS_PADDING = "0".repeat(24);
/** A word starting with these 51 zeros holds an integer below 2^52, which a double (parseInt) represents exactly. */
const SMALL_PREFIX = "0".repeat(51);

/** One 32-byte word (64 hex characters, lower case) as jsonValue would give the ethers-decoded value. */
function wordValue(input: PlannedInput, hex: string): string | boolean {
  if (hex.length !== 64) throw new Error("short word");
  const { type } = input;
  if (type === "address") {
    if (!hex.startsWith(ADDRESS_PADDING)) throw new Error("dirty address");
    return "0x" + hex.slice(24);
  }
  if (type === "bool") {
    if (hex === ZERO_WORD) return false;
    if (hex === ONE_WORD) return true;
    throw new Error("dirty bool");
  }
  if (type === "bytes32") return "0x" + hex;
  // Most integers are ids, amounts and times far below 2^52: no BigInt for them. (A signed type of 52 bits or fewer
  // takes the BigInt path: its sign bit may lie inside the last 13 digits.)
  if (input.bits > 52 && hex.startsWith(SMALL_PREFIX)) return String(parseInt(hex.slice(51), 16));
  const v = BigInt("0x" + hex);
  if (input.signed) return BigInt.asIntN(input.bits, v).toString();
  if (input.bits < 256 && v >> BigInt(input.bits) !== 0n) throw new Error("dirty uint");
  return v.toString();
}

function decodeSimple(plan: EventPlan, log: Log): EventArgs {
  const data = lowerHex(log.data);
  const args: EventArgs = {};
  let topic = 1;
  let slot = 0;
  for (const input of plan.inputs) {
    if (input.indexed) {
      const t = log.topics[topic++];
      if (t === undefined) throw new Error("missing topic");
      args[input.name] = wordValue(input, lowerHex(t));
      continue;
    }
    const hex = data.slice(slot * 64, slot * 64 + 64);
    slot++;
    if (input.type !== "string") {
      args[input.name] = wordValue(input, hex);
      continue;
    }
    const offset = Number(BigInt("0x" + hex)) * 2;
    const length = Number(BigInt("0x" + data.slice(offset, offset + 64))) * 2;
    const bytes = data.slice(offset + 64, offset + 64 + length);
    if (bytes.length !== length) throw new Error("short string");
    // Labels are free text: kept as written (invalid UTF-8 becomes U+FFFD rather than stopping the indexer).
    args[input.name] = Buffer.from(bytes, "hex").toString("utf8");
  }
  return args;
}

/** `0x…` hex without its prefix, in lower case (nodes answer in lower case: then no copy is made). */
function lowerHex(hex: string): string {
  const digits = hex.slice(2);
  return /[A-F]/.test(digits) ? digits.toLowerCase() : digits;
}

/** Decodes an escrow log; undefined for a log the escrow's ABI does not know. */
export function decodeEscrowLog(log: Log, blockTimestamp: number): StoredEvent | undefined {
  const plan = log.topics.length > 0 ? EVENT_PLANS.get(log.topics[0].toLowerCase()) : undefined;
  if (!plan) return undefined;
  let args: EventArgs = {};
  try {
    if (plan.simple) args = decodeSimple(plan, log);
    else {
      const values = escrowInterface.decodeEventLog(plan.fragment, log.data, [...log.topics]);
      plan.inputs.forEach((input, i) => {
        args[input.name] = input.type === "string" ? String(values[i]) : jsonValue(values[i]);
      });
    }
  } catch {
    return undefined;
  }
  const taskId = "taskId" in args ? Number(args.taskId) : null;
  return {
    blockNumber: log.blockNumber,
    logIndex: log.index,
    blockHash: log.blockHash.toLowerCase(),
    txHash: log.transactionHash.toLowerCase(),
    txIndex: log.transactionIndex,
    blockTimestamp,
    eventName: plan.name,
    taskId,
    args,
  };
}
