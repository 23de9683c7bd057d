/**
 * The marketplace on two settlement chains at once (issue 27): task N of base and task N of arc are two tasks. Over
 * REST against one API serving base and arc, every marketplace row (bid, offer window, accept lock, assignment,
 * submission, verdict) is written and read on the task's own chain, every unsigned transaction goes to the task's
 * chain's escrow with its chain id, the chain rules refuse an agent that does not settle on the task's chain, and
 * credits are read and withdrawn per chain.
 *
 * On this branch the verifier per chain is not built yet: arc's marketplace verifier here is the test's FakeVerifier
 * signing with arc's escrow verifier (put in deps.verifiers); base's is the real one (VERIFIER_PRIVATE_KEY). The arc
 * listing is written through the repository (insertListing with chain "arc") after funding on arc, as listing on a
 * named chain over /a2a/tasks/index is built elsewhere.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import { CATEGORY, DAY, HOUR, USDC, ZONE, deployEscrowFixture } from "../../../helpers/fixtures";
import { startTestApi, type ApiResponse, type TestApi } from "../../../helpers/api";
import { ARC_CHAIN_ID, arcFixture, type ArcFixture } from "../../../helpers/arc";
import { FakeVerifier } from "../../../helpers/fakeVerifier";
import { ENV, INDEX } from "../../../helpers/market";
import { hardhatPrivateKey, verifierPrivateKey } from "../../../helpers/keys";
import { agentPublicKey, unwrapBriefKey, wrapBriefKey } from "../../../../server/domain/briefs";
import { insertListing } from "../../../../server/db/repositories/listings";
import { findBid } from "../../../../server/db/repositories/bids";
import { findOpenOffer } from "../../../../server/db/repositories/offers";
import { findAcceptLock } from "../../../../server/db/repositories/acceptLocks";
import { findAgentKey } from "../../../../server/db/repositories/agentKeys";
import { findAssignment } from "../../../../server/db/repositories/assignments";
import { findSubmission } from "../../../../server/db/repositories/submissions";
import { assignKey, verdictKey } from "../../../../server/verifier/types";
import type { ChainName } from "../../../../server/escrow/records";
import { MarketApi } from "../../../../client/sdk/index";

const BASE_CHAIN_ID = 31337;
const WORKER_ACCOUNT = 4;
const STRANGER_ACCOUNT = 6;
const task = (hash: string, op: string) => `/api/v1/a2a/tasks/${hash}/${op}`;

function expectError(res: ApiResponse, status: number, code: string) {
  expect(res.status, res.text).to.equal(status);
  expect(res.json.success).to.equal(false);
  expect(res.json.error.code, res.text).to.equal(code);
}

describe("API marketplace on two chains: base and arc", function () {
  let api: TestApi;
  let arc: ArcFixture;
  let base: Awaited<ReturnType<typeof deployEscrowFixture>>;
  let arcVerifier: FakeVerifier;
  let posterKey: string;

  beforeEach(async () => {
    base = await loadFixture(deployEscrowFixture);
    arc = await arcFixture();
    api = await startTestApi(
      base.book,
      { ...ENV, VERIFIER_PRIVATE_KEY: verifierPrivateKey() },
      { arc: { book: arc.book, provider: arc.provider } },
    );
    arcVerifier = new FakeVerifier(arc.escrow, arc.verifier, arc.verifier.address);
    api.deps.verifiers = new Map([
      ["base", api.deps.verifier!],
      ["arc", arcVerifier],
    ]);
    posterKey = await api.createKey(base.poster.address);
  });
  afterEach(async () => {
    await api.close();
  });

  const post = (path: string, key: string, body?: unknown) => api.request("POST", path, { key, body });
  const get = (path: string) => api.request("GET", path);

  /** A wallet registered over REST with `supportedChains`, with its API key. */
  async function registerAgent(supportedChains: ChainName[], privateKey = ethers.Wallet.createRandom().privateKey) {
    const address = new ethers.Wallet(privateKey).address;
    const key = await api.createKey(address);
    const res = await post("/api/v1/a2a/executors", key, { publicKey: agentPublicKey(privateKey), supportedChains });
    expect(res.status, res.text).to.equal(200);
    return { address: address.toLowerCase(), key };
  }

  /** Sends the answered unsigned transaction from `signer`, after checking it is for `chain`'s escrow. */
  async function send(signer: HardhatEthersSigner, res: ApiResponse, chain: ChainName) {
    expect(res.status, res.text).to.equal(200);
    const { unsignedTx } = res.json.data;
    const book = chain === "arc" ? arc.book : base.book;
    expect(res.json.data).to.include({ chain, chainId: chain === "arc" ? ARC_CHAIN_ID : BASE_CHAIN_ID });
    expect(unsignedTx).to.include({ to: book.escrow.proxy, from: signer.address.toLowerCase() });
    await (await signer.sendTransaction({ to: unsignedTx.to, data: unsignedTx.data })).wait();
    await api.synced();
  }

  /** Funds a task on base and lists it over REST (manual verification: the poster finalizes). */
  async function listOnBase() {
    const taskHash = ethers.sha256(ethers.toUtf8Bytes(`base brief ${Math.random()}`));
    const tx = await base.escrow
      .connect(base.poster)
      .createTask(taskHash, await base.usdc.getAddress(), USDC(20), CATEGORY, ZONE, DAY);
    await tx.wait();
    const res = await post(INDEX, posterKey, {
      txHash: tx.hash,
      taskHash,
      privacy: "public",
      verificationMode: "manual",
    });
    expect(res.status, res.text).to.equal(200);
    await api.synced();
    return { taskHash, taskId: Number(await base.escrow.nextTaskId()) - 1 };
  }

  /** Funds a task on arc and lists it through the repository with chain arc (private when `wrappedKeys` are given). */
  async function listOnArc(wrappedKeys: Record<string, string> | null = null) {
    const taskHash = ethers.sha256(ethers.toUtf8Bytes(`arc brief ${Math.random()}`));
    const token = (await arc.usdc.getAddress()).toLowerCase();
    const tx = await arc.escrow.connect(arc.poster).createTask(taskHash, token, USDC(30), CATEGORY, ZONE, HOUR);
    const receipt = (await tx.wait())!;
    const block = (await arc.provider.getBlock(receipt.blockNumber))!;
    const taskId = Number(await arc.escrow.nextTaskId()) - 1;
    await insertListing(api.deps.db, {
      taskId,
      taskHash,
      chain: "arc",
      poster: arc.poster.address.toLowerCase(),
      txHash: tx.hash,
      privacy: wrappedKeys ? "private" : "public",
      verificationMode: "manual",
      verificationCriteria: null,
      verifierAddress: null,
      rootHash: wrappedKeys ? taskHash : null,
      wrappedKeys,
      targetExecutor: null,
      serviceId: null,
      serviceTerms: null,
      publicBrief: null,
      custodyWrappedKey: null,
      token,
      amount: USDC(30).toString(),
      deadline: block.timestamp + HOUR,
      listedAt: Math.floor(Date.now() / 1000),
      capabilities: [],
    });
    await api.synced();
    return { taskHash, taskId, token };
  }

  it("keeps task N of base and task N of arc apart: rules, bids, offers, accepts, submissions, verdicts and transactions each on its own chain", async () => {
    // The arc task is private: its brief key is wrapped to the worker, which receives it when it accepts.
    const briefKey = Buffer.alloc(32, 7);
    const workerAddress = arc.worker.address.toLowerCase();
    const wrapped = wrapBriefKey(briefKey, agentPublicKey(hardhatPrivateKey(WORKER_ACCOUNT)));
    const onBase = await listOnBase();
    const onArc = await listOnArc({ [workerAddress]: wrapped });
    // The same on-chain id on both chains: only the chain tells them apart.
    expect(onArc.taskId).to.equal(onBase.taskId);
    const id = onArc.taskId;

    const baseOnly = await registerAgent(["base"]);
    const worker = await registerAgent(["base", "arc"], hardhatPrivateKey(WORKER_ACCOUNT));
    const baseWorker = await registerAgent(["base", "arc"], hardhatPrivateKey(STRANGER_ACCOUNT));
    expect(worker.address).to.equal(arc.worker.address.toLowerCase());
    expect(baseWorker.address).to.equal(base.stranger.address.toLowerCase());

    // The chain rules on the arc task: an agent registered for base only is refused bid, accept and assign.
    const refusedBid = await post(task(onArc.taskHash, "bid"), baseOnly.key, {});
    expectError(refusedBid, 409, "CHAIN_UNSUPPORTED");
    expect(refusedBid.json.error.details).to.deep.equal({ chain: "arc", supportedChains: ["base"] });
    expectError(await post(task(onArc.taskHash, "accept"), baseOnly.key), 409, "CHAIN_UNSUPPORTED");
    expectError(
      await post(`/api/v1/tasks/${onArc.taskHash}/assign`, posterKey, { worker: baseOnly.address }),
      409,
      "CHAIN_UNSUPPORTED",
    );
    // The same agent is served on the base task of the same id.
    const baseBid = await post(task(onBase.taskHash, "bid"), baseOnly.key, {});
    expect(baseBid.status, baseBid.text).to.equal(200);

    // The poster's unsigned moves on the arc task go to arc's escrow with arc's chain id.
    const assign = await post(`/api/v1/tasks/${onArc.taskHash}/assign`, posterKey, { worker: worker.address });
    expect(assign.status, assign.text).to.equal(200);
    expect(assign.json.data).to.include({ chain: "arc", chainId: ARC_CHAIN_ID, onChainTaskId: id });
    expect(assign.json.data.unsignedTx.to).to.equal(arc.book.escrow.proxy);
    const cancel = await post(task(onArc.taskHash, "cancel"), posterKey);
    expect(cancel.json.data).to.include({ chain: "arc", chainId: ARC_CHAIN_ID });
    expect(cancel.json.data.unsignedTx.to).to.equal(arc.book.escrow.proxy);
    const baseCancel = await post(task(onBase.taskHash, "cancel"), posterKey);
    expect(baseCancel.json.data).to.include({ chain: "base", chainId: BASE_CHAIN_ID });
    expect(baseCancel.json.data.unsignedTx.to).to.equal(base.book.escrow.proxy);

    // A bid on arc: its row and offer window are arc's; base's of the same id are the base bidder's.
    const arcBid = await post(task(onArc.taskHash, "bid"), worker.key, {});
    expect(arcBid.status, arcBid.text).to.equal(200);
    expect(arcBid.json.data.offer).to.include({ agent: worker.address });
    const db = api.deps.db;
    const wall = api.clock.wallNow();
    expect(await findBid(db, id, worker.address, "arc")).to.include({ chain: "arc", agent: worker.address });
    expect(await findBid(db, id, worker.address, "base")).to.equal(undefined);
    expect(await findBid(db, id, baseOnly.address, "arc")).to.equal(undefined);
    expect(await findOpenOffer(db, id, wall, "arc")).to.include({ agent: worker.address });
    expect(await findOpenOffer(db, id, wall, "base")).to.include({ agent: baseOnly.address });
    const arcApplicants = await api.request("GET", task(onArc.taskHash, "applicants"), { key: posterKey });
    expect(arcApplicants.json.data.applicants.map((a: { agent: string }) => a.agent)).to.deep.equal([worker.address]);

    // Accept on arc: arc's verifier sends marketplaceAssign on arc; nothing is assigned on base.
    const accepted = await post(task(onArc.taskHash, "accept"), worker.key);
    expect(accepted.status, accepted.text).to.equal(200);
    expect(unwrapBriefKey(accepted.json.data.wrappedKey, hardhatPrivateKey(WORKER_ACCOUNT))).to.deep.equal(briefKey);
    expect(await findAgentKey(db, id, worker.address, "arc")).to.include({ chain: "arc", source: "poster" });
    expect(await findAgentKey(db, id, worker.address, "base")).to.equal(undefined);
    expect(arcVerifier.calls).to.deep.equal([{ key: assignKey(id), args: [id, worker.address] }]);
    expect((await arcVerifier.settled(assignKey(id))).status).to.equal("confirmed");
    await api.synced();
    expect((await arc.escrow.getTask(id)).worker.toLowerCase()).to.equal(worker.address);
    expect((await base.escrow.getTask(id)).worker).to.equal(ethers.ZeroAddress);
    expect(await findAssignment(db, id, "arc")).to.include({ chain: "arc", agent: worker.address, via: "accept" });
    expect(await findAssignment(db, id, "base")).to.equal(undefined);
    expect(await findAcceptLock(db, id, "arc")).to.equal(undefined);

    // The base task of the same id is still open: the base bidder's offer window has to pass first, then another
    // agent accepts it through base's own verifier.
    expectError(await post(task(onBase.taskHash, "accept"), baseWorker.key), 409, "OFFER_HELD");
    api.clock.advanceWall(api.deps.config.marketplace.offerWindowSeconds + 1);
    const baseAccepted = await post(task(onBase.taskHash, "accept"), baseWorker.key);
    expect(baseAccepted.status, baseAccepted.text).to.equal(200);
    expect((await api.deps.verifier!.settled(assignKey(id))).status).to.equal("confirmed");
    await api.synced();
    expect((await base.escrow.getTask(id)).worker.toLowerCase()).to.equal(baseWorker.address);
    expect(await findAssignment(db, id, "base")).to.include({ chain: "base", agent: baseWorker.address });
    expect(await findAssignment(db, id, "arc")).to.include({ chain: "arc", agent: worker.address });
    expect(arcVerifier.calls).to.have.length(1);

    // Submissions: each to its own chain's escrow, stored under its own chain.
    const arcSubmit = await post(task(onArc.taskHash, "submit"), worker.key, { result: { chain: "arc" } });
    await send(arc.worker, arcSubmit, "arc");
    const baseSubmit = await post(task(onBase.taskHash, "submit"), baseWorker.key, { result: { chain: "base" } });
    await send(base.stranger, baseSubmit, "base");
    expect(await findSubmission(db, id, 1, "arc")).to.include({
      chain: "arc",
      agent: worker.address,
      evidenceHash: arcSubmit.json.data.evidenceHash,
    });
    expect(await findSubmission(db, id, 1, "base")).to.include({
      chain: "base",
      agent: baseWorker.address,
      evidenceHash: baseSubmit.json.data.evidenceHash,
    });

    // A verdict on base (the poster finalizes): base's submission only; arc's stays unjudged, its task Submitted.
    const finalized = await post(task(onBase.taskHash, "finalize"), posterKey);
    expect(finalized.status, finalized.text).to.equal(200);
    expect((await api.deps.verifier!.settled(verdictKey(id, 1))).status).to.equal("confirmed");
    await api.synced();
    expect(await findSubmission(db, id, 1, "base")).to.include({ verdict: "pass" });
    expect(await findSubmission(db, id, 1, "arc")).to.include({ verdict: null });
    expect(arcVerifier.calls).to.have.length(1);
    expect(Number((await arc.escrow.getTask(id)).status)).to.equal(2); // Submitted
  });

  it("reads credits per chain and withdraws on the chain named, after a dispute on arc is split", async () => {
    const onArc = await listOnArc();
    const id = onArc.taskId;
    const worker = await registerAgent(["arc"], hardhatPrivateKey(WORKER_ACCOUNT));
    const workerKey = worker.key;
    expect((await post(task(onArc.taskHash, "accept"), workerKey)).status).to.equal(200);
    await arcVerifier.settled(assignKey(id));
    await api.synced();
    await send(arc.worker, await post(task(onArc.taskHash, "submit"), workerKey, { result: "arc work" }), "arc");
    await send(arc.poster, await post(task(onArc.taskHash, "dispute"), posterKey), "arc");

    // Arc's clock moves past the deadline and the 14-day dispute window; base's does not move: the window is read
    // in arc's chain time.
    const disputedAt = Number((await arc.escrow.getTask(id)).disputedAt);
    expectError(await post(task(onArc.taskHash, "reclaim"), posterKey), 400, "DEADLINE_NOT_REACHED");
    await arc.provider.send("evm_setNextBlockTimestamp", [disputedAt + 14 * DAY]);
    await arc.provider.send("evm_mine", []);
    await api.synced();
    const reclaim = await post(task(onArc.taskHash, "reclaim"), posterKey);
    expect(reclaim.json.data, reclaim.text).to.include({ outcome: "split" });
    await send(arc.poster, reclaim, "arc");

    const owed = await arc.escrow.creditOf(onArc.token, arc.worker.address);
    expect(owed > 0n).to.equal(true);
    const expected = {
      chain: "arc",
      chainId: ARC_CHAIN_ID,
      token: onArc.token,
      owed: owed.toString(),
      credited: owed.toString(),
      withdrawn: "0",
    };
    const all = await get(`/api/v1/credits/${worker.address}`);
    expect(all.status, all.text).to.equal(200);
    expect(all.json.data.credits).to.deep.equal([expected]);
    expect((await get(`/api/v1/credits/${worker.address}?chain=arc`)).json.data.credits).to.deep.equal([expected]);
    expect((await get(`/api/v1/credits/${worker.address}?chain=base`)).json.data.credits).to.deep.equal([]);
    expectError(await get(`/api/v1/credits/${worker.address}?chain=solana`), 400, "INVALID_CHAIN");

    // Nothing is owed on base (the posting chain, the default); the withdraw on arc goes to arc's escrow.
    const onBase = await post("/api/v1/credits/withdraw", workerKey, { token: onArc.token });
    expectError(onBase, 409, "INVALID_STATE");
    expect(onBase.json.error.details).to.deep.equal({ chain: "base" });
    expectError(
      await post("/api/v1/credits/withdraw", workerKey, { token: onArc.token, chain: "x" }),
      400,
      "INVALID_CHAIN",
    );
    // The SDK reads one chain's credits and builds the withdraw on arc as the REST calls do.
    const sdk = new MarketApi({ baseUrl: api.url, apiKey: workerKey });
    expect((await sdk.credits(worker.address, { chain: "arc" })).credits).to.deep.equal([expected]);
    expect((await sdk.credits(worker.address, { chain: "base" })).credits).to.deep.equal([]);
    const built = await sdk.withdraw({ token: onArc.token, chain: "arc" });
    expect(built).to.include({ chain: "arc", chainId: ARC_CHAIN_ID, amount: owed.toString() });
    expect(built.unsignedTx.to).to.equal(arc.book.escrow.proxy);
    const withdraw = await post("/api/v1/credits/withdraw", workerKey, { token: onArc.token, chain: "arc" });
    expect(withdraw.json.data).to.include({ amount: owed.toString(), to: worker.address });
    const before = await arc.usdc.balanceOf(arc.worker.address);
    await send(arc.worker, withdraw, "arc");
    expect((await arc.usdc.balanceOf(arc.worker.address)) - before).to.equal(owed);
    const after = await get(`/api/v1/credits/${worker.address}?chain=arc`);
    expect(after.json.data.credits).to.deep.equal([{ ...expected, owed: "0", withdrawn: owed.toString() }]);
  });
  it("prices a service in the settlement token of the chain it is rented on; an agent that does not settle there is refused", async () => {
    const SERVICES = "/api/v1/marketplace/services";
    const body = { name: "Summaries", description: "Summarises a text", price_raw: 5_000_000 };
    const baseOnly = await registerAgent(["base"]);
    const refused = await post(SERVICES, baseOnly.key, { ...body, chain: "arc" });
    expectError(refused, 409, "TARGET_CHAIN_UNSUPPORTED");
    expect(refused.json.error.details).to.deep.equal({ chain: "arc", supportedChains: ["base"] });
    expectError(await post(SERVICES, baseOnly.key, { ...body, chain: "polygon" }), 400, "INVALID_CHAIN");
    const onBase = await post(SERVICES, baseOnly.key, body);
    expect(onBase.status, onBase.text).to.equal(201);
    expect(onBase.json.data.token).to.equal((await base.usdc.getAddress()).toLowerCase());

    const both = await registerAgent(["base", "arc"]);
    const onArc = await post(SERVICES, both.key, { ...body, chain: "arc" });
    expect(onArc.status, onArc.text).to.equal(201);
    expect(onArc.json.data.token).to.equal((await arc.usdc.getAddress()).toLowerCase());
    expect(onArc.json.data.token).to.not.equal(onBase.json.data.token);
  });
});
