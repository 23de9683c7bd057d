/**
 * Runs the real `market` binary (client/cli/bin/market.js, the package.json "bin") as a child process, as a user's
 * shell or script does, and a devnet for it on free ports. The child talks to the devnet over HTTP only (the API
 * and the chain's JSON-RPC), so the test process must stay free to serve them: `runCli` never blocks.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startDevnet, type Devnet } from "../../../scripts/devnet";
import { freePort } from "../../helpers/api";
import { childEnv } from "../../helpers/childEnv";

export const MARKET_BIN = path.join(__dirname, "..", "..", "..", "client", "cli", "bin", "market.js");

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (with --json), else undefined. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** Runs `market <args>` with exactly `env` (plus PATH and the test run's NODE_OPTIONS: childEnv) and resolves when it exits. */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 90_000): Promise<CliRun> {
  return startCli(args, env, timeoutMs).done;
}

/** Starts `market <args>`: the child (to signal it) and its outcome. */
export function startCli(args: string[], env: Record<string, string>, timeoutMs = 90_000) {
  const child = spawn(process.execPath, [MARKET_BIN, ...args], {
    env: { ...childEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const done = new Promise<CliRun>((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
  return { child, done };
}

export interface CliDevnet {
  devnet: Devnet;
  /** What the devnet said while starting (startDevnet's onProgress), in order. */
  progress: string[];
  /** A fresh home for the CLI's config file (nothing from the user's own). */
  home: string;
  /** The environment of one demo account (poster, agent-1, ...): API, RPC, key and private key, config in `home`. */
  env(role: string): Record<string, string>;
  close(): Promise<void>;
}

/** A devnet on free ports with its files in temporary folders. */
export async function startCliDevnet(): Promise<CliDevnet> {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "cli-devnet-out-"));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cli-devnet-data-"));
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "cli-home-"));
  const deploymentsDir = fs.mkdtempSync(path.join(os.tmpdir(), "cli-devnet-deployments-"));
  // Every CLI call, the devnet's agent and the tests' own reads come from 127.0.0.1: the per-IP budget (100 requests
  // a minute) would make these tests about the rate limiter, which has its own. Raised for this devnet only.
  const saved = process.env.RATE_IP_PER_WINDOW;
  process.env.RATE_IP_PER_WINDOW = "100000";
  let devnet: Devnet;
  const progress: string[] = [];
  try {
    devnet = await startDevnet({
      port: await freePort(),
      apiPort: await freePort(),
      outDir,
      dataDir,
      deploymentsDir,
      onProgress: (line) => progress.push(line),
    });
  } finally {
    if (saved === undefined) delete process.env.RATE_IP_PER_WINDOW;
    else process.env.RATE_IP_PER_WINDOW = saved;
  }
  return {
    devnet,
    progress,
    home,
    env(role: string) {
      const account = devnet.accounts.find((a) => a.role === role);
      if (!account) throw new Error(`no devnet account ${role}`);
      return {
        HOME: home,
        XDG_CONFIG_HOME: path.join(home, ".config"),
        MARKET_API_URL: devnet.apiUrl!,
        MARKET_RPC_URL: devnet.rpcUrl,
        MARKET_ARC_RPC_URL: devnet.arcRpcUrl,
        MARKET_API_KEY: account.apiKey,
        MARKET_PRIVATE_KEY: account.privateKey,
      };
    },
    async close() {
      await devnet.close();
      for (const dir of [outDir, dataDir, deploymentsDir, home]) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
