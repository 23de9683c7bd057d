/**
 * Delivery over HTTP on the in-process Hardhat chain (the "Proof" list): every unsigned transaction the API
 * answers is checked like a careful client would (wallet, escrow, chain, exact call, no value), signed by the right
 * fixture wallet and mined; every payout is checked to the unit (worker: amount minus fee; treasury: the fee).
 * The marketplace verifier is the real one (VERIFIER_PRIVATE_KEY) except where a test steers it with the fake.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import type { Signer } from "ethers";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import SwaggerParser from "@apidevtools/swagger-parser";
import { DAY, HOUR, OPEN_SALT, STATUS, USDC, commitOpen, deployEscrowFixture } from "../../../helpers/fixtures";
import { startTestApi, type ApiResponse } from "../../../helpers/api";
import { FakeVerifier } from "../../../helpers/fakeVerifier";
import { verifierPrivateKey } from "../../../helpers/keys";
import { agentPublicKey, encryptBrief, wrapBriefKey } from "../../../../server/domain/briefs";
import { AutoVerifier } from "../../../../server/domain/marketplace/autoVerifier";
import { canonicalJson } from "../../../../server/domain/marketplace/canonicalJson";
import { findSubmission, listSubmissions } from "../../../../server/db/repositories/submissions";
import { listIntentsByTask } from "../../../../server/db/repositories/verifierIntents";
import { assignKey, verdictKey } from "../../../../server/verifier/types";

/** Limits raised: these tests make many requests from one address. */
const ENV = {
  RATE_IP_PER_WINDOW: "100000",
  RATE_WALLET_FAMILY_PER_MINUTE: "100000",
  RATE_IP_POSTING_PER_MINUTE: "100000",
};

const path = (hash: string, op: string) => `/api/v1/a2a/tasks/${hash}/${op}`;
const evidenceOf = (result: unknown) => ethers.keccak256(ethers.toUtf8Bytes(canonicalJson(result)));

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 20_000) {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function expectError(res: ApiResponse, status: number, code: string) {
  expect(res.status, res.text).to.equal(status);
  expect(res.json.success).to.equal(false);
  expect(res.json.error.code, res.text).to.equal(code);
}

interface PostOptions {
  mode?: "manual" | "auto" | "agent";
  criteria?: Record<string, unknown>;
  privacy?: "public" | "private";
  amount?: bigint;
  duration?: number;
  /** Leave the task open (no accept). */
  open?: boolean;
}

async function setup(options: { verifier?: "real" | "fake"; auto?: boolean } = {}) {
  const fx = await loadFixture(deployEscrowFixture);
  const api = await startTestApi(fx.book, {
    ...ENV,
    ...(options.verifier === "fake" ? {} : { VERIFIER_PRIVATE_KEY: verifierPrivateKey() }),
  });
  const fake = new FakeVerifier(fx.escrow, fx.verifier, fx.verifier.address);
  if (options.verifier === "fake") api.deps.verifier = fake;
  const marketVerifier = api.deps.verifier!;
  if (options.auto) {
    const auto = new AutoVerifier(api.deps, { pollMs: 50 });
    auto.start();
    api.testDb.onCleanup(() => auto.stop());
  }
  const { escrow, usdc, poster, worker, verifierAgent, stranger, treasury, admin } = fx;
  const escrowAddress = (await escrow.getAddress()).toLowerCase();
  const token = await usdc.getAddress();
  const chainId = Number((await ethers.provider.getNetwork()).chainId);
  const keys = {
    poster: await api.createKey(poster.address),
    worker: await api.createKey(worker.address),
    verifierAgent: await api.createKey(verifierAgent.address),
    stranger: await api.createKey(stranger.address),
  };
  const workerPublicKey = agentPublicKey(ethers.Wallet.createRandom().privateKey);
  const registered = await api.request("POST", "/api/v1/a2a/executors", {
    key: keys.worker,
    body: { publicKey: workerPublicKey },
  });
  expect(registered.status, registered.text).to.equal(200);
  let briefs = 0;

  const post = (p: string, key: string | undefined, body?: unknown) => api.request("POST", p, { key, body });
  const get = (p: string, key?: string) => api.request("GET", p, { key });

  /**
   * Checks an answered unsigned transaction as a careful client does (the key's wallet, the escrow, the chain, the
   * exact call, no value), signs it with `signer` and waits for the indexer. Returns the decoded call.
   */
  async function send(signer: Signer, res: ApiResponse, fn: string, args: unknown[]) {
    expect(res.status, res.text).to.equal(200);
    const { unsignedTx, chainId: answeredChain } = res.json.data;
    const from = (await signer.getAddress()).toLowerCase();
    expect(unsignedTx.from).to.equal(from);
    expect(unsignedTx.to.toLowerCase()).to.equal(escrowAddress);
    expect(unsignedTx.value).to.equal("0");
    expect(answeredChain).to.equal(chainId);
    const call = escrow.interface.parseTransaction({ data: unsignedTx.data })!;
    expect(call.name).to.equal(fn);
    expect(call.args.map((a: unknown) => (typeof a === "bigint" ? Number(a) : a))).to.deep.equal(args);
    const receipt = await (await signer.sendTransaction({ to: unsignedTx.to, data: unsignedTx.data })).wait();
    expect(receipt!.status).to.equal(1);
    await api.synced();
    return call;
  }

  /** Builds, signs and lists a task through the API; the worker accepts it unless `open`. */
  async function postTask(o: PostOptions = {}) {
    const taskHash = ethers.sha256(ethers.toUtf8Bytes(`brief ${++briefs} ${Math.random()}`));
    const amount = o.amount ?? USDC(100);
    const mode = o.mode ?? "manual";
    const privacy = o.privacy ?? "public";
    const terms: Record<string, unknown> = { verificationMode: mode };
    if (o.criteria) terms.verificationCriteria = o.criteria;
    if (mode === "agent") terms.verifierAddress = verifierAgent.address;
    const built = await post("/api/v1/tasks", keys.poster, {
      taskHash,
      token,
      amount: amount.toString(),
      locationZone: "global",
      duration: String(o.duration ?? DAY),
      ...terms,
    });
    expect(built.status, built.text).to.equal(200);
    const tx = await poster.sendTransaction({
      to: built.json.data.unsignedTx.to,
      data: built.json.data.unsignedTx.data,
    });
    await tx.wait();
    const wrappedKeys =
      privacy === "private"
        ? {
            wrappedKeys: {
              [worker.address]: wrapBriefKey(encryptBrief(Buffer.from("private brief")).key, workerPublicKey),
              ...(mode === "agent"
                ? { [verifierAgent.address]: wrapBriefKey(encryptBrief(Buffer.from("x")).key, workerPublicKey) }
                : {}),
            },
          }
        : {};
    const listed = await post("/api/v1/a2a/tasks/index", keys.poster, {
      txHash: tx.hash,
      taskHash,
      privacy,
      ...terms,
      ...wrappedKeys,
    });
    expect(listed.status, listed.text).to.equal(200);
    const taskId: number = listed.json.data.onChainTaskId;
    await api.synced();
    if (!o.open) {
      const accepted = await post(path(taskHash, "accept"), keys.worker);
      expect(accepted.status, accepted.text).to.equal(200);
      expect(await marketVerifier.settled(assignKey(taskId))).to.include({ status: "confirmed" });
      await api.synced();
      expect((await escrow.getTask(taskId)).worker).to.equal(worker.address);
    }
    return { taskHash, taskId, amount };
  }

  /** Submits `result` as the worker and mines its submitEvidence. */
  async function deliver(t: { taskHash: string; taskId: number }, result: unknown, attempt: number) {
    const res = await post(path(t.taskHash, "submit"), keys.worker, { result });
    expect(res.status, res.text).to.equal(200);
    expect(res.json.data).to.include({ attempt, evidenceHash: evidenceOf(result), taskHash: t.taskHash });
    await send(worker, res, "submitEvidence", [t.taskId, evidenceOf(result)]);
    return res.json.data;
  }

  /** Declines (or finalizes) as the poster and waits until the marketplace verifier's verdict is indexed. */
  async function judge(t: { taskHash: string; taskId: number }, passed: boolean, attempt: number) {
    const res = await post(path(t.taskHash, passed ? "finalize" : "decline"), keys.poster, passed ? undefined : {});
    expect(res.status, res.text).to.equal(200);
    expect(res.json.data).to.include({ attempt, passed, taskHash: t.taskHash, onChainTaskId: t.taskId });
    expect(res.json.data.intent.key).to.equal(verdictKey(t.taskId, attempt));
    expect(await marketVerifier.settled(verdictKey(t.taskId, attempt))).to.include({ status: "confirmed" });
    await api.synced();
    return res.json.data;
  }

  const balances = async () => ({
    poster: await usdc.balanceOf(poster.address),
    worker: await usdc.balanceOf(worker.address),
    treasury: await usdc.balanceOf(treasury.address),
    escrow: await usdc.balanceOf(escrowAddress),
  });

  /** Worker got amount minus fee, treasury the fee (feeBps read live), the poster nothing back. */
  async function expectPaid(before: Awaited<ReturnType<typeof balances>>, amount: bigint) {
    const fee = (amount * (await escrow.feeBps())) / 10_000n;
    const after = await balances();
    expect(after.worker - before.worker).to.equal(amount - fee);
    expect(after.treasury - before.treasury).to.equal(fee);
    expect(after.poster).to.equal(before.poster);
    expect(before.escrow - after.escrow).to.equal(amount);
  }

  /** The poster got the whole reward back; nobody else moved. */
  async function expectRefunded(before: Awaited<ReturnType<typeof balances>>, amount: bigint) {
    const after = await balances();
    expect(after.poster - before.poster).to.equal(amount);
    expect(after.worker).to.equal(before.worker);
    expect(after.treasury).to.equal(before.treasury);
    expect(before.escrow - after.escrow).to.equal(amount);
  }

  const status = async (taskId: number) => Number((await escrow.getTask(taskId)).status);

  return {
    ...fx,
    api,
    fake,
    marketVerifier,
    keys,
    post,
    get,
    send,
    postTask,
    deliver,
    judge,
    balances,
    expectPaid,
    expectRefunded,
    status,
    admin,
  };
}

type Ctx = Awaited<ReturnType<typeof setup>>;

const withApi =
  (fn: (ctx: Ctx) => Promise<void>, options: Parameters<typeof setup>[0] = {}) =>
  async () => {
    const ctx = await setup(options);
    try {
      await fn(ctx);
    } finally {
      await ctx.api.close();
    }
  };

describe("API delivery: submit, verify, finalize, decline, release, reclaim, dispute", () => {
  describe("the life of a task in each mode", () => {
    it(
      "manual pass: submit, finalize; the deliverable is shown to poster and worker only; paid to the unit",
      withApi(async ({ api, poster, worker, keys, post, get, send, postTask, judge, balances, expectPaid, status }) => {
        const t = await postTask({ privacy: "private" });
        const result = { poem: "escrow holds the coin / work is done, the verdict comes / the worker is paid", n: 3 };

        // Stored first: the deliverable is not shown, and finalize waits, until submitEvidence is mined.
        const submitted = await post(path(t.taskHash, "submit"), keys.worker, {
          result,
          evidenceHash: evidenceOf(result),
        });
        expect(submitted.status, submitted.text).to.equal(200);
        expect(submitted.json.data).to.include({ attempt: 1, evidenceHash: evidenceOf(result) });
        expect(submitted.json.data.evidenceHash).to.equal(
          ethers.keccak256(ethers.toUtf8Bytes(JSON.stringify({ n: 3, poem: result.poem }))),
        );
        const stored = await findSubmission(api.deps.db, t.taskId, 1, "base");
        expect(stored).to.include({
          agent: worker.address.toLowerCase(),
          result: canonicalJson(result),
          verdict: null,
        });
        expect((await get(`/api/v1/tasks/${t.taskHash}`, keys.poster)).json.data.resultData).to.equal(null);
        expectError(await post(path(t.taskHash, "finalize"), keys.poster), 503, "NOT_SUBMITTED_ON_CHAIN");
        await send(worker, submitted, "submitEvidence", [t.taskId, evidenceOf(result)]);
        expect(await status(t.taskId)).to.equal(STATUS.Submitted);

        // Visible to the poster and the worker; not to anyone else (private task).
        for (const key of [keys.poster, keys.worker]) {
          const read = await get(`/api/v1/tasks/${t.taskHash}`, key);
          expect(read.json.data.resultData).to.deep.equal(result);
          expect(read.json.data.evidenceHash).to.equal(evidenceOf(result));
        }
        expect((await get(`/api/v1/tasks/${t.taskHash}`, keys.stranger)).json.data).to.not.have.property("resultData");
        expect((await get(`/api/v1/tasks/${t.taskHash}`)).json.data).to.not.have.property("resultData");
        const posted = await get("/api/v1/a2a/tasks/posted", keys.poster);
        const mine = posted.json.data.tasks.find((x: { meta: { taskHash: string } }) => x.meta.taskHash === t.taskHash);
        expect(mine.resultData).to.deep.equal(result);
        expect(mine.state.status).to.equal("submitted");

        expectError(await post(path(t.taskHash, "finalize"), keys.stranger), 403, "NOT_POSTER");
        expectError(await post(path(t.taskHash, "finalize"), keys.worker), 403, "NOT_POSTER");
        const before = await balances();
        await judge(t, true, 1);
        expect(await status(t.taskId)).to.equal(STATUS.Completed);
        await expectPaid(before, t.amount);
        expect(await findSubmission(api.deps.db, t.taskId, 1, "base")).to.include({
          verdict: "pass",
          verdictBy: poster.address.toLowerCase(),
        });
        // Settled: nothing more to judge.
        expectError(await post(path(t.taskHash, "finalize"), keys.poster), 409, "INVALID_STATE");
        expectError(await post(path(t.taskHash, "decline"), keys.poster, {}), 409, "INVALID_STATE");
        expectError(await post(path(t.taskHash, "submit"), keys.worker, { result: "more" }), 409, "INVALID_STATE");
      }),
    );

    it(
      "auto: a failing result, a resubmission that passes; one verdict per attempt; paid to the unit",
      withApi(
        async ({ api, marketVerifier, keys, get, deliver, balances, expectPaid, status, postTask }) => {
          const criteria = {
            min_length: 30,
            contains_keywords: ["escrow"],
            required_fields: ["poem"],
            regex_pattern: "coin",
          };
          const t = await postTask({ mode: "auto", criteria });

          const verdictOf = async (attempt: number) =>
            (await findSubmission(api.deps.db, t.taskId, attempt, "base"))?.verdict;
          await deliver(t, { poem: "too short" }, 1);
          await waitFor("the failed auto verdict", async () => (await verdictOf(1)) !== null);
          expect(await marketVerifier.settled(verdictKey(t.taskId, 1))).to.include({ status: "confirmed" });
          await api.synced();
          expect(await status(t.taskId)).to.equal(STATUS.Verified);
          const first = await findSubmission(api.deps.db, t.taskId, 1, "base");
          expect(first).to.include({ verdict: "fail", verdictBy: marketVerifier.address.toLowerCase() });
          expect(first!.verdictReason).to.equal(
            'min_length: 20 characters, at least 30 required; contains_keywords: missing "escrow"; regex_pattern: the pattern does not match',
          );
          expect((await get(`/api/v1/tasks/${t.taskHash}`, keys.poster)).json.data.a2aState.status).to.equal(
            "verified",
          );

          const before = await balances();
          const good = { poem: "the escrow holds the coin until the work is judged" };
          await deliver(t, good, 2);
          await waitFor("the passing auto verdict", async () => (await verdictOf(2)) !== null);
          expect(await marketVerifier.settled(verdictKey(t.taskId, 2))).to.include({ status: "confirmed" });
          await api.synced();
          expect(await status(t.taskId)).to.equal(STATUS.Completed);
          await expectPaid(before, t.amount);
          expect(await findSubmission(api.deps.db, t.taskId, 2, "base")).to.include({
            verdict: "pass",
            verdictReason: "all rules hold",
          });
          expect((await get(`/api/v1/tasks/${t.taskHash}`)).json.data.resultData).to.deep.equal(good);

          // Exactly one chain call per attempt, and nothing left to do.
          const intents = await listIntentsByTask(api.deps.db, "base", t.taskId);
          expect(intents.map((i) => i.key).sort()).to.deep.equal(
            [assignKey(t.taskId), verdictKey(t.taskId, 1), verdictKey(t.taskId, 2)].sort(),
          );
          expect(await new AutoVerifier(api.deps).runOnce()).to.deep.equal([]);
        },
        { auto: true },
      ),
    );

    it(
      "auto: evidence sent around the API fails (the service holds no matching result)",
      withApi(
        async ({ api, escrow, worker, status, postTask }) => {
          const t = await postTask({ mode: "auto", criteria: { min_length: 1 } });
          await (await escrow.connect(worker).submitEvidence(t.taskId, ethers.id("not through the API"))).wait();
          await waitFor("the failed auto verdict", async () => (await status(t.taskId)) === STATUS.Verified);
          await api.synced();
          expect(await listSubmissions(api.deps.db, t.taskId, "base")).to.deep.equal([]);
          const intents = await listIntentsByTask(api.deps.db, "base", t.taskId);
          expect(intents.find((i) => i.key === verdictKey(t.taskId, 1))?.args).to.deep.equal({
            attempt: 1,
            passed: false,
          });
        },
        { auto: true },
      ),
    );

    it(
      "agent: the verifier agent's own completeVerification; its refusals by role and state",
      withApi(async ({ api, verifierAgent, keys, post, send, deliver, balances, expectPaid, status, postTask }) => {
        const t = await postTask({ mode: "agent" });
        const verify = (key: string, body: unknown) => post(path(t.taskHash, "verify"), key, body);
        expectError(await verify(keys.verifierAgent, { passed: true }), 409, "INVALID_STATE");
        const pending = await post(path(t.taskHash, "submit"), keys.worker, { result: "the translation" });
        expect(pending.status, pending.text).to.equal(200);
        expectError(await verify(keys.verifierAgent, { passed: true }), 503, "NOT_SUBMITTED_ON_CHAIN");
        await deliver(t, "the translation", 1);

        expectError(await verify(keys.worker, { passed: true }), 403, "SELF_VERIFICATION");
        expectError(await verify(keys.poster, { passed: true }), 403, "NOT_VERIFIER");
        expectError(await verify(keys.stranger, { passed: true }), 403, "NOT_VERIFIER");
        expectError(await verify(keys.verifierAgent, { passed: "yes" }), 400, "VALIDATION_ERROR");
        expectError(await post(path(t.taskHash, "finalize"), keys.poster), 409, "WRONG_MODE");

        // The verifier agent may change its mind until its transaction is mined.
        const no = await verify(keys.verifierAgent, { passed: false, reason: "missing a line" });
        expect(no.status, no.text).to.equal(200);
        expect((await findSubmission(api.deps.db, t.taskId, 1, "base"))!.verdict).to.equal("fail");
        const yes = await verify(keys.verifierAgent, { passed: true, reason: "good" });
        expect(yes.json.data).to.include({ attempt: 1, passed: true });
        const before = await balances();
        await send(verifierAgent, yes, "completeVerification", [t.taskId, true]);
        expect(await status(t.taskId)).to.equal(STATUS.Completed);
        await expectPaid(before, t.amount);
        expect(await findSubmission(api.deps.db, t.taskId, 1, "base")).to.include({
          verdict: "pass",
          verdictBy: verifierAgent.address.toLowerCase(),
          verdictReason: "good",
        });
      }),
    );
  });

  describe("the auto verifier", () => {
    it(
      "judges each attempt exactly once, across passes and restarts; waits out a pause; retries a refused send",
      withApi(
        async ({ api, admin, escrow, fake, deliver, postTask }) => {
          const t = await postTask({ mode: "auto", criteria: { contains_keywords: ["done"] } });
          await deliver(t, "all done", 1);
          const key = verdictKey(t.taskId, 1);
          const verdictCalls = () => fake.calls.filter((c) => c.key === key).length;

          // Paused: nothing is sent (the call would revert).
          await (await escrow.connect(admin).pause()).wait();
          await api.synced();
          expect(await new AutoVerifier(api.deps).runOnce()).to.deep.equal([]);
          expect(verdictCalls()).to.equal(0);
          await (await escrow.connect(admin).unpause()).wait();
          await api.synced();

          // A refused send records nothing and is retried later (after a backoff, not on the next pass).
          fake.mode = "refuse";
          const auto = new AutoVerifier(api.deps);
          expect(await auto.runOnce()).to.deep.equal([]);
          expect(verdictCalls()).to.equal(1);
          expect((await findSubmission(api.deps.db, t.taskId, 1, "base"))!.verdict).to.equal(null);
          expect(await auto.runOnce()).to.deep.equal([]);
          expect(verdictCalls()).to.equal(1);

          fake.mode = "hold";
          const restarted = new AutoVerifier(api.deps);
          expect(await restarted.runOnce()).to.deep.equal([
            { chain: "base", taskId: t.taskId, attempt: 1, passed: true, reason: "all rules hold" },
          ]);
          expect(await findSubmission(api.deps.db, t.taskId, 1, "base")).to.include({ verdict: "pass" });
          // The intent exists (unconfirmed): neither this loop nor another one asks again.
          expect(await restarted.runOnce()).to.deep.equal([]);
          expect(await new AutoVerifier(api.deps).runOnce()).to.deep.equal([]);
          expect(verdictCalls()).to.equal(2);
          await fake.release(key);
          expect(Number((await escrow.getTask(t.taskId)).status)).to.equal(STATUS.Completed);
        },
        { verifier: "fake" },
      ),
    );
  });

  describe("disputes", () => {
    it(
      "are resolved both ways by the admin: for the worker (paid), for the poster (refunded)",
      withApi(
        async ({
          admin,
          escrow,
          poster,
          worker,
          keys,
          post,
          send,
          deliver,
          judge,
          balances,
          expectPaid,
          expectRefunded,
          status,
          postTask,
        }) => {
          // Raised by the poster on a submission, ruled for the worker.
          const a = await postTask();
          expectError(await post(path(a.taskHash, "dispute"), keys.poster), 409, "INVALID_STATE");
          await post(path(a.taskHash, "submit"), keys.worker, { result: "draft" });
          expectError(await post(path(a.taskHash, "dispute"), keys.poster), 503, "NOT_SUBMITTED_ON_CHAIN");
          await deliver(a, "draft", 1);
          expectError(await post(path(a.taskHash, "dispute"), keys.stranger), 403, "FORBIDDEN");
          await send(poster, await post(path(a.taskHash, "dispute"), keys.poster), "raiseDispute", [a.taskId]);
          expect(await status(a.taskId)).to.equal(STATUS.Disputed);
          expectError(await post(path(a.taskHash, "dispute"), keys.worker), 409, "INVALID_STATE");
          expectError(await post(path(a.taskHash, "release"), keys.worker), 409, "INVALID_STATE");
          let before = await balances();
          await (await escrow.connect(admin).resolveDispute(a.taskId, true)).wait();
          await expectPaid(before, a.amount);

          // A failed verdict appealed by the worker, ruled for the poster.
          const b = await postTask();
          await deliver(b, "weak", 1);
          await judge(b, false, 1);
          await send(worker, await post(path(b.taskHash, "dispute"), keys.worker), "raiseDispute", [b.taskId]);
          before = await balances();
          await (await escrow.connect(admin).resolveDispute(b.taskId, false)).wait();
          await expectRefunded(before, b.amount);
        },
      ),
    );

    it(
      "a raised dispute nobody rules on is split after the deadline and 14 days (DISPUTE_WINDOW_ACTIVE before); each side withdraws its half",
      withApi(async ({ api, escrow, usdc, poster, worker, keys, post, get, send, deliver, balances, postTask }) => {
        const t = await postTask({ duration: HOUR });
        await deliver(t, "work", 1);
        await send(poster, await post(path(t.taskHash, "dispute"), keys.poster), "raiseDispute", [t.taskId]);
        const disputedAt = Number((await escrow.getTask(t.taskId)).disputedAt);
        const early = await post(path(t.taskHash, "reclaim"), keys.poster);
        expectError(early, 400, "DEADLINE_NOT_REACHED");
        expect(early.json.error.details.availableAt).to.equal(Number(await escrow.effectiveDeadline(t.taskId)));
        await time.increase(2 * HOUR);
        await api.synced();
        const waiting = await post(path(t.taskHash, "reclaim"), keys.poster);
        expectError(waiting, 409, "DISPUTE_WINDOW_ACTIVE");
        expect(waiting.json.error.details.availableAt).to.equal(disputedAt + 14 * DAY);
        const splitEarly = await post(path(t.taskHash, "split"), keys.stranger);
        expectError(splitEarly, 409, "DISPUTE_WINDOW_ACTIVE");
        expect(splitEarly.json.error.details.availableAt).to.equal(disputedAt + 14 * DAY);
        await time.increaseTo(disputedAt + 14 * DAY);
        await api.synced();
        const reclaim = await post(path(t.taskHash, "reclaim"), keys.poster);
        expect(reclaim.json.data.outcome).to.equal("split");
        const before = await balances();
        await send(poster, reclaim, "claimTimeout", [t.taskId]);
        // Half to each side, credited (nothing moves until each withdraws); the fee on the worker's half only.
        const half = t.amount / 2n;
        const fee = (half * (await escrow.feeBps())) / 10_000n;
        const token = (await usdc.getAddress()).toLowerCase();
        expect(await escrow.creditOf(token, worker.address)).to.equal(half - fee);
        expect(await escrow.creditOf(token, poster.address)).to.equal(t.amount - half);
        expect((await balances()).worker).to.equal(before.worker);
        const owed = await get(`/api/v1/credits/${worker.address}`);
        expect(owed.status, owed.text).to.equal(200);
        expect(owed.json.data.credits).to.deep.equal([
          {
            chain: "base",
            chainId: 31337,
            token,
            owed: (half - fee).toString(),
            credited: (half - fee).toString(),
            withdrawn: "0",
          },
        ]);
        expectError(await post(path(t.taskHash, "split"), keys.stranger), 409, "INVALID_STATUS");
        const withdraw = await post("/api/v1/credits/withdraw", keys.worker, { token });
        expect(withdraw.status, withdraw.text).to.equal(200);
        expect(withdraw.json.data).to.include({
          token,
          to: worker.address.toLowerCase(),
          amount: (half - fee).toString(),
          chain: "base",
          chainId: 31337,
        });
        await send(worker, withdraw, "withdraw", [await usdc.getAddress(), worker.address]);
        expect((await balances()).worker - before.worker).to.equal(half - fee);
        const after = await get(`/api/v1/credits/${worker.address}`);
        expect(after.json.data.credits[0]).to.include({ owed: "0", withdrawn: (half - fee).toString() });
        expectError(await post("/api/v1/credits/withdraw", keys.worker, { token }), 409, "INVALID_STATE");
      }),
    );

    it(
      "anyone may split a dispute nobody ruled on (splitUnruled); escalated unjudged work is not split",
      withApi(async ({ api, escrow, usdc, poster, stranger, worker, keys, post, send, deliver, postTask }) => {
        const t = await postTask({ duration: HOUR });
        expectError(await post(path(t.taskHash, "split"), keys.stranger), 409, "INVALID_STATUS");
        await deliver(t, "work", 1);
        await send(worker, await post(path(t.taskHash, "dispute"), keys.worker), "raiseDispute", [t.taskId]);
        const disputedAt = Number((await escrow.getTask(t.taskId)).disputedAt);
        await time.increaseTo(disputedAt + 14 * DAY);
        await api.synced();
        await send(stranger, await post(path(t.taskHash, "split"), keys.stranger), "splitUnruled", [t.taskId]);
        const token = await usdc.getAddress();
        expect(await escrow.creditOf(token, poster.address)).to.equal(t.amount - t.amount / 2n);
        const withdraw = await post("/api/v1/credits/withdraw", keys.poster, { token, to: stranger.address });
        await send(poster, withdraw, "withdraw", [token, stranger.address]);
        expect(await escrow.creditOf(token, poster.address)).to.equal(0n);

        const u = await postTask({ duration: HOUR });
        await deliver(u, "work", 1);
        await time.increase(2 * HOUR + 3 * DAY);
        await api.synced();
        await send(worker, await post(path(u.taskHash, "escalate"), keys.worker), "escalateUnjudgedWork", [u.taskId]);
        expectError(await post(path(u.taskHash, "split"), keys.stranger), 409, "ESCALATED_FOR_ADJUDICATION");
      }),
    );
  });

  describe("open-submission tasks: contest and judge", () => {
    it(
      "a revealed submitter contests the poster's pick, the admin judges it, the winner is shown its credit",
      withApi(async ({ api, escrow, usdc, poster, worker, stranger, admin, keys, post, get, send }) => {
        const token = await usdc.getAddress();
        const taskHash = ethers.sha256(ethers.toUtf8Bytes(`open brief ${Math.random()}`));
        const created = await (
          await escrow.connect(poster).createTaskOpen(taskHash, token, USDC(100), "general", "global", DAY)
        ).wait();
        const listed = await post("/api/v1/a2a/tasks/index", keys.poster, {
          txHash: created!.hash,
          taskHash,
          privacy: "public",
          verificationMode: "manual",
        });
        expect(listed.status, listed.text).to.equal(200);
        const taskId = BigInt(listed.json.data.onChainTaskId);
        const evidence = { [worker.address]: ethers.id("worker's entry"), [stranger.address]: ethers.id("stranger's") };
        for (const who of [worker, stranger])
          await (await commitOpen(escrow, who, taskId, evidence[who.address])).wait();
        await time.increaseTo(await escrow.effectiveDeadline(taskId));
        for (const who of [worker, stranger]) {
          await (await escrow.connect(who).revealOpen(taskId, evidence[who.address], OPEN_SALT)).wait();
        }
        await api.synced();
        const contest = (key: string) => post(path(taskHash, "contest"), key);
        const early = await contest(keys.poster);
        expectError(early, 400, "DEADLINE_NOT_REACHED");
        expect(early.json.error.details.availableAt).to.equal(Number(await escrow.effectiveDeadline(taskId)) + DAY);
        expectError(await contest(keys.stranger), 403, "FORBIDDEN");

        await time.increase(DAY);
        await (await escrow.connect(poster).selectWinner(taskId, worker.address)).wait();
        await api.synced();
        const pending = await get(`/api/v1/tasks/${taskId}`);
        expect(pending.json.data.open).to.include({ pick: worker.address.toLowerCase(), outcome: null });
        expectError(await contest(keys.worker), 403, "FORBIDDEN");
        expectError(await contest(keys.poster), 403, "FORBIDDEN");
        await send(stranger, await contest(keys.stranger), "contestOpen", [Number(taskId)]);

        const judge = (key: string, winner: string) => post(path(taskHash, "judge"), key, { winner });
        expectError(await judge(keys.worker, worker.address), 403, "NOT_VERIFIER");
        const adminKey = await api.createKey(admin.address);
        expectError(await judge(adminKey, poster.address), 400, "VALIDATION_ERROR");
        expectError(await contest(keys.stranger), 409, "INVALID_STATUS");
        await send(admin, await judge(adminKey, stranger.address), "judgeOpen", [Number(taskId), stranger.address]);
        const judged = await get(`/api/v1/tasks/${taskId}`);
        expect(judged.json.data.open).to.include({ outcome: "judged" });
        expect(judged.json.data.worker).to.equal(stranger.address.toLowerCase());
        expect(judged.json.data.status).to.equal(STATUS.Completed);
        const owed = await escrow.creditOf(token, stranger.address);
        expect(owed > 0n).to.equal(true);
        const credits = await get(`/api/v1/credits/${stranger.address}`);
        expect(credits.json.data.credits).to.deep.equal([
          {
            chain: "base",
            chainId: 31337,
            token: token.toLowerCase(),
            owed: owed.toString(),
            credited: owed.toString(),
            withdrawn: "0",
          },
        ]);
        expectError(await judge(adminKey, stranger.address), 409, "INVALID_STATUS");
      }),
    );

    it(
      "the poster sends a worthless entry to the judge during the selection window, and only once one was revealed",
      withApi(async ({ api, escrow, usdc, poster, worker, keys, post, send }) => {
        const token = await usdc.getAddress();
        const taskHash = ethers.sha256(ethers.toUtf8Bytes(`open brief ${Math.random()}`));
        const created = await (
          await escrow.connect(poster).createTaskOpen(taskHash, token, USDC(100), "general", "global", DAY)
        ).wait();
        const listed = await post("/api/v1/a2a/tasks/index", keys.poster, {
          txHash: created!.hash,
          taskHash,
          privacy: "public",
          verificationMode: "manual",
        });
        expect(listed.status, listed.text).to.equal(200);
        const taskId = BigInt(listed.json.data.onChainTaskId);
        await time.increaseTo(Number(await escrow.effectiveDeadline(taskId)) + DAY);
        await api.synced();
        expectError(await post(path(taskHash, "contest"), keys.poster), 409, "INVALID_STATE");
        const entry = ethers.id("a random hash");
        const other = ethers.sha256(ethers.toUtf8Bytes(`open brief ${Math.random()}`));
        const second = await (
          await escrow.connect(poster).createTaskOpen(other, token, USDC(100), "general", "global", DAY)
        ).wait();
        const listedSecond = await post("/api/v1/a2a/tasks/index", keys.poster, {
          txHash: second!.hash,
          taskHash: other,
          privacy: "public",
          verificationMode: "manual",
        });
        const secondId = BigInt(listedSecond.json.data.onChainTaskId);
        await (await commitOpen(escrow, worker, secondId, entry)).wait();
        await time.increaseTo(await escrow.effectiveDeadline(secondId));
        await (await escrow.connect(worker).revealOpen(secondId, entry, OPEN_SALT)).wait();
        await time.increase(DAY);
        await api.synced();
        await send(poster, await post(path(other, "contest"), keys.poster), "contestOpen", [Number(secondId)]);
        expect(Number((await escrow.getTask(secondId)).status)).to.equal(STATUS.Disputed);
      }),
    );
  });

  describe("timeouts", () => {
    it(
      "assigned work not delivered: refund through reclaim after the deadline",
      withApi(async ({ api, escrow, poster, keys, post, send, balances, expectRefunded, status, postTask }) => {
        const t = await postTask({ duration: HOUR });
        expectError(await post(path(t.taskHash, "reclaim"), keys.worker), 403, "NOT_POSTER");
        const early = await post(path(t.taskHash, "reclaim"), keys.poster);
        expectError(early, 400, "DEADLINE_NOT_REACHED");
        const deadline = Number(await escrow.effectiveDeadline(t.taskId));
        expect(early.json.error.details.availableAt).to.equal(deadline);
        await time.increaseTo(deadline);
        await api.synced();
        expectError(await post(path(t.taskHash, "submit"), keys.worker, { result: "late" }), 409, "DEADLINE_REACHED");
        expectError(await post(path(t.taskHash, "dispute"), keys.worker), 409, "INVALID_STATE");
        const reclaim = await post(path(t.taskHash, "reclaim"), keys.poster);
        expect(reclaim.json.data.outcome).to.equal("refund");
        const before = await balances();
        await send(poster, reclaim, "claimTimeout", [t.taskId]);
        expect(await status(t.taskId)).to.equal(STATUS.Cancelled);
        await expectRefunded(before, t.amount);
        expectError(await post(path(t.taskHash, "reclaim"), keys.poster), 409, "INVALID_STATUS");
      }),
    );

    it(
      "a failed verdict: the worker may appeal for 3 days after it, then the poster reclaims the reward",
      withApi(async ({ api, escrow, poster, keys, post, send, deliver, judge, balances, expectRefunded, postTask }) => {
        const t = await postTask({ duration: HOUR });
        await deliver(t, "attempt", 1);
        await judge(t, false, 1);
        const failedAt = Number(await escrow.failedVerdictAt(t.taskId));
        await time.increase(2 * HOUR);
        await api.synced();
        const appeal = await post(path(t.taskHash, "reclaim"), keys.poster);
        expectError(appeal, 409, "APPEAL_WINDOW_ACTIVE");
        expect(appeal.json.error.details.availableAt).to.equal(failedAt + 3 * DAY);
        // After the deadline only the worker's appeal is open.
        expectError(await post(path(t.taskHash, "dispute"), keys.poster), 409, "DEADLINE_REACHED");
        const workerAppeal = await post(path(t.taskHash, "dispute"), keys.worker);
        expect(workerAppeal.status, workerAppeal.text).to.equal(200);
        expectError(await post(path(t.taskHash, "submit"), keys.worker, { result: "again" }), 409, "DEADLINE_REACHED");

        await time.increaseTo(failedAt + 3 * DAY);
        await api.synced();
        expectError(await post(path(t.taskHash, "dispute"), keys.worker), 409, "DEADLINE_REACHED");
        const reclaim = await post(path(t.taskHash, "reclaim"), keys.poster);
        expect(reclaim.json.data.outcome).to.equal("refund");
        const before = await balances();
        await send(poster, reclaim, "claimTimeout", [t.taskId]);
        await expectRefunded(before, t.amount);
      }),
    );

    it(
      "submitted work nobody judged: escalated by reclaim, then released to the worker after 14 days",
      withApi(
        async ({ api, escrow, poster, worker, keys, post, send, deliver, balances, expectPaid, status, postTask }) => {
          const t = await postTask({ duration: HOUR });
          await deliver(t, "finished work", 1);
          await time.increase(HOUR);
          await api.synced();
          const escalate = await post(path(t.taskHash, "reclaim"), keys.poster);
          expect(escalate.json.data.outcome).to.equal("escalate");
          const before = await balances();
          await send(poster, escalate, "claimTimeout", [t.taskId]);
          expect(await status(t.taskId)).to.equal(STATUS.Disputed);
          expect((await balances()).poster).to.equal(before.poster); // escalation refunds nothing
          const disputedAt = Number((await escrow.getTask(t.taskId)).disputedAt);

          expectError(await post(path(t.taskHash, "reclaim"), keys.poster), 409, "ESCALATED_FOR_ADJUDICATION");
          expectError(await post(path(t.taskHash, "release"), keys.poster), 403, "FORBIDDEN");
          const early = await post(path(t.taskHash, "release"), keys.worker);
          expectError(early, 409, "DISPUTE_WINDOW_ACTIVE");
          expect(early.json.error.details.availableAt).to.equal(disputedAt + 14 * DAY);

          await time.increaseTo(disputedAt + 14 * DAY);
          await api.synced();
          expectError(await post(path(t.taskHash, "reclaim"), keys.poster), 409, "ESCALATED_FOR_ADJUDICATION");
          await send(worker, await post(path(t.taskHash, "release"), keys.worker), "releaseUnjudgedWork", [t.taskId]);
          expect(await status(t.taskId)).to.equal(STATUS.Completed);
          await expectPaid(before, t.amount);
        },
      ),
    );

    it(
      "a silent judge: the worker escalates its unjudged work 3 days after the deadline, then is released after 14 days",
      withApi(async ({ api, escrow, worker, keys, post, send, deliver, balances, expectPaid, status, postTask }) => {
        const t = await postTask({ duration: HOUR });
        await deliver(t, "finished work nobody judges", 1);
        expectError(await post(path(t.taskHash, "escalate"), keys.poster), 403, "FORBIDDEN");
        const early = await post(path(t.taskHash, "escalate"), keys.worker);
        expectError(early, 400, "DEADLINE_NOT_REACHED");
        const availableAt = Number(await escrow.effectiveDeadline(t.taskId)) + 3 * DAY;
        expect(early.json.error.details.availableAt).to.equal(availableAt);

        await time.increaseTo(availableAt);
        await api.synced();
        const before = await balances();
        await send(worker, await post(path(t.taskHash, "escalate"), keys.worker), "escalateUnjudgedWork", [t.taskId]);
        expect(await status(t.taskId)).to.equal(STATUS.Disputed);
        expect(await escrow.isEscalated(t.taskId)).to.equal(true);
        expectError(await post(path(t.taskHash, "escalate"), keys.worker), 409, "INVALID_STATE");

        const disputedAt = Number((await escrow.getTask(t.taskId)).disputedAt);
        await time.increaseTo(disputedAt + 14 * DAY);
        await api.synced();
        await send(worker, await post(path(t.taskHash, "release"), keys.worker), "releaseUnjudgedWork", [t.taskId]);
        expect(await status(t.taskId)).to.equal(STATUS.Completed);
        await expectPaid(before, t.amount);
      }),
    );
  });

  describe("pauses", () => {
    it(
      "a pause extends the deadline: ESCROW_PAUSED while paused, DEADLINE_NOT_REACHED right after the unpause",
      withApi(async ({ api, admin, escrow, poster, keys, post, send, balances, expectRefunded, postTask }) => {
        const t = await postTask({ duration: HOUR });
        const created = Number((await escrow.getTask(t.taskId)).createdAt);
        await time.increase(HOUR / 2);
        await (await escrow.connect(admin).pause()).wait();
        await time.increaseTo(created + 2 * HOUR); // past the creation-time deadline, still paused
        await api.synced();
        expectError(await post(path(t.taskHash, "reclaim"), keys.poster), 409, "ESCROW_PAUSED");
        expectError(await post(path(t.taskHash, "submit"), keys.worker, { result: "x" }), 409, "ESCROW_PAUSED");

        await (await escrow.connect(admin).unpause()).wait();
        await api.synced();
        const moved = await post(path(t.taskHash, "reclaim"), keys.poster);
        expectError(moved, 400, "DEADLINE_NOT_REACHED");
        const effective = Number(await escrow.effectiveDeadline(t.taskId));
        expect(effective).to.be.above(created + HOUR);
        expect(moved.json.error.details.availableAt).to.equal(effective);
        // The worker can still deliver: the deadline moved by the paused time.
        const submit = await post(path(t.taskHash, "submit"), keys.worker, { result: "in time" });
        expect(submit.status, submit.text).to.equal(200);

        await time.increaseTo(effective);
        await api.synced();
        const reclaim = await post(path(t.taskHash, "reclaim"), keys.poster);
        expect(reclaim.json.data.outcome).to.equal("refund");
        const before = await balances();
        await send(poster, reclaim, "claimTimeout", [t.taskId]);
        await expectRefunded(before, t.amount);
      }),
    );

    it(
      "a pause extends the appeal window exactly as the escrow does",
      withApi(
        async ({
          api,
          admin,
          escrow,
          poster,
          keys,
          post,
          send,
          deliver,
          judge,
          balances,
          expectRefunded,
          postTask,
        }) => {
          const t = await postTask({ duration: HOUR });
          await deliver(t, "attempt", 1);
          await judge(t, false, 1);
          const failedAt = Number(await escrow.failedVerdictAt(t.taskId));
          await time.increase(2 * HOUR);
          await (await escrow.connect(admin).pause()).wait();
          await time.increase(4 * DAY);
          await (await escrow.connect(admin).unpause()).wait();
          await api.synced();
          // Without the pause the appeal window would be over; with it the worker may still appeal.
          const appealEnds = failedAt + 3 * DAY + Number(await escrow.pausedSecondsSince(failedAt));
          expect(appealEnds).to.be.above(failedAt + 7 * DAY - 10);
          const reclaim = await post(path(t.taskHash, "reclaim"), keys.poster);
          expectError(reclaim, 409, "APPEAL_WINDOW_ACTIVE");
          expect(reclaim.json.error.details.availableAt).to.equal(appealEnds);
          const appeal = await post(path(t.taskHash, "dispute"), keys.worker);
          expect(appeal.status, appeal.text).to.equal(200);

          await time.increaseTo(appealEnds);
          await api.synced();
          expectError(await post(path(t.taskHash, "dispute"), keys.worker), 409, "DEADLINE_REACHED");
          const refund = await post(path(t.taskHash, "reclaim"), keys.poster);
          const before = await balances();
          await send(poster, refund, "claimTimeout", [t.taskId]);
          await expectRefunded(before, t.amount);
        },
      ),
    );
  });

  describe("attempts", () => {
    it(
      "stores one result per attempt, at most three; ALREADY_SUBMITTED and MAX_ATTEMPTS_REACHED",
      withApi(async ({ api, worker, keys, post, get, send, deliver, judge, postTask }) => {
        const t = await postTask();
        const submit = (result: unknown) => post(path(t.taskHash, "submit"), keys.worker, { result });

        // A pending attempt: the same result answers the same transaction; another result is refused with it.
        const first = await submit({ v: 1 });
        const again = await submit({ v: 1 });
        expect(again.json.data).to.deep.equal(first.json.data);
        const other = await submit({ v: "other" });
        expectError(other, 409, "ALREADY_SUBMITTED");
        expect(other.json.error.details).to.deep.equal({
          attempt: 1,
          evidenceHash: evidenceOf({ v: 1 }),
          unsignedTx: first.json.data.unsignedTx,
        });
        await send(worker, first, "submitEvidence", [t.taskId, evidenceOf({ v: 1 })]);
        // On-chain and awaiting its verdict.
        const waiting = await submit({ v: 2 });
        expectError(waiting, 409, "ALREADY_SUBMITTED");
        expect(waiting.json.error.details).to.deep.equal({ attempt: 1, evidenceHash: evidenceOf({ v: 1 }) });

        await judge(t, false, 1);
        await deliver(t, { v: 2 }, 2);
        expect((await get(`/api/v1/tasks/${t.taskHash}`, keys.worker)).json.data.resultData).to.deep.equal({ v: 2 });
        await judge(t, false, 2);
        await deliver(t, { v: 3 }, 3);
        await judge(t, false, 3);
        expectError(await submit({ v: 4 }), 409, "MAX_ATTEMPTS_REACHED");
        expect((await listSubmissions(api.deps.db, t.taskId, "base")).map((s) => [s.attempt, s.verdict])).to.deep.equal(
          [
            [1, "fail"],
            [2, "fail"],
            [3, "fail"],
          ],
        );
        expect((await get(`/api/v1/tasks/${t.taskHash}`)).json.data.resultData).to.deep.equal({ v: 3 });
      }),
    );

    it(
      "checks the body: NO_RESULT_DATA, an evidenceHash that differs, a result without canonical form, an oversized one",
      withApi(async ({ keys, post, postTask }) => {
        const t = await postTask();
        const submit = (body: unknown) => post(path(t.taskHash, "submit"), keys.worker, body);
        expectError(await submit({}), 400, "NO_RESULT_DATA");
        expectError(await submit({ result: null }), 400, "NO_RESULT_DATA");
        const mismatch = await submit({ result: "x", evidenceHash: evidenceOf("y") });
        expectError(mismatch, 400, "VALIDATION_ERROR");
        expect(mismatch.json.error.message).to.match(/^body\.evidenceHash: /);
        expectError(await submit({ result: "x", evidenceHash: "0x12" }), 400, "VALIDATION_ERROR");
        expectError(await submit({ result: "x", extra: 1 }), 400, "VALIDATION_ERROR");
        expectError(await post(path(t.taskHash, "submit"), keys.worker, undefined), 400, "VALIDATION_ERROR");
        const lone = await submit(JSON.parse('{"result":{"a":"\\ud800"}}'));
        expectError(lone, 400, "VALIDATION_ERROR");
        expect(lone.json.error.message).to.equal("body.result.a: contains a lone UTF-16 surrogate (not I-JSON)");
        const big = await submit({ result: "x".repeat(600 * 1024) });
        expectError(big, 400, "VALIDATION_ERROR");
        expect(big.json.error.message).to.match(/^body\.result: its canonical JSON is \d+ bytes, at most 524288/);
      }),
    );
  });

  describe("refusals", () => {
    it(
      "takes the task hash, needs a key, and answers the roles' codes",
      withApi(async ({ api, keys, post, postTask }) => {
        const t = await postTask({ open: true });
        const manual = await postTask();
        const bodies: Record<string, unknown> = { submit: { result: 1 }, verify: { passed: true }, decline: {} };
        for (const op of ["submit", "verify", "finalize", "decline", "release", "reclaim", "dispute"]) {
          expectError(await post(path(String(t.taskId), op), keys.worker, bodies[op]), 400, "TASK_ID_DEPRECATED");
          expectError(await post(path(`0x${"ab".repeat(32)}`, op), keys.worker, bodies[op]), 404, "NOT_FOUND");
          expectError(await api.request("POST", path(t.taskHash, op), { body: bodies[op] }), 401, "UNAUTHORIZED");
        }
        expectError(await post(path(t.taskHash, "submit"), keys.worker, { result: 1 }), 403, "FORBIDDEN");
        expectError(await post(path(t.taskHash, "reclaim"), keys.poster), 409, "USE_CANCEL");
        expectError(await post(path(t.taskHash, "release"), keys.worker), 403, "FORBIDDEN");
        expectError(await post(path(manual.taskHash, "submit"), keys.stranger, { result: 1 }), 403, "FORBIDDEN");
        expectError(
          await post(path(manual.taskHash, "verify"), keys.worker, { passed: true }),
          409,
          "NO_ONCHAIN_VERIFIER",
        );
        expectError(await post(path(manual.taskHash, "finalize"), keys.poster), 409, "INVALID_STATE");
        expectError(await post(path(manual.taskHash, "release"), keys.worker), 409, "INVALID_STATE");

        const auto = await postTask({ mode: "auto", criteria: { min_length: 1 } });
        expectError(await post(path(auto.taskHash, "finalize"), keys.poster), 409, "WRONG_MODE");
        expectError(await post(path(auto.taskHash, "decline"), keys.poster, {}), 409, "WRONG_MODE");
      }),
    );

    it(
      "answers ASSIGNMENT_PENDING while the marketplace assignment is unconfirmed, to the worker and to a reclaiming poster",
      withApi(
        async ({ api, fake, keys, post, postTask }) => {
          const t = await postTask({ open: true });
          fake.mode = "hold";
          const accepted = await post(path(t.taskHash, "accept"), keys.worker);
          expect(accepted.json.data.state, accepted.text).to.equal("assigning");
          for (const op of ["submit", "dispute", "release"]) {
            expectError(
              await post(path(t.taskHash, op), keys.worker, op === "submit" ? { result: 1 } : undefined),
              503,
              "ASSIGNMENT_PENDING",
            );
          }
          // The poster's reclaim knows the index is behind the accept: not "nobody took it" (USE_CANCEL).
          expectError(await post(path(t.taskHash, "reclaim"), keys.poster), 503, "ASSIGNMENT_PENDING");
          fake.mode = "send";
          await fake.release(assignKey(t.taskId));
          await api.synced();
          const res = await post(path(t.taskHash, "submit"), keys.worker, { result: 1 });
          expect(res.status, res.text).to.equal(200);
        },
        { verifier: "fake" },
      ),
    );

    it(
      "finalize and decline: SETTLEMENT_FAILED when the verifier cannot send (nothing recorded), VERDICT_MISMATCH against a verdict in flight",
      withApi(
        async ({ api, fake, keys, post, deliver, postTask }) => {
          const t = await postTask();
          await deliver(t, "work", 1);
          fake.mode = "refuse";
          expectError(await post(path(t.taskHash, "finalize"), keys.poster), 503, "SETTLEMENT_FAILED");
          expect((await findSubmission(api.deps.db, t.taskId, 1, "base"))!.verdict).to.equal(null);

          fake.mode = "hold";
          const declined = await post(path(t.taskHash, "decline"), keys.poster, { reason: "not what I asked" });
          expect(declined.status, declined.text).to.equal(200);
          expect(declined.json.data).to.deep.include({ state: "verifying", passed: false });
          expect(await findSubmission(api.deps.db, t.taskId, 1, "base")).to.include({
            verdict: "fail",
            verdictReason: "not what I asked",
          });
          const mismatch = await post(path(t.taskHash, "finalize"), keys.poster);
          expectError(mismatch, 409, "VERDICT_MISMATCH");
          expect(mismatch.json.error.details).to.deep.equal({ attempt: 1, passed: false });
          // The same verdict again answers the same intent.
          const again = await post(path(t.taskHash, "decline"), keys.poster, {});
          expect(again.json.data.intent).to.deep.equal(declined.json.data.intent);
          expect(fake.calls.filter((c) => c.key === verdictKey(t.taskId, 1))).to.have.length(3);
        },
        { verifier: "fake" },
      ),
    );

    it(
      "documents every delivery route in the OpenAPI description",
      withApi(async ({ get }) => {
        const res = await get("/api/v1/openapi.json");
        expect(res.status).to.equal(200);
        await SwaggerParser.validate(structuredClone(res.json));
        for (const op of ["submit", "verify", "finalize", "decline", "release", "reclaim", "dispute"]) {
          expect(res.json.paths).to.have.property(`/api/v1/a2a/tasks/{hash}/${op}`);
        }
      }),
    );
  });
});
