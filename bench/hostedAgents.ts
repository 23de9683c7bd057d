/**
 * Hosted agents benchmark: `npx hardhat run bench/hostedAgents.ts` (npm run bench:agents).
 *
 * On the in-process Hardhat network served over HTTP, with a test API (SQLite in a temporary folder, the marketplace
 * verifier and the auto verifier) and an agent host in this process:
 *
 *   1. Memory at idle: BENCH_AGENTS (default 10) hosted agents with one skill, started and waiting for work. Prints
 *      the process RSS before and after (the delta divided by the agents: the cost of one running agent, worker
 *      thread and runtime included) and each worker's own V8 heap (used and total, averaged).
 *   2. Throughput: one agent, BENCH_TASKS (default 20) public auto tasks posted while it is paused, then resumed:
 *      the time from resuming to the last delivery and to the last payment, as tasks per minute.
 *
 * Workers act with API keys of their wallets (hosted tokens once the API accepts them). Prints figures, asserts
 * nothing, exits 0 unless it fails to run.
 */
import { ethers, network } from "hardhat";
import { deployEscrowFixture, USDC } from "../test/helpers/fixtures";
import { startTestApi } from "../test/helpers/api";
import { waitFor } from "../test/helpers/agentMarket";
import { verifierPrivateKey } from "../test/helpers/keys";
import { freshWallet, serveChain } from "../test/helpers/rpc";
import { insertHostedAgent } from "../test/helpers/hostedAgentRows";
import { AutoVerifier } from "../server/domain/marketplace/autoVerifier";
import { AgentHost } from "../server/hosting/host";
import { silentLogger } from "../server/logger";
import { MarketApi, postTask } from "../client/sdk/index";

const AGENTS = Math.max(1, Number(process.env.BENCH_AGENTS ?? 10));
const TASKS = Math.max(1, Number(process.env.BENCH_TASKS ?? 20));
const MB = 1024 * 1024;
const SKILL = process.env.BENCH_SKILL ?? "summary";

async function main() {
  if (network.name !== "hardhat") throw new Error("run on the in-process hardhat network");
  const fixture = await deployEscrowFixture();
  const chain = await serveChain();
  const api = await startTestApi(fixture.book, {
    VERIFIER_PRIVATE_KEY: verifierPrivateKey(),
    // One poster posts every task from one address: the per-IP budget would throttle the bench, not the agent.
    RATE_IP_PER_WINDOW: "100000",
    RATE_WALLET_FAMILY_PER_MINUTE: "100000",
    RATE_IP_POSTING_PER_MINUTE: "100000",
  });
  const auto = new AutoVerifier(api.deps, { pollMs: 50 });
  auto.start();
  const db = api.deps.db;
  const kek = api.deps.config.hostedAgents.keyEncryptionKey;
  const config = {
    ...api.deps.config,
    rpcUrl: chain.url,
    hostedAgents: { ...api.deps.config.hostedAgents, capacity: AGENTS + 1, leaseMs: 3000, hostId: "bench-host" },
  };
  const host = new AgentHost({
    db,
    config,
    logger: silentLogger,
    apiUrl: api.url,
  });
  const statusOf = async (id: string) => (await db("hosted_agents").where({ id }).first()).status as string;
  try {
    // ------------------------------------------------------------------------------------------ 1. idle memory
    const ids: string[] = [];
    for (let i = 0; i < AGENTS; i++) {
      const wallet = await freshWallet(chain.provider);
      const agent = await insertHostedAgent(db, kek, {
        privateKey: wallet.privateKey,
        wallet: wallet.address,
        skills: [{ skill: SKILL }],
        capabilities: [`bench-idle-${i}`],
        createdAt: i + 1,
      });
      ids.push(agent.id);
    }
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const startedAt = Date.now();
    host.start();
    await waitFor(
      async () => (await Promise.all(ids.map(statusOf))).every((s) => s === "running"),
      180_000,
      "every agent to run",
    );
    const readyMs = Date.now() - startedAt;
    await new Promise((r) => setTimeout(r, 3000)); // settle: start-up garbage collected
    global.gc?.();
    const rssAfter = process.memoryUsage().rss;
    const heaps = await host.heapUsage(true);
    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);
    console.log(`\nHosted agents at idle: ${AGENTS} agents (worker threads), all running after ${readyMs} ms`);
    console.log(`  process RSS: ${(rssBefore / MB).toFixed(1)} MB before, ${(rssAfter / MB).toFixed(1)} MB after`);
    console.log(`  RSS per running agent: ${((rssAfter - rssBefore) / AGENTS / MB).toFixed(1)} MB`);
    console.log(
      `  worker heap per agent (V8, own isolate, after a full GC): used ${(avg(heaps.map((h) => h.heapUsedBytes)) / MB).toFixed(1)} MB, ` +
        `total ${(avg(heaps.map((h) => h.heapTotalBytes)) / MB).toFixed(1)} MB (limit ${config.hostedAgents.workerMemoryMb} MB old space)`,
    );
    // Idle agents stop: the throughput agent runs alone.
    await db("hosted_agents").whereIn("id", ids).update({ desired_state: "stopped" });
    host.wake();
    await waitFor(
      async () => (await Promise.all(ids.map(statusOf))).every((s) => s === "stopped"),
      60_000,
      "idle agents to stop",
    );

    // -------------------------------------------------------------------------------------------- 2. throughput
    const wallet = await freshWallet(chain.provider);
    const agent = await insertHostedAgent(db, kek, {
      privateKey: wallet.privateKey,
      wallet: wallet.address,
      skills: [{ skill: SKILL }],
      desiredState: "paused",
      createdAt: 1000,
    });
    host.wake();
    await waitFor(async () => (await statusOf(agent.id)) === "paused", 60_000, "the agent to run paused");
    const [funder] = await ethers.getSigners();
    const poster = await freshWallet(chain.provider);
    await (await fixture.usdc.connect(funder).mint(poster.address, USDC(TASKS * 2))).wait();
    const posterApi = new MarketApi({ baseUrl: api.url, apiKey: await api.createKey(poster.address) });
    const posted: { onChainTaskId: number }[] = [];
    for (let i = 0; i < TASKS; i++) {
      posted.push(
        await postTask(
          {
            brief: `Bench task ${i}. Summarise this line quickly.`,
            privacy: "public",
            amount: USDC(1),
            requiredCapabilities: ["summarise"],
            verificationMode: "auto",
            verificationCriteria: { required_fields: ["summary"] },
          },
          { api: posterApi, signer: poster },
        ),
      );
    }
    await api.synced();
    const resumedAt = Date.now();
    await db("hosted_agents").where({ id: agent.id }).update({ desired_state: "running" });
    host.wake();
    let deliveredMs = 0;
    await waitFor(
      async () => {
        const tasks = await Promise.all(posted.map((p) => fixture.escrow.getTask(p.onChainTaskId)));
        if (!deliveredMs && tasks.every((t) => Number(t.submissionAttempts) >= 1)) deliveredMs = Date.now() - resumedAt;
        return tasks.every((t) => Number(t.status) === 4);
      },
      600_000,
      "every task to be paid",
    );
    const paidMs = Date.now() - resumedAt;
    console.log(`\nOne hosted agent, ${TASKS} public auto tasks (skill ${SKILL}), from resume:`);
    console.log(
      `  all delivered in ${(deliveredMs / 1000).toFixed(1)} s: ${((TASKS / deliveredMs) * 60_000).toFixed(0)} tasks/minute`,
    );
    console.log(
      `  all paid in ${(paidMs / 1000).toFixed(1)} s: ${((TASKS / paidMs) * 60_000).toFixed(0)} tasks/minute (accept, deliver, judged, paid)`,
    );
  } finally {
    await host.stop();
    await auto.stop();
    await api.close();
    await chain.close();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
