/**
 * The marketplace SDK: typed REST calls, the posting flow with the careful client's checks, brief crypto, the event
 * stream and an agent runtime. Depends on ethers, @noble and zod only (its types come from the service's zod schemas
 * through type-only imports, erased at runtime: see README.md).
 */
export { MarketApi, type MarketApiOptions, type RequestOptions } from "./api";
export {
  MarketError,
  ApiError,
  ClientError,
  CLIENT_CODES,
  isMarketError,
  type ClientCode,
  type ApiCode,
  type RowError,
  type MarketErrorOptions,
} from "./errors";
export * from "./types";
export {
  pinSettlement,
  checkOwner,
  checkEscrowTx,
  callMismatch,
  checkRpc,
  checkAmounts,
  checkBalance,
  readAllowance,
  checkApproveTx,
  checkDeployAgentTx,
  checkQuote,
  checkSendable,
  fundedAmount,
  pinnedChain,
  encodeApprove,
  type SendableAnswer,
  type ServiceQuote,
  type SettlementPin,
  type ExpectedCall,
  type ExpectedTask,
  type TxAnswer,
} from "./checks";
export {
  ESCROW_ABI,
  ERC20_ABI,
  FACTORY_ABI,
  escrowInterface,
  erc20Interface,
  factoryInterface,
  TASK_CATEGORY,
  MAX_ESCROW_AMOUNT,
} from "./abi";
export { TxSender, pendingNonce, DEFAULT_CONFIRM_TIMEOUT_MS, type SignedTx, type SendOptions } from "./sender";
export {
  MemoryJournal,
  FileJournal,
  type PostingJournal,
  type PostingRecord,
  type PostingStage,
  type JournalItem,
  type JournalTx,
} from "./journal";
export {
  postTask,
  postTasks,
  DEFAULT_DURATION_SECONDS,
  DEFAULT_LOCATION_ZONE,
  type TaskDraft,
  type PostOptions,
  type PostedTask,
} from "./posting";
export {
  subscribe,
  followAgentLogs,
  SseParser,
  type SubscribeOptions,
  type EventSubscription,
  type AgentLogLine,
} from "./events";
export {
  AgentRuntime,
  MIN_POLL_INTERVAL_MS,
  taskChain,
  type AgentRuntimeOptions,
  type ChainSigner,
  type Job,
  type JobStage,
  type JobView,
} from "./runtime";
export { payDeployFee, DEFAULT_DEPLOY_FEE_CAP_RAW, type PayDeployFeeOptions } from "./deployFee";
export {
  encryptBrief,
  decryptBrief,
  wrapBriefKey,
  unwrapBriefKey,
  sealBrief,
  openBrief,
  agentPublicKey,
  isValidAgentPublicKey,
  BriefCryptoError,
  BRIEF_MAGIC,
  WRAP_VERSION,
  WRAP_INFO,
  WRAPPED_KEY_BYTES,
  type BriefRecipient,
  type SealedBrief,
  type EncryptOptions,
  type WrapOptions,
} from "./briefCrypto";
export {
  sendTaskOperation,
  assignTask,
  resolveDispute,
  submitResult,
  ASSIGNMENT_WAIT_MS,
  type SubmittedResult,
  type TaskOperation,
  type TaskOperationResult,
  type OperationOptions,
} from "./operations";
export { waitForTask, FINAL_STATUSES, type WaitOptions, type WaitResult } from "./wait";
export { canonicalJson, evidenceHash, hashCanonical, CanonicalJsonError } from "./canonicalJson";
