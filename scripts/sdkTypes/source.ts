/**
 * The SDK's wire types, named over the server's zod schemas (the same ones the operations validate with and the
 * OpenAPI document is generated from). `npm run sdk:types` expands each into a plain TypeScript type in
 * client/sdk/types.ts, so the SDK carries them with no server code; test/client/sdk/standalone.test.ts fails while
 * that file differs from what this one generates, so a change of a shape reaches the SDK before its users.
 * Request bodies are the schemas' input types (what a client may send); answers are their output types (what the
 * service sends).
 */
import type { z } from "zod";
import type * as posting from "../../server/domain/schemas/posting";
import type * as market from "../../server/domain/schemas/marketplace";
import type * as accept from "../../server/domain/schemas/accept";
import type * as delivery from "../../server/domain/schemas/delivery";
import type * as credits from "../../server/domain/schemas/credits";
import type * as executors from "../../server/domain/schemas/executors";
import type * as services from "../../server/domain/schemas/services";
import type * as accounts from "../../server/domain/schemas/accounts";
import type * as storage from "../../server/domain/schemas/storage";
import type * as settlement from "../../server/domain/schemas/settlement";
import type * as stats from "../../server/domain/schemas/stats";
import type * as reputation from "../../server/domain/schemas/reputation";
import type * as cards from "../../server/domain/schemas/cards";
import type * as deployFee from "../../server/domain/schemas/deployFee";
import type * as hostedAgents from "../../server/domain/schemas/agents";
import type * as events from "../../server/domain/schemas/events";
import type * as laterKeys from "../../server/domain/schemas/laterKeys";
import type * as devnet from "../../server/domain/schemas/devnet";
import type * as oauth from "../../server/domain/schemas/oauth";
import type { ErrorCode } from "../../server/errors";

/** A type spelled out as plain objects and arrays (a passthrough object's zod helper type becomes its fields). */
type Plain<T> = T extends readonly (infer U)[] ? Plain<U>[] : T extends object ? { [K in keyof T]: Plain<T[K]> } : T;
type In<T extends z.ZodTypeAny> = Plain<z.input<T>>;
type Out<T extends z.ZodTypeAny> = Plain<z.output<T>>;

// System
export type Stats = Out<typeof stats.statsSchema>;
export type Settlement = Out<typeof settlement.settlementSchema>;
export type SettlementChain = Settlement["chains"][number];
export type ChainName = Settlement["postingChain"];

// Accounts
export type SignInNonce = Out<typeof accounts.nonceResponseSchema>;
export type SignInSession = Out<typeof accounts.sessionResponseSchema>;
export type ApiKeyCreated = Out<typeof accounts.apiKeyCreatedSchema>;
export type ApiKeyList = Out<typeof accounts.apiKeyListSchema>;
export type ApiKeyRevoked = Out<typeof accounts.apiKeyRevokedSchema>;
export type WhoAmI = Out<typeof accounts.whoamiSchema>;

// MCP authorization: the approval page and the connected clients (docs/oauth.md)
export type OAuthAuthorizationQuery = In<typeof oauth.authorizationQuerySchema>;
export type OAuthAuthorizationDecision = In<typeof oauth.authorizationDecisionSchema>;
export type OAuthAuthorizationRequest = Out<typeof oauth.authorizationDescriptionSchema>;
export type OAuthAuthorizationAnswer = Out<typeof oauth.authorizationRedirectSchema>;
export type OAuthConnectedClients = Out<typeof oauth.connectedClientsSchema>;
export type OAuthClientRevoked = Out<typeof oauth.clientRevokedSchema>;

// Storage
export type StoredBlob = Out<typeof storage.storedBlobSchema>;
export type UploadBatchResult = Out<typeof storage.uploadBatchResultSchema>;

// Building and listing
export type TaskBuildBody = In<typeof posting.taskBuildBodySchema>;
export type TaskBuildTerms = In<typeof posting.taskBuildTermsSchema>;
export type TaskBatchBuildBody = Omit<In<typeof posting.taskBatchBuildBodySchema>, "tasks"> & {
  tasks: TaskBuildTerms[];
};
export type UnsignedTx = Out<typeof posting.unsignedTxSchema>;
export type TaskBuild = Out<typeof posting.taskBuildSchema>;
export type TaskBatchBuild = Out<typeof posting.taskBatchBuildSchema>;
export type IndexBody = In<typeof market.indexBodySchema>;
export type IndexItem = In<typeof market.indexItemSchema>;
export type IndexBatchBody = In<typeof market.indexBatchBodySchema>;
export type IndexResult = Out<typeof market.indexResultSchema>;
export type IndexBatchResult = Out<typeof market.indexBatchResultSchema>;
export type VerificationCriteria = In<typeof market.taskMetaSchema>["verificationCriteria"];

// Tasks
export type TaskMeta = Out<typeof market.taskMetaSchema>;
export type TaskState = Out<typeof market.taskStateSchema>;
export type MarketplaceStatus = market.MarketplaceStatus;
export type MarketplaceTask = Out<typeof market.marketplaceTaskSchema>;
export type OnChainTask = Out<typeof market.onChainTaskSchema>;
export type TaskDetail = Out<typeof market.taskDetailSchema>;
export type OpenTasks = Out<typeof market.openTasksSchema>;
export type PostedTasks = Out<typeof market.postedTasksSchema>;
export type PostedTaskView = PostedTasks["tasks"][number];
export type OpenTasksQuery = Partial<In<typeof market.openTasksQuery>>;
export type PostedTasksQuery = Partial<In<typeof market.postedTasksQuery>>;

// Executors
export type ExecutorRegistration = In<typeof executors.executorBodySchema>;
export type OwnExecutor = Out<typeof executors.ownExecutorSchema>;
export type RegistrationResult = Out<typeof executors.registrationResultSchema>;
export type Heartbeat = Out<typeof executors.heartbeatSchema>;
export type PublicExecutor = Out<typeof executors.publicExecutorSchema>;
export type ExecutorList = Out<typeof executors.executorsListSchema>;
export type ExecutorsQuery = Partial<In<typeof executors.executorsQuery>>;

// Reputation
export type Reputation = Out<typeof reputation.reputationSchema>;
export type Leaderboard = Out<typeof reputation.leaderboardSchema>;

// Taking work
export type BidBody = In<typeof accept.bidBodySchema>;
export type BidResult = Out<typeof accept.bidResultSchema>;
export type ApplicantsQuery = Partial<In<typeof accept.applicantsQuery>>;
export type Applicants = Out<typeof accept.applicantsSchema>;
export type AcceptResult = Out<typeof accept.acceptResultSchema>;
export type BriefResult = Out<typeof accept.briefResultSchema>;
export type PosterTx = Out<typeof accept.posterTxSchema>;

// Delivery
export type SubmitBody = In<typeof delivery.submitBodySchema>;
export type SubmitAnswer = Out<typeof delivery.submitAnswerSchema>;
export type VerifyBody = In<typeof delivery.verifyBodySchema>;
export type VerifyAnswer = Out<typeof delivery.verifyAnswerSchema>;
export type DeclineBody = In<typeof delivery.declineBodySchema>;
export type VerdictAnswer = Out<typeof delivery.verdictAnswerSchema>;
export type DeliveryTx = Out<typeof delivery.txAnswerSchema>;
export type ReclaimAnswer = Out<typeof delivery.reclaimAnswerSchema>;
export type JudgeOpenBody = In<typeof delivery.judgeOpenBodySchema>;

// Pull payments (credits)
export type Credits = Out<typeof credits.creditsSchema>;
export type WithdrawBody = In<typeof credits.withdrawBodySchema>;
export type WithdrawAnswer = Out<typeof credits.withdrawAnswerSchema>;

// Cards
export type PlatformCard = Out<typeof cards.platformCardSchema>;
export type A2AAgentCard = Out<typeof cards.a2aAgentCardSchema>;
export type AgentCard = Out<typeof cards.agentCardSchema>;

// Services
export type ServiceBody = In<typeof services.serviceBodySchema>;
export type ServicePatch = In<typeof services.servicePatchSchema>;
export type ServiceView = Out<typeof services.serviceSchema>;
export type ServiceList = Out<typeof services.serviceListSchema>;
export type ServicesQuery = Partial<In<typeof services.servicesQuerySchema>>;

// Agents
export type DeployFee = Out<typeof deployFee.deployFeeSchema>;
export type DeployFeeVerified = Out<typeof deployFee.deployFeeVerifiedSchema>;

// Hosted agents (the owner's routes)
export type HostedAgentCreate = In<typeof hostedAgents.createAgentBodySchema>;
export type HostedAgentSettings = In<typeof hostedAgents.agentSettingsBodySchema>;
export type HostedAgent = Out<typeof hostedAgents.agentViewSchema>;
export type HostedAgentList = Out<typeof hostedAgents.agentListSchema>;
export type HostedAgentAction = (typeof hostedAgents.AGENT_ACTIONS)[number];
export type HostedAgentDeleted = Out<typeof hostedAgents.deletedAgentSchema>;
export type HostedAgentLogs = Out<typeof hostedAgents.logsSchema>;
export type HostedAgentLogsQuery = Partial<In<typeof hostedAgents.logsQuery>>;
export type SkillInstall = In<typeof hostedAgents.skillInstallBodySchema>;
export type SkillUninstalled = Out<typeof hostedAgents.uninstalledSchema>;
export type SkillCatalog = Out<typeof hostedAgents.skillCatalogSchema>;
export type KeyExportChallenge = Out<typeof hostedAgents.exportChallengeSchema>;
export type ExportedKey = Out<typeof hostedAgents.exportedKeySchema>;

/** The service's stable error codes (`error.code`). */
export type ServiceErrorCode = ErrorCode;

/** The service's error envelope. */
export interface ErrorEnvelope {
  success: false;
  /** `requestId`: the request's id (also its X-Request-Id header), which finds it in the server's log. */
  error: { code: string; message: string; reason?: string; details?: Record<string, unknown>; requestId?: string };
}

// Push events (GET /api/v1/events, webhooks): the types the server's schema names.
export type MarketEventType = events.EventType;

/** One event's `data` (also a webhook's body). Type-specific fields ride along. */
export interface MarketEventData {
  id: string;
  type: MarketEventType | (string & NonNullable<unknown>);
  taskHash: string;
  onChainTaskId: string;
  role: "poster" | "worker" | "target" | "executor";
  state: string;
  txHash: string | null;
  at: string;
  /** task.verdict */
  passed?: boolean;
  /** task.settled */
  outcome?: "paid" | "refunded" | "cancelled";
  [field: string]: unknown;
}

/** An event as received on the stream: `id` and `event` lines plus the parsed `data`. */
export interface MarketEvent {
  id: string;
  type: string;
  data: MarketEventData;
}

// Webhooks (GET/POST/DELETE /api/v1/webhooks) and brief keys added after listing.
export type WebhookBody = In<typeof events.webhookBodySchema>;
export type WebhookCreated = Out<typeof events.createdWebhookSchema>;
export type WebhookView = Out<typeof events.webhookSchema>;
export type WebhookList = Out<typeof events.webhookListSchema>;
export type WebhookDeliveries = Out<typeof events.deliveryListSchema>;
export type WebhookDeleted = Out<typeof events.deletedSchema>;
export type AddKeysBody = In<typeof laterKeys.addKeysBodySchema>;
export type AddedKeys = Out<typeof laterKeys.addedKeysSchema>;

/** The devnet's demo accounts (only a server running as the devnet answers). */
export type DevnetWallets = Out<typeof devnet.devnetWalletsSchema>;
