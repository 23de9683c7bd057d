/**
 * One-command local devnet with two chains: `base`, the in-process Hardhat chain (chain id 31337) on
 * http://127.0.0.1:8545 (DEVNET_PORT), and `arc`, a second in-process Hardhat chain (chain id 31338) on
 * http://127.0.0.1:8546 (DEVNET_ARC_PORT). On each it deploys the escrow, the agent factory and MockUSDC and writes
 * the address book (`deployments/localhost.json`, `deployments/localhost-arc.json`), then starts the API and its
 * indexer (CHAINS=base,arc) on
 * http://127.0.0.1:8787 (DEVNET_API_PORT; SQLite, in-memory limits), funds demo accounts and gives each an API key
 * in `.devnet/accounts.json` (with the escrow admin, to resolve disputes), and runs until stopped (Ctrl-C or
 * SIGTERM). A port already taken ends it at once with one line naming its variable. Also usable as a library:
 * `startDevnet()`.
 */
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import hre from "hardhat";
import { HDNodeWallet, Mnemonic, id } from "ethers";
import { TASK_COMPILE, TASK_NODE_CREATE_SERVER } from "hardhat/builtin-tasks/task-names";
import type { HardhatRuntimeEnvironment, JsonRpcServer } from "hardhat/types";
// Type-only at the top: the modules behind these (the server, the deploy script) load the contracts' generated
// bindings, which exist only once compiled; `npm run devnet` compiles first (saying so), then loads them.
import type { Deployment } from "./deploy";
import type { RunningServer } from "../server/main";
import type { AgentView } from "../server/domain/schemas/agents";
import { loadConfig } from "../server/config";
import { addressBookPath, DEFAULT_DEPLOYMENTS_DIR } from "../server/chain/addressBook";
import { ensureWebBuilt } from "./webBuild";
import { secondChainRuntime } from "./secondChain";

export interface DevnetOptions {
  hostname?: string;
  /** The base chain's JSON-RPC port (DEVNET_PORT, default 8545). */
  port?: number;
  /** The arc chain's JSON-RPC port (DEVNET_ARC_PORT): default 8546 beside the default `port`, else a free port. */
  arcPort?: number;
  apiPort?: number;
  /** Where accounts.json goes (default .devnet/). */
  outDir?: string;
  /** Where the SQLite database and blobs go (default data/). */
  dataDir?: string;
  /**
   * Where both chains' address books go and the API reads them (default deployments/, where the CLI and scripts of
   * `npm run devnet`'s users find them). Devnets running at once in one checkout (the parallel test workers) each
   * need their own.
   */
  deploymentsDir?: string;
  /** Start the API and indexer (default true). */
  api?: boolean;
  /** Told each step of the start as it begins (the first start takes about a minute). */
  onProgress?: (line: string) => void;
}

export interface DemoAccount {
  role: string;
  address: string;
  privateKey: string;
  apiKey: string;
  /** On the admin: its key is a public Hardhat test key, like every key here. */
  warning?: string;
}

/** A devnet port that is taken (or not a port): the message names the environment variable that sets it. */
export class DevnetPortError extends Error {
  override name = "DevnetPortError";
}

/** Parses a port variable (DEVNET_PORT, DEVNET_ARC_PORT, DEVNET_API_PORT): absent means `fallback`. */
export function devnetPort(variable: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new DevnetPortError(`${variable}=${raw} is not a port (a whole number from 1 to 65535)`);
  }
  return port;
}

function portTaken(variable: string, hostname: string, port: number): DevnetPortError {
  return new DevnetPortError(
    `${variable}=${port}: port ${port} on ${hostname} is already in use; stop what holds it or set ${variable} to a free port`,
  );
}

const isAddressInUse = (error: unknown) => (error as { code?: string } | undefined)?.code === "EADDRINUSE";

/** Fails fast, before anything is deployed, when `port` cannot be listened on. */
async function assertPortFree(variable: string, hostname: string, port: number): Promise<void> {
  const probe = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once("error", reject);
      probe.listen(port, hostname, () => resolve());
    });
  } catch (error) {
    if (isAddressInUse(error)) throw portTaken(variable, hostname, port);
    throw new DevnetPortError(
      `${variable}=${port}: cannot listen on ${hostname}:${port} (${(error as Error).message})`,
    );
  }
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

/** The admin's entry in accounts.json carries this. */
export const ADMIN_WARNING =
  "the escrow admin (resolveDispute, pause, fees) of this devnet: a public Hardhat test key, never use it anywhere real";

/** An MCP client configuration for one demo key (the shape MCP clients read from their config file). */
export interface McpClientConfig {
  mcpServers: Record<string, { type: "http"; url: string; headers: Record<string, string> }>;
}

/** The MCP client configuration of `apiKey` against the API at `apiUrl`. */
export function mcpClientConfig(apiUrl: string, apiKey: string): McpClientConfig {
  return { mcpServers: { "escrow-market": { type: "http", url: `${apiUrl}/mcp`, headers: { "X-API-Key": apiKey } } } };
}

/** One of the devnet's two chains: its name in the API (`chain`), JSON-RPC URL, chain id and deployment. */
export interface DevnetChain {
  name: "base" | "arc";
  rpcUrl: string;
  chainId: number;
  deployment: Deployment;
}

/** The arc chain's id on the devnet (base keeps Hardhat's 31337). */
export const DEVNET_ARC_CHAIN_ID = 31338;
/** The arc chain's address book name: `deployments/localhost-arc.json`. */
export const DEVNET_ARC_NETWORK = "localhost-arc";

export interface Devnet {
  /** The base chain's JSON-RPC URL (the posting chain). */
  rpcUrl: string;
  /** The arc chain's JSON-RPC URL. */
  arcRpcUrl: string;
  /** Both chains, base first. */
  chains: DevnetChain[];
  apiUrl?: string;
  /** .devnet/mcp.json: an MCP client configuration for the agent-2 demo key. */
  mcpConfig?: McpClientConfig;
  /** The base chain's deployment (`chains[1].deployment` is arc's). */
  deployment: Deployment;
  /** The folder of both chains' address books. */
  deploymentsDir: string;
  accounts: DemoAccount[];
  server?: RunningServer;
  /** The example agent, hosted by the service for the demo owner agent-1 (and acting as agent-1's wallet). */
  agent?: HostedAgentHandle;
  /** The hosted verifier agent (its own wallet), listed by GET /api/v1/a2a/executors?role=verifier. */
  verifierAgent?: HostedAgentHandle;
  /** The chains the marketplace verifier signs on (one verifier per chain with a deployment), base first. */
  verifierChains: string[];
  close(): Promise<void>;
}

/** Hardhat's public test accounts (never use them anywhere real). */
const DEMO_ROLES = ["poster", "poster-2", "agent-1", "agent-2", "agent-3"];
const FIRST_DEMO_INDEX = 3; // 0 admin, 1 treasury, 2 marketplace verifier
const DEMO_USDC = 100_000n * 10n ** 6n;

function hardhatWallet(index: number): HDNodeWallet {
  const { mnemonic, path: basePath } = hre.config.networks.hardhat.accounts as { mnemonic: string; path: string };
  return HDNodeWallet.fromMnemonic(Mnemonic.fromPhrase(mnemonic), `${basePath}/${index}`);
}

/**
 * A hosted agent the devnet started: its id, slug, wallet address, the capabilities its skill offers and the chains
 * its executor record declares (`supportedChains`, as its worker registered them).
 */
export interface HostedAgentHandle {
  id: string;
  slug: string;
  address: string;
  capabilities: string[];
  chains: string[];
}

/**
 * The devnet's hosted agents, owned by the demo account agent-1, which pays the deploy fee twice on the devnet's
 * posting chain (base): the example agent (skill `summary`, agent-1's own wallet, so the demo accounts file holds its
 * key) and a verifier agent (skill `verifier`, opted in as "Devnet verifier", a wallet the service generated, given
 * gas on both chains). Both are started and running (in the service's agent host) when this returns.
 */
async function startHostedAgents(
  server: RunningServer,
  owner: HDNodeWallet,
  arc: HardhatRuntimeEnvironment,
): Promise<{ agent: HostedAgentHandle; verifierAgent: HostedAgentHandle }> {
  const { readDeployFee, verifyDeployFee } = await import("../server/domain/deployFee");
  const { actOnAgent, createHostedAgent } = await import("../server/domain/agents/hostedAgents");
  const { createAgentBodySchema } = await import("../server/domain/schemas/agents");
  const { summarySkill } = await import("../server/domain/agents/skills/specs");
  const deps = server.deps;
  const signer = owner.connect(hre.ethers.provider);
  const from = owner.address.toLowerCase();
  const payFee = async () => {
    const terms = await readDeployFee(deps, from);
    if (!terms.required) return undefined;
    await (await signer.sendTransaction(terms.transactions!.approve)).wait();
    const paid = await (await signer.sendTransaction(terms.transactions!.deployAgent)).wait();
    await verifyDeployFee(deps, from, paid!.hash);
    return paid!.hash;
  };
  await payFee();
  const example = await createHostedAgent(
    deps,
    from,
    createAgentBodySchema.parse({
      slug: "example-agent",
      name: "Example agent",
      description: "Summarises public briefs (the devnet's example agent)",
      skills: [{ skill: "summary" }],
    }),
    { walletKey: owner.privateKey },
  );
  await payFee();
  const verifier = await createHostedAgent(
    deps,
    from,
    createAgentBodySchema.parse({
      slug: "devnet-verifier",
      name: "Devnet verifier",
      description: "Judges work against a task's criteria (agent-mode verification)",
      skills: [{ skill: "verifier" }],
      verifier: { optIn: true, name: "Devnet verifier" },
    }),
  );
  // The verifier agent signs its own verdicts: gas from the deployer (Hardhat account #0) on each chain.
  for (const runtime of [hre, arc]) {
    const [deployer] = await runtime.ethers.getSigners();
    await (await deployer.sendTransaction({ to: verifier.wallet, value: 10n ** 19n })).wait();
  }
  for (const agent of [example, verifier]) await actOnAgent(deps, from, { agentId: agent.id, action: "start" });
  await waitUntilRunning(deps, from, [example.id, verifier.id]);
  const handle = async (view: AgentView, capabilities: string[]) => ({
    id: view.id,
    slug: view.slug!,
    address: view.wallet,
    capabilities,
    chains: await registeredChains(deps, view.wallet),
  });
  return {
    agent: await handle(example, [...summarySkill.capabilities]),
    verifierAgent: await handle(verifier, ["verifier"]),
  };
}

/** The chains a running agent's executor record declares, once its worker has registered it (up to 30 s). */
async function registeredChains(deps: RunningServer["deps"], wallet: string): Promise<string[]> {
  const { findExecutor } = await import("../server/db/repositories/executors");
  const giveUpAt = Date.now() + 30_000;
  for (;;) {
    const executor = await findExecutor(deps.db, wallet.toLowerCase());
    if (executor) return executor.supportedChains;
    if (Date.now() > giveUpAt) throw new Error(`hosted agent ${wallet} never registered as an executor`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Waits (up to 120 s) until the host reports every agent running; the error names the last status and error. */
async function waitUntilRunning(deps: RunningServer["deps"], owner: string, ids: string[]): Promise<void> {
  const { readHostedAgent } = await import("../server/domain/agents/hostedAgents");
  const giveUpAt = Date.now() + 120_000;
  for (;;) {
    const views = await Promise.all(ids.map((id) => readHostedAgent(deps, owner, id)));
    if (views.every((v) => v.status === "running")) return;
    if (Date.now() > giveUpAt) {
      const stuck = views.find((v) => v.status !== "running")!;
      throw new Error(`hosted agent ${stuck.slug} is ${stuck.status}: ${stuck.lastError ?? "no error recorded"}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * The devnet's service configuration: the environment, with the devnet's two chains (base, the posting chain, and
 * arc: CHAINS=base,arc, ARC_RPC_URL, ARC_NETWORK=localhost-arc), keys and files. The limits stay the
 * specification's (100 requests a minute per IP, unless RATE_IP_PER_WINDOW says otherwise): the web app and the
 * example agent follow the event stream instead of polling, so a newcomer meets the limits a deployment has.
 */
export function devnetServerConfig(
  env: NodeJS.ProcessEnv,
  where: {
    rpcUrl: string;
    arcRpcUrl?: string;
    dataDir: string;
    apiPort: number;
    outDir: string;
    deploymentsDir?: string;
  },
) {
  const { rpcUrl, arcRpcUrl, dataDir, apiPort, outDir, deploymentsDir } = where;
  return loadConfig({
    ...env,
    NETWORK: "localhost",
    ...(deploymentsDir ? { DEPLOYMENTS_DIR: deploymentsDir } : {}),
    DEVNET_RPC_URL: rpcUrl,
    POSTING_CHAIN: "base",
    ...(arcRpcUrl
      ? { CHAINS: "base,arc", ARC_RPC_URL: arcRpcUrl, ARC_NETWORK: DEVNET_ARC_NETWORK }
      : { CHAINS: "base" }),
    DATA_DIR: dataDir,
    API_HOST: "127.0.0.1",
    API_PORT: String(apiPort),
    DATABASE_URL: "",
    REDIS_URL: "",
    // The marketplace verifier is the escrow's `verifier` role: Hardhat account #2 on the devnet.
    VERIFIER_PRIVATE_KEY: hardhatWallet(2).privateKey,
    // The service's custody key (posters may wrap brief keys to it); a fixed, public devnet key.
    CUSTODY_PRIVATE_KEY: id("devnet custody key: public, never use elsewhere"),
    // Webhooks may call local receivers (127.0.0.1) on the devnet; a deployed service refuses non-public addresses.
    WEBHOOK_ALLOW_PRIVATE: env.WEBHOOK_ALLOW_PRIVATE ?? "true",
    // The web app's devnet wallet picker reads the demo accounts (GET /api/v1/devnet/wallets): devnet only.
    DEVNET_ACCOUNTS_FILE: path.join(outDir, "accounts.json"),
    // Prometheus metrics at /metrics on the API's port (a deployed service serves them on METRICS_PORT instead).
    METRICS: env.METRICS ?? "on",
    LOG_REQUESTS: env.LOG_REQUESTS ?? "off",
  });
}

/** Serves `runtime`'s in-process chain over JSON-RPC on hostname:port; `variable` names the port in errors. */
async function serveChain(
  runtime: HardhatRuntimeEnvironment,
  variable: string,
  hostname: string,
  port: number,
): Promise<{ server: JsonRpcServer; url: string }> {
  const server: JsonRpcServer = await hre.run(TASK_NODE_CREATE_SERVER, {
    hostname,
    port,
    provider: runtime.network.provider,
  });
  const listening = await server.listen().catch((error) => {
    throw isAddressInUse(error) ? portTaken(variable, hostname, port) : error;
  });
  return { server, url: `http://${listening.address}:${listening.port}` };
}

export async function startDevnet(options: DevnetOptions = {}): Promise<Devnet> {
  const { hostname = "127.0.0.1", port = 8545, apiPort = 8787, api = true } = options;
  const arcPort = options.arcPort ?? (port === 8545 ? 8546 : 0);
  const progress = options.onProgress ?? (() => undefined);
  const deploymentsDir = options.deploymentsDir ?? DEFAULT_DEPLOYMENTS_DIR;
  if (hre.network.name !== "hardhat") {
    throw new Error(`the devnet serves the in-process chain: run it without --network (got ${hre.network.name})`);
  }
  await assertPortFree("DEVNET_PORT", hostname, port);
  if (arcPort !== 0) await assertPortFree("DEVNET_ARC_PORT", hostname, arcPort);
  if (api && apiPort !== 0) await assertPortFree("DEVNET_API_PORT", "127.0.0.1", apiPort);
  const { deployAll } = await import("./deploy");
  const arc = secondChainRuntime(DEVNET_ARC_CHAIN_ID);
  const rpcServers: JsonRpcServer[] = [];
  const closeChains = async () => {
    for (const server of rpcServers.splice(0)) await server.close();
  };
  let chains: DevnetChain[];
  try {
    const served = [];
    for (const [runtime, variable, at] of [
      [hre, "DEVNET_PORT", port],
      [arc, "DEVNET_ARC_PORT", arcPort],
    ] as const) {
      const chain = await serveChain(runtime, variable, hostname, at);
      rpcServers.push(chain.server);
      served.push(chain.url);
    }
    progress(`Deploying the escrow, the agent factory and MockUSDC on a new base chain at ${served[0]}...`);
    const baseDeployment = await deployAll({ networkName: "localhost", deploymentsDir });
    progress(`Deploying the escrow, the agent factory and MockUSDC on a new arc chain at ${served[1]}...`);
    const arcDeployment = await deployAll({ networkName: DEVNET_ARC_NETWORK, deploymentsDir }, arc);
    chains = [
      { name: "base", rpcUrl: served[0], chainId: baseDeployment.book.chainId, deployment: baseDeployment },
      { name: "arc", rpcUrl: served[1], chainId: arcDeployment.book.chainId, deployment: arcDeployment },
    ];
  } catch (error) {
    await closeChains();
    throw error;
  }
  const [base, arcChain] = chains;
  const deployment = base.deployment;

  const outDir = options.outDir ?? path.join(__dirname, "..", ".devnet");
  const dataDir = options.dataDir ?? path.join(__dirname, "..", "data");
  let server: RunningServer | undefined;
  let agent: HostedAgentHandle | undefined;
  let verifierAgent: HostedAgentHandle | undefined;
  let mcpConfig: McpClientConfig | undefined;
  const accounts: DemoAccount[] = [];
  if (api) {
    const { startServer } = await import("../server/main");
    const { insertApiKey } = await import("../server/db/repositories/apiKeys");
    const { newApiKey } = await import("../server/domain/credentials");
    const config = devnetServerConfig(process.env, {
      rpcUrl: base.rpcUrl,
      arcRpcUrl: arcChain.rpcUrl,
      dataDir,
      apiPort,
      outDir,
      deploymentsDir,
    });
    // Every devnet run is a new chain: the previous run's index would be refused, so start it afresh.
    fs.rmSync(config.sqliteFile, { force: true });
    for (const suffix of ["-wal", "-shm"]) fs.rmSync(config.sqliteFile + suffix, { force: true });
    progress(`Starting the API and its indexer on 127.0.0.1:${apiPort} (chains base and arc)...`);
    try {
      // Both chains' in-process providers (the server would otherwise reach them over their RPC URLs).
      server = await startServer({ config, provider: hre.ethers.provider, providers: { arc: arc.ethers.provider } });
    } catch (error) {
      await closeChains();
      throw isAddressInUse(error) ? portTaken("DEVNET_API_PORT", "127.0.0.1", apiPort) : error;
    }

    progress(`Funding the demo accounts (${DEMO_ROLES.join(", ")}) on both chains and giving each an API key...`);
    for (const [i, role] of DEMO_ROLES.entries()) {
      const wallet = hardhatWallet(FIRST_DEMO_INDEX + i);
      // Gas: every Hardhat account starts with 10000 ETH on both chains; test USDC from each chain's MockUSDC.
      for (const chain of chains) await (await chain.deployment.mockUsdc!.mint(wallet.address, DEMO_USDC)).wait();
      const { key, keyHash, prefix } = newApiKey();
      await insertApiKey(server.deps.db, {
        address: wallet.address.toLowerCase(),
        keyHash,
        prefix,
        label: `devnet ${role}`,
        createdAt: Math.floor(Date.now() / 1000),
      });
      accounts.push({ role, address: wallet.address, privateKey: wallet.privateKey, apiKey: key });
    }
    // Last (docs read [0] as the poster): the escrow admin (Hardhat account #0, the deployer): resolves disputes on the devnet (docs/api.md, "Devnet").
    const admin = hardhatWallet(0);
    if (admin.address.toLowerCase() === deployment.book.admin.toLowerCase()) {
      const { key, keyHash, prefix } = newApiKey();
      await insertApiKey(server.deps.db, {
        address: admin.address.toLowerCase(),
        keyHash,
        prefix,
        label: "devnet admin",
        createdAt: Math.floor(Date.now() / 1000),
      });
      accounts.push({
        role: "admin",
        address: admin.address,
        privateKey: admin.privateKey,
        apiKey: key,
        warning: ADMIN_WARNING,
      });
    }
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(path.join(outDir, "accounts.json"), JSON.stringify(accounts, null, 2) + "\n", { mode: 0o600 });
    mcpConfig = mcpClientConfig(server.url, accounts.find((a) => a.role === "agent-2")!.apiKey);
    fs.writeFileSync(path.join(outDir, "mcp.json"), JSON.stringify(mcpConfig, null, 2) + "\n", { mode: 0o600 });

    // The hosted agents of the demo owner agent-1: the example agent takes public tasks it can do and delivers
    // them; the verifier agent judges agent-mode tasks that name it.
    progress("Starting the hosted example agent and verifier agent...");
    try {
      ({ agent, verifierAgent } = await startHostedAgents(
        server,
        hardhatWallet(FIRST_DEMO_INDEX + DEMO_ROLES.indexOf("agent-1")),
        arc,
      ));
    } catch (error) {
      await server.close();
      await closeChains();
      throw error;
    }
  }
  return {
    rpcUrl: base.rpcUrl,
    arcRpcUrl: arcChain.rpcUrl,
    chains,
    apiUrl: server?.url,
    mcpConfig,
    deployment,
    deploymentsDir,
    accounts,
    server,
    agent,
    verifierAgent,
    verifierChains: [...(server?.deps.verifiers?.keys() ?? [])],
    close: async () => {
      await server?.close();
      await closeChains();
    },
  };
}

/** Said on every start: nothing survives a restart, so saved API keys and CLI logins stop working. */
export const NEW_CHAIN_NOTICE =
  "Restart       every start is a new chain with new keys: tasks, API keys and `market login` sessions of a previous run are gone (run `market login` again)";

/** What the devnet prints on start: its endpoints, the MCP client configuration of a demo key, the accounts. */
export function devnetSummary(devnet: Devnet): string[] {
  const { book } = devnet.deployment;
  const lines: string[] = [];
  for (const chain of devnet.chains) {
    const posting = chain.name === "base" ? ", the posting chain" : "";
    lines.push(`Chain ${chain.name.padEnd(7)} ${chain.rpcUrl} (chain id ${chain.chainId}${posting})`);
  }
  lines.push(`Web app       ${devnet.apiUrl}/  (sign in with the devnet wallet: Settings)`);
  lines.push(`API           ${devnet.apiUrl}  (OpenAPI: ${devnet.apiUrl}/api/v1/openapi.json)`);
  for (const chain of devnet.chains) {
    const { book: on } = chain.deployment;
    const label = (what: string) => `${chain.name} ${what}`.padEnd(13);
    lines.push(`${label("escrow")} ${on.escrow.proxy} (implementation ${on.escrow.implementation})`);
    lines.push(`${label("factory")} ${on.agentFactory.proxy}`);
    lines.push(`${label("token")} ${on.token.address} (${on.token.symbol}, ${on.token.decimals} decimals)`);
    lines.push(`${label("book")} ${addressBookPath(on.network, devnet.deploymentsDir)}`);
  }
  lines.push(`Admin ${book.admin}  Treasury ${book.treasury}  Verifier ${book.verifier}  Fee ${book.feeBps} bps`);
  lines.push(
    `MCP           ${devnet.apiUrl}/mcp  (API key required; client configuration for agent-2 in .devnet/mcp.json:)`,
  );
  lines.push(`              ${JSON.stringify(devnet.mcpConfig)}`);
  lines.push(`A2A           ${devnet.apiUrl}/a2a/v1  (card: ${devnet.apiUrl}/.well-known/agent-card.json)`);
  lines.push(
    `Accounts      .devnet/accounts.json (${devnet.accounts.map((a) => a.role).join(", ")}: address, key, API key)`,
  );
  lines.push(`              admin: ${ADMIN_WARNING}`);
  lines.push(`Push          ${devnet.apiUrl}/api/v1/events (SSE) and ${devnet.apiUrl}/api/v1/webhooks`);
  lines.push(`Operations    ${devnet.apiUrl}/metrics, ${devnet.apiUrl}/health/ready (docs/operations.md)`);
  const on = (agent?: HostedAgentHandle) => (agent ? `, on ${agent.chains.join(" and ")}` : "");
  lines.push(
    `Agent         example agent ${devnet.agent?.address} (hosted, owner agent-1${on(devnet.agent)}) takes public tasks needing ${devnet.agent?.capabilities.join(" or ")}`,
  );
  lines.push(
    `              verifier agent ${devnet.verifierAgent?.address} (hosted, owner agent-1${on(devnet.verifierAgent)}): GET ${devnet.apiUrl}/api/v1/a2a/executors?role=verifier`,
  );
  lines.push(
    devnet.verifierChains.length > 0
      ? `Verifier      the marketplace verifier signs assignments and auto/manual verdicts on ${devnet.verifierChains.join(" and ")}, with its own nonces and intents on each`
      : `Verifier      no marketplace verifier runs (no VERIFIER_PRIVATE_KEY)`,
  );
  lines.push(`Rate limits   as deployed: 100 requests a minute per IP (the web app follows the event stream)`);
  lines.push(`Faucet        market faucet  (test USDC and gas for any wallet on this devnet)`);
  lines.push(`Wallets       every demo wallet holds test USDC and gas on both chains (same keys, same addresses)`);
  lines.push(NEW_CHAIN_NOTICE);
  return lines;
}

async function main() {
  const ports = {
    port: devnetPort("DEVNET_PORT", process.env.DEVNET_PORT, 8545),
    arcPort: devnetPort("DEVNET_ARC_PORT", process.env.DEVNET_ARC_PORT, 8546),
    apiPort: devnetPort("DEVNET_API_PORT", process.env.DEVNET_API_PORT, 8787),
  };
  // A taken port ends the devnet before the slow steps.
  await assertPortFree("DEVNET_PORT", "127.0.0.1", ports.port);
  await assertPortFree("DEVNET_ARC_PORT", "127.0.0.1", ports.arcPort);
  await assertPortFree("DEVNET_API_PORT", "127.0.0.1", ports.apiPort);
  // `npm run devnet` is `hardhat run --no-compile`: the compile happens here, announced (the first takes minutes).
  console.log("Compiling the contracts (the first start compiles them all and may take a few minutes)...");
  await hre.run(TASK_COMPILE, { quiet: true });
  if (!ensureWebBuilt((line) => console.log(line))) console.log("The web app is built (web/dist is up to date).");
  console.log("Starting two new chains, base and arc: every start is a new chain with new keys.");
  const devnet = await startDevnet({ ...ports, onProgress: (line) => console.log(line) });
  for (const line of devnetSummary(devnet)) console.log(line);
  console.log("Running. Stop with Ctrl-C.");
  const stop = async (signal: string) => {
    console.log(`\n${signal}: stopping the devnet`);
    await devnet.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
  await new Promise(() => undefined);
}

if (require.main === module) {
  main().catch((error) => {
    // End at once: a listening chain server would otherwise keep the process (and the terminal) waiting.
    if (error instanceof DevnetPortError) console.error(`devnet: ${error.message}`);
    else console.error(error);
    process.exit(1);
  });
}
