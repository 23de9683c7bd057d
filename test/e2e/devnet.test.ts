/**
 * The devnet as a newcomer meets it: startDevnet on free ports, then the MCP URL and client configuration it prints
 * and writes (.devnet/mcp.json) used as-is by the official MCP client, and the A2A card found by the official A2A client;
 * the admin in accounts.json; /metrics and /health/ready on the API's port; and `npm run devnet` (a child process) on a taken port, which ends at once with one line
 * naming the variable.
 */
import { spawn } from "node:child_process";
import net from "node:net";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Contract, JsonRpcProvider, Wallet } from "ethers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ClientFactory } from "@a2a-js/sdk/client";
import {
  ADMIN_WARNING,
  devnetSummary,
  startDevnet,
  type DemoAccount,
  type McpClientConfig,
} from "../../scripts/devnet";
import { freePort } from "../helpers/api";
import { addressBookPath } from "../../server/chain/addressBook";
import { scrape } from "../helpers/prometheus";

describe("devnet: protocol endpoints a newcomer connects to", () => {
  it("writes an MCP client configuration that the official MCP client uses as-is, and serves the A2A card", async function () {
    this.timeout(120_000);
    const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "devnet-out-"));
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "devnet-data-"));
    const deploymentsDir = fs.mkdtempSync(path.join(os.tmpdir(), "devnet-deployments-"));
    const devnet = await startDevnet({
      port: await freePort(),
      arcPort: await freePort(),
      apiPort: await freePort(),
      outDir,
      dataDir,
      deploymentsDir,
    });
    try {
      // Two chains, base (31337) and arc (31338), each serving JSON-RPC with its own escrow and MockUSDC, and every
      // demo wallet holding test USDC on both; the devnet prints both RPC URLs.
      const demo = JSON.parse(fs.readFileSync(path.join(outDir, "accounts.json"), "utf8")) as DemoAccount[];
      expect(devnet.chains.map((c) => [c.name, c.chainId])).to.deep.equal([
        ["base", 31337],
        ["arc", 31338],
      ]);
      expect(devnet.rpcUrl).to.equal(devnet.chains[0].rpcUrl);
      expect(devnet.arcRpcUrl).to.equal(devnet.chains[1].rpcUrl).and.not.equal(devnet.rpcUrl);
      for (const chain of devnet.chains) {
        const provider = new JsonRpcProvider(chain.rpcUrl, undefined, { staticNetwork: true });
        expect(Number((await provider.getNetwork()).chainId)).to.equal(chain.chainId);
        const { book } = chain.deployment;
        expect(book.chainId).to.equal(chain.chainId);
        expect(await provider.getCode(book.escrow.proxy)).to.not.equal("0x");
        const token = new Contract(
          book.token.address,
          ["function balanceOf(address) view returns (uint256)"],
          provider,
        );
        for (const account of demo.filter((a) => a.role !== "admin")) {
          // 100000 test USDC each; on base, agent-1 has paid the deploy fee of its two hosted agents.
          const fees = chain.name === "base" && account.role === "agent-1" ? 2n * 10n ** 6n : 0n;
          expect(await token.balanceOf(account.address), `${account.role} on ${chain.name}`).to.equal(
            100_000n * 10n ** 6n - fees,
          );
          expect(await provider.getBalance(account.address)).to.be.greaterThan(0n);
        }
        provider.destroy();
        expect(devnetSummary(devnet)).to.include(
          `Chain ${chain.name.padEnd(7)} ${chain.rpcUrl} (chain id ${chain.chainId}${chain.name === "base" ? ", the posting chain" : ""})`,
        );
      }
      expect(JSON.parse(fs.readFileSync(addressBookPath("localhost-arc", deploymentsDir), "utf8")).chainId).to.equal(
        31338,
      );
      // The API serves both (CHAINS=base,arc): a gateway per chain, each with its chain's address book.
      const gateways = devnet.server!.deps.chains;
      expect([...gateways.keys()].sort()).to.deep.equal(["arc", "base"]);
      expect(gateways.get("arc")!.book.chainId).to.equal(31338);
      expect(gateways.get("arc")!.book.escrow.proxy).to.equal(devnet.chains[1].deployment.book.escrow.proxy);
      expect(gateways.get("base")!.book.chainId).to.equal(31337);
      const config = JSON.parse(fs.readFileSync(path.join(outDir, "mcp.json"), "utf8")) as McpClientConfig;
      expect(config).to.deep.equal(devnet.mcpConfig);
      const server = config.mcpServers["escrow-market"];
      expect(server.url).to.equal(`${devnet.apiUrl}/mcp`);
      // What `npm run devnet` prints: the MCP URL, then the same client configuration (URL and key header).
      const printed = devnetSummary(devnet);
      const mcpLine = printed.findIndex((line) => line.startsWith(`MCP           ${devnet.apiUrl}/mcp `));
      expect(mcpLine, printed.join("\n")).to.be.greaterThan(-1);
      expect(JSON.parse(printed[mcpLine + 1].trim())).to.deep.equal(config);
      // ... and where a newcomer goes next: the web app, the push endpoints, the admin key's warning.
      expect(printed, printed.join("\n")).to.include.members([
        `Web app       ${devnet.apiUrl}/  (sign in with the devnet wallet: Settings)`,
        `Push          ${devnet.apiUrl}/api/v1/events (SSE) and ${devnet.apiUrl}/api/v1/webhooks`,
        `              admin: ${ADMIN_WARNING}`,
        `Operations    ${devnet.apiUrl}/metrics, ${devnet.apiUrl}/health/ready (docs/operations.md)`,
      ]);
      // The operator's endpoints: Prometheus metrics on the API's own port, and readiness once the index is at the head.
      // Each chain's index and verifier have their own series, and readiness checks each chain.
      const scraped = await scrape(`${devnet.apiUrl}/metrics`);
      expect(scraped.has("market_indexer_checkpoint_block", { chain: "base", network: "localhost" })).to.equal(true);
      expect(scraped.has("market_indexer_checkpoint_block", { chain: "arc", network: "localhost-arc" })).to.equal(true);
      for (const chain of ["base", "arc"]) {
        expect(scraped.has("market_verifier_intents", { chain, state: "confirmed" }), chain).to.equal(true);
      }
      expect(scraped.value("market_hosted_agents", { state: "running" })).to.be.at.least(0);
      const ready = await fetch(`${devnet.apiUrl}/health/ready`);
      expect(ready.status, await ready.clone().text()).to.equal(200);
      const readyChains = (await ready.json()).data.chains;
      expect(Object.keys(readyChains).sort()).to.deep.equal(["arc", "base"]);
      // The marketplace verifier signs on both chains: one verifier per chain, each with that chain's escrow role.
      expect(devnet.verifierChains).to.deep.equal(["base", "arc"]);
      for (const chain of devnet.chains) {
        const verifier = devnet.server!.deps.verifiers!.get(chain.name)!;
        expect(verifier.chain).to.equal(chain.name);
        expect(verifier.address).to.equal(chain.deployment.book.verifier);
      }
      expect(printed).to.include(
        "Verifier      the marketplace verifier signs assignments and auto/manual verdicts on base and arc, with its own nonces and intents on each",
      );
      expect(server.headers["X-API-Key"]).to.match(/^sk_[0-9a-f]{64}$/);
      const client = new Client({ name: "newcomer", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } }),
      );
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).to.include.members(["browse_tasks", "accept_task", "build_task"]);
      const status = (await client.callTool({ name: "platform_status", arguments: {} })) as { isError?: boolean };
      expect(status.isError).to.not.equal(true);
      await client.close();

      const a2a = await new ClientFactory().createFromUrl(devnet.apiUrl!);
      expect((await a2a.getAgentCard()).name).to.equal("Escrow task marketplace");

      // The escrow admin is in accounts.json (last; [0] stays the poster), flagged as a public test key.
      const accounts = JSON.parse(fs.readFileSync(path.join(outDir, "accounts.json"), "utf8")) as DemoAccount[];
      expect(accounts[0].role).to.equal("poster");
      const admin = accounts.find((a) => a.role === "admin")!;
      expect(admin.address.toLowerCase()).to.equal(devnet.deployment.book.admin.toLowerCase());
      expect(admin.warning).to.equal(ADMIN_WARNING);
      expect(new Wallet(admin.privateKey).address).to.equal(admin.address);
      // Its key passes the escrow's admin check over the devnet's RPC (docs/api.md's dispute recipe): a ruling on a
      // task that is not disputed fails on the status, not on NotAdmin as any other wallet's does.
      const rpc = new JsonRpcProvider(devnet.rpcUrl);
      const escrow = devnet.deployment.escrow;
      const asAdmin = escrow.connect(new Wallet(admin.privateKey, rpc));
      await expect(asAdmin.resolveDispute.staticCall(1, true)).to.be.revertedWithCustomError(escrow, "InvalidStatus");
      const poster = accounts.find((a) => a.role === "poster")!;
      const asPoster = escrow.connect(new Wallet(poster.privateKey, rpc));
      await expect(asPoster.resolveDispute.staticCall(1, true)).to.be.revertedWithCustomError(escrow, "NotAdmin");
      rpc.destroy();

      // The hosted agents of the demo owner agent-1 run in the service's agent host: the example agent (agent-1's
      // wallet, skill summary) and the verifier agent, which role=verifier lists by its display name.
      const owner = accounts.find((a) => a.role === "agent-1")!;
      const mine = await fetch(`${devnet.apiUrl}/api/v1/agents`, { headers: { "X-API-Key": owner.apiKey } });
      const { agents } = (await mine.json()).data as { agents: { slug: string; status: string; wallet: string }[] };
      expect(agents.map((a) => [a.slug, a.status]).sort()).to.deep.equal([
        ["devnet-verifier", "running"],
        ["example-agent", "running"],
      ]);
      expect(agents.find((a) => a.slug === "example-agent")!.wallet).to.equal(owner.address.toLowerCase());
      const listed = (
        (await (await fetch(`${devnet.apiUrl}/api/v1/a2a/executors?role=verifier`)).json()).data.executors as {
          address: string;
          name?: string;
        }[]
      ).map((e) => [e.address, e.name]);
      expect(listed).to.deep.equal([[devnet.verifierAgent!.address.toLowerCase(), "Devnet verifier"]]);
      // The summary says on which chains each hosted agent settles: what its executor record declares.
      const executors = (await (await fetch(`${devnet.apiUrl}/api/v1/a2a/executors`)).json()).data.executors as {
        address: string;
        supportedChains: string[];
      }[];
      for (const agent of [devnet.agent!, devnet.verifierAgent!]) {
        const record = executors.find((e) => e.address === agent.address.toLowerCase())!;
        expect(agent.chains, agent.slug).to.deep.equal(record.supportedChains);
      }
      const chainsOf = (agent: { chains: string[] }) => agent.chains.join(" and ");
      expect(printed.join("\n")).to.include(
        `verifier agent ${devnet.verifierAgent!.address} (hosted, owner agent-1, on ${chainsOf(devnet.verifierAgent!)})`,
      );
      expect(printed.join("\n")).to.include(
        `example agent ${devnet.agent!.address} (hosted, owner agent-1, on ${chainsOf(devnet.agent!)})`,
      );
    } finally {
      await devnet.close();
      fs.rmSync(outDir, { recursive: true, force: true });
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(deploymentsDir, { recursive: true, force: true });
    }
  });
});

/** Runs `npm run devnet`'s script as a child process with `env`; resolves with its exit code and output. */
function runDevnet(env: Record<string, string>, timeoutMs = 150_000) {
  const child = spawn(path.join("node_modules", ".bin", "hardhat"), ["run", "--no-compile", "scripts/devnet.ts"], {
    cwd: path.join(__dirname, "..", ".."),
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Holds `port` on 127.0.0.1 as another program would. */
async function occupy(port: number): Promise<net.Server> {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(port, "127.0.0.1", resolve));
  return holder;
}

describe("devnet: a taken or invalid port ends it at once, naming the variable", function () {
  this.timeout(180_000);

  for (const variable of ["DEVNET_PORT", "DEVNET_ARC_PORT", "DEVNET_API_PORT"]) {
    it(`exits non-zero with one line naming ${variable} when that port is taken`, async () => {
      const taken = await freePort();
      const holder = await occupy(taken);
      try {
        const ports: Record<string, string> = {
          DEVNET_PORT: String(await freePort()),
          DEVNET_ARC_PORT: String(await freePort()),
          DEVNET_API_PORT: String(await freePort()),
          [variable]: String(taken),
        };
        const run = await runDevnet(ports);
        expect(run.code, run.stderr).to.equal(1);
        const lines = run.stderr.trim().split("\n");
        expect(lines, run.stderr).to.deep.equal([
          `devnet: ${variable}=${taken}: port ${taken} on 127.0.0.1 is already in use; stop what holds it or set ${variable} to a free port`,
        ]);
        expect(run.stdout).to.not.include("Running.");
        // Before the compile: a taken port is said before any slow step starts.
        expect(run.stdout).to.not.include("Compiling");
      } finally {
        await new Promise<void>((r) => holder.close(() => r()));
      }
    });
  }

  it("exits non-zero naming DEVNET_API_PORT when it is not a port", async () => {
    const run = await runDevnet({
      DEVNET_PORT: String(await freePort()),
      DEVNET_ARC_PORT: String(await freePort()),
      DEVNET_API_PORT: "80x",
    });
    expect(run.code).to.equal(1);
    expect(run.stderr.trim()).to.equal("devnet: DEVNET_API_PORT=80x is not a port (a whole number from 1 to 65535)");
  });
});
