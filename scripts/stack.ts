/**
 * `npm run stack`: the production topology on one machine, for a person to try (docs/operations.md, "The topology
 * under faults"): serves the in-process Hardhat chain on 127.0.0.1:STACK_RPC_PORT (58545), deploys the contracts and
 * MockUSDC, and starts as separate processes two indexers (one writes, one stands by), two API processes
 * (STACK_API_PORT and the next port; the first holds the verifier key) and two agent hosts, on the PostgreSQL and
 * Redis given by DATABASE_URL and REDIS_URL (required; DATABASE_SCHEMA keeps the tables in a schema of their own).
 * The address book and the processes' data go to .stack/. Ctrl-C stops them all (SIGTERM, then the chain).
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import hre from "hardhat";
import { TASK_NODE_CREATE_SERVER } from "hardhat/builtin-tasks/task-names";
import type { HardhatNetworkHDAccountsConfig, JsonRpcServer } from "hardhat/types";
import { HDNodeWallet, Mnemonic } from "ethers";
import { deployAll } from "./deploy";

const ROOT = path.join(__dirname, "..");

function required(name: string, example: string): string {
  const value = process.env[name];
  if (!value) {
    process.stderr.write(
      `npm run stack: ${name} is required (the topology runs on PostgreSQL and Redis), e.g. ${name}=${example}\n`,
    );
    process.exit(1);
  }
  return value;
}

async function main() {
  const databaseUrl = required("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/market");
  const redisUrl = required("REDIS_URL", "redis://127.0.0.1:6379/5");
  if (hre.network.name !== "hardhat") throw new Error("npm run stack serves the in-process chain: no --network");
  const rpcPort = Number(process.env.STACK_RPC_PORT ?? 58545);
  const apiPort = Number(process.env.STACK_API_PORT ?? 8787);

  const rpc: JsonRpcServer = await hre.run(TASK_NODE_CREATE_SERVER, {
    hostname: "127.0.0.1",
    port: rpcPort,
    provider: hre.network.provider,
  });
  const { address, port } = await rpc.listen();
  const rpcUrl = `http://${address}:${port}`;
  const { book } = await deployAll({ networkName: "localhost", write: false });
  const dir = path.join(ROOT, ".stack");
  fs.mkdirSync(path.join(dir, "deployments"), { recursive: true });
  fs.mkdirSync(path.join(dir, "data"), { recursive: true });
  fs.writeFileSync(path.join(dir, "deployments", "localhost.json"), JSON.stringify(book, null, 2) + "\n");

  const base: NodeJS.ProcessEnv = {
    ...process.env,
    NETWORK: "localhost",
    RPC_URL: rpcUrl,
    DEPLOYMENTS_DIR: path.join(dir, "deployments"),
    DATA_DIR: path.join(dir, "data"),
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
  };
  const children: { name: string; child: ChildProcess }[] = [];
  const run = (name: string, script: string, env: Record<string, string>) => {
    const child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", script], {
      cwd: ROOT,
      env: { ...base, ...env },
      stdio: ["ignore", "inherit", "inherit"],
    });
    child.once("exit", (code, signal) => process.stdout.write(`[stack] ${name} exited (${signal ?? code})\n`));
    children.push({ name, child });
  };
  const apis = [apiPort, apiPort + 1].map((p) => `http://127.0.0.1:${p}`);
  run("indexer-1", "server/indexer/main.ts", {});
  run("indexer-2", "server/indexer/main.ts", {});
  const apiEnv = { RUN_INDEXER: "false", RUN_AGENT_HOST: "false" };
  run("api-1", "server/main.ts", {
    ...apiEnv,
    API_PORT: String(apiPort),
    // The deployment's verifier: Hardhat account #2.
    VERIFIER_PRIVATE_KEY: hardhatPrivateKey(2),
  });
  run("api-2", "server/main.ts", { ...apiEnv, API_PORT: String(apiPort + 1) });
  run("host-a", "server/hosting/main.ts", { API_URL: apis[0], AGENT_HOST_ID: "host-a" });
  run("host-b", "server/hosting/main.ts", { API_URL: apis[1], AGENT_HOST_ID: "host-b" });
  process.stdout.write(
    [
      `[stack] chain ${rpcUrl} (escrow ${book.escrow.proxy}, MockUSDC ${book.token.address})`,
      `[stack] API ${apis.join(" and ")} (health: /health/ready), indexers and agent hosts starting`,
      `[stack] try: kill -9 <pid> of any process, then watch the others take over. pids: ${children
        .map(({ name, child }) => `${name}=${child.pid}`)
        .join(" ")}`,
      "[stack] Ctrl-C stops everything",
      "",
    ].join("\n"),
  );

  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await Promise.all(
    children.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
        }),
    ),
  );
  await rpc.close();
}

/** The private key of Hardhat account `index` (derived from the configured mnemonic). */
function hardhatPrivateKey(index: number): string {
  const { mnemonic, path: basePath } = hre.config.networks.hardhat.accounts as HardhatNetworkHDAccountsConfig;
  return HDNodeWallet.fromMnemonic(Mnemonic.fromPhrase(mnemonic), `${basePath}/${index}`).privateKey;
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
