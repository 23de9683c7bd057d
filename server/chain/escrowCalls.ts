/**
 * Calldata of the escrow's posting functions (createTask, createTaskWithVerifier, createTasks), encoded with the
 * TypeChain interface of TaskEscrow so that a change of signature breaks the build rather than a client's
 * transaction, and the size-based gas limit of a batch when estimating it fails.
 */
import { AbiCoder, ZeroAddress, concat, getAddress, toUtf8Bytes } from "ethers";
import { TaskEscrow__factory } from "../../typechain-types";

/** The escrow's free-text category: the API always sends `general`. */
export const TASK_CATEGORY = "general";

const escrow = TaskEscrow__factory.createInterface();
const abi = AbiCoder.defaultAbiCoder();

/**
 * Encodes `name(args)` with its selector computed once: ethers recomputes a fragment's selector (a keccak) and looks
 * the fragment up by name on every call, a tenth of a task build's time.
 */
function encoderOf(name: "createTask" | "createTaskWithVerifier") {
  const fragment = escrow.getFunction(name)!;
  const selector = fragment.selector;
  return (args: readonly unknown[]) => concat([selector, abi.encode(fragment.inputs, args)]);
}

const encodeCreateTaskCall = encoderOf("createTask");
const encodeCreateTaskWithVerifierCall = encoderOf("createTaskWithVerifier");

/*
 * createTask and createTaskWithVerifier encoded by hand: their layout is fixed (bytes32, address, uint256, string,
 * string, uint256[, address]), and ethers' AbiCoder builds its coders and checksums each address (a keccak) on every
 * call, a sixth of a task build's time (bench/api.ts BENCH_CPU_PROFILE). The layout is checked against the TypeChain
 * fragments when this module loads, and any value outside the plain cases (not lowercase hex, out of range) takes
 * the ethers encoder, which throws as before. test/server/chain/escrowCalls.test.ts compares both encoders.
 */
const FAST_LAYOUT = ["bytes32", "address", "uint256", "string", "string", "uint256"];
for (const [name, types] of [
  ["createTask", FAST_LAYOUT],
  ["createTaskWithVerifier", [...FAST_LAYOUT, "address"]],
] as const) {
  const actual = escrow.getFunction(name)!.inputs.map((p) => p.type);
  if (actual.join(",") !== types.join(",")) {
    throw new Error(`TaskEscrow.${name}(${actual.join(",")}) changed: update escrowCalls.ts's encoder`);
  }
}
const CREATE_TASK_SELECTOR = escrow.getFunction("createTask")!.selector;
const CREATE_TASK_WITH_VERIFIER_SELECTOR = escrow.getFunction("createTaskWithVerifier")!.selector;
const MAX_UINT256 = (1n << 256n) - 1n;
const ZEROS = "0".repeat(64);
/** Addresses in mixed case already found to carry a valid checksum (the settlement token's, in practice). */
const checkedAddresses = new Set<string>();

const word = (hex: string) => ZEROS.slice(hex.length) + hex;
const uintWord = (value: bigint) => word(value.toString(16));

function addressWord(address: string): string | undefined {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return undefined;
  if (!/^0x[0-9a-f]{40}$/.test(address) && !checkedAddresses.has(address)) {
    try {
      getAddress(address); // a mixed-case address must carry its checksum
    } catch {
      return undefined;
    }
    if (checkedAddresses.size >= 64) checkedAddresses.clear();
    checkedAddresses.add(address);
  }
  return word(address.slice(2).toLowerCase());
}

/** A string's length word and its UTF-8 bytes padded to whole words. */
function stringWords(value: string): string {
  const hex = Buffer.from(value, "utf8").toString("hex");
  const padded = hex.length % 64 === 0 ? hex : hex + ZEROS.slice(hex.length % 64);
  return uintWord(BigInt(hex.length / 2)) + padded;
}

function fastCreateTask(token: string, task: TaskCall): string | undefined {
  const { taskHash, amount, locationZone, duration, verifierAgent } = task;
  if (!/^0x[0-9a-fA-F]{64}$/.test(taskHash)) return undefined;
  if (amount < 0n || amount > MAX_UINT256 || !Number.isSafeInteger(duration) || duration < 0) return undefined;
  // A lone surrogate: ethers refuses it where Buffer would write U+FFFD.
  if (/[\uD800-\uDFFF]/.test(locationZone)) return undefined;
  const tokenWord = addressWord(token);
  const verifierWord = verifierAgent ? addressWord(verifierAgent) : "";
  if (tokenWord === undefined || verifierWord === undefined) return undefined;
  const headWords = verifierAgent ? 7 : 6;
  const category = stringWords(TASK_CATEGORY);
  const zone = stringWords(locationZone);
  return (
    (verifierAgent ? CREATE_TASK_WITH_VERIFIER_SELECTOR : CREATE_TASK_SELECTOR) +
    taskHash.slice(2).toLowerCase() +
    tokenWord +
    uintWord(amount) +
    uintWord(BigInt(headWords * 32)) +
    uintWord(BigInt(headWords * 32 + category.length / 2)) +
    uintWord(BigInt(duration)) +
    verifierWord +
    category +
    zone
  );
}

/** One task to fund, as the escrow takes it (the category is always TASK_CATEGORY). */
export interface TaskCall {
  taskHash: string;
  amount: bigint;
  locationZone: string;
  /** Seconds from creation to the deadline. */
  duration: number;
  /** The task's own verifier agent; absent when the marketplace verifier judges. */
  verifierAgent?: string;
}

/**
 * `createTaskWithVerifier(taskHash, token, amount, category, locationZone, duration, verifierAgent)` when the task
 * names a verifier agent, else `createTask(taskHash, token, amount, category, locationZone, duration)`.
 *
 * @example encodeCreateTask(usdc, { taskHash, amount: 5_000_000n, locationZone: "global", duration: 86_400 })
 */
export function encodeCreateTask(token: string, task: TaskCall): string {
  return fastCreateTask(token, task) ?? encodeCreateTaskWithEthers(token, task);
}

/** encodeCreateTask with ethers' AbiCoder (every value it accepts; the reference of the encoder above). */
export function encodeCreateTaskWithEthers(token: string, task: TaskCall): string {
  const { taskHash, amount, locationZone, duration, verifierAgent } = task;
  if (verifierAgent) {
    return encodeCreateTaskWithVerifierCall([
      taskHash,
      token,
      amount,
      TASK_CATEGORY,
      locationZone,
      duration,
      verifierAgent,
    ]);
  }
  return encodeCreateTaskCall([taskHash, token, amount, TASK_CATEGORY, locationZone, duration]);
}

/** `createTasks(token, tasks)`: the NewTask tuples in order, with the zero address for tasks without a verifier. */
export function encodeCreateTasks(token: string, tasks: readonly TaskCall[]): string {
  return escrow.encodeFunctionData("createTasks", [
    token,
    tasks.map((t) => ({
      taskHash: t.taskHash,
      amount: t.amount,
      category: TASK_CATEGORY,
      locationZone: t.locationZone,
      duration: t.duration,
      verifierAgent: t.verifierAgent ?? ZeroAddress,
    })),
  ]);
}

/**
 * Gas of a createTasks call, from its size, for when `eth_estimateGas` fails (usually because the caller has not
 * approved the escrow yet). Measured on the escrow (bench/gas.ts and test/server/api.tasks.test.ts): about 112k for a
 * batch of one (155k for a poster's first task, which gives the poster its account id), 56k per task at 50 with the
 * default labels (`general`, `global`: not stored); other labels of up to
 * 31 bytes in all (2 bytes of length, the category and the zone) take one slot, about 22k more per task, and longer
 * ones a long `bytes` of one slot per 32 bytes, about 22.5k each; a verifier agent adds 24k per task (one more slot
 * and an event). The terms below round each up and count one label slot for every task:
 *
 *     90,000 + sum over tasks of (105,000 + 26,000 if verifier + 25,000 * ceil(labelBytes / 32) if labelBytes > 31)
 *
 * The caller adds one fifth, as for an estimate (`withMargin`). It assumes no task-registry hook on the escrow (unset on the
 * posting chain); a hook may take up to its own gas limit per task.
 */
export function createTasksGasFallback(tasks: readonly TaskCall[]): bigint {
  let gas = 90_000n;
  for (const task of tasks) {
    gas += 105_000n;
    if (task.verifierAgent) gas += 26_000n;
    const labelBytes = 2 + toUtf8Bytes(TASK_CATEGORY).length + toUtf8Bytes(task.locationZone).length;
    if (labelBytes > 31) gas += 25_000n * BigInt(Math.ceil(labelBytes / 32));
  }
  return gas;
}

/**
 * Most gas one transaction may take (EIP-7825, 2^24): nodes refuse a higher gas limit. A batch whose size-based gas
 * is above it cannot be sent at all.
 */
export const TX_GAS_CAP = 16_777_216n;

/** A gas limit from an estimate or a fallback: plus one fifth, at most the per-transaction cap. */
export const withMargin = (gas: bigint): bigint => {
  const limit = gas + gas / 5n;
  return limit < TX_GAS_CAP ? limit : TX_GAS_CAP;
};

// ---------------------------------------------------------------------------------------------------------------
// Marketplace calls of the poster (assign, cancel)
// ---------------------------------------------------------------------------------------------------------------

/** `assignWorker(taskId, worker)`: the poster assigns the task itself (the marketplace is not asked). */
export function encodeAssignWorker(taskId: number | bigint, worker: string): string {
  return escrow.encodeFunctionData("assignWorker", [taskId, worker]);
}

/** `cancelTask(taskId)`: the poster takes back the reward of a task nobody took (Funded). */
export function encodeCancelTask(taskId: number | bigint): string {
  return escrow.encodeFunctionData("cancelTask", [taskId]);
}

// ---------------------------------------------------------------------------------------------------------------
// Delivery and settlement calls (the caller's wallet signs them; completeVerification is also the verifier's)
// ---------------------------------------------------------------------------------------------------------------

/** `submitEvidence(taskId, evidenceHash)`: the worker records a deliverable's hash. */
export const encodeSubmitEvidence = (taskId: number | bigint, evidenceHash: string): string =>
  escrow.encodeFunctionData("submitEvidence", [taskId, evidenceHash]);

/** `marketplaceAssign(taskId, worker)`: the marketplace verifier assigns an accepting agent. */
export const encodeMarketplaceAssign = (taskId: number | bigint, worker: string): string =>
  escrow.encodeFunctionData("marketplaceAssign", [taskId, worker]);

/** `completeVerification(taskId, passed)`: the task's judge settles the latest submission. */
export const encodeCompleteVerification = (taskId: number | bigint, passed: boolean): string =>
  escrow.encodeFunctionData("completeVerification", [taskId, passed]);

/**
 * `claimTimeout(taskId)`: after the deadline, the poster's refund, escalation of unjudged work, or the split of a
 * dispute nobody ruled on.
 */
export const encodeClaimTimeout = (taskId: number | bigint): string =>
  escrow.encodeFunctionData("claimTimeout", [taskId]);

/** `raiseDispute(taskId)`: the poster or the worker disputes a submission or a failed verdict. */
export const encodeRaiseDispute = (taskId: number | bigint): string =>
  escrow.encodeFunctionData("raiseDispute", [taskId]);

/** `escalateUnjudgedWork(taskId)`: the worker escalates a submission nobody judged, after the deadline and grace. */
export const encodeEscalateUnjudgedWork = (taskId: number | bigint): string =>
  escrow.encodeFunctionData("escalateUnjudgedWork", [taskId]);

/** `releaseUnjudgedWork(taskId)`: the worker is paid for escalated work nobody ruled on within the window. */
export const encodeReleaseUnjudgedWork = (taskId: number | bigint): string =>
  escrow.encodeFunctionData("releaseUnjudgedWork", [taskId]);

/** `splitUnruled(taskId)`: anyone ends a dispute nobody ruled on within the dispute window, half to each side. */
export const encodeSplitUnruled = (taskId: number | bigint): string =>
  escrow.encodeFunctionData("splitUnruled", [taskId]);

// ---------------------------------------------------------------------------------------------------------------
// Pull payments and open-task verdicts
// ---------------------------------------------------------------------------------------------------------------

/** `withdraw(token, to)`: the caller takes what it is owed in `token` (credited winners, bonds, splits). */
export const encodeWithdraw = (token: string, to: string): string => escrow.encodeFunctionData("withdraw", [token, to]);

/** `contestOpen(taskId)`: the poster or a revealed submitter sends an open task to its judge. */
export const encodeContestOpen = (taskId: number | bigint): string =>
  escrow.encodeFunctionData("contestOpen", [taskId]);

/** `judgeOpen(taskId, winner)`: the judge pays a revealed submitter, or refunds the poster when `winner` is zero. */
export const encodeJudgeOpen = (taskId: number | bigint, winner: string): string =>
  escrow.encodeFunctionData("judgeOpen", [taskId, winner]);
