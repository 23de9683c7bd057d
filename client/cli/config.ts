/**
 * The CLI's configuration: each value from its flag, else its environment variable, else the user config file that
 * `market login` writes, else the devnet default. The config file holds the API URL, the RPC URL, the API key and the
 * wallet address, never a private key; it is written with mode 0600 in a directory of mode 0700.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CliError } from "./errors";
import { EXIT } from "./exitCodes";

export const DEFAULT_API_URL = "http://127.0.0.1:8787";
export const DEFAULT_RPC_URL = "http://127.0.0.1:8545";
/** The devnet's arc chain (DEVNET_ARC_PORT). */
export const DEFAULT_ARC_RPC_URL = "http://127.0.0.1:8546";

/** What the config file holds. */
export interface ConfigFile {
  apiUrl?: string;
  rpcUrl?: string;
  /** The arc chain's JSON-RPC URL, used for a command on arc unless --rpc-url names one. */
  arcRpcUrl?: string;
  apiKey?: string;
  address?: string;
  savedAt?: string;
}

/** The global flags every command takes. */
export interface GlobalFlags {
  apiUrl?: string;
  apiKey?: string;
  privateKey?: string;
  rpcUrl?: string;
  config?: string;
  json?: boolean;
}

export interface ResolvedConfig {
  apiUrl: string;
  rpcUrl: string;
  /** arc's JSON-RPC URL: MARKET_ARC_RPC_URL, else the config file's arcRpcUrl, else the devnet's. */
  arcRpcUrl: string;
  apiKey?: string;
  privateKey?: string;
  configPath: string;
  /** Where each value came from, for `whoami` and error messages. */
  sources: Record<"apiUrl" | "rpcUrl" | "apiKey" | "privateKey", "flag" | "env" | "config" | "default" | "none">;
}

/** `--config`, else MARKET_CONFIG, else $XDG_CONFIG_HOME/market/config.json (~/.config/market/config.json). */
export function configPath(flags: GlobalFlags, env: NodeJS.ProcessEnv = process.env): string {
  if (flags.config) return path.resolve(flags.config);
  if (env.MARKET_CONFIG) return path.resolve(env.MARKET_CONFIG);
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), ".config");
  return path.join(base, "market", "config.json");
}

export function readConfigFile(file: string): ConfigFile {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new CliError({
      code: "CONFIG_UNREADABLE",
      message: `${file}: ${(error as Error).message}`,
      exit: EXIT.CONFIG,
    });
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not a JSON object");
    return parsed as ConfigFile;
  } catch (error) {
    throw new CliError({
      code: "CONFIG_UNREADABLE",
      message: `${file}: ${(error as Error).message}`,
      exit: EXIT.CONFIG,
    });
  }
}

/** Writes the config file readable by its owner only (0600; the directory 0700), replacing it atomically. */
export function writeConfigFile(file: string, config: ConfigFile): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(config, null, 2) + "\n", { mode: 0o600 });
  fs.chmodSync(temp, 0o600); // the umask cannot widen it, but an existing temp file's mode would survive
  fs.renameSync(temp, file);
}

type Source = ResolvedConfig["sources"][keyof ResolvedConfig["sources"]];

function pick(flag: string | undefined, envValue: string | undefined, fileValue: string | undefined) {
  if (flag) return { value: flag, source: "flag" as Source };
  if (envValue) return { value: envValue, source: "env" as Source };
  if (fileValue) return { value: fileValue, source: "config" as Source };
  return { value: undefined, source: "none" as Source };
}

export function resolveConfig(flags: GlobalFlags, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const file = configPath(flags, env);
  const saved = readConfigFile(file);
  const apiUrl = pick(flags.apiUrl, env.MARKET_API_URL, saved.apiUrl);
  const rpcUrl = pick(flags.rpcUrl, env.MARKET_RPC_URL, saved.rpcUrl);
  const arcRpcUrl = pick(undefined, env.MARKET_ARC_RPC_URL, saved.arcRpcUrl);
  const apiKey = pick(flags.apiKey, env.MARKET_API_KEY, saved.apiKey);
  const privateKey = pick(flags.privateKey, env.MARKET_PRIVATE_KEY, undefined);
  return {
    apiUrl: (apiUrl.value ?? DEFAULT_API_URL).replace(/\/+$/, ""),
    rpcUrl: rpcUrl.value ?? DEFAULT_RPC_URL,
    arcRpcUrl: arcRpcUrl.value ?? DEFAULT_ARC_RPC_URL,
    apiKey: apiKey.value,
    privateKey: privateKey.value,
    configPath: file,
    sources: {
      apiUrl: apiUrl.value ? apiUrl.source : "default",
      rpcUrl: rpcUrl.value ? rpcUrl.source : "default",
      apiKey: apiKey.source,
      privateKey: privateKey.source,
    },
  };
}

export function requireApiKey(config: ResolvedConfig): string {
  if (!config.apiKey) {
    throw new CliError({ code: "NO_API_KEY", message: "no API key configured", exit: EXIT.CONFIG });
  }
  return config.apiKey;
}

export function requirePrivateKey(config: ResolvedConfig): string {
  if (!config.privateKey) {
    throw new CliError({ code: "NO_PRIVATE_KEY", message: "no private key configured", exit: EXIT.CONFIG });
  }
  return config.privateKey;
}

/**
 * The JSON-RPC URL of a command on `chain`: --rpc-url when given (the user named it for this command), else arc's
 * own URL for arc, else the configured RPC URL (base's, the posting chain's on the devnet).
 */
export function rpcUrlFor(config: ResolvedConfig, chain?: "base" | "arc"): string {
  if (chain === "arc" && config.sources.rpcUrl !== "flag") return config.arcRpcUrl;
  return config.rpcUrl;
}
