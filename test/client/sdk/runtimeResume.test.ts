/**
 * The SDK's agent runtime across restarts and pauses, on the chain served over HTTP and a real API (its own event
 * stream) with the marketplace verifier:
 * - a runtime stopped after accepting, before delivering: a new runtime of the same agent finds the task in its work
 *   list, runs the work once and delivers it once; the task is paid;
 * - a runtime stopped after delivering: a new runtime follows the verdict without submitting again;
 * - a runtime stopped after delivering a private task whose verdict then fails: a new runtime decrypts the brief
 *   again, works once for attempt 2 and delivers it; the task is paid;
 * - a delivery whose transaction cannot be sent (a wallet without gas) is abandoned on the escrow's answer, read from
 *   the chain, without polling the service's index;
 * - paused, a runtime takes no new task (but the task stays open); resumed, it takes it.
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import { deployEscrowFixture, STATUS, USDC } from "../../helpers/fixtures";
import { type TestApi } from "../../helpers/api";
import { freshWallet, type ServedChain } from "../../helpers/rpc";
import { startAgentMarket, waitFor, type AgentMarket } from "../../helpers/agentMarket";
import { AgentRuntime, MarketApi, postTask, type Job, type JobView } from "../../../client/sdk/index";

describe("SDK agent runtime: restarts and pauses", () => {
  let chain: ServedChain;
  let api: TestApi;
  let market: AgentMarket;
  let fixture: Awaited<ReturnType<typeof deployEscrowFixture>>;
  let poster: Wallet;
  let agent: Wallet;
  let posterApi: MarketApi;
  let agentKey: string;
  const runtimes: AgentRuntime[] = [];

  beforeEach(async () => {
    market = await startAgentMarket();
    ({ fixture, chain, api, poster, posterApi } = market);
    agent = await freshWallet(chain.provider);
    agentKey = await api.createKey(agent.address);
  });

  afterEach(async () => {
    for (const r of runtimes.splice(0)) await r.stop();
    await market.close();
  });

  function newRuntime(work: (job: Job) => unknown | Promise<unknown>, stages: JobView[] = []) {
    const runtime = new AgentRuntime({
      api: new MarketApi({ baseUrl: api.url, token: agentKey }),
      privateKey: agent.privateKey,
      provider: chain.provider,
      capabilities: ["summarise"],
      reconnect: { initialDelayMs: 50 },
      work,
      onJob: (job) => stages.push(job),
    });
    runtimes.push(runtime);
    return runtime;
  }

  const onChain = (id: number) => fixture.escrow.getTask(id);
  const summary = (job: Job) => ({ summary: job.briefText.split(".")[0], wordCount: job.briefText.split(" ").length });

  it("stopped after accepting, before delivering: a new runtime delivers the task once and it is paid", async () => {
    let release: (value: unknown) => void = () => undefined;
    let started = false;
    const first = newRuntime(
      () =>
        new Promise((_, reject) => {
          started = true;
          release = () => reject(new Error("the runtime was stopped"));
        }),
    );
    await first.start();
    const posted = await postTask(
      {
        brief: "Summarise the restart. Nothing is lost.",
        privacy: "public",
        amount: USDC(10),
        requiredCapabilities: ["summarise"],
        verificationMode: "auto",
        verificationCriteria: { required_fields: ["summary", "wordCount"] },
      },
      { api: posterApi, signer: poster },
    );
    await waitFor(() => started, 30_000, "the first runtime's work to start");
    // Stopped mid-task: its work gives up, nothing was delivered.
    const stopped = first.stop();
    release(undefined);
    await stopped;
    expect(first.delivered()).to.deep.equal([]);
    expect(Number((await onChain(posted.onChainTaskId)).status)).to.equal(STATUS.Assigned);

    const seen: Job[] = [];
    const stages: JobView[] = [];
    const second = newRuntime((job) => (seen.push(job), summary(job)), stages);
    await second.start();
    await waitFor(
      async () => Number((await onChain(posted.onChainTaskId)).status) === STATUS.Completed,
      40_000,
      "the task to be paid",
    );
    expect(seen.map((j) => j.taskHash)).to.deep.equal([posted.taskHash]);
    expect(Number((await onChain(posted.onChainTaskId)).submissionAttempts)).to.equal(1);
    expect(stages[0]).to.include({ taskHash: posted.taskHash, stage: "accepted", attempt: 1 });
    expect(second.delivered()).to.deep.equal([posted.taskHash]);
  });

  it("stopped after delivering: a new runtime follows the verdict and submits nothing again", async () => {
    const first = newRuntime(summary);
    await first.start();
    const posted = await postTask(
      { brief: "Deliver once. Then wait.", privacy: "public", amount: USDC(5), requiredCapabilities: ["summarise"] },
      { api: posterApi, signer: poster },
    );
    await waitFor(() => first.jobs()[0]?.stage === "delivered", 30_000, "the first delivery");
    await first.stop();
    await waitFor(async () => (await posterApi.task(posted.taskHash)).status === STATUS.Submitted, 20_000, "indexed");

    const seen: Job[] = [];
    const stages: JobView[] = [];
    const second = newRuntime((job) => (seen.push(job), summary(job)), stages);
    await second.start();
    await waitFor(() => second.jobs()[0]?.stage === "delivered", 20_000, "the resumed job");
    await posterApi.finalize(posted.taskHash);
    await waitFor(
      async () => Number((await onChain(posted.onChainTaskId)).status) === STATUS.Completed,
      30_000,
      "paid",
    );
    await waitFor(() => second.jobs()[0]?.stage === "paid", 20_000, "the job to be paid");
    expect(seen, "no work again").to.deep.equal([]);
    expect(Number((await onChain(posted.onChainTaskId)).submissionAttempts)).to.equal(1);
    expect(stages.map((s) => s.stage)).to.deep.equal(["delivered", "paid"]);
  });

  it("stopped before a failed verdict on a private task: a new runtime decrypts the brief again and delivers attempt 2 once", async () => {
    const brief = "Summarise the private audit. Mention the fee.";
    const firstSeen: Job[] = [];
    const first = newRuntime((job) => (firstSeen.push(job), { attempt: job.attempt, text: job.briefText }));
    await first.start();
    const posted = await postTask(
      { brief, privacy: "private", amount: USDC(5), requiredCapabilities: ["summarise"] },
      { api: posterApi, signer: poster },
    );
    await waitFor(() => first.jobs()[0]?.stage === "delivered", 30_000, "the first delivery");
    await first.stop();
    const indexed = (status: number) => async () => (await posterApi.task(posted.taskHash)).status === status;
    await waitFor(indexed(STATUS.Submitted), 20_000, "the index to hold the first delivery");
    await posterApi.decline(posted.taskHash, { reason: "mention the fee's rate" });
    await waitFor(indexed(STATUS.Verified), 20_000, "the failed verdict");

    const seen: Job[] = [];
    const stages: JobView[] = [];
    const second = newRuntime((job) => (seen.push(job), { attempt: job.attempt, text: job.briefText }), stages);
    await second.start();
    await waitFor(
      async () => Number((await onChain(posted.onChainTaskId)).submissionAttempts) === 2,
      30_000,
      "the second delivery",
    );
    await waitFor(indexed(STATUS.Submitted), 20_000, "the index to hold the second delivery");
    const detail = await posterApi.task(posted.taskHash);
    expect(detail.resultData, "the poster sees attempt 2's result").to.deep.equal({ attempt: 2, text: brief });
    await posterApi.finalize(posted.taskHash);
    await waitFor(() => second.jobs()[0]?.stage === "paid", 30_000, "the job to be paid");
    expect(firstSeen.map((j) => [j.attempt, j.briefText])).to.deep.equal([[1, brief]]);
    expect(
      seen.map((j) => [j.attempt, j.briefText]),
      "decrypted again, worked once",
    ).to.deep.equal([[2, brief]]);
    expect(Number((await onChain(posted.onChainTaskId)).status)).to.equal(STATUS.Completed);
  });

  it("a delivery whose transaction cannot be sent is abandoned on the chain's answer, without polling the service", async () => {
    // A wallet without gas: the marketplace assigns it (the verifier pays), its own submitEvidence cannot be sent.
    agent = Wallet.createRandom().connect(chain.provider) as unknown as Wallet;
    agentKey = await api.createKey(agent.address);
    const runtime = newRuntime(summary);
    const serviceReads: string[] = [];
    const agentApi = (runtime as unknown as { api: MarketApi }).api;
    const read = agentApi.task.bind(agentApi);
    // Reads of a task the runtime has taken (before, it reads a task announced by the stream to consider it).
    agentApi.task = (id: string | number) => {
      if (runtime.jobs().some((j) => j.taskHash === id)) serviceReads.push(String(id));
      return read(id);
    };
    await runtime.start();
    const posted = await postTask(
      { brief: "No gas. Report it.", privacy: "public", amount: USDC(5), requiredCapabilities: ["summarise"] },
      { api: posterApi, signer: poster },
    );
    await waitFor(() => runtime.jobs()[0]?.stage === "abandoned", 30_000, "the delivery to be abandoned");
    expect(runtime.jobs()[0].error).to.match(/enough funds|insufficient funds/i);
    expect(Number((await onChain(posted.onChainTaskId)).submissionAttempts)).to.equal(0);
    expect(serviceReads, "decided from the chain, not from the service's index").to.deep.equal([]);
  });

  it("paused: takes no new task; resumed: takes it", async () => {
    const seen: Job[] = [];
    const runtime = newRuntime((job) => (seen.push(job), summary(job)));
    await runtime.start();
    await waitFor(() => runtime.mode === "stream", 5000, "the stream");
    runtime.pause();
    const posted = await postTask(
      {
        brief: "Wait for the resume. Then work.",
        privacy: "public",
        amount: USDC(5),
        requiredCapabilities: ["summarise"],
        verificationMode: "auto",
        verificationCriteria: { required_fields: ["summary"] },
      },
      { api: posterApi, signer: poster },
    );
    await waitFor(async () => (await posterApi.task(posted.taskHash)).a2aState?.status === "open", 20_000, "listed");
    // The task.open event has come and gone: the stream's resume point is at or past it.
    const opened = await api.deps
      .db("market_events")
      .where({ task_hash: posted.taskHash.toLowerCase(), type: "task.open" })
      .first();
    expect(opened, "the task.open event").to.not.equal(undefined);
    await waitFor(() => Number(runtime.lastEventId ?? 0) >= Number(opened.id), 10_000, "the runtime to see task.open");
    expect(seen).to.deep.equal([]);
    expect(Number((await onChain(posted.onChainTaskId)).status)).to.equal(STATUS.Funded);
    runtime.resume();
    await waitFor(
      async () => Number((await onChain(posted.onChainTaskId)).status) === STATUS.Completed,
      30_000,
      "the task to be paid",
    );
    expect(seen.map((j) => j.taskHash)).to.deep.equal([posted.taskHash]);
  });
});
