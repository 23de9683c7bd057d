/**
 * Reads over two settlement chains (issue 27): base and arc each have a task with on-chain id 1, listed, and every read
 * shows each with its own chain, chain id and record, never the other's. Real HTTP against an API serving both chains
 * (startTestApi with arc), each with its own indexer (test/helpers/twoChains.ts).
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { USDC } from "../../helpers/fixtures";
import { ARC_CHAIN_ID } from "../../helpers/arc";
import { BASE_CHAIN_ID, listOnArc, withTwoChains, type TwoChains } from "../../helpers/twoChains";
import { openEvents } from "../../helpers/sse";
import { TASK_STATUS } from "../../../server/escrow/records";

const EVIDENCE = ethers.id("evidence");

const get = async (t: TwoChains, path: string, key?: string) => {
  const res = await t.api.request("GET", path, { key });
  expect(res.status, res.text).to.equal(200);
  return res.json.data;
};

describe("reads over two chains: task 1 of base and task 1 of arc never mix", function () {
  this.timeout(120_000);

  it("GET /tasks/{id}: a numeric id reads the posting chain unless ?chain=arc; a hash finds either chain's task", async () => {
    await withTwoChains(async (t) => {
      const base = await get(t, "/api/v1/tasks/1");
      expect(base).to.include({ chain: "base", chainId: BASE_CHAIN_ID, taskId: 1, taskHash: t.baseHash });
      expect(base).to.include({ amount: USDC(25).toString(), token: (await t.base.usdc.getAddress()).toLowerCase() });
      expect(base.a2aMeta).to.include({ chain: "base", chainId: BASE_CHAIN_ID, onChainTaskId: 1 });

      const arc = await get(t, "/api/v1/tasks/1?chain=arc");
      expect(arc).to.include({ chain: "arc", chainId: ARC_CHAIN_ID, taskId: 1, taskHash: t.arcHash });
      expect(arc).to.include({ amount: USDC(7).toString(), token: (await t.arc.usdc.getAddress()).toLowerCase() });
      expect(arc.a2aMeta).to.include({ chain: "arc", chainId: ARC_CHAIN_ID, onChainTaskId: 1 });
      expect(arc.a2aMeta.requiredCapabilities).to.deep.equal(["arc-only"]);
      expect(arc.a2aState).to.deep.equal({ status: "open", onChainStatus: TASK_STATUS.Funded });

      expect(await get(t, "/api/v1/tasks/1?chain=base")).to.deep.equal(base);
      expect(await get(t, `/api/v1/tasks/${t.arcHash}`)).to.deep.equal(arc);
      expect(await get(t, `/api/v1/tasks/${t.baseHash}`)).to.deep.equal(base);

      const unknown = await t.api.request("GET", "/api/v1/tasks/1?chain=polygon");
      expect(unknown.status).to.equal(400);
      expect(unknown.json.error.code).to.equal("INVALID_CHAIN");
      const missing = await t.api.request("GET", "/api/v1/tasks/2?chain=arc");
      expect(missing.status).to.equal(404);
    });
  });

  it("each task's deadline is its own chain's time: arc's clock past the deadline expires arc's task only", async () => {
    await withTwoChains(async (t) => {
      // Both tasks 1 run 30 days; only arc's chain moves 31 days on.
      await t.arc.runtime.network.provider.send("evm_increaseTime", [31 * 86_400]);
      await t.arc.runtime.network.provider.send("evm_mine", []);
      await t.api.synced();
      expect((await get(t, "/api/v1/tasks/1?chain=arc")).a2aState.status).to.equal("expired");
      expect((await get(t, "/api/v1/tasks/1")).a2aState.status).to.equal("open");
      const page = (await t.api.request("GET", "/api/v1/a2a/tasks/posted", { key: t.posterKey })).json.data;
      const states = Object.fromEntries(
        page.tasks.map((task: { meta: { chain: string }; state: { status: string } }) => [
          task.meta.chain,
          task.state.status,
        ]),
      );
      expect(states).to.deep.equal({ base: "open", arc: "expired" });
    });
  });

  it("the open-task list shows both chains by default and one with ?chain=, each task with its own record", async () => {
    await withTwoChains(async (t) => {
      const all = await get(t, "/api/v1/a2a/tasks");
      expect(all.total).to.equal(2);
      const byChain = Object.fromEntries(all.tasks.map((x: { meta: { chain: string } }) => [x.meta.chain, x.meta]));
      expect(byChain.base).to.include({ onChainTaskId: 1, chainId: BASE_CHAIN_ID, taskHash: t.baseHash });
      expect(byChain.base.amount).to.equal(USDC(25).toString());
      expect(byChain.arc).to.include({ onChainTaskId: 1, chainId: ARC_CHAIN_ID, taskHash: t.arcHash.toLowerCase() });
      expect(byChain.arc.amount).to.equal(USDC(7).toString());

      const arcOnly = await get(t, "/api/v1/a2a/tasks?chain=arc");
      expect(arcOnly.total).to.equal(1);
      expect(arcOnly.tasks.map((x: { meta: { taskHash: string } }) => x.meta.taskHash)).to.deep.equal([
        t.arcHash.toLowerCase(),
      ]);
      const baseOnly = await get(t, "/api/v1/a2a/tasks?chain=base");
      expect(baseOnly.tasks.map((x: { meta: { chain: string } }) => x.meta.chain)).to.deep.equal(["base"]);
      // The capability filter reads arc's task's own capabilities, not base's task 1's (none).
      const capable = await get(t, "/api/v1/a2a/tasks?capabilities=");
      expect(capable.tasks.map((x: { meta: { chain: string } }) => x.meta.chain)).to.deep.equal(["base"]);

      const bad = await t.api.request("GET", "/api/v1/a2a/tasks?chain=solana");
      expect([bad.status, bad.json.error.code]).to.deep.equal([400, "INVALID_CHAIN"]);
    });
  });

  it("posted, working and stats: per chain, an arc assignment is arc's task's only", async () => {
    await withTwoChains(async (t) => {
      const posted = await get(t, "/api/v1/a2a/tasks/posted", t.posterKey);
      expect(posted.total).to.equal(2);
      const views = posted.tasks.map((x: { meta: { chain: string }; onChain: { chain: string; chainId: number } }) => [
        x.meta.chain,
        x.onChain.chain,
        x.onChain.chainId,
      ]);
      expect(views).to.have.deep.members([
        ["base", "base", BASE_CHAIN_ID],
        ["arc", "arc", ARC_CHAIN_ID],
      ]);
      const postedOnArc = await get(t, "/api/v1/a2a/tasks/posted?chain=arc", t.posterKey);
      expect(postedOnArc.total).to.equal(1);
      expect(postedOnArc.tasks[0].onChain).to.include({ chain: "arc", taskId: 1, amount: USDC(7).toString() });

      // The worker is assigned arc's task 1 on arc: its work is arc's task, base's task 1 stays open.
      await (await t.arc.escrow.connect(t.arc.poster).assignWorker(1, t.arc.worker.address)).wait();
      await t.api.synced();
      const working = await get(t, "/api/v1/a2a/tasks/working", t.workerKey);
      expect(working.total).to.equal(1);
      expect(working.tasks[0].meta).to.include({ chain: "arc", chainId: ARC_CHAIN_ID, onChainTaskId: 1 });
      expect(working.tasks[0].state.status).to.equal("assigned");
      expect((await get(t, "/api/v1/a2a/tasks/working?chain=base", t.workerKey)).total).to.equal(0);
      expect((await get(t, "/api/v1/tasks/1")).a2aState.status).to.equal("open");
      expect((await get(t, "/api/v1/tasks/1?chain=arc")).a2aState.status).to.equal("assigned");
      const open = await get(t, "/api/v1/a2a/tasks");
      expect(open.tasks.map((x: { meta: { chain: string } }) => x.meta.chain)).to.deep.equal(["base"]);

      const stats = await get(t, "/api/v1/stats");
      expect(stats).to.deep.include({
        openTasks: 1,
        completedTasks: 0,
        byChain: { base: { openTasks: 1, completedTasks: 0 }, arc: { openTasks: 0, completedTasks: 0 } },
      });
      expect(stats.totalAgents).to.equal(1); // the worker, counted once
    });
  });

  it("reputation merges a worker's outcomes on both chains; stats count each chain's completed task", async () => {
    await withTwoChains(async (t) => {
      for (const [escrow, verifier, worker] of [
        [t.base.escrow, t.base.verifier, t.base.worker],
        [t.arc.escrow, t.arc.verifier, t.arc.worker],
      ] as const) {
        await (await escrow.connect(verifier).marketplaceAssign(1, worker.address)).wait();
        await (await escrow.connect(worker).submitEvidence(1, EVIDENCE)).wait();
        await (await escrow.connect(verifier).completeVerification(1, true)).wait();
      }
      await t.api.synced();
      const reputation = await get(t, `/api/v1/reputation/${t.base.worker.address}`);
      expect(reputation).to.deep.include({ completed: 2, score: 2 });
      const stats = await get(t, "/api/v1/stats");
      expect(stats).to.deep.include({
        completedTasks: 2,
        byChain: { base: { openTasks: 0, completedTasks: 1 }, arc: { openTasks: 0, completedTasks: 1 } },
      });
      const done = await get(t, "/api/v1/tasks/1?chain=arc", t.workerKey);
      expect(done).to.include({ chain: "arc", status: TASK_STATUS.Completed, payout: done.payout });
      expect(done.a2aState.status).to.equal("completed");
    });
  });

  it("events carry the chain and chain id of their task: arc's listing and assignment, base's listing", async () => {
    await withTwoChains(async (t) => {
      const stream = await openEvents(t.api.url, { key: t.posterKey, lastEventId: "0" });
      try {
        expect(stream.status).to.equal(200);
        const baseListed = await stream.waitFor(
          (e) => e.event === "task.listed" && e.data.taskHash === t.baseHash.toLowerCase(),
        );
        expect(baseListed.data).to.include({ chain: "base", chainId: BASE_CHAIN_ID, onChainTaskId: "1" });
        const arcListed = await stream.waitFor(
          (e) => e.event === "task.listed" && e.data.taskHash === t.arcHash.toLowerCase(),
        );
        expect(arcListed.data).to.include({ chain: "arc", chainId: ARC_CHAIN_ID, onChainTaskId: "1" });
        await (await t.arc.escrow.connect(t.arc.poster).assignWorker(1, t.arc.worker.address)).wait();
        const assigned = await stream.waitFor((e) => e.event === "task.assigned");
        expect(assigned.data).to.include({
          chain: "arc",
          chainId: ARC_CHAIN_ID,
          taskHash: t.arcHash.toLowerCase(),
          worker: t.arc.worker.address.toLowerCase(),
        });
      } finally {
        stream.close();
      }
    });
  });

  it("MCP get_task and browse_tasks, and A2A tasks, carry the chain: get_task takes the chain of a numeric id", async () => {
    await withTwoChains(async (t) => {
      const client = new Client({ name: "chains-test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${t.api.url}/mcp`), {
          requestInit: { headers: { "X-API-Key": t.workerKey } },
        }),
      );
      try {
        const tool = async (name: string, args: Record<string, unknown>) => {
          const answer = (await client.callTool({ name, arguments: args })) as {
            isError?: boolean;
            structuredContent?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
          };
          expect(answer.isError, JSON.stringify(answer.structuredContent)).to.not.equal(true);
          return answer.structuredContent!;
        };
        expect(await tool("get_task", { id: "1" })).to.include({ chain: "base", taskHash: t.baseHash });
        const arc = await tool("get_task", { id: "1", chain: "arc" });
        expect(arc).to.include({ chain: "arc", chainId: ARC_CHAIN_ID, taskHash: t.arcHash });
        const browsed = await tool("browse_tasks", { chain: "arc" });
        expect(browsed.tasks.map((x: { meta: { chain: string } }) => x.meta.chain)).to.deep.equal(["arc"]);
      } finally {
        await client.close();
      }

      const rpc = async (method: string, params: unknown) => {
        const res = await fetch(`${t.api.url}/a2a/v1`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
        });
        return (await res.json()).result;
      };
      const listed = await rpc("tasks/list", { pageSize: 10 });
      const chains = Object.fromEntries(
        listed.tasks.map((x: { id: string; metadata: { marketplace: { chain: string; chainId: number } } }) => [
          x.id,
          [x.metadata.marketplace.chain, x.metadata.marketplace.chainId],
        ]),
      );
      expect(chains).to.deep.equal({
        [t.baseHash]: ["base", BASE_CHAIN_ID],
        [t.arcHash]: ["arc", ARC_CHAIN_ID],
      });
      const got = await rpc("tasks/get", { id: t.arcHash });
      expect(got.metadata.marketplace).to.include({ chain: "arc", chainId: ARC_CHAIN_ID, onChainTaskId: 1 });
    });
  });

  it("offered and judging lists: an arc task pinned to an agent, an arc task it judges, each filtered by chain", async () => {
    await withTwoChains(async (t) => {
      const agent = t.base.verifierAgent.address.toLowerCase();
      const agentKey = await t.api.createKey(agent);
      const offered = await listOnArc(t, { targetExecutor: agent });
      expect(offered.taskId).to.equal(2);
      const judged = await listOnArc(t, { verifierAgent: agent });
      expect(judged.taskId).to.equal(3);
      await (await t.arc.escrow.connect(t.arc.verifier).marketplaceAssign(3, t.arc.worker.address)).wait();
      await (await t.arc.escrow.connect(t.arc.worker).submitEvidence(3, EVIDENCE)).wait();
      await t.api.synced();

      const offers = await get(t, "/api/v1/a2a/tasks/offered", agentKey);
      expect(offers.tasks.map((x: { meta: { chain: string; onChainTaskId: number } }) => x.meta)).to.have.length(1);
      expect(offers.tasks[0].meta).to.include({ chain: "arc", chainId: ARC_CHAIN_ID, onChainTaskId: 2 });
      expect((await get(t, "/api/v1/a2a/tasks/offered?chain=base", agentKey)).total).to.equal(0);
      expect((await get(t, "/api/v1/a2a/tasks/offered?chain=arc", agentKey)).total).to.equal(1);
      // A pinned task is not in the public list.
      const open = await get(t, "/api/v1/a2a/tasks");
      expect(open.tasks.map((x: { meta: { taskHash: string } }) => x.meta.taskHash)).to.not.include(offered.taskHash);

      const queue = await get(t, "/api/v1/a2a/tasks/judging", agentKey);
      expect(queue.total).to.equal(1);
      expect(queue.tasks[0].meta).to.include({ chain: "arc", onChainTaskId: 3, taskHash: judged.taskHash });
      expect(queue.tasks[0].onChain).to.include({ chain: "arc", chainId: ARC_CHAIN_ID, taskId: 3 });
      expect((await get(t, "/api/v1/a2a/tasks/judging?chain=base", agentKey)).total).to.equal(0);
    });
  });
});
