/**
 * Reading a funding receipt: the TaskCreated events (and the TaskVerifierSet events that precede them) that THIS
 * escrow emitted in one transaction. Logs of any other contract, including a look-alike emitting the same event
 * signature, are ignored.
 *
 * @example
 *   const funding = readFundingReceipt(receipt, book.escrow.proxy);
 *   if (!funding.succeeded) throw ...; // TX_REVERTED
 *   for (const task of funding.created) console.log(task.taskId, task.taskHash, task.verifier);
 */
import type { TransactionReceipt } from "ethers";
import { ZERO_ADDRESS } from "../escrow/records";
import { escrowInterface } from "./escrowLogs";

/** One task funded by the transaction, as its events state it. Addresses and hashes are lower-case. */
export interface FundedTask {
  taskId: number;
  /** The poster (the event calls it `agent`). */
  poster: string;
  token: string;
  /** Smallest unit of the token, as a decimal string. */
  amount: string;
  taskHash: string;
  category: string;
  locationZone: string;
  /** Creation-time deadline (Unix seconds); the effective deadline adds time spent paused. */
  deadline: number;
  /** The task's own verifier agent (TaskVerifierSet in the same transaction), or the zero address. */
  verifier: string;
  logIndex: number;
}

export interface FundingReceipt {
  txHash: string;
  blockNumber: number;
  /** false for a reverted transaction (status 0). */
  succeeded: boolean;
  /** Tasks the escrow created in this transaction, in log order. */
  created: FundedTask[];
}

/** The escrow's funding events in `receipt`; `escrowAddress` is the proxy. */
export function readFundingReceipt(receipt: TransactionReceipt, escrowAddress: string): FundingReceipt {
  const escrow = escrowAddress.toLowerCase();
  const verifiers = new Map<number, string>();
  const created: FundedTask[] = [];
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== escrow) continue;
    let parsed;
    try {
      parsed = escrowInterface.parseLog({ topics: [...log.topics], data: log.data });
    } catch {
      continue;
    }
    if (!parsed) continue;
    if (parsed.name === "TaskVerifierSet") {
      verifiers.set(Number(parsed.args.taskId), String(parsed.args.verifier).toLowerCase());
    } else if (parsed.name === "TaskCreated") {
      const taskId = Number(parsed.args.taskId);
      created.push({
        taskId,
        poster: String(parsed.args.agent).toLowerCase(),
        token: String(parsed.args.token).toLowerCase(),
        amount: (parsed.args.amount as bigint).toString(),
        taskHash: String(parsed.args.taskHash).toLowerCase(),
        category: String(parsed.args.category),
        locationZone: String(parsed.args.locationZone),
        deadline: Number(parsed.args.deadline),
        verifier: ZERO_ADDRESS,
        logIndex: log.index,
      });
    }
  }
  // TaskVerifierSet comes before TaskCreated; join them once every log is read.
  for (const task of created) task.verifier = verifiers.get(task.taskId) ?? ZERO_ADDRESS;
  return {
    txHash: receipt.hash.toLowerCase(),
    blockNumber: receipt.blockNumber,
    succeeded: receipt.status === 1,
    created,
  };
}
