/**
 * The environment, parsed once into a typed, frozen configuration. Invalid values fail fast with a message naming
 * the variable. Defaults are the embedded ones: the local devnet, SQLite under data/, in-memory limits.
 */
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import path from "node:path";
import { z } from "zod";
import { PROJECT_ROOT as ROOT } from "./projectRoot";
import { CHAIN_NAMES, type ChainName } from "./escrow/records";

const intFrom = (fallback: number, min = 0) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === "") return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `must be a whole number >= ${min}` });
        return z.NEVER;
      }
      return n;
    });

/** A network name: the address book `deployments/<name>.json`, the SQLite file and the blob folder. */
const networkName = z.string().regex(/^[a-z0-9_-]+$/i, "must be a network name");

/** A node's WebSocket endpoint. */
const webSocketUrl = z
  .string()
  .url()
  .regex(/^wss?:\/\//i, "must be a ws:// or wss:// URL");

/**
 * One chain's own variables (`BASE_RPC_URL`, `ARC_NETWORK`, ...). Each overrides, for its chain, the legacy variable
 * the posting chain reads (RPC_URL, NETWORK, INDEXER_CONFIRMATIONS, SETTLEMENT_TIER, GAS_SYMBOL). `<CHAIN>_WS_URL` has
 * no legacy variable.
 */
function chainVariables<P extends "BASE" | "ARC">(prefix: P) {
  return {
    [`${prefix}_RPC_URL`]: z.string().url().optional(),
    [`${prefix}_WS_URL`]: webSocketUrl.optional(),
    [`${prefix}_NETWORK`]: networkName.optional(),
    [`${prefix}_CONFIRMATIONS`]: intFrom(-1, -1),
    [`${prefix}_SETTLEMENT_TIER`]: z.string().optional(),
    [`${prefix}_GAS_SYMBOL`]: z.string().optional(),
  } as {
    [
      K in `${P}_RPC_URL` | `${P}_WS_URL` | `${P}_NETWORK` | `${P}_SETTLEMENT_TIER` | `${P}_GAS_SYMBOL`
    ]: z.ZodOptional<z.ZodString>;
  } & { [K in `${P}_CONFIRMATIONS`]: ReturnType<typeof intFrom> };
}

/** A 32-byte key as configured: 0x and 64 hex. */
const hexKey32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/, "must be 0x followed by 64 hex characters");

const envSchema = z.object({
  NETWORK: networkName.default("localhost"),
  RPC_URL: z.string().url().optional(),
  DEVNET_RPC_URL: z.string().url().optional(),
  DATABASE_URL: z.string().optional(),
  DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*$/, "must be a lower-case SQL identifier")
    .optional(),
  DATA_DIR: z.string().default(path.join(ROOT, "data")),
  DEPLOYMENTS_DIR: z.string().default(path.join(ROOT, "deployments")),
  SQLITE_DRIVER: z.enum(["better-sqlite3", "sqlite3"]).default("better-sqlite3"),
  INDEXER_CONFIRMATIONS: intFrom(-1, -1),
  INDEXER_POLL_MS: intFrom(-1, -1),
  INDEXER_HEAD_POLL_MS: intFrom(-1, -1),
  INDEXER_MAX_BLOCK_RANGE: intFrom(2000, 1),
  INDEXER_LOCK_TTL_MS: intFrom(15_000, 1000),
  /** Run the indexer inside the API process (`npm start`); false where a standalone indexer runs beside it. */
  RUN_INDEXER: z.enum(["true", "false"]).default("true"),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
  /** One `info` line per HTTP request (the devnet turns it off: its terminal is for people). */
  LOG_REQUESTS: z.enum(["on", "off"]).default("on"),
  VERIFIER_PRIVATE_KEY: hexKey32.optional(),
  CUSTODY_PRIVATE_KEY: hexKey32.optional(),
  OFFER_WINDOW_SECONDS: intFrom(120, 0),
  ACCEPT_LOCK_SECONDS: intFrom(30, 1),
  VERIFIER_POLL_MS: intFrom(-1, -1),
  API_HOST: z.string().default("127.0.0.1"),
  API_PORT: intFrom(8787, 0),
  PUBLIC_URL: z.string().url().optional(),
  /** The built web app (npm run build:web) served at PUBLIC_URL/. */
  WEB_DIST_DIR: z.string().default(path.join(ROOT, "web", "dist")),
  /** Set by the devnet only: its demo accounts file, offered to the web app's devnet wallet picker. */
  DEVNET_ACCOUNTS_FILE: z.string().optional(),
  TRUST_PROXY: z.enum(["true", "false"]).default("false"),
  /** Whether agents pay the on-chain deploy fee (default: yes on local networks, the devnet; no elsewhere). */
  DEPLOY_FEE_REQUIRED: z.enum(["true", "false"]).optional(),
  REDIS_URL: z.string().optional(),
  POSTING_CHAIN: z.enum(CHAIN_NAMES).default("base"),
  /** The chains this service settles on, comma-separated (default: POSTING_CHAIN alone). */
  CHAINS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return undefined;
      const names = v.split(",").map((n) => n.trim());
      const unknown = names.filter((n) => !(CHAIN_NAMES as readonly string[]).includes(n));
      if (unknown.length > 0 || new Set(names).size !== names.length) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          message: `must be a comma list of distinct ${CHAIN_NAMES.join(", ")}${unknown.length ? ` (not ${unknown.join(", ")})` : ""}`,
        });
        return z.NEVER;
      }
      return names as ChainName[];
    }),
  SETTLEMENT_TIER: z.string().default("devnet"),
  GAS_SYMBOL: z.string().default("ETH"),
  ...chainVariables("BASE"),
  ...chainVariables("ARC"),
  STORAGE_DIR: z.string().optional(),
  MAX_BLOB_BYTES: intFrom(10 * 1024 * 1024, 1),
  UPLOAD_TIMEOUT_MS: intFrom(80_000, 1),
  JSON_BODY_LIMIT_BYTES: intFrom(1024 * 1024, 1024),
  API_HEADERS_TIMEOUT_MS: intFrom(10_000, 100),
  API_REQUEST_TIMEOUT_MS: intFrom(120_000, 100),
  API_IDLE_TIMEOUT_MS: intFrom(30_000, 100),
  API_KEEP_ALIVE_TIMEOUT_MS: intFrom(5_000, 100),
  SESSION_TTL_SECONDS: intFrom(3600, 60),
  /** MCP authorization (docs/oauth.md): access tokens' and refresh tokens' lifetimes. */
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: intFrom(900, 60),
  OAUTH_REFRESH_TOKEN_TTL_SECONDS: intFrom(30 * 24 * 3600, 60),
  API_MAX_KEYS_PER_WALLET: intFrom(20, 1),
  SIWE_NONCE_TTL_SECONDS: intFrom(600, 1),
  HASH_RESERVATION_SECONDS: intFrom(24 * 3600, 1),
  RATE_WINDOW_MS: intFrom(60_000, 1),
  RATE_IP_PER_WINDOW: intFrom(100, 1),
  RATE_FAILED_AUTH_PER_WINDOW: intFrom(100, 1),
  RATE_WALLET_FAMILY_PER_MINUTE: intFrom(120, 1),
  RATE_IP_POSTING_PER_MINUTE: intFrom(600, 1),
  RATE_MCP_CALLS_PER_MINUTE: intFrom(120, 1),
  EVENTS_HEARTBEAT_MS: intFrom(15_000, 10),
  EVENTS_MAX_STREAMS_PER_KEY: intFrom(5, 1),
  EVENTS_MAX_STREAMS_PER_WALLET: intFrom(10, 1),
  EVENTS_MAX_STREAMS_PER_IP: intFrom(20, 1),
  EVENTS_MAX_STREAM_LIFETIME_MS: intFrom(3_600_000, 1000),
  EVENTS_CREDENTIAL_CHECK_MS: intFrom(2_000, 10),
  EVENTS_POLL_MS: intFrom(2_000, 10),
  EVENTS_RETENTION_DAYS: intFrom(7, 7),
  WEBHOOK_ALLOW_PRIVATE: z.enum(["true", "false"]).optional(),
  WEBHOOK_MAX_ATTEMPTS: intFrom(8, 1),
  WEBHOOK_RETRY_BASE_MS: intFrom(10_000, 10),
  WEBHOOK_RETRY_MAX_MS: intFrom(3_600_000, 10),
  WEBHOOK_TIMEOUT_MS: intFrom(10_000, 100),
  WEBHOOK_MAX_PER_WALLET: intFrom(10, 1),
  /** Hosted agents (docs/agents.md, "Hosted agents"): "off" disables the feature and its host. */
  HOSTED_AGENTS: z.enum(["on", "off"]).default("on"),
  /** The key-encryption key of hosted agents' wallet keys and skill secrets: 0x and 64 hex (32 bytes). */
  AGENT_KEY_ENCRYPTION_KEY: hexKey32.optional(),
  /** The HMAC secret of hosted agents' tokens (HS256): at least 32 characters. */
  AGENT_JWT_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  AGENT_TOKEN_TTL_SECONDS: intFrom(900, 60),
  /** Running hosted agents per host process. */
  AGENT_HOST_CAPACITY: intFrom(10, 0),
  AGENT_MAX_RUNNING_PER_OWNER: intFrom(3, 1),
  /** Run an agent host in the API process (default true); a separate host: npm run agents:host. */
  RUN_AGENT_HOST: z.enum(["true", "false"]).default("true"),
  AGENT_HOST_ID: z.string().max(80).optional(),
  /** How long a host's claim on an agent lasts without renewal: a dead host's agents move after it. */
  AGENT_LEASE_MS: intFrom(15_000, 1000),
  /** Heap limit of one agent's worker (MB). */
  AGENT_WORKER_MEMORY_MB: intFrom(128, 16),
  /** Requests per window of one hosted agent (its token), instead of its IP's limit. */
  RATE_AGENT_PER_WINDOW: intFrom(300, 1),
  RATE_LIMIT_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:._-]{1,64}$/, "must be 1 to 64 of A-Z a-z 0-9 : . _ -")
    .default("rl:"),
  /** `on`: GET /metrics on the API's own port (the devnet). Off by default: production scrapes METRICS_PORT. */
  METRICS: z.enum(["on", "off"]).default("off"),
  /** A separate listener serving only /metrics (production: a port the load balancer does not expose); 0: none. */
  METRICS_PORT: intFrom(0, 0),
  METRICS_HOST: z.string().default("127.0.0.1"),
  /** /health/ready fails when the indexed checkpoint is more than this many blocks behind the chain's head. */
  READY_MAX_INDEXER_LAG: intFrom(20, 0),
  /** Time each readiness check (database, Redis, chain RPC) gets before it counts as failed. */
  READY_TIMEOUT_MS: intFrom(2_000, 10),
  /** After SIGTERM, the longest the process waits for in-flight work before it exits anyway (with code 1). */
  SHUTDOWN_TIMEOUT_MS: intFrom(25_000, 100),
});

/** Every variable the configuration reads (docs/operations.md documents each; a test holds the two together). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

export type Env = z.input<typeof envSchema>;

export interface IndexerConfig {
  /** Blocks a log must be buried under before it is indexed (0 on the devnet). */
  confirmations: number;
  /**
   * While level with the head: how often a full step runs anyway (a reorg check at the same height, and the fallback
   * when neither a pushed head nor the head poll wakes the indexer).
   */
  pollIntervalMs: number;
  /**
   * While level with the head and no new-head subscription is live: how often the head number alone is read (one
   * `eth_blockNumber`), a full step following only when it moved. Absent, 0 or not below `pollIntervalMs`: no head
   * poll, a step every `pollIntervalMs`.
   */
  headPollMs?: number;
  /** Largest getLogs range; halved while the node refuses it. */
  maxBlockRange: number;
  /** Lease of the writer lock on SQLite (PostgreSQL uses a session advisory lock). */
  lockTtlMs: number;
}

/** One settlement chain the service serves: its node, its address book and how its index and record read. */
export interface ChainConfig {
  name: ChainName;
  rpcUrl: string;
  /** The node's WebSocket endpoint, where the indexer subscribes to new heads (`<CHAIN>_WS_URL`); none: it polls. */
  wsUrl?: string;
  /** Its address book `deployments/<network>.json` (the chain id, escrow, factory and settlement token). */
  network: string;
  /** Blocks a log must be buried under before the indexer folds it. */
  confirmations: number;
  /** The settlement record's `tier`. */
  tier: string;
  gasSymbol: string;
}

export interface LimitsConfig {
  /** Fixed window length for the per-IP limits. */
  windowMs: number;
  /** Requests per window per IP, on every route. */
  ipPerWindow: number;
  /** Posting requests per window per IP whose key failed authentication. */
  failedAuthPerWindow: number;
  /** Token bucket per wallet per posting family: capacity, refilled continuously over a minute. */
  walletFamilyPerMinute: number;
  /** Token bucket per IP across all posting routes. */
  ipPostingPerMinute: number;
  /** MCP tool calls per API key per fixed minute, on top of the per-IP window. */
  mcpCallsPerMinute: number;
  /** Requests per window of one hosted agent's token (counted instead of its IP's window). */
  agentPerWindow: number;
  /** Prefix of the counters' keys in Redis: API processes sharing one budget use the same prefix. */
  prefix: string;
}

export interface MarketplaceConfig {
  /** The platform verifier's key: the only key the service signs with (absent: no marketplace verifier runs). */
  verifierPrivateKey?: string;
  /** The service's custody key: posters may wrap a brief key to it so the service can re-wrap it for an agent. */
  custodyPrivateKey?: string;
  /** Exclusive window of the best-scored bidder. */
  offerWindowSeconds: number;
  /** How long one agent's accept holds the task against others. */
  acceptLockSeconds: number;
  /** How often the marketplace verifier looks for receipts of its sent transactions (200 ms locally, else 2 s). */
  verifierPollMs: number;
  /** Whether hosting an agent costs the on-chain deploy fee (DEPLOY_FEE_REQUIRED; default on local networks). */
  deployFeeRequired: boolean;
}

/** Push: the SSE event stream and webhooks (docs/api.md, "Events", "Webhooks"). */
export interface PushConfig {
  /** Interval of the `: keep-alive` comment on an open stream. */
  heartbeatMs: number;
  /**
   * Concurrent streams of one kind (event streams, log follows, MCP GET streams: counted apart) per API key, per
   * wallet and per client IP, each per API process.
   */
  maxStreamsPerKey: number;
  maxStreamsPerWallet: number;
  maxStreamsPerIp: number;
  /** An open stream is ended after this long (a client resumes: Last-Event-ID). */
  maxStreamLifetimeMs: number;
  /** How often a process looks for revoked keys and stopped agents among its open streams' credentials. */
  credentialCheckMs: number;
  /** Slow poll of the event log, for events written by another process (an indexer of its own). */
  pollMs: number;
  /** How long events (and finished deliveries) are kept; at least 7 days. */
  retentionMs: number;
  webhooks: {
    /** Deliver to loopback, private and link-local addresses (the devnet, tests); never in production. */
    allowPrivate: boolean;
    /** Attempts per delivery, the first included. */
    maxAttempts: number;
    /** Wait before the second attempt; doubled for each further one, capped at retryMaxMs. */
    retryBaseMs: number;
    retryMaxMs: number;
    /** Time an endpoint gets to answer one delivery. */
    timeoutMs: number;
    maxPerWallet: number;
  };
}

/** Hosted agents: the service runs agents for their owners (docs/agents.md, "Hosted agents"). */
export interface HostedAgentsConfig {
  enabled: boolean;
  /**
   * Encrypts agents' wallet keys and skill secrets (AES-256-GCM). Required off local networks; on the devnet a fixed
   * development key is used (data there is throwaway and the key is public).
   */
  keyEncryptionKey: Buffer;
  /** Signs hosted agents' tokens; absent off the devnet when not configured (NO_JWT_SECRET). */
  jwtSecret?: string;
  /**
   * Whether a public development secret (the key-encryption key or the token secret of local networks) is in use:
   * the server then starts only on a local chain (id 31337; checkDevelopmentSecrets).
   */
  developmentSecrets: boolean;
  tokenTtlSeconds: number;
  /** This host process: its id, whether it runs agents, how many at most. */
  hostId: string;
  runHost: boolean;
  capacity: number;
  /** Agents one owner may have running or paused at once, over every host: no owner takes all the capacity. */
  maxRunningPerOwner: number;
  leaseMs: number;
  workerMemoryMb: number;
}

export interface ApiConfig {
  host: string;
  port: number;
  /** The address clients reach the API at (agent cards, SIWE domain). */
  publicUrl: string;
  trustProxy: boolean;
  redisUrl?: string;
  /** The chain of a request that names none; always configured (config.chains[0]). */
  postingChain: ChainName;
  settlementTier: string;
  gasSymbol: string;
  storageDir: string;
  maxBlobBytes: number;
  /** Time the blob store gets for one upload request (spec: an upload answers within about 85 seconds). */
  uploadTimeoutMs: number;
  jsonBodyLimitBytes: number;
  /** HTTP server timeouts (docs/api.md, "Connections"): a stalled or slow client is disconnected. */
  timeouts: { headersMs: number; requestMs: number; idleMs: number; keepAliveMs: number };
  sessionTtlSeconds: number;
  /** MCP authorization (docs/oauth.md): token lifetimes in seconds (access 15 minutes, refresh 30 days). */
  oauth: { accessTokenTtlSeconds: number; refreshTokenTtlSeconds: number };
  /** Active (unrevoked) API keys a wallet may hold: minting keys never multiplies its per-key limits past this. */
  maxKeysPerWallet: number;
  /** How long a sign-in nonce stays usable (EIP-4361 sign-in; 10 minutes). */
  nonceTtlSeconds: number;
  hashReservationSeconds: number;
  limits: LimitsConfig;
  /** The web app: its built files, and on the devnet only the demo accounts file its wallet picker reads. */
  web: { distDir: string; devnetAccountsFile?: string };
}

/** Metrics, readiness and shutdown (docs/operations.md). */
export interface ObservabilityConfig {
  /** One log line per request. */
  logRequests: boolean;
  /** GET /metrics on the API's port. */
  metricsOnApi: boolean;
  /** A separate metrics listener (host and port), when configured. */
  metricsListener?: { host: string; port: number };
  readyMaxIndexerLag: number;
  readyTimeoutMs: number;
  shutdownTimeoutMs: number;
}

export interface Config {
  network: string;
  /** The posting chain's RPC URL (chains[0].rpcUrl). */
  rpcUrl: string;
  /** Every configured chain (CHAINS), the posting chain first. */
  chains: readonly ChainConfig[];
  /** PostgreSQL connection string; SQLite when absent. */
  databaseUrl?: string;
  /** PostgreSQL schema (default: the connection's search path). */
  databaseSchema?: string;
  sqliteFile: string;
  sqliteDriver: "better-sqlite3" | "sqlite3";
  deploymentsDir: string;
  indexer: IndexerConfig;
  /** Whether an API process runs an indexer of its own (RUN_INDEXER). */
  runIndexer: boolean;
  api: ApiConfig;
  marketplace: MarketplaceConfig;
  push: PushConfig;
  hostedAgents: HostedAgentsConfig;
  observability: ObservabilityConfig;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
}

const LOCAL = new Set(["localhost", "hardhat"]);

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Parses `env` (default process.env). Throws ConfigError naming every invalid variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<Config> {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  const local = LOCAL.has(e.NETWORK);
  const confirmations = e.INDEXER_CONFIRMATIONS >= 0 ? e.INDEXER_CONFIRMATIONS : local ? 0 : 3;
  const chains = chainsConfig(e, local, confirmations);
  const config: Config = {
    network: e.NETWORK,
    rpcUrl: chains[0].rpcUrl,
    chains,
    databaseUrl: e.DATABASE_URL || undefined,
    databaseSchema: e.DATABASE_SCHEMA,
    sqliteFile: path.join(e.DATA_DIR, `${e.NETWORK}.sqlite`),
    sqliteDriver: e.SQLITE_DRIVER,
    deploymentsDir: e.DEPLOYMENTS_DIR,
    runIndexer: e.RUN_INDEXER === "true",
    indexer: {
      confirmations: chains[0].confirmations,
      pollIntervalMs: e.INDEXER_POLL_MS >= 0 ? e.INDEXER_POLL_MS : local ? 100 : 2000,
      headPollMs: e.INDEXER_HEAD_POLL_MS >= 0 ? e.INDEXER_HEAD_POLL_MS : local ? 20 : 500,
      maxBlockRange: e.INDEXER_MAX_BLOCK_RANGE,
      lockTtlMs: e.INDEXER_LOCK_TTL_MS,
    },
    api: {
      host: e.API_HOST,
      port: e.API_PORT,
      publicUrl: e.PUBLIC_URL ?? `http://${e.API_HOST}:${e.API_PORT}`,
      trustProxy: e.TRUST_PROXY === "true",
      redisUrl: e.REDIS_URL || undefined,
      postingChain: e.POSTING_CHAIN,
      settlementTier: chains[0].tier,
      gasSymbol: chains[0].gasSymbol,
      storageDir: e.STORAGE_DIR ?? path.join(e.DATA_DIR, "blobs", e.NETWORK),
      maxBlobBytes: e.MAX_BLOB_BYTES,
      uploadTimeoutMs: e.UPLOAD_TIMEOUT_MS,
      jsonBodyLimitBytes: e.JSON_BODY_LIMIT_BYTES,
      timeouts: {
        headersMs: Math.min(e.API_HEADERS_TIMEOUT_MS, e.API_REQUEST_TIMEOUT_MS),
        requestMs: e.API_REQUEST_TIMEOUT_MS,
        idleMs: e.API_IDLE_TIMEOUT_MS,
        keepAliveMs: e.API_KEEP_ALIVE_TIMEOUT_MS,
      },
      sessionTtlSeconds: e.SESSION_TTL_SECONDS,
      oauth: {
        accessTokenTtlSeconds: e.OAUTH_ACCESS_TOKEN_TTL_SECONDS,
        refreshTokenTtlSeconds: e.OAUTH_REFRESH_TOKEN_TTL_SECONDS,
      },
      maxKeysPerWallet: e.API_MAX_KEYS_PER_WALLET,
      nonceTtlSeconds: e.SIWE_NONCE_TTL_SECONDS,
      hashReservationSeconds: e.HASH_RESERVATION_SECONDS,
      limits: {
        windowMs: e.RATE_WINDOW_MS,
        ipPerWindow: e.RATE_IP_PER_WINDOW,
        failedAuthPerWindow: e.RATE_FAILED_AUTH_PER_WINDOW,
        walletFamilyPerMinute: e.RATE_WALLET_FAMILY_PER_MINUTE,
        ipPostingPerMinute: e.RATE_IP_POSTING_PER_MINUTE,
        mcpCallsPerMinute: e.RATE_MCP_CALLS_PER_MINUTE,
        agentPerWindow: e.RATE_AGENT_PER_WINDOW,
        prefix: e.RATE_LIMIT_PREFIX,
      },
      web: { distDir: e.WEB_DIST_DIR, devnetAccountsFile: e.DEVNET_ACCOUNTS_FILE || undefined },
    },
    marketplace: {
      verifierPrivateKey: e.VERIFIER_PRIVATE_KEY,
      custodyPrivateKey: e.CUSTODY_PRIVATE_KEY,
      offerWindowSeconds: e.OFFER_WINDOW_SECONDS,
      acceptLockSeconds: e.ACCEPT_LOCK_SECONDS,
      verifierPollMs: e.VERIFIER_POLL_MS >= 0 ? e.VERIFIER_POLL_MS : local ? 200 : 2000,
      deployFeeRequired: e.DEPLOY_FEE_REQUIRED === undefined ? local : e.DEPLOY_FEE_REQUIRED === "true",
    },
    push: {
      heartbeatMs: e.EVENTS_HEARTBEAT_MS,
      maxStreamsPerKey: e.EVENTS_MAX_STREAMS_PER_KEY,
      maxStreamsPerWallet: Math.max(e.EVENTS_MAX_STREAMS_PER_KEY, e.EVENTS_MAX_STREAMS_PER_WALLET),
      maxStreamsPerIp: e.EVENTS_MAX_STREAMS_PER_IP,
      maxStreamLifetimeMs: e.EVENTS_MAX_STREAM_LIFETIME_MS,
      credentialCheckMs: e.EVENTS_CREDENTIAL_CHECK_MS,
      pollMs: e.EVENTS_POLL_MS,
      retentionMs: e.EVENTS_RETENTION_DAYS * 24 * 3600 * 1000,
      webhooks: {
        allowPrivate: e.WEBHOOK_ALLOW_PRIVATE === "true",
        maxAttempts: e.WEBHOOK_MAX_ATTEMPTS,
        retryBaseMs: e.WEBHOOK_RETRY_BASE_MS,
        retryMaxMs: Math.max(e.WEBHOOK_RETRY_BASE_MS, e.WEBHOOK_RETRY_MAX_MS),
        timeoutMs: e.WEBHOOK_TIMEOUT_MS,
        maxPerWallet: e.WEBHOOK_MAX_PER_WALLET,
      },
    },
    hostedAgents: hostedAgentsConfig(e, local),
    observability: {
      logRequests: e.LOG_REQUESTS === "on",
      metricsOnApi: e.METRICS === "on",
      metricsListener: e.METRICS_PORT > 0 ? { host: e.METRICS_HOST, port: e.METRICS_PORT } : undefined,
      readyMaxIndexerLag: e.READY_MAX_INDEXER_LAG,
      readyTimeoutMs: e.READY_TIMEOUT_MS,
      shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    },
    logLevel: e.LOG_LEVEL,
  };
  return deepFreeze(config);
}

/** The local devnet's RPC URL of each chain when nothing names one (the devnet's DEVNET_PORT and DEVNET_ARC_PORT). */
const LOCAL_RPC_URL: Record<ChainName, string> = { base: "http://127.0.0.1:8545", arc: "http://127.0.0.1:8546" };

/**
 * The configured chains, the posting chain first. The posting chain reads the legacy variables (RPC_URL or
 * DEVNET_RPC_URL, NETWORK, INDEXER_CONFIRMATIONS, SETTLEMENT_TIER, GAS_SYMBOL) unless its own prefixed ones are set,
 * so a single-chain environment needs no edit. Another chain reads only its prefixed variables: its network defaults
 * to `<NETWORK>-<name>`, its RPC URL is required off the local networks.
 */
function chainsConfig(e: z.output<typeof envSchema>, local: boolean, confirmations: number): ChainConfig[] {
  const posting = e.POSTING_CHAIN;
  const names = e.CHAINS ?? [posting];
  if (!names.includes(posting)) {
    throw new ConfigError(`CHAINS: must include POSTING_CHAIN (${posting}), the chain of requests that name none`);
  }
  const ordered = [posting, ...names.filter((n) => n !== posting)];
  return ordered.map((name): ChainConfig => {
    const P = name.toUpperCase() as "BASE" | "ARC";
    const own = {
      rpcUrl: e[`${P}_RPC_URL`],
      wsUrl: e[`${P}_WS_URL`],
      network: e[`${P}_NETWORK`],
      confirmations: e[`${P}_CONFIRMATIONS`],
      tier: e[`${P}_SETTLEMENT_TIER`],
      gasSymbol: e[`${P}_GAS_SYMBOL`],
    };
    if (name === posting) {
      const rpcUrl = own.rpcUrl ?? e.RPC_URL ?? (local ? (e.DEVNET_RPC_URL ?? LOCAL_RPC_URL.base) : undefined);
      if (!rpcUrl) throw new ConfigError(`RPC_URL: required for network ${e.NETWORK} (or ${P}_RPC_URL)`);
      return {
        name,
        rpcUrl,
        ...(own.wsUrl ? { wsUrl: own.wsUrl } : {}),
        network: own.network ?? e.NETWORK,
        confirmations: own.confirmations >= 0 ? own.confirmations : confirmations,
        tier: own.tier ?? e.SETTLEMENT_TIER,
        gasSymbol: own.gasSymbol ?? e.GAS_SYMBOL,
      };
    }
    const rpcUrl = own.rpcUrl ?? (local ? LOCAL_RPC_URL[name] : undefined);
    if (!rpcUrl) throw new ConfigError(`${P}_RPC_URL: required for chain ${name} on network ${e.NETWORK}`);
    return {
      name,
      rpcUrl,
      ...(own.wsUrl ? { wsUrl: own.wsUrl } : {}),
      network: own.network ?? `${e.NETWORK}-${name}`,
      confirmations: own.confirmations >= 0 ? own.confirmations : local ? 0 : 3,
      tier: own.tier ?? e.SETTLEMENT_TIER,
      gasSymbol: own.gasSymbol ?? e.GAS_SYMBOL,
    };
  });
}

/** Development secrets of local networks only: public, so that devnet restarts and test hosts agree. */
const DEVNET_KEY_ENCRYPTION_KEY = createHash("sha256").update("devnet hosted-agent key-encryption key").digest();
const DEVNET_JWT_SECRET = "devnet-hosted-agent-token-secret-not-for-production";

function hostedAgentsConfig(e: z.output<typeof envSchema>, local: boolean): HostedAgentsConfig {
  const enabled = e.HOSTED_AGENTS === "on";
  let keyEncryptionKey: Buffer;
  if (e.AGENT_KEY_ENCRYPTION_KEY) keyEncryptionKey = Buffer.from(e.AGENT_KEY_ENCRYPTION_KEY.slice(2), "hex");
  else if (local || !enabled) keyEncryptionKey = DEVNET_KEY_ENCRYPTION_KEY;
  else {
    throw new ConfigError(
      `AGENT_KEY_ENCRYPTION_KEY: required on network ${e.NETWORK} to store hosted agents' keys (0x and 64 hex; ` +
        "generate one with `openssl rand -hex 32`), or set HOSTED_AGENTS=off",
    );
  }
  return {
    enabled,
    keyEncryptionKey,
    jwtSecret: e.AGENT_JWT_SECRET ?? (local ? DEVNET_JWT_SECRET : undefined),
    developmentSecrets: enabled && local && (!e.AGENT_KEY_ENCRYPTION_KEY || !e.AGENT_JWT_SECRET),
    tokenTtlSeconds: e.AGENT_TOKEN_TTL_SECONDS,
    hostId: e.AGENT_HOST_ID || `${hostname()}-${process.pid}`,
    runHost: enabled && e.RUN_AGENT_HOST === "true",
    capacity: e.AGENT_HOST_CAPACITY,
    maxRunningPerOwner: e.AGENT_MAX_RUNNING_PER_OWNER,
    leaseMs: e.AGENT_LEASE_MS,
    workerMemoryMb: e.AGENT_WORKER_MEMORY_MB,
  };
}

/** The chain id of the local networks (Hardhat's, the devnet's): the only chain development secrets may serve. */
export const LOCAL_CHAIN_ID = 31337n;

/**
 * Refuses to start with public development secrets (hosted agents on a local NETWORK without AGENT_KEY_ENCRYPTION_KEY
 * and AGENT_JWT_SECRET) unless the chain is a local one (id 31337): anyone could forge agents' tokens and read their
 * keys. `chainId` reads the chain's id; a chain that cannot be asked is refused too.
 */
export async function checkDevelopmentSecrets(config: Readonly<Config>, chainId: () => Promise<bigint>): Promise<void> {
  if (!config.hostedAgents.developmentSecrets) return;
  let id: bigint | undefined;
  try {
    id = await chainId();
  } catch {
    id = undefined;
  }
  if (id === LOCAL_CHAIN_ID) return;
  throw new ConfigError(
    `AGENT_KEY_ENCRYPTION_KEY, AGENT_JWT_SECRET: the public development secrets of NETWORK=${config.network} serve ` +
      `only a local chain (id ${LOCAL_CHAIN_ID}), but ${config.rpcUrl} ` +
      `${id === undefined ? "did not answer its chain id" : `is chain ${id}`}: set both secrets ` +
      "(`openssl rand -hex 32`; the token secret at least 32 characters), or set HOSTED_AGENTS=off",
  );
}

function deepFreeze<T>(value: T): Readonly<T> {
  // Typed arrays (the key-encryption key) cannot be frozen; they stay private to the config.
  if (value && typeof value === "object" && !ArrayBuffer.isView(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
