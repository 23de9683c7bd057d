/**
 * The agent host on the chain served over HTTP and a real API (marketplace verifier, auto verifier), with hosted
 * agents written into the database (sealed key, a skill install): the host claims them, runs each in a worker thread
 * and supervises it.
 * - A task posted to the agent's capability is accepted, delivered and paid to the agent's own wallet; status running.
 * - A worker terminated after accepting, before delivering, is crashed (restarts 1, last_error, a log line), restarted
 *   after the back-off, and delivers the task exactly once.
 * - A host stopped with an agent running releases it (still desired running); a new host takes it and works.
 * - A generation bump restarts the worker; desired paused takes no new task until desired running again; desired
 *   stopped ends the worker (status stopped, lease released).
 * - A worker that cannot start is restarted with a doubling back-off up to its ceiling, each crash counted; the
 *   back-off starts over once a worker stayed up resetAfterMs.
 * - The worker's credential is replaced before it expires: with the first one revoked, the agent still works.
 * - An agent with the verifier skill, opted in, is listed with role=verifier and judges a task naming it as verifier
 *   agent (GET /a2a/tasks/judging, POST verify, completeVerification signed with its own key): the worker is paid.
 * Workers act with hosted tokens (the host's default credential); the refresh and back-off tests plug in their own.
 */
import { expect } from "chai";
import { Contract, type Wallet } from "ethers";
import hre from "hardhat";
import { deployEscrowFixture, STATUS, USDC } from "../../helpers/fixtures";
import { type TestApi } from "../../helpers/api";
import { freshWallet, type ServedChain } from "../../helpers/rpc";
import { startAgentMarket, waitFor, type AgentMarket } from "../../helpers/agentMarket";
import { issueAgentToken } from "../../../server/domain/agents/tokens";
import { agentLog, hostedAgentRow, insertHostedAgent, type InsertedAgent } from "../../helpers/hostedAgentRows";
import { AgentHost, type AgentHostOptions } from "../../../server/hosting/host";
import { findExecutor } from "../../../server/db/repositories/executors";
import { silentLogger } from "../../../server/logger";
import type { Config } from "../../../server/config";
import { AgentRuntime, MarketApi, postTask } from "../../../client/sdk/index";

const BALANCE = ["function balanceOf(address) view returns (uint256)"];
const SKILL = "summary"; // capabilities summarise, text

describe("agent host: hosted agents in worker threads", function () {
  this.timeout(120_000);
  let chain: ServedChain;
  let api: TestApi;
  let market: AgentMarket;
  let fixture: Awaited<ReturnType<typeof deployEscrowFixture>>;
  let poster: Wallet;
  let posterApi: MarketApi;
  const hosts: AgentHost[] = [];

  beforeEach(async () => {
    market = await startAgentMarket();
    ({ fixture, chain, api, poster, posterApi } = market);
  });

  afterEach(async () => {
    await hre.network.provider.send("evm_setAutomine", [true]);
    for (const host of hosts.splice(0)) await host.stop();
    await market.close();
  });

  function hostConfig(capacity = 5): Readonly<Config> {
    const base = api.deps.config;
    return {
      ...base,
      rpcUrl: chain.url,
      hostedAgents: { ...base.hostedAgents, capacity, leaseMs: 1500, hostId: `test-host-${hosts.length + 1}` },
    };
  }

  function startHost(options: Partial<AgentHostOptions> = {}) {
    const host = new AgentHost({
      db: api.deps.db,
      config: hostConfig(),
      logger: silentLogger,
      apiUrl: api.url,
      // Workers act with hosted tokens (issueAgentToken), as in production, unless a test says otherwise.
      ...options,
    });
    hosts.push(host);
    host.start();
    return host;
  }

  async function newAgent(
    desiredState: "running" | "paused" = "running",
    chains?: string[],
  ): Promise<InsertedAgent & { privateKey: string }> {
    const wallet = await freshWallet(chain.provider);
    const inserted = await insertHostedAgent(api.deps.db, api.deps.config.hostedAgents.keyEncryptionKey, {
      privateKey: wallet.privateKey,
      wallet: wallet.address,
      chains,
      desiredState,
      skills: [{ skill: SKILL }],
    });
    return { ...inserted, privateKey: wallet.privateKey };
  }

  const usdcOf = (address: string) =>
    new Contract(fixture.usdc.target as string, BALANCE, chain.provider).balanceOf(address) as Promise<bigint>;
  const onChain = (id: number) => fixture.escrow.getTask(id);
  const statusOf = async (id: string) => (await hostedAgentRow(api.deps.db, id)).status;

  function post(brief: string) {
    return postTask(
      {
        brief,
        privacy: "public",
        amount: USDC(10),
        requiredCapabilities: ["summarise"],
        verificationMode: "auto",
        verificationCriteria: { required_fields: ["summary", "wordCount"] },
      },
      { api: posterApi, signer: poster },
    );
  }

  const paid = (id: number) => async () => Number((await onChain(id)).status) === STATUS.Completed;

  it("runs an agent: a task for its skill is accepted, delivered and paid to the agent's own wallet", async () => {
    // Its owner enabled both chains: its worker registers them as its executor record's supportedChains.
    const agent = await newAgent("running", ["arc", "base"]);
    const credentials: string[] = [];
    const host = startHost({
      credentialFor: async (a) => {
        const { token, expiresAt } = await issueAgentToken(api.deps.config.hostedAgents, {
          agentId: a.id,
          wallet: a.wallet,
        });
        credentials.push(token);
        return { credential: token, expiresAt };
      },
    });
    await waitFor(async () => (await statusOf(agent.id)) === "running", 60_000, "the agent to run");
    const row = await hostedAgentRow(api.deps.db, agent.id);
    expect(row.leaseHost).to.equal(host.id);
    expect((await findExecutor(api.deps.db, agent.wallet))!.supportedChains).to.deep.equal(["arc", "base"]);
    const before = await usdcOf(agent.wallet);
    const posted = await post("Summarise the hosted agent. It runs in a worker thread.");
    await waitFor(paid(posted.onChainTaskId), 60_000, "the task to be paid");
    const task = await onChain(posted.onChainTaskId);
    expect(task.worker.toLowerCase()).to.equal(agent.wallet);
    const fee = (USDC(10) * (await fixture.escrow.feeBps())) / 10_000n;
    expect((await usdcOf(agent.wallet)) - before).to.equal(USDC(10) - fee);
    const log = (await agentLog(api.deps.db, agent.id)).map((l) => l.message);
    expect(log.some((m) => m.startsWith("worker ready"))).to.equal(true);
    expect(log.some((m) => m.includes(`running skill ${SKILL}`))).to.equal(true);
    // Never the wallet key nor the credential in the log.
    const text = log.join("\n").toLowerCase();
    expect(text).not.to.include(agent.privateKey.slice(2).toLowerCase());
    expect(credentials).to.have.length(1);
    expect(text).not.to.include(credentials[0].toLowerCase());
    await waitFor(async () => (await hostedAgentRow(api.deps.db, agent.id)).lastEventId !== null, 10_000, "event id");
  });

  it("a worker terminated after accepting, before delivering, is restarted with back-off and delivers once", async () => {
    const agent = await newAgent();
    const host = startHost();
    await waitFor(async () => (await statusOf(agent.id)) === "running", 60_000, "the agent to run");
    const posted = await post("Crash in the middle. Deliver once.");
    // The marketplace's assignment stays unmined: the worker has accepted and waits to deliver.
    await hre.network.provider.send("evm_setAutomine", [false]);
    await waitFor(
      async () => Boolean(await api.deps.db("task_assignments").where({ task_id: posted.onChainTaskId }).first()),
      30_000,
      "the accept",
    );
    expect(Number((await onChain(posted.onChainTaskId)).submissionAttempts)).to.equal(0);
    const worker = host.workerOf(agent.id)!;
    const firstThread = worker.threadId;
    await worker.terminate();
    await waitFor(async () => (await statusOf(agent.id)) === "crashed", 10_000, "status crashed");
    const crashed = await hostedAgentRow(api.deps.db, agent.id);
    expect(crashed.restarts).to.equal(1);
    expect(crashed.lastError).to.match(/exited with code/);
    await hre.network.provider.send("evm_setAutomine", [true]);
    await hre.network.provider.send("evm_mine", []);
    await waitFor(async () => (await statusOf(agent.id)) === "running", 60_000, "the restarted worker");
    expect(host.workerOf(agent.id)!.threadId).not.to.equal(firstThread);
    await waitFor(paid(posted.onChainTaskId), 60_000, "the task to be paid");
    expect(Number((await onChain(posted.onChainTaskId)).submissionAttempts)).to.equal(1);
    expect((await onChain(posted.onChainTaskId)).worker.toLowerCase()).to.equal(agent.wallet);
    const log = (await agentLog(api.deps.db, agent.id)).map((l) => l.message);
    expect(log.some((m) => /worker crashed: .*restart in 1000 ms/.test(m))).to.equal(true);
    expect((await hostedAgentRow(api.deps.db, agent.id)).restarts).to.equal(1);
  });

  it("a host stopped with its agent running releases it; a new host takes it and works", async () => {
    const agent = await newAgent();
    const first = startHost();
    await waitFor(async () => (await statusOf(agent.id)) === "running", 60_000, "the agent to run");
    await first.stop();
    hosts.splice(hosts.indexOf(first), 1);
    const released = await hostedAgentRow(api.deps.db, agent.id);
    expect(released).to.include({ desiredState: "running", leaseHost: null, status: "starting" });
    expect(await api.deps.db("agent_hosts").where({ id: first.id }).first()).to.equal(undefined);

    const second = startHost();
    await waitFor(async () => (await statusOf(agent.id)) === "running", 60_000, "the agent on the new host");
    expect((await hostedAgentRow(api.deps.db, agent.id)).leaseHost).to.equal(second.id);
    const posted = await post("Survive the restart. Then work.");
    await waitFor(paid(posted.onChainTaskId), 60_000, "the task to be paid");
    expect((await onChain(posted.onChainTaskId)).worker.toLowerCase()).to.equal(agent.wallet);
  });

  it("restarts the worker on a generation bump; paused takes no task until running again; stopped ends it", async () => {
    const agent = await newAgent();
    const host = startHost();
    await waitFor(async () => (await statusOf(agent.id)) === "running", 60_000, "the agent to run");
    const firstThread = host.workerOf(agent.id)!.threadId;

    await api.deps.db("hosted_agents").where({ id: agent.id }).increment("generation", 1);
    host.wake();
    await waitFor(() => (host.workerOf(agent.id)?.threadId ?? firstThread) !== firstThread, 30_000, "a new worker");
    await waitFor(async () => (await statusOf(agent.id)) === "running", 60_000, "running again");
    expect((await hostedAgentRow(api.deps.db, agent.id)).restarts, "a restart is not a crash").to.equal(0);

    await api.deps.db("hosted_agents").where({ id: agent.id }).update({ desired_state: "paused" });
    host.wake();
    await waitFor(async () => (await statusOf(agent.id)) === "paused", 10_000, "paused");
    const posted = await post("Wait while paused. Then work.");
    await waitFor(async () => (await posterApi.task(posted.taskHash)).a2aState?.status === "open", 20_000, "listed");
    // The paused worker has had the task's task.open event (its resume point is at or past it) and let it pass.
    const opened = await api.deps
      .db("market_events")
      .where({ task_hash: posted.taskHash.toLowerCase(), type: "task.open" })
      .first();
    expect(opened, "the task.open event").to.not.equal(undefined);
    await waitFor(
      async () => Number((await hostedAgentRow(api.deps.db, agent.id)).lastEventId ?? 0) >= Number(opened.id),
      20_000,
      "the worker to see task.open",
    );
    expect(Number((await onChain(posted.onChainTaskId)).status), "not taken while paused").to.equal(STATUS.Funded);

    await api.deps.db("hosted_agents").where({ id: agent.id }).update({ desired_state: "running" });
    host.wake();
    await waitFor(paid(posted.onChainTaskId), 60_000, "the task to be paid after resuming");
    expect(await statusOf(agent.id)).to.equal("running");

    await api.deps.db("hosted_agents").where({ id: agent.id }).update({ desired_state: "stopped" });
    host.wake();
    await waitFor(async () => (await statusOf(agent.id)) === "stopped", 20_000, "stopped");
    expect(host.workerOf(agent.id)).to.equal(undefined);
    expect((await hostedAgentRow(api.deps.db, agent.id)).leaseHost).to.equal(null);
  });

  it("a verifier agent (verifier skill, opted in) judges a task naming it and the worker is paid", async () => {
    const wallet = await freshWallet(chain.provider);
    const judge = await insertHostedAgent(api.deps.db, api.deps.config.hostedAgents.keyEncryptionKey, {
      privateKey: wallet.privateKey,
      wallet: wallet.address,
      skills: [{ skill: "verifier" }],
    });
    await api.deps
      .db("hosted_agents")
      .where({ id: judge.id })
      .update({ verifier_opt_in: true, verifier_name: "Hosted judge" });
    startHost();
    await waitFor(async () => (await statusOf(judge.id)) === "running", 60_000, "the verifier agent to run");
    const listed = await posterApi.executors({ role: "verifier" });
    expect(listed.executors.map((e) => [e.address, e.name])).to.deep.include([judge.wallet, "Hosted judge"]);

    const worker = await freshWallet(chain.provider);
    const runtime = new AgentRuntime({
      api: new MarketApi({ baseUrl: api.url, apiKey: await api.createKey(worker.address) }),
      privateKey: worker.privateKey,
      provider: chain.provider,
      capabilities: ["summarise"],
      work: (job) => ({ summary: job.briefText.slice(0, 20), wordCount: 4 }),
    });
    await runtime.start();
    try {
      const posted = await postTask(
        {
          brief: "Judge me. Then pay me.",
          privacy: "public",
          amount: USDC(10),
          requiredCapabilities: ["summarise"],
          verificationMode: "agent",
          verifierAddress: judge.wallet,
          verificationCriteria: { required_fields: ["summary", "wordCount"] },
        },
        { api: posterApi, signer: poster },
      );
      await waitFor(paid(posted.onChainTaskId), 60_000, "the verdict and the payment");
      expect((await onChain(posted.onChainTaskId)).worker).to.equal(worker.address);
      // The worker's log line reaches the database right after the payment.
      await waitFor(
        async () =>
          (await agentLog(api.deps.db, judge.id)).some((l) =>
            l.message.startsWith(`judged ${posted.taskHash} attempt 1: passed`),
          ),
        10_000,
        "the verifier's log line",
      );
    } finally {
      await runtime.stop();
    }
  });

  it("restarts a worker that cannot start with a back-off doubling to its ceiling, counting each crash", async () => {
    const agent = await newAgent();
    let refusals = 4;
    startHost({
      backoff: { initialMs: 100, maxMs: 400 },
      credentialFor: async (a) => {
        if (refusals-- > 0) throw new Error("no credential today");
        return { credential: await api.createKey(a.wallet) };
      },
    });
    await waitFor(async () => (await statusOf(agent.id)) === "running", 60_000, "the agent to run at last");
    const row = await hostedAgentRow(api.deps.db, agent.id);
    expect(row.restarts).to.equal(4);
    expect(row.lastError, "the last error stays for the owner to read").to.equal(
      "could not start: no credential today",
    );
    const delays = (await agentLog(api.deps.db, agent.id))
      .map((l) => /could not start: no credential today; restart in (\d+) ms/.exec(l.message)?.[1])
      .filter((d) => d !== undefined)
      .map(Number);
    expect(delays).to.deep.equal([100, 200, 400, 400]);
  });

  it("starts the back-off over once a worker stayed up resetAfterMs; a crash soon after a start doubles it", async () => {
    const agent = await newAgent();
    let refusals = 3;
    // The host's clock stands still unless the test moves it: how long a worker stayed up is what the test says,
    // not how long a loaded machine took to start it (a start slower than resetAfterMs would reset the back-off).
    const base = Date.now();
    let aheadMs = 0;
    const host = startHost({
      clock: { nowMs: () => base + aheadMs },
      backoff: { initialMs: 100, maxMs: 400, resetAfterMs: 1500 },
      credentialFor: async (a) => {
        if (refusals-- > 0) throw new Error("no credential yet");
        return { credential: await api.createKey(a.wallet) };
      },
    });
    const running = () => waitFor(async () => (await statusOf(agent.id)) === "running", 60_000, "the agent to run");
    await running();
    // Up longer than resetAfterMs, then a crash: the first delay again, not the ceiling.
    aheadMs += 1600;
    expect((await hostedAgentRow(api.deps.db, agent.id)).restarts, "the three refused starts").to.equal(3);
    await host.workerOf(agent.id)!.terminate();
    // By the restart count, not the status: "crashed" lasts only the 100 ms delay, which a 100 ms poll can miss.
    await waitFor(async () => (await hostedAgentRow(api.deps.db, agent.id)).restarts === 4, 10_000, "the first crash");
    await running();
    // A crash right after that start: the delay doubles again.
    await host.workerOf(agent.id)!.terminate();
    await waitFor(async () => (await hostedAgentRow(api.deps.db, agent.id)).restarts === 5, 10_000, "the second crash");
    await running();
    const delays = (await agentLog(api.deps.db, agent.id))
      .map((l) => /; restart in (\d+) ms/.exec(l.message)?.[1])
      .filter((d) => d !== undefined)
      .map(Number);
    expect(delays).to.deep.equal([100, 200, 400, 100, 200]);
  });

  it("refreshes the worker's credential before it expires: with the first revoked the agent still works", async () => {
    const agent = await newAgent();
    const issued: string[] = [];
    startHost({
      // Credentials living 3 s: the host gives the worker a new one at 80% of that.
      credentialFor: async (a) => {
        issued.push(await api.createKey(a.wallet));
        return { credential: issued[issued.length - 1], expiresAt: Math.floor(Date.now() / 1000) + 3 };
      },
    });
    await waitFor(async () => (await statusOf(agent.id)) === "running", 60_000, "the agent to run");
    // Two refreshes: the worker has long had the second credential when the first is revoked.
    await waitFor(() => issued.length >= 3, 15_000, "refreshed credentials");
    const first = await api.deps.db("api_keys").where({ address: agent.wallet }).orderBy("id", "asc").first();
    await api.deps.db("api_keys").where({ id: first.id }).update({ revoked_at: 1 });
    const posted = await post("Work with the new credential.");
    await waitFor(paid(posted.onChainTaskId), 60_000, "the task to be paid");
    expect(await statusOf(agent.id)).to.equal("running");
  });

  it("runs at most its capacity; the oldest agents first", async () => {
    const agents: InsertedAgent[] = [];
    for (let i = 0; i < 3; i++) agents.push(await newAgent());
    for (const [i, createdAt] of [3, 4, 1].entries()) {
      await api.deps.db("hosted_agents").where({ id: agents[i].id }).update({ created_at: createdAt });
    }
    const config = hostConfig(2);
    const host = new AgentHost({
      db: api.deps.db,
      config,
      logger: silentLogger,
      apiUrl: api.url,
    });
    hosts.push(host);
    host.start();
    await waitFor(() => host.agents().length === 2, 20_000, "two agents claimed");
    // Two heartbeats later a whole tick, claims included, has run with the two agents: it claimed no third.
    const seen = async () =>
      Number((await api.deps.db("agent_hosts").where({ id: config.hostedAgents.hostId }).first()).seen_at_ms);
    for (let i = 0; i < 2; i++) {
      const before = await seen();
      await waitFor(async () => (await seen()) > before, 10_000, "the host's next tick");
    }
    expect(host.agents().map((a) => a.agentId)).to.have.members([agents[2].id, agents[0].id]);
    expect((await hostedAgentRow(api.deps.db, agents[1].id)).leaseHost).to.equal(null);
  });
});
