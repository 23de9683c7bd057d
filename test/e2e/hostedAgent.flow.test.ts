/**
 * A hosted agent as its owner and a poster meet it, over HTTP against the whole service (startServer: API, indexer,
 * marketplace verifier and the agent host in one process) on the Hardhat chain served over JSON-RPC, with plain
 * ethers wallets: the owner pays the deploy fee, creates the agent, installs skills and starts it; a poster posts a
 * public task it can do and watches it accepted, delivered, verified and paid to the agent's own wallet. Then the
 * agent's worker is killed mid-task (its webhook skill's endpoint holding the first call) and restarted, and the task
 * is delivered exactly once; then the whole service restarts with the agent running and the agent works again.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { JsonRpcProvider, Wallet } from "ethers";
import { deployEscrowFixture, STATUS, USDC } from "../helpers/fixtures";
import { freePort } from "../helpers/api";
import { serveChain, freshWallet, type ServedChain } from "../helpers/rpc";
import { verifierPrivateKey } from "../helpers/keys";
import { waitFor } from "../helpers/agentMarket";
import { loadConfig } from "../../server/config";
import { startServer, type RunningServer } from "../../server/main";
import { insertApiKey } from "../../server/db/repositories/apiKeys";
import { newApiKey } from "../../server/domain/credentials";
import { webhookSignature } from "../../server/domain/events/webhooks";
import { MarketApi, postTask, subscribe, type MarketEvent } from "../../client/sdk/index";

const SIGNING_SECRET = "owner-webhook-secret-0123456789";

/** The owner's program behind the webhook skill: verifies the signature; holds the first call it gets for ever. */
function ownerEndpoint() {
  const calls: { taskHash: string; brief: string; attempt: number }[] = [];
  let holdNext = true;
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(req.headers["x-market-signature"]));
      const expected = match && webhookSignature(SIGNING_SECRET, Number(match[1]), body);
      if (!match || !crypto.timingSafeEqual(Buffer.from(match[2]), Buffer.from(expected!))) {
        res.writeHead(401).end();
        return;
      }
      const job = JSON.parse(body);
      calls.push(job);
      if (holdNext) {
        holdNext = false;
        held.push(res); // never answered: the worker is killed while it waits
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ result: { translation: String(job.brief).toUpperCase(), by: "owner's program" } }));
    });
  });
  return {
    calls,
    async start(): Promise<string> {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
    },
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("e2e: a hosted agent from the deploy fee to paid work, through a worker crash and a service restart", () => {
  let chain: ServedChain;
  let server: RunningServer | undefined;
  let endpoint: ReturnType<typeof ownerEndpoint>;
  let dataDir: string;
  const pgSchema = process.env.DATABASE_URL ? `t_${crypto.randomBytes(6).toString("hex")}` : undefined;

  afterEach(async () => {
    await server?.close();
    server = undefined;
    await endpoint?.close();
    await chain?.close();
    if (pgSchema) {
      const { createDb } = await import("../../server/db/knex");
      const db = createDb({ databaseUrl: process.env.DATABASE_URL });
      await db.raw(`drop schema if exists "${pgSchema}" cascade`);
      await db.destroy();
    }
  });

  it("pays the fee, creates and starts the agent, and its work is paid to its own wallet, exactly once", async function () {
    this.timeout(240_000);
    const fx = await loadFixture(deployEscrowFixture);
    chain = await serveChain();
    endpoint = ownerEndpoint();
    const webhookUrl = await endpoint.start();
    const deploymentsDir = fs.mkdtempSync(path.join(os.tmpdir(), "hosted-e2e-deployments-"));
    fs.writeFileSync(path.join(deploymentsDir, "hardhat.json"), JSON.stringify(fx.book));
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "hosted-e2e-data-"));
    const config = loadConfig({
      NETWORK: "hardhat",
      DEPLOYMENTS_DIR: deploymentsDir,
      DATA_DIR: dataDir,
      DEVNET_RPC_URL: chain.url, // the agents' workers sign over JSON-RPC, as on the devnet
      API_PORT: String(await freePort()),
      LOG_LEVEL: "silent",
      INDEXER_POLL_MS: "20",
      VERIFIER_POLL_MS: "50",
      VERIFIER_PRIVATE_KEY: verifierPrivateKey(),
      DEPLOY_FEE_REQUIRED: "true",
      WEBHOOK_ALLOW_PRIVATE: "true", // the owner's endpoint is on 127.0.0.1 in this test
      RATE_IP_PER_WINDOW: "10000",
      REDIS_URL: process.env.REDIS_URL ?? "",
      RATE_LIMIT_PREFIX: `e2e:${crypto.randomBytes(6).toString("hex")}:`,
      DATABASE_URL: process.env.DATABASE_URL ?? "",
      ...(pgSchema ? { DATABASE_SCHEMA: pgSchema } : {}),
    });
    server = await startServer({ config, provider: ethers.provider });
    const url = server.url;

    // The owner and the poster: plain wallets on the served chain, each with an API key. Their provider does not
    // cache answers (ethers keeps one for 250 ms), so back-to-back transactions read their real nonce.
    const rpc = new JsonRpcProvider(chain.url, undefined, { cacheTimeout: -1 });
    const owner = await freshWallet(rpc);
    const poster = await freshWallet(rpc);
    await (await fx.usdc.mint(owner.address, USDC(10))).wait();
    await (await fx.usdc.mint(poster.address, USDC(100))).wait();
    const keyOf = async (wallet: Wallet) => {
      const { key, keyHash, prefix } = newApiKey();
      await insertApiKey(server!.deps.db, {
        address: wallet.address.toLowerCase(),
        keyHash,
        prefix,
        label: "e2e",
        createdAt: Math.floor(Date.now() / 1000),
      });
      return key;
    };
    const ownerKey = await keyOf(owner);
    const posterKey = await keyOf(poster);
    const call = async (method: string, route: string, body?: unknown) => {
      const res = await fetch(`${url}${route}`, {
        method,
        headers: { "X-API-Key": ownerKey, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const json = await res.json();
      return { status: res.status, json, text: JSON.stringify(json) };
    };

    // 1. The deploy fee, paid with the transactions the service built (approve exactly the fee, deployAgent(0)).
    const terms = (await call("GET", "/api/v1/agents/deploy-fee")).json.data;
    expect(terms.required).to.equal(true);
    expect(terms.credits).to.equal(0);
    await (await owner.sendTransaction(terms.transactions.approve)).wait();
    const paid = await (await owner.sendTransaction(terms.transactions.deployAgent)).wait();

    // 2. The agent, with the payment verified inline and spent; 3. its skills (the webhook's secret sealed).
    const created = await call("POST", "/api/v1/agents", {
      slug: "e2e-agent",
      name: "E2E agent",
      deployFeeTxHash: paid!.hash,
    });
    expect(created.status, created.text).to.equal(201);
    const agent = created.json.data;
    expect((await call("GET", "/api/v1/agents/deploy-fee")).json.data.credits).to.equal(0);
    for (const install of [
      { skill: "summary" },
      {
        skill: "webhook",
        config: { url: webhookUrl, capabilities: ["translate"], timeoutMs: 120_000 },
        secrets: { signingSecret: SIGNING_SECRET },
      },
    ]) {
      const installed = await call("POST", `/api/v1/agents/${agent.id}/skills`, install);
      expect(installed.status, installed.text).to.equal(200);
    }
    // Gas for the agent's own transactions, from its owner.
    await (await owner.sendTransaction({ to: agent.wallet, value: ethers.parseEther("1") })).wait();

    // 4. Started: the host runs it in a worker.
    const started = await call("POST", "/api/v1/agents/action", { agentId: agent.id, action: "start" });
    expect(started.status, started.text).to.equal(200);
    const status = async () => (await call("GET", `/api/v1/agents/${agent.id}`)).json.data.status as string;
    await waitFor(async () => (await status()) === "running", 90_000, "the agent to run");

    // 5. A poster posts a public task it can do and follows it on its event stream.
    const posterApi = new MarketApi({ baseUrl: url, apiKey: posterKey });
    const seen: MarketEvent[] = [];
    const stream = subscribe(posterApi, (event) => void seen.push(event));
    const usdcOf = async (address: string) => fx.usdc.balanceOf(address);
    const post = (brief: string, capability: string, criteria: Record<string, unknown>) =>
      postTask(
        {
          brief,
          privacy: "public",
          amount: USDC(10),
          verificationMode: "auto",
          verificationCriteria: criteria,
          requiredCapabilities: [capability],
        },
        { api: posterApi, signer: poster },
      );
    const paidOnChain = (id: number) => async () => Number((await fx.escrow.getTask(id)).status) === STATUS.Completed;
    const fee = (USDC(10) * (await fx.escrow.feeBps())) / 10_000n;
    try {
      const before = await usdcOf(agent.wallet);
      const first = await post("Summarise the hosted agent. It works for its owner.", "summarise", {
        required_fields: ["summary", "wordCount"],
      });
      await waitFor(paidOnChain(first.onChainTaskId), 90_000, "the first task to be paid");
      expect((await fx.escrow.getTask(first.onChainTaskId)).worker.toLowerCase()).to.equal(agent.wallet);
      expect((await usdcOf(agent.wallet)) - before).to.equal(USDC(10) - fee);
      await waitFor(
        async () => seen.some((e) => e.type === "task.settled" && e.data.taskHash === first.taskHash),
        20_000,
        "the settled event",
      );
      const mine = seen.filter((e) => e.data.taskHash === first.taskHash).map((e) => e.type);
      expect(mine).to.include.members(["task.assigned", "task.submitted", "task.verdict", "task.settled"]);
      const view = (await call("GET", `/api/v1/agents/${agent.id}`)).json.data;
      expect(view.earnings).to.deep.include({ paidTasks: 1, amount_raw: (USDC(10) - fee).toString() });

      // 6. Its worker killed while the owner's program holds the skill's call: restarted, the task delivered once.
      const second = await post("translate this line", "translate", { required_fields: ["translation"] });
      await waitFor(async () => endpoint.calls.length === 1, 60_000, "the webhook's first call");
      const worker = server.agentHost!.workerOf(agent.id)!;
      await worker.terminate();
      await waitFor(async () => (await status()) === "crashed", 20_000, "status crashed");
      await waitFor(paidOnChain(second.onChainTaskId), 120_000, "the second task to be paid after the restart");
      const onChain = await fx.escrow.getTask(second.onChainTaskId);
      expect(Number(onChain.submissionAttempts), "delivered exactly once").to.equal(1);
      expect(endpoint.calls.map((c) => c.taskHash)).to.deep.equal([second.taskHash, second.taskHash]);
      const afterCrash = (await call("GET", `/api/v1/agents/${agent.id}`)).json.data;
      expect(afterCrash.status).to.equal("running");
      expect(afterCrash.restarts).to.equal(1);
      const read = await posterApi.task(second.taskHash);
      expect(read.resultData).to.deep.equal({ translation: "TRANSLATE THIS LINE", by: "owner's program" });
    } finally {
      await stream.close();
    }

    // 7. The whole service restarts with the agent running: the new process's host runs it again.
    await server.close();
    server = await startServer({ config, provider: ethers.provider });
    await waitFor(async () => (await status()) === "running", 90_000, "the agent to run after the restart");
    const third = await post("Summarise again. The service restarted.", "summarise", { required_fields: ["summary"] });
    await waitFor(paidOnChain(third.onChainTaskId), 90_000, "the third task to be paid");
    expect((await fx.escrow.getTask(third.onChainTaskId)).worker.toLowerCase()).to.equal(agent.wallet);
    const logs = (await call("GET", `/api/v1/agents/${agent.id}/logs?limit=200`)).json.data.logs as {
      message: string;
    }[];
    expect(logs.some((l) => /crash/.test(l.message))).to.equal(true);
    rpc.destroy();
  });
});
