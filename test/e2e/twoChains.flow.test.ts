/**
 * One service settling on two chains at once, as its users meet it: base and arc (two in-process Hardhat chains with
 * their own escrow, token and chain id, each served over JSON-RPC HTTP), one API with an indexer and a marketplace
 * verifier per chain. A poster with a plain ethers JsonRpcProvider + Wallet posts on arc and on base at the same
 * time; an agent registered for base only is refused the arc task (CHAIN_UNSUPPORTED); an agent runtime that works on
 * both takes both, delivers each on its own chain, and both are paid, each read showing its chain. An indexer restart
 * and a reorg on arc leave base's index untouched.
 */
import { expect } from "chai";
import { Contract, JsonRpcProvider, Wallet } from "ethers";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture, FEE_BPS, STATUS, USDC } from "../helpers/fixtures";
import { arcFixture, serveArcChain, type ArcFixture } from "../helpers/arc";
import { startTestApi, type TestApi } from "../helpers/api";
import { hardhatPrivateKey, verifierPrivateKey } from "../helpers/keys";
import { serveChain, type ServedChain } from "../helpers/rpc";
import { waitFor } from "../helpers/agentMarket";
import { AutoVerifier } from "../../server/domain/marketplace/autoVerifier";
import { AgentRuntime, MarketApi, agentPublicKey, postTask, type JobView } from "../../client/sdk/index";

const BALANCE = ["function balanceOf(address) view returns (uint256)"];
const POSTER = 3;
const WORKER = 4;
const BASE_ONLY_AGENT = 7;

describe("two settlement chains at once: a task on arc and a task on base, build to paid", function () {
  this.timeout(180_000);
  let base: ServedChain;
  let arcServed: ServedChain;
  let api: TestApi;
  let auto: AutoVerifier;
  let fixture: Awaited<ReturnType<typeof deployEscrowFixture>>;
  let arc: ArcFixture;
  let runtime: AgentRuntime | undefined;

  before(async () => {
    fixture = await loadFixture(deployEscrowFixture);
    arc = await arcFixture();
    base = await serveChain();
    arcServed = await serveArcChain();
    api = await startTestApi(fixture.book, { VERIFIER_PRIVATE_KEY: verifierPrivateKey() }, { arc });
    auto = new AutoVerifier(api.deps, { pollMs: 50 });
    auto.start();
  });

  after(async () => {
    await runtime?.stop();
    await auto?.stop();
    await api?.close();
    await arcServed?.close();
    await base?.close();
  });

  const wallet = (index: number, chain: ServedChain) => new Wallet(hardhatPrivateKey(index), chain.provider);
  const usdcOn = (token: string, provider: JsonRpcProvider, address: string) =>
    new Contract(token, BALANCE, provider).balanceOf(address) as Promise<bigint>;

  it("posts on both chains at once, refuses a base-only agent the arc task, pays both to an agent on both chains", async () => {
    const posterAddress = new Wallet(hardhatPrivateKey(POSTER)).address;
    const poster = new MarketApi({ baseUrl: api.url, apiKey: await api.createKey(posterAddress) });
    const draft = (text: string, amount: bigint) => ({
      brief: text,
      privacy: "public" as const,
      amount,
      verificationMode: "auto" as const,
      verificationCriteria: { min_length: 5 },
      requiredCapabilities: ["tally"],
    });
    const [onArc, onBase] = await Promise.all([
      postTask(draft("Tally the arc escrow's events.", USDC(7)), {
        api: poster,
        signer: wallet(POSTER, arcServed),
        chain: "arc",
      }),
      postTask(draft("Tally the base escrow's events.", USDC(5)), { api: poster, signer: wallet(POSTER, base) }),
    ]);
    expect(onArc).to.include({ chain: "arc", chainId: arc.book.chainId });
    expect(onBase).to.include({ chain: "base", chainId: fixture.book.chainId });
    const arcReceipt = await arcServed.provider.getTransactionReceipt(onArc.txHash);
    expect(arcReceipt!.to!.toLowerCase(), "funded on arc's escrow").to.equal(arc.book.escrow.proxy.toLowerCase());

    // Each read shows its own chain; the same on-chain id may exist on both.
    for (const [posted, chain, chainId] of [
      [onArc, "arc", arc.book.chainId],
      [onBase, "base", fixture.book.chainId],
    ] as const) {
      const read = await api.request("GET", `/api/v1/tasks/${posted.taskHash}`);
      expect(read.status, read.text).to.equal(200);
      expect(read.json.data).to.include({ chain, chainId });
    }

    // An agent that settles on base only is refused the arc task, and may take the base one.
    const baseOnlyAddress = new Wallet(hardhatPrivateKey(BASE_ONLY_AGENT)).address;
    const baseOnlyKey = await api.createKey(baseOnlyAddress);
    const registered = await api.request("POST", "/api/v1/a2a/executors", {
      key: baseOnlyKey,
      body: {
        publicKey: agentPublicKey(hardhatPrivateKey(BASE_ONLY_AGENT)),
        capabilities: ["something-else"],
        supportedChains: ["base"],
      },
    });
    expect(registered.status, registered.text).to.be.oneOf([200, 201]);
    const refused = await api.request("POST", `/api/v1/a2a/tasks/${onArc.taskHash}/accept`, {
      key: baseOnlyKey,
      body: {},
    });
    expect(refused.status, refused.text).to.equal(409);
    expect(refused.json.error.code).to.equal("CHAIN_UNSUPPORTED");

    // An agent on both chains: one runtime, a signer per chain.
    const workerAddress = new Wallet(hardhatPrivateKey(WORKER)).address;
    const [arcBefore, baseBefore] = await Promise.all([
      usdcOn(arc.book.token.address, arcServed.provider, workerAddress),
      usdcOn(fixture.book.token.address, base.provider, workerAddress),
    ]);
    const stages: JobView[] = [];
    runtime = new AgentRuntime({
      api: new MarketApi({ baseUrl: api.url, apiKey: await api.createKey(workerAddress) }),
      privateKey: hardhatPrivateKey(WORKER),
      provider: new JsonRpcProvider(base.url, undefined, { cacheTimeout: -1 }),
      providers: { arc: new JsonRpcProvider(arcServed.url, undefined, { cacheTimeout: -1 }) },
      capabilities: ["tally"],
      work: (job) => ({ tally: `counted on ${job.chain}` }),
      onJob: (job) => stages.push(job),
    });
    await runtime.start();
    expect(runtime.chains).to.have.members(["base", "arc"]);
    const paid = (hash: string) => stages.some((j) => j.taskHash === hash.toLowerCase() && j.stage === "paid");
    await waitFor(() => paid(onArc.taskHash) && paid(onBase.taskHash), 120_000, "both tasks paid").catch((error) => {
      // The stages the runtime went through name where a task stopped.
      const seen = stages.map((j) => `${j.chain} ${j.taskHash.slice(0, 10)} ${j.stage}`).join("; ");
      throw new Error(`${(error as Error).message}; stages seen: ${seen || "none"}`);
    });
    expect(stages.find((j) => j.taskHash === onArc.taskHash.toLowerCase())!.chain).to.equal("arc");

    const payout = (amount: bigint) => amount - (amount * BigInt(FEE_BPS)) / 10_000n;
    expect(await usdcOn(arc.book.token.address, arcServed.provider, workerAddress)).to.equal(
      arcBefore + payout(USDC(7)),
    );
    expect(await usdcOn(fixture.book.token.address, base.provider, workerAddress)).to.equal(
      baseBefore + payout(USDC(5)),
    );
    for (const [posted, chain] of [
      [onArc, "arc"],
      [onBase, "base"],
    ] as const) {
      await waitFor(
        async () =>
          (await api.request("GET", `/api/v1/tasks/${posted.taskHash}`)).json.data.status === STATUS.Completed,
        20_000,
        `${chain} task indexed as completed`,
      );
    }
  });

  it("an indexer restart and a reorg on arc leave base's index untouched", async () => {
    const db = api.testDb.db;
    const baseRows = async () => JSON.stringify(await db("tasks").where({ chain: "base" }).orderBy("task_id").select());
    const baseBefore = await baseRows();
    const baseCheckpoint = await db("checkpoints").where({ chain: "base" }).select();

    // A restart of arc's indexer.
    await api.restartArcIndexer();
    await api.synced();
    expect(await baseRows()).to.equal(baseBefore);

    // A task funded on arc, then reorged away: arc's index drops it, base's rows and checkpoint stay.
    const snapshot = await arc.runtime.network.provider.send("evm_snapshot", []);
    const escrow = arc.escrow.connect(arc.poster);
    const hash = "0x" + "ab".repeat(32);
    await (await escrow.createTask(hash, arc.book.token.address, USDC(1), "", "global", 3600)).wait();
    await api.synced();
    expect(await db("tasks").where({ chain: "arc", task_hash: hash }).first()).to.not.equal(undefined);
    await arc.runtime.network.provider.send("evm_revert", [snapshot]);
    // The other branch grows longer than the one the indexer saw.
    for (let i = 0; i < 3; i++) await arc.runtime.network.provider.send("evm_mine", []);
    await waitFor(
      async () => (await db("tasks").where({ chain: "arc", task_hash: hash }).first()) === undefined,
      20_000,
      "the reorged arc task leaves the index",
    );
    expect(await baseRows()).to.equal(baseBefore);
    expect(await db("checkpoints").where({ chain: "base" }).select()).to.deep.equal(baseCheckpoint);
  });
});
