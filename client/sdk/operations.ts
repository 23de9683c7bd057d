/**
 * Signed operations on one task, by hash, with the careful client's checks: the service builds the unsigned
 * transaction (cancel, reclaim, dispute, release, escalate, assign), the SDK checks it is from the key's wallet, to
 * the escrow of the task's chain in the settlement record, with that chain's id, exactly the expected call with zero
 * value, then signs it with managed nonces and waits for its receipt. The signer must be connected to an RPC of the
 * task's chain (WRONG_CHAIN otherwise, before anything is signed). `resolveDispute` is the escrow admin's own call (no API route builds it).
 * `submitResult` is the worker's delivery: the result stored by the service, then submitEvidence of its hash.
 */
import { Contract, type Signer } from "ethers";
import type { MarketApi } from "./api";
import { escrowInterface } from "./abi";
import { checkEscrowTx, checkOwner, checkRpc, pinSettlement, type ExpectedCall } from "./checks";
import { isMarketError, refuse } from "./errors";
import { evidenceHash } from "./canonicalJson";
import { TxSender } from "./sender";
import type { ChainName, PosterTx } from "./types";

export type TaskOperation = "cancel" | "reclaim" | "dispute" | "release" | "escalate";

export interface OperationOptions {
  api: MarketApi;
  signer?: Signer;
  confirmTimeoutMs?: number;
}

export interface TaskOperationResult {
  taskHash: string;
  onChainTaskId: number;
  txHash: string;
  /** reclaim: `refund` (the reward came back) or `escalate` (submitted, unjudged work is now disputed). */
  outcome?: "refund" | "escalate";
}

const CALL: Record<TaskOperation, Exclude<ExpectedCall["fn"], "createTask" | "createTasks">> = {
  cancel: "cancelTask",
  reclaim: "claimTimeout",
  dispute: "raiseDispute",
  release: "releaseUnjudgedWork",
  escalate: "escalateUnjudgedWork",
};

/** The signer's address (NO_SIGNER without one), checked to be the API key's wallet (OWNER_MISMATCH). */
async function signerWallet(options: OperationOptions): Promise<string> {
  if (!options.signer) refuse("NO_SIGNER", "this operation signs a transaction: pass a signer");
  const wallet = (await options.signer.getAddress()).toLowerCase();
  checkOwner((await options.api.whoami()).address, wallet);
  return wallet;
}

/**
 * The settlement of the task's `chain` (its entry of the settlement record) with the signer's RPC checked to be that
 * chain's, and a sender of the signer.
 */
async function prepareOn(options: OperationOptions, chain: ChainName) {
  const signer = options.signer!;
  const pin = pinSettlement(await options.api.settlement(), undefined, chain);
  await checkRpc(signer, pin);
  return { pin, sender: new TxSender(signer, { confirmTimeoutMs: options.confirmTimeoutMs }) };
}

/** Builds, checks, signs and confirms `operation` on the task `taskHash`. */
export async function sendTaskOperation(
  options: OperationOptions,
  operation: TaskOperation,
  taskHash: string,
): Promise<TaskOperationResult> {
  const wallet = await signerWallet(options);
  const answer = await options.api[operation](taskHash);
  const { pin, sender } = await prepareOn(options, answer.chain);
  const taskId = BigInt(answer.onChainTaskId);
  checkEscrowTx(answer, pin, wallet, { fn: CALL[operation], taskId } as ExpectedCall);
  const sent = await sender.send({ to: answer.unsignedTx.to, data: answer.unsignedTx.data });
  await sender.wait(sent.hash);
  return {
    taskHash: answer.taskHash,
    onChainTaskId: answer.onChainTaskId,
    txHash: sent.hash,
    ...("outcome" in answer ? { outcome: answer.outcome as "refund" | "escalate" } : {}),
  };
}

/** The poster assigns the task to `worker` on-chain (the listing is not informed: see the spec's assignWorker). */
export async function assignTask(options: OperationOptions, taskHash: string, worker: string) {
  const wallet = await signerWallet(options);
  const answer: PosterTx = await options.api.assign(taskHash, worker);
  const { pin, sender } = await prepareOn(options, answer.chain);
  checkEscrowTx(answer, pin, wallet, { fn: "assignWorker", taskId: BigInt(answer.onChainTaskId), worker });
  const sent = await sender.send({ to: answer.unsignedTx.to, data: answer.unsignedTx.data });
  await sender.wait(sent.hash);
  return { taskHash: answer.taskHash, onChainTaskId: answer.onChainTaskId, txHash: sent.hash };
}

export interface SubmittedResult {
  taskHash: string;
  onChainTaskId: number;
  txHash: string;
  /** The submission attempt this delivery is (1 first, more after a failed verdict). */
  attempt: number;
  evidenceHash: string;
}

/** How long `submitResult` keeps asking while the accept's assignment is on its way to the chain (503). */
export const ASSIGNMENT_WAIT_MS = 60_000;

/**
 * The worker delivers `result` (any JSON value) for the task it accepted: the service stores the result and builds
 * submitEvidence of its canonical hash; the SDK checks the transaction is from the key's wallet (the signer), to the
 * settlement escrow on its chain, exactly submitEvidence(task, hash of this result) with zero value, then signs it and
 * waits for its receipt. While the assignment is not on-chain yet (ASSIGNMENT_PENDING, NOT_ASSIGNED_YET) it asks again,
 * backing off from 1 s to 5 s, for up to `assignmentWaitMs`.
 */
export async function submitResult(
  options: OperationOptions & { assignmentWaitMs?: number },
  taskHash: string,
  result: unknown,
): Promise<SubmittedResult> {
  const wallet = await signerWallet(options);
  const expectedHash = evidenceHash(result);
  const until = Date.now() + (options.assignmentWaitMs ?? ASSIGNMENT_WAIT_MS);
  let backoffMs = 1000;
  let answer;
  for (;;) {
    try {
      answer = await options.api.submit(taskHash, { result });
      break;
    } catch (error) {
      if (!isMarketError(error, "ASSIGNMENT_PENDING", "NOT_ASSIGNED_YET") || Date.now() + backoffMs > until)
        throw error;
      await new Promise((resolve) => setTimeout(resolve, backoffMs));
      backoffMs = Math.min(backoffMs * 2, 5000);
    }
  }
  const { pin, sender } = await prepareOn(options, answer.chain);
  checkEscrowTx(answer, pin, wallet, {
    fn: "submitEvidence",
    taskId: BigInt(answer.onChainTaskId),
    evidenceHash: expectedHash,
  });
  const sent = await sender.send({ to: answer.unsignedTx.to, data: answer.unsignedTx.data });
  await sender.wait(sent.hash);
  return {
    taskHash: answer.taskHash,
    onChainTaskId: answer.onChainTaskId,
    txHash: sent.hash,
    attempt: answer.attempt,
    evidenceHash: expectedHash,
  };
}

/**
 * The escrow admin rules on a disputed task (devnet and operators): `resolveDispute(taskId, workerFavored)` sent to
 * the escrow of the task's chain, from a signer that is the escrow's admin (OWNER_MISMATCH otherwise).
 */
export async function resolveDispute(
  options: OperationOptions,
  taskHash: string,
  workerFavored: boolean,
): Promise<TaskOperationResult> {
  if (!options.signer) refuse("NO_SIGNER", "this operation signs a transaction: pass a signer");
  const wallet = (await options.signer.getAddress()).toLowerCase();
  const task = await options.api.task(taskHash);
  const { pin, sender } = await prepareOn(options, task.chain);
  const admin = String(await new Contract(pin.escrow, escrowInterface, sender.provider).admin()).toLowerCase();
  if (admin !== wallet) refuse("OWNER_MISMATCH", `the escrow's admin is ${admin}, the signer is ${wallet}`);
  const data = escrowInterface.encodeFunctionData("resolveDispute", [task.taskId, workerFavored]);
  checkEscrowTx(
    { chain: task.chain, chainId: pin.chainId, unsignedTx: { to: pin.escrow, from: wallet, data, value: "0" } },
    pin,
    wallet,
    { fn: "resolveDispute", taskId: BigInt(task.taskId), workerFavored },
  );
  const sent = await sender.send({ to: pin.escrow, data });
  await sender.wait(sent.hash);
  return { taskHash: task.taskHash, onChainTaskId: task.taskId, txHash: sent.hash };
}
