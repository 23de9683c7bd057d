/**
 * The SDK's agent runtime as an agent runs it: a plain JsonRpcProvider + Wallet on the chain served over HTTP, a real
 * API with the marketplace verifier and the auto verifier, the poster using the SDK's posting flow.
 * - With the push stream (the contract's stand-in forwarding everything else to the real API): a private auto task
 *   announced by `task.open` is taken, its brief decrypted, delivered, judged and paid; the runtime found it from the
 *   event, not by polling.
 * - Without it (the real API answers 404 for /api/v1/events): it polls at most once every 10 s and takes a public
 *   auto task to paid.
 */
import { expect } from "chai";
import { Contract, type Wallet } from "ethers";
import { deployEscrowFixture, STATUS, USDC } from "../../helpers/fixtures";
import { startTestApi, type TestApi } from "../../helpers/api";
import { verifierPrivateKey } from "../../helpers/keys";
import { freshWallet, type ServedChain } from "../../helpers/rpc";
import { startAgentMarket, waitFor, type AgentMarket } from "../../helpers/agentMarket";
import { startSseStub, type SseStub } from "../../helpers/sseStub";
import { AutoVerifier } from "../../../server/domain/marketplace/autoVerifier";
import {
  AgentRuntime,
  MarketApi,
  agentPublicKey,
  isMarketError,
  postTask,
  type Job,
  type JobView,
} from "../../../client/sdk/index";

const BALANCE = ["function balanceOf(address) view returns (uint256)"];

describe("SDK agent runtime: from a listed task to paid", () => {
  let chain: ServedChain;
  let api: TestApi;
  let market: AgentMarket;
  let stub: SseStub;
  let runtime: AgentRuntime | undefined;
  let fixture: Awaited<ReturnType<typeof deployEscrowFixture>>;
  let poster: Wallet;
  let agent: Wallet;
  let posterApi: MarketApi;
  let agentKey: string;

  beforeEach(async () => {
    market = await startAgentMarket();
    ({ fixture, chain, api, poster, posterApi } = market);
    agent = await freshWallet(chain.provider);
    agentKey = await api.createKey(agent.address);
  });

  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await stub?.close();
    await market.close();
  });

  const usdcOf = (address: string) =>
    new Contract(fixture.usdc.target as string, BALANCE, chain.provider).balanceOf(address) as Promise<bigint>;

  function startRuntime(baseUrl: string, seen: Job[], stages: JobView[]) {
    runtime = new AgentRuntime({
      api: new MarketApi({ baseUrl, apiKey: agentKey }),
      privateKey: agent.privateKey,
      provider: chain.provider,
      capabilities: ["summarise"],
      pollIntervalMs: 100, // asks for 100 ms; the runtime polls at most every 10 s
      reconnect: { initialDelayMs: 50 },
      work: (job) => {
        seen.push(job);
        return { summary: job.briefText.split(".")[0], wordCount: job.briefText.split(/\s+/).length };
      },
      onJob: (job) => stages.push(job),
    });
    return runtime.start();
  }

  const terms = {
    amount: USDC(20),
    requiredCapabilities: ["summarise"],
    verificationMode: "auto" as const,
    verificationCriteria: { required_fields: ["summary", "wordCount"] },
  };

  /** The agent's API, its settlement record answering "not postable" `times` times (a service indexing its setup). */
  function notPostableYet(times: number) {
    const state = { left: times };
    const market = new MarketApi({
      baseUrl: api.url,
      apiKey: agentKey,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (state.left === 0 || new URL(String(input)).pathname !== "/api/v1/health/settlement") return response;
        state.left--;
        const body = await response.json();
        for (const c of body.data.chains) c.postable = false;
        return new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
      },
    });
    return { market, state };
  }

  it("waits at start while the posting chain is not postable yet, then registers; gives up after startTimeoutMs", async () => {
    const late = notPostableYet(2);
    runtime = new AgentRuntime({
      api: late.market,
      privateKey: agent.privateKey,
      provider: chain.provider,
      capabilities: ["summarise"],
      work: () => ({}),
    });
    await runtime.start();
    expect(late.state.left).to.equal(0);
    expect((await posterApi.executors({})).executors.map((e) => e.address)).to.include(agent.address.toLowerCase());
    await runtime.stop();

    const never = notPostableYet(1_000);
    runtime = new AgentRuntime({
      api: never.market,
      privateKey: agent.privateKey,
      provider: chain.provider,
      capabilities: ["summarise"],
      startTimeoutMs: 300,
      work: () => ({}),
    });
    const error = await runtime.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isMarketError(error, "SETTLEMENT_NOT_POSTABLE"), String(error)).to.equal(true);
    runtime = undefined;
  });

  it("with the event stream: takes a private auto task announced by task.open before it is listed, decrypts, delivers, is paid", async () => {
    stub = await startSseStub({ forwardTo: api.url });
    const seen: Job[] = [];
    const stages: JobView[] = [];
    await startRuntime(stub.url, seen, stages);
    await waitFor(() => runtime!.mode === "stream", 5000, "the stream");

    const brief = "Summarise the quarterly escrow volume. Mention disputes.";
    let earlyHash: string | undefined;
    const reads = (hash: string) => stub.requests.filter((r) => r.path === `/api/v1/tasks/${hash}`).length;
    const before = await usdcOf(agent.address);
    // The event arrives as early as it can: funded, before the service has listed (indexed) the task. The runtime
    // reads and accepts again, backing off, until the service has it.
    const posted = await postTask(
      { brief, ...terms },
      {
        api: posterApi,
        signer: poster,
        onStage: async (stage) => {
          if (stage !== "confirmed") return;
          stub.emit("task.open", { taskHash: earlyHash!, role: "executor", state: "open" });
          // Hold the listing until the runtime has read the task once (unlisted then).
          await waitFor(() => reads(earlyHash!) >= 1, 5000, "the runtime's first read");
        },
        journal: {
          load: async () => undefined,
          save: async (record) => void (earlyHash = record.items[0].taskHash),
          remove: async () => undefined,
        },
      },
    );
    await waitFor(
      async () => Number((await fixture.escrow.getTask(posted.onChainTaskId)).status) === STATUS.Completed,
      30_000,
      "the task to be paid",
    );
    expect(seen.map((j) => j.briefText)).to.deep.equal([brief]); // the private brief, decrypted
    const fee = (USDC(20) * (await fixture.escrow.feeBps())) / 10_000n;
    expect((await usdcOf(agent.address)) - before).to.equal(USDC(20) - fee);
    stub.emit("task.settled", { taskHash: posted.taskHash, role: "worker", state: "completed", outcome: "paid" });
    await waitFor(() => runtime!.jobs()[0]?.stage === "paid", 5000, "the job to be paid");
    expect(stages.map((s) => s.stage)).to.deep.equal(["accepted", "delivered", "paid"]);
    expect(runtime!.delivered()).to.deep.equal([posted.taskHash]);
    expect(reads(posted.taskHash), "read again after the unlisted answer").to.be.at.least(2);
    expect(runtime!.lastEventId, "the id to resume from after a restart").to.equal("2");
    // Found through the event: the only discovery requests are the catch-up scans when the stream opened.
    const discovery = stub.requests.filter((r) => r.path.startsWith("/api/v1/a2a/tasks?"));
    expect(discovery).to.have.length(1);
  });

  it("without the stream (404): polls at most once every 10 s, and takes a public auto task to paid", async () => {
    stub = await startSseStub({ forwardTo: api.url, noStream: true });
    const seen: Job[] = [];
    const stages: JobView[] = [];
    await startRuntime(stub.url, seen, stages);
    await waitFor(() => runtime!.mode === "polling", 5000, "polling");
    const brief = "Summarise the public escrow audit. It found no critical issue.";
    const posted = await postTask({ brief, privacy: "public", ...terms }, { api: posterApi, signer: poster });
    await waitFor(() => runtime!.jobs()[0]?.stage === "paid", 40_000, "the job to be paid");
    expect(Number((await fixture.escrow.getTask(posted.onChainTaskId)).status)).to.equal(STATUS.Completed);
    expect(seen.map((j) => j.briefText)).to.deep.equal([brief]);
    const discovery = stub.requests.filter((r) => /^\/api\/v1\/a2a\/tasks(\/offered)?\?/.test(r.path));
    expect(discovery.length).to.be.at.least(2);
    for (let i = 1; i < discovery.length; i++) {
      expect(discovery[i].at - discovery[i - 1].at, "interval between discovery requests").to.be.at.least(9_900);
    }
    expect(stub.requests.filter((r) => r.path === "/api/v1/events")).to.have.length(1);
  });

  it("follows verdicts: a failed verdict (task.verdict passed false) re-runs the work for attempt 2, then paid", async () => {
    stub = await startSseStub({ forwardTo: api.url });
    const seen: Job[] = [];
    const stages: JobView[] = [];
    runtime = new AgentRuntime({
      api: new MarketApi({ baseUrl: stub.url, apiKey: agentKey }),
      privateKey: agent.privateKey,
      provider: chain.provider,
      capabilities: ["summarise"],
      reconnect: { initialDelayMs: 50 },
      work: (job) => {
        seen.push(job);
        return { attempt: job.attempt, text: job.briefText.toUpperCase() };
      },
      onJob: (job) => stages.push(job),
    });
    await runtime.start();
    await waitFor(() => runtime!.mode === "stream", 5000, "the stream");
    const posted = await postTask(
      { brief: "Shout this line.", privacy: "public", amount: USDC(5), requiredCapabilities: ["summarise"] },
      { api: posterApi, signer: poster },
    );
    const onChain = () => fixture.escrow.getTask(posted.onChainTaskId);
    stub.emit("task.open", { taskHash: posted.taskHash, role: "executor", state: "open" });
    await waitFor(async () => Number((await onChain()).submissionAttempts) === 1, 30_000, "the first delivery");
    await waitFor(() => runtime!.jobs()[0]?.stage === "delivered", 5000, "delivered");
    // The poster judges what the service's index holds: wait for it to have the submission (a loaded CI run was early).
    const indexed = (status: number) => async () => (await posterApi.task(posted.taskHash)).status === status;
    await waitFor(indexed(STATUS.Submitted), 30_000, "the index to hold the first delivery");
    await posterApi.decline(posted.taskHash, { reason: "not loud enough" });
    await waitFor(async () => Number((await onChain()).status) === STATUS.Verified, 30_000, "the failed verdict");
    // The service announces a verdict once its index holds it: so does the stand-in (the runtime reads the task).
    await waitFor(indexed(STATUS.Verified), 30_000, "the index");
    stub.emit("task.verdict", { taskHash: posted.taskHash, role: "worker", state: "verified", passed: false });
    await waitFor(async () => Number((await onChain()).submissionAttempts) === 2, 30_000, "the second delivery");
    await waitFor(() => runtime!.jobs()[0]?.stage === "delivered", 5000, "delivered again");
    await waitFor(indexed(STATUS.Submitted), 30_000, "the index to hold the second delivery");
    await posterApi.finalize(posted.taskHash);
    await waitFor(async () => Number((await onChain()).status) === STATUS.Completed, 30_000, "paid");
    stub.emit("task.settled", { taskHash: posted.taskHash, role: "worker", state: "completed", outcome: "paid" });
    await waitFor(() => runtime!.jobs()[0]?.stage === "paid", 5000, "the job to be paid");
    expect(seen.map((j) => j.attempt)).to.deep.equal([1, 2]);
    expect(stages.map((s) => s.stage)).to.deep.equal(["accepted", "delivered", "accepted", "delivered", "paid"]);
    expect(runtime.jobs()[0].attempt).to.equal(2);
  });

  it("bids when another agent holds the offer window, and accepts once the window ends", async () => {
    // A service whose exclusive offer window lasts 3 s, so the test waits for it.
    const windowed = await startTestApi(fixture.book, {
      VERIFIER_PRIVATE_KEY: verifierPrivateKey(),
      OFFER_WINDOW_SECONDS: "3",
    });
    const judge = new AutoVerifier(windowed.deps, { pollMs: 50 });
    judge.start();
    stub = await startSseStub({ forwardTo: windowed.url });
    try {
      const rival = await freshWallet(chain.provider);
      const rivalApi = new MarketApi({ baseUrl: windowed.url, apiKey: await windowed.createKey(rival.address) });
      await rivalApi.registerExecutor({ publicKey: agentPublicKey(rival.privateKey), capabilities: ["summarise"] });
      const market = new MarketApi({ baseUrl: windowed.url, apiKey: await windowed.createKey(poster.address) });
      const posted = await postTask(
        { brief: "Summarise: windows close.", privacy: "public", ...terms },
        { api: market, signer: poster },
      );
      await rivalApi.bid(posted.taskHash, { message: "mine" }); // the rival holds the window, and never accepts
      runtime = new AgentRuntime({
        api: new MarketApi({ baseUrl: stub.url, apiKey: await windowed.createKey(agent.address) }),
        privateKey: agent.privateKey,
        provider: chain.provider,
        capabilities: ["summarise"],
        reconnect: { initialDelayMs: 50 },
        work: (job) => ({ summary: job.briefText, wordCount: 3 }),
      });
      await runtime.start();
      await waitFor(
        async () => Number((await fixture.escrow.getTask(posted.onChainTaskId)).status) === STATUS.Completed,
        40_000,
        "the task to be paid",
      );
      expect((await fixture.escrow.getTask(posted.onChainTaskId)).worker).to.equal(agent.address);
      const calls = stub.requests
        .filter((r) => r.method === "POST" && r.path.startsWith(`/api/v1/a2a/tasks/${posted.taskHash}/`))
        .map((r) => r.path.split("/").pop());
      expect(calls.slice(0, 3)).to.deep.equal(["accept", "bid", "accept"]);
      const applicants = await market.applicants(posted.taskHash);
      expect(applicants.applicants.map((a) => a.agent)).to.have.members([
        rival.address.toLowerCase(),
        agent.address.toLowerCase(),
      ]);
    } finally {
      await runtime?.stop();
      runtime = undefined;
      await judge.stop();
      await windowed.close();
    }
  });
});
