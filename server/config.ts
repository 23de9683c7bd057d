/**
 * The environment, parsed once into a typed, frozen configuration. Invalid values fail fast with a message naming
 * the variable. Defaults are the embedded ones: the local devnet, SQLite under data/, in-memory limits.
 */
import path from "node:path";
import { z } from "zod";

const ROOT = path.resolve(__dirname, "..");

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

const envSchema = z.object({
  NETWORK: z.string().regex(/^[a-z0-9_-]+$/i, "must be a network name").default("localhost"),
  RPC_URL: z.string().url().optional(),
  DEVNET_RPC_URL: z.string().url().optional(),
  DATABASE_URL: z.string().optional(),
  DATABASE_SCHEMA: z.string().regex(/^[a-z_][a-z0-9_]*$/, "must be a lower-case SQL identifier").optional(),
  DATA_DIR: z.string().default(path.join(ROOT, "data")),
  DEPLOYMENTS_DIR: z.string().default(path.join(ROOT, "deployments")),
  SQLITE_DRIVER: z.enum(["better-sqlite3", "sqlite3"]).default("better-sqlite3"),
  INDEXER_CONFIRMATIONS: intFrom(-1, -1),
  INDEXER_POLL_MS: intFrom(-1, -1),
  INDEXER_MAX_BLOCK_RANGE: intFrom(2000, 1),
  INDEXER_LOCK_TTL_MS: intFrom(15_000, 1000),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
});

export type Env = z.input<typeof envSchema>;

export interface IndexerConfig {
  /** Blocks a log must be buried under before it is indexed (0 on the devnet). */
  confirmations: number;
  /** How often the head is polled. */
  pollIntervalMs: number;
  /** Largest getLogs range; halved while the node refuses it. */
  maxBlockRange: number;
  /** Lease of the writer lock on SQLite (PostgreSQL uses a session advisory lock). */
  lockTtlMs: number;
}

export interface Config {
  network: string;
  rpcUrl: string;
  /** PostgreSQL connection string; SQLite when absent. */
  databaseUrl?: string;
  /** PostgreSQL schema (default: the connection's search path). */
  databaseSchema?: string;
  sqliteFile: string;
  sqliteDriver: "better-sqlite3" | "sqlite3";
  deploymentsDir: string;
  indexer: IndexerConfig;
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
  const rpcUrl = e.RPC_URL ?? (local ? (e.DEVNET_RPC_URL ?? "http://127.0.0.1:8545") : undefined);
  if (!rpcUrl) throw new ConfigError(`RPC_URL: required for network ${e.NETWORK}`);
  const config: Config = {
    network: e.NETWORK,
    rpcUrl,
    databaseUrl: e.DATABASE_URL || undefined,
    databaseSchema: e.DATABASE_SCHEMA,
    sqliteFile: path.join(e.DATA_DIR, `${e.NETWORK}.sqlite`),
    sqliteDriver: e.SQLITE_DRIVER,
    deploymentsDir: e.DEPLOYMENTS_DIR,
    indexer: {
      confirmations: e.INDEXER_CONFIRMATIONS >= 0 ? e.INDEXER_CONFIRMATIONS : local ? 0 : 3,
      pollIntervalMs: e.INDEXER_POLL_MS >= 0 ? e.INDEXER_POLL_MS : local ? 100 : 2000,
      maxBlockRange: e.INDEXER_MAX_BLOCK_RANGE,
      lockTtlMs: e.INDEXER_LOCK_TTL_MS,
    },
    logLevel: e.LOG_LEVEL,
  };
  return Object.freeze({ ...config, indexer: Object.freeze(config.indexer) });
}
