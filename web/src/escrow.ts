/** The escrow calls and per-task events the web app uses (from contracts/interfaces/ITaskEscrow.sol). */
import { Interface, JsonRpcProvider, BrowserProvider, zeroPadValue, toBeHex, type Provider } from "ethers";
import type { Eip1193Provider } from "./wallet";

export const ESCROW_ABI = [
  "function createTask(bytes32 taskHash, address token, uint256 amount, string category, string locationZone, uint256 duration)",
  "function createTaskWithVerifier(bytes32 taskHash, address token, uint256 amount, string category, string locationZone, uint256 duration, address verifier)",
  "event TaskCreated(uint256 indexed taskId, address indexed agent, address token, uint256 amount, bytes32 taskHash, string category, string locationZone, uint256 deadline)",
  "event TaskVerifierSet(uint256 indexed taskId, address indexed verifier)",
  "event WorkerAssigned(uint256 indexed taskId, address indexed worker)",
  "event EvidenceSubmitted(uint256 indexed taskId, address indexed worker, bytes32 evidenceHash, uint8 attempt)",
  "event VerificationCompleted(uint256 indexed taskId, bool passed)",
  "event TEESettled(uint256 indexed taskId, bool passed, address indexed teeSigner)",
  "event TaskCompleted(uint256 indexed taskId, uint256 workerPayout, uint256 platformFee)",
  "event TaskCancelled(uint256 indexed taskId, uint256 refundAmount)",
  "event DeadlineExpired(uint256 indexed taskId, uint256 refundAmount)",
  "event TaskDisputed(uint256 indexed taskId, address indexed initiator)",
  "event DisputeResolved(uint256 indexed taskId, bool workerFavored)",
  "event UnjudgedWorkEscalated(uint256 indexed taskId)",
  "event UnjudgedWorkReleased(uint256 indexed taskId, uint256 workerPayout, uint256 platformFee)",
  "event OpenTaskCreated(uint256 indexed taskId)",
  "event OpenSubmission(uint256 indexed taskId, address indexed submitter, bytes32 evidenceHash)",
  "event WinnerSelected(uint256 indexed taskId, address indexed winner)",
];
export const ERC20_ABI = [
  "function approve(address spender, uint256 amount) returns (bool)",
  "function allowance(address owner, address spender) view returns (uint256)",
  "function balanceOf(address owner) view returns (uint256)",
];
export const escrowInterface = new Interface(ESCROW_ABI);

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
