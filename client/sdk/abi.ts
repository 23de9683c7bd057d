/**
 * The escrow, token and factory functions the SDK encodes, decodes and checks, as human-readable ABI (the SDK does
 * not depend on the repository's generated TypeChain code). test/client/sdk/checks.test.ts pins every selector to
 * the compiled contracts, so a changed signature fails a test rather than a user's transaction.
 */
import { Interface } from "ethers";

export const ESCROW_ABI = [
  "function createTask(bytes32 taskHash, address token, uint256 amount, string category, string locationZone, uint256 duration) returns (uint256)",
  "function createTaskWithVerifier(bytes32 taskHash, address token, uint256 amount, string category, string locationZone, uint256 duration, address verifierAgent) returns (uint256)",
  "function createTasks(address token, (bytes32 taskHash, uint256 amount, string category, string locationZone, uint256 duration, address verifierAgent)[] tasks) returns (uint256[])",
  "function submitEvidence(uint256 taskId, bytes32 evidenceHash)",
  "function cancelTask(uint256 taskId)",
  "function claimTimeout(uint256 taskId)",
  "function raiseDispute(uint256 taskId)",
  "function releaseUnjudgedWork(uint256 taskId)",
  "function escalateUnjudgedWork(uint256 taskId)",
  "function resolveDispute(uint256 taskId, bool workerFavored)",
  "function admin() view returns (address)",
  "function getTask(uint256 taskId) view returns ((address poster, address worker, address token, uint256 amount, bytes32 taskHash, bytes32 evidenceHash, uint8 status, string category, string locationZone, uint256 createdAt, uint256 deadline, uint8 submissionAttempts, uint256 disputedAt))",
  "function assignWorker(uint256 taskId, address worker)",
  "function completeVerification(uint256 taskId, bool passed)",
  "event TaskCreated(uint256 indexed taskId, address indexed agent, address token, uint256 amount, bytes32 taskHash, string category, string locationZone, uint256 deadline)",
  // Every other per-task event (the indexed taskId first), for reading a task's history from the chain.
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
  "event OpenSubmissionCommitted(uint256 indexed taskId, address indexed submitter, bytes32 commitment, uint256 bond)",
  "event OpenSubmission(uint256 indexed taskId, address indexed submitter, bytes32 evidenceHash)",
  "event WinnerSelected(uint256 indexed taskId, address indexed winner)",
  "event OpenBondsForfeited(uint256 indexed taskId, address indexed recipient, uint256 amount)",
] as const;

export const ERC20_ABI = [
  "function approve(address spender, uint256 amount) returns (bool)",
  "function allowance(address owner, address spender) view returns (uint256)",
  "function balanceOf(address owner) view returns (uint256)",
] as const;

export const FACTORY_ABI = ["function deployAgent(uint256 usdcAmount)"] as const;

export const escrowInterface = new Interface(ESCROW_ABI);
export const erc20Interface = new Interface(ERC20_ABI);
export const factoryInterface = new Interface(FACTORY_ABI);

/** The escrow's free-text category: the API always sends `general`. */
export const TASK_CATEGORY = "general";
/** The escrow stores rewards in 96 bits: above this a createTask reverts. */
export const MAX_ESCROW_AMOUNT = (1n << 96n) - 1n;
