/**
 * Typed calls for every REST operation of the service (server/operations/*.ts). Each method answers the `data` of the
 * success envelope typed from the route's zod schema, or throws an `ApiError` carrying the service's `error.code`
 * (and `status`, `reason`, `details`). A network failure or timeout is a `ClientError` API_UNREACHABLE.
 */
import type { Signer } from "ethers";
import { ApiError, ClientError } from "./errors";
import type * as T from "./types";

export interface MarketApiOptions {
  /** Base address of the service, e.g. http://127.0.0.1:8787 (no trailing /api/v1). */
  baseUrl: string;
  /** `sk_...`: sent as X-API-Key on every request (public reads work without it). */
  apiKey?: string;
  /**
   * A bearer credential sent as `Authorization: Bearer <token>` on every request instead of the API key: a hosted
   * agent's short-lived token (its host replaces it before expiry with `setToken`).
   */
  token?: string;
  /** Per-request time limit (default 90 s: an upload answers within about 85 s). */
  timeoutMs?: number;
  /** The fetch implementation (default: the global fetch of Node 20+). */
  fetch?: typeof fetch;
}

type Query = Record<string, string | number | boolean | readonly string[] | undefined>;

export interface RequestOptions {
  body?: unknown;
  query?: Query;
  /** Overrides the API key with this bearer credential (a sign-in session for the account routes). */
  bearer?: string;
  headers?: Record<string, string>;
  /** Aborts the request (instead of the default time limit: for long-lived streams). */
  signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 90_000;

const b64 = (data: Uint8Array | string) =>
  (typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data)).toString("base64");

const enc = encodeURIComponent;

export class MarketApi {
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  private token: string | undefined;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(options: MarketApiOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.apiKey = options.apiKey;
    this.token = options.token;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** The same service with another API key. */
  withKey(apiKey: string): MarketApi {
    return new MarketApi({ baseUrl: this.baseUrl, apiKey, timeoutMs: this.timeoutMs, fetch: this.fetchImpl });
  }

  /** Replaces the bearer token (a refreshed hosted-agent token): the next request carries the new one. */
  setToken(token: string): void {
    this.token = token;
  }

  /** The URL of a path of the service, with a query. */
  url(path: string, query?: Query): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v === undefined) continue;
      params.set(k, Array.isArray(v) ? v.join(",") : String(v));
    }
    const qs = params.toString();
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ""}`;
  }

  /** Headers carrying the credential (for callers speaking HTTP themselves, e.g. the event stream). */
  authHeaders(bearer?: string): Record<string, string> {
    if (bearer) return { authorization: `Bearer ${bearer}` };
    if (this.token) return { authorization: `Bearer ${this.token}` };
    return this.apiKey ? { "x-api-key": this.apiKey } : {};
  }

  /** One request; answers `data` of the success envelope or throws ApiError / ClientError API_UNREACHABLE. */
  async request<R>(method: string, path: string, options: RequestOptions = {}): Promise<R> {
    const response = await this.send(method, path, options);
    const text = await response.text();
    let json: { success?: boolean; data?: unknown; error?: T.ErrorEnvelope["error"] } | undefined;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (response.ok && json?.success === true) return json.data as R;
    if (json?.success === false && json.error && typeof json.error.code === "string") {
      const e = json.error;
      throw new ApiError(e.code, e.message ?? e.code, {
        status: response.status,
        reason: e.reason,
        details: withRetryAfter(e.details, response.headers.get("retry-after")),
      });
    }
    throw new ApiError(response.ok ? "PARSE_FAILED" : `HTTP_${response.status}`, describeRaw(response, text), {
      status: response.status,
    });
  }

  /** The raw response of a request (errors of the network only). */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { accept: "application/json", ...this.authHeaders(options.bearer) };
    Object.assign(headers, options.headers);
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] = "application/json";
    }
    try {
      return await this.fetchImpl(this.url(path, options.query), {
        method,
        headers,
        body,
        signal: options.signal ?? AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new ClientError("API_UNREACHABLE", `${method} ${path}: the API did not answer (${String(error)})`, {
        cause: error,
      });
    }
  }

  // ------------------------------------------------------------------------------------------------- system
  stats = () => this.request<T.Stats>("GET", "/api/v1/stats");
  settlement = () => this.request<T.Settlement>("GET", "/api/v1/health/settlement");
  /** The OpenAPI 3.0.3 document (served bare, not in the envelope). */
  async openApi(): Promise<Record<string, unknown>> {
    const response = await this.send("GET", "/api/v1/openapi.json");
    if (!response.ok) return this.request("GET", "/api/v1/openapi.json");
    return (await response.json()) as Record<string, unknown>;
  }

  // ----------------------------------------------------------------------------------------------- accounts
  authNonce = (address: string) => this.request<T.SignInNonce>("POST", "/api/v1/auth/nonce", { body: { address } });
  authVerify = (body: { message: string; signature: string }) =>
    this.request<T.SignInSession>("POST", "/api/v1/auth/verify", { body });
  /** Sign-in with Ethereum: nonce, personal_sign of the EIP-4361 message, session. */
  async signIn(signer: Signer): Promise<T.SignInSession> {
    const nonce = await this.authNonce(await signer.getAddress());
    return this.authVerify({ message: nonce.message, signature: await signer.signMessage(nonce.message) });
  }
  /** Ends a sign-in session: its token answers 401 from the next request on. */
  signOut = (session: string) => this.request<{ signedOut: true }>("POST", "/api/v1/auth/signout", { bearer: session });
  /** Creates an API key (shown once). `session`: a sign-in session token; without it the API key is used. */
  /** `sessionKey: true`: a web session key, which expires on its own after SESSION_TTL_SECONDS; else a lasting key. */
  createApiKey = (body: { label?: string; sessionKey?: boolean } = {}, session?: string) =>
    this.request<T.ApiKeyCreated>("POST", "/api/v1/api-keys", { body, bearer: session });
  listApiKeys = (session?: string) => this.request<T.ApiKeyList>("GET", "/api/v1/api-keys", { bearer: session });
  revokeApiKey = (id: number, session?: string) =>
    this.request<T.ApiKeyRevoked>("DELETE", `/api/v1/api-keys/${id}`, { bearer: session });
  whoami = () => this.request<T.WhoAmI>("GET", "/api/v1/api-keys/whoami");

  // ------------------------------------------------------------------------------------- MCP authorization
  /** The approval page's first call: the authorization request (as /oauth/authorize received it) described. */
  describeOAuthAuthorization = (query: T.OAuthAuthorizationQuery) =>
    this.request<T.OAuthAuthorizationRequest>("GET", "/api/v1/oauth/authorization", { query });
  /** The owner's answer (a sign-in session): where to send the browser, with the code or the refusal. */
  decideOAuthAuthorization = (decision: T.OAuthAuthorizationDecision, session?: string) =>
    this.request<T.OAuthAuthorizationAnswer>("POST", "/api/v1/oauth/authorization", {
      body: decision,
      bearer: session,
    });
  /** The MCP clients the wallet connected, with their scopes. */
  listOAuthClients = (session?: string) =>
    this.request<T.OAuthConnectedClients>("GET", "/api/v1/oauth/clients", { bearer: session });
  /** Disconnects a client: its tokens are revoked, so its next call is 401. */
  revokeOAuthClient = (clientId: string, session?: string) =>
    this.request<T.OAuthClientRevoked>("POST", "/api/v1/oauth/clients/revoke", {
      body: { clientId },
      bearer: session,
    });

  // ------------------------------------------------------------------------------------------------ storage
  /** Uploads bytes (or UTF-8 text); answers the root hash, which is the task hash. */
  upload = (data: Uint8Array | string) =>
    this.request<T.StoredBlob>("POST", "/api/v1/storage/upload", { body: { data: b64(data) } });
  uploadBatch = (items: readonly (Uint8Array | string)[]) =>
    this.request<T.UploadBatchResult>("POST", "/api/v1/storage/upload-batch", {
      body: { items: items.map((data) => ({ data: b64(data) })) },
    });
  /** The bytes of a stored blob (public: private briefs are encrypted). */
  async blob(rootHash: string): Promise<Buffer> {
    const response = await this.send("GET", `/api/v1/storage/blobs/${enc(rootHash)}`);
    if (!response.ok) return this.request("GET", `/api/v1/storage/blobs/${enc(rootHash)}`);
    return Buffer.from(await response.arrayBuffer());
  }

  // --------------------------------------------------------------------------------------- building, listing
  buildTask = (body: T.TaskBuildBody) => this.request<T.TaskBuild>("POST", "/api/v1/tasks", { body });
  buildTaskBatch = (body: T.TaskBatchBuildBody) =>
    this.request<T.TaskBatchBuild>("POST", "/api/v1/tasks/batch", { body });
  indexTask = (body: T.IndexBody) => this.request<T.IndexResult>("POST", "/api/v1/a2a/tasks/index", { body });
  indexTaskBatch = (body: T.IndexBatchBody) =>
    this.request<T.IndexBatchResult>("POST", "/api/v1/a2a/tasks/index-batch", { body });
  openTasks = (query: T.OpenTasksQuery | Query = {}) =>
    this.request<T.OpenTasks>("GET", "/api/v1/a2a/tasks", { query: query as Query });
  postedTasks = (query: T.PostedTasksQuery | Query = {}) =>
    this.request<T.PostedTasks>("GET", "/api/v1/a2a/tasks/posted", { query: query as Query });
  offeredTasks = (query: T.PostedTasksQuery | Query = {}) =>
    this.request<T.OpenTasks>("GET", "/api/v1/a2a/tasks/offered", { query: query as Query });
  /** One task by numeric on-chain id or 0x task hash. */
  task = (id: string | number) => this.request<T.TaskDetail>("GET", `/api/v1/tasks/${enc(String(id))}`);

  // ---------------------------------------------------------------------------------------------- executors
  registerExecutor = (body: T.ExecutorRegistration) =>
    this.request<T.RegistrationResult>("POST", "/api/v1/a2a/executors", { body });
  ownExecutor = () => this.request<T.OwnExecutor>("GET", "/api/v1/a2a/executors/me");
  heartbeat = () => this.request<T.Heartbeat>("POST", "/api/v1/a2a/executors/heartbeat");
  executors = (query: T.ExecutorsQuery | Query = {}) =>
    this.request<T.ExecutorList>("GET", "/api/v1/a2a/executors", { query: query as Query });

  // --------------------------------------------------------------------------------------------- reputation
  leaderboard = () => this.request<T.Leaderboard>("GET", "/api/v1/reputation/leaderboard");
  reputation = (address: string) => this.request<T.Reputation>("GET", `/api/v1/reputation/${enc(address)}`);

  // ------------------------------------------------------------------------------------------- taking work
  bid = (hash: string, body: T.BidBody = {}) =>
    this.request<T.BidResult>("POST", `/api/v1/a2a/tasks/${enc(hash)}/bid`, { body });
  applicants = (hash: string, query: T.ApplicantsQuery = {}) =>
    this.request<T.Applicants>("GET", `/api/v1/a2a/tasks/${enc(hash)}/applicants`, { query: query as Query });
  accept = (hash: string) => this.request<T.AcceptResult>("POST", `/api/v1/a2a/tasks/${enc(hash)}/accept`);
  /** The brief's blob, with the worker's own wrapped brief key on a private task. */
  brief = (hash: string) => this.request<T.BriefResult>("GET", `/api/v1/a2a/tasks/${enc(hash)}/brief`);
  assign = (hash: string, worker: string) =>
    this.request<T.PosterTx>("POST", `/api/v1/tasks/${enc(hash)}/assign`, { body: { worker } });
  cancel = (hash: string) => this.request<T.PosterTx>("POST", `/api/v1/a2a/tasks/${enc(hash)}/cancel`);

  // ----------------------------------------------------------------------------------------------- delivery
  submit = (hash: string, body: T.SubmitBody) =>
    this.request<T.SubmitAnswer>("POST", `/api/v1/a2a/tasks/${enc(hash)}/submit`, { body });
  verify = (hash: string, body: T.VerifyBody) =>
    this.request<T.VerifyAnswer>("POST", `/api/v1/a2a/tasks/${enc(hash)}/verify`, { body });
  finalize = (hash: string) => this.request<T.VerdictAnswer>("POST", `/api/v1/a2a/tasks/${enc(hash)}/finalize`);
  decline = (hash: string, body: T.DeclineBody = {}) =>
    this.request<T.VerdictAnswer>("POST", `/api/v1/a2a/tasks/${enc(hash)}/decline`, { body });
  escalate = (hash: string) => this.request<T.DeliveryTx>("POST", `/api/v1/a2a/tasks/${enc(hash)}/escalate`);
  release = (hash: string) => this.request<T.DeliveryTx>("POST", `/api/v1/a2a/tasks/${enc(hash)}/release`);
  reclaim = (hash: string) => this.request<T.ReclaimAnswer>("POST", `/api/v1/a2a/tasks/${enc(hash)}/reclaim`);
  dispute = (hash: string) => this.request<T.DeliveryTx>("POST", `/api/v1/a2a/tasks/${enc(hash)}/dispute`);
  splitUnruled = (hash: string) => this.request<T.DeliveryTx>("POST", `/api/v1/a2a/tasks/${enc(hash)}/split`);
  contestOpen = (hash: string) => this.request<T.DeliveryTx>("POST", `/api/v1/a2a/tasks/${enc(hash)}/contest`);
  judgeOpen = (hash: string, body: T.JudgeOpenBody) =>
    this.request<T.DeliveryTx>("POST", `/api/v1/a2a/tasks/${enc(hash)}/judge`, { body });

  // ------------------------------------------------------------------------------------------------ credits
  credits = (address: string) => this.request<T.Credits>("GET", `/api/v1/credits/${enc(address)}`);
  withdraw = (body: T.WithdrawBody) => this.request<T.WithdrawAnswer>("POST", "/api/v1/credits/withdraw", { body });

  // -------------------------------------------------------------------------------------------------- cards
  platformCard = () => this.request<T.PlatformCard>("GET", "/.well-known/agent.json");
  a2aAgentCard = () => this.request<T.A2AAgentCard>("GET", "/.well-known/agent-card.json");
  agentCard = (address: string) => this.request<T.AgentCard>("GET", `/.well-known/agents/${enc(address)}.json`);

  // ----------------------------------------------------------------------------------------------- services
  createService = (body: T.ServiceBody) =>
    this.request<T.ServiceView>("POST", "/api/v1/marketplace/services", { body });
  updateService = (id: number, body: T.ServicePatch) =>
    this.request<T.ServiceView>("PATCH", `/api/v1/marketplace/services/${id}`, { body });
  deleteService = (id: number) => this.request<T.ServiceView>("DELETE", `/api/v1/marketplace/services/${id}`);
  services = (query: T.ServicesQuery | Query = {}) =>
    this.request<T.ServiceList>("GET", "/api/v1/marketplace/services", { query: query as Query });
  service = (id: number) => this.request<T.ServiceView>("GET", `/api/v1/marketplace/services/${id}`);

  /** Tasks the caller works on (GET /api/v1/a2a/tasks/working; same shape as postedTasks). */
  workingTasks = (query: T.PostedTasksQuery | Query = {}) =>
    this.request<T.PostedTasks>("GET", "/api/v1/a2a/tasks/working", { query: query as Query });

  /** Tasks awaiting the caller's verdict as their verifier agent, with the deliverable (GET /a2a/tasks/judging). */
  judgingTasks = (query: T.PostedTasksQuery | Query = {}) =>
    this.request<T.PostedTasks>("GET", "/api/v1/a2a/tasks/judging", { query: query as Query });

  // ----------------------------------------------------------------------------------------------- webhooks
  /** Webhooks deliver the event stream's `data` objects as signed JSON POSTs (the push branch's routes). */
  /** The poster wraps a private task's brief key to more agents after listing (POST /a2a/tasks/{hash}/keys). */
  addBriefKeys = (taskHash: string, body: T.AddKeysBody) =>
    this.request<T.AddedKeys>("POST", `/api/v1/a2a/tasks/${taskHash}/keys`, { body });

  /** Devnet only: the demo accounts (public test keys); NOT_FOUND on any other server. */
  devnetWallets = () => this.request<T.DevnetWallets>("GET", "/api/v1/devnet/wallets");

  createWebhook = (body: T.WebhookBody) => this.request<T.WebhookCreated>("POST", "/api/v1/webhooks", { body });
  listWebhooks = () => this.request<T.WebhookList>("GET", "/api/v1/webhooks");
  deleteWebhook = (id: number) => this.request<T.WebhookDeleted>("DELETE", `/api/v1/webhooks/${id}`);
  webhookDeliveries = (id: number) => this.request<T.WebhookDeliveries>("GET", `/api/v1/webhooks/${id}/deliveries`);

  // ------------------------------------------------------------------------------------------------- agents
  deployFee = () => this.request<T.DeployFee>("GET", "/api/v1/agents/deploy-fee");
  verifyDeployFee = (txHash: string) =>
    this.request<T.DeployFeeVerified>("POST", "/api/v1/agents/deploy-fee/verify", { body: { txHash } });

  // ---------------------------------------------------------------------------------- hosted agents (owner)
  skillCatalog = () => this.request<T.SkillCatalog>("GET", "/api/v1/agents/skills");
  createHostedAgent = (body: T.HostedAgentCreate) => this.request<T.HostedAgent>("POST", "/api/v1/agents", { body });
  hostedAgents = () => this.request<T.HostedAgentList>("GET", "/api/v1/agents");
  /** `agent`: its id (agt_...) or slug. */
  hostedAgent = (agent: string) => this.request<T.HostedAgent>("GET", `/api/v1/agents/${enc(agent)}`);
  /** Replaces the settings given (extra capabilities, settlement chains); a running agent restarts with them. */
  updateHostedAgent = (agent: string, body: T.HostedAgentSettings) =>
    this.request<T.HostedAgent>("PATCH", `/api/v1/agents/${enc(agent)}`, { body });
  hostedAgentAction = (agentId: string, action: T.HostedAgentAction) =>
    this.request<T.HostedAgent>("POST", "/api/v1/agents/action", { body: { agentId, action } });
  deleteHostedAgent = (agent: string) => this.request<T.HostedAgentDeleted>("DELETE", `/api/v1/agents/${enc(agent)}`);
  /** The agent's log lines as JSON (the route also follows them as SSE with Accept: text/event-stream). */
  hostedAgentLogs = (agent: string, query: T.HostedAgentLogsQuery = {}) =>
    this.request<T.HostedAgentLogs>("GET", `/api/v1/agents/${enc(agent)}/logs`, { query: query as Query });
  installSkill = (agent: string, body: T.SkillInstall) =>
    this.request<T.HostedAgent>("POST", `/api/v1/agents/${enc(agent)}/skills`, { body });
  uninstallSkill = (agent: string, skill: string) =>
    this.request<T.SkillUninstalled>("DELETE", `/api/v1/agents/${enc(agent)}/skills/${enc(skill)}`);
  /** Step 1 of a key export: the message the owner's wallet signs (personal_sign). */
  keyExportChallenge = (agent: string) =>
    this.request<T.KeyExportChallenge>("POST", `/api/v1/agents/${enc(agent)}/export/challenge`);
  /** Step 2: the signed challenge for the agent's key (recorded by the service before it answers). */
  exportAgentKey = (agent: string, body: { message: string; signature: string }) =>
    this.request<T.ExportedKey>("POST", `/api/v1/agents/${enc(agent)}/export`, { body });
}

function withRetryAfter(details: Record<string, unknown> | undefined, retryAfter: string | null) {
  if (retryAfter === null || details?.retryAfterSeconds !== undefined) return details;
  return { ...details, retryAfterSeconds: Number(retryAfter) };
}

function describeRaw(response: Response, text: string): string {
  return `HTTP ${response.status} without the JSON envelope: ${text.slice(0, 200)}`;
}
