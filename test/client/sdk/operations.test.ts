/**
 * Signed task operations through the SDK (the service builds, the SDK checks, signs with managed nonces, confirms),
 * following a task with waitForTask, and the admin's resolveDispute: a plain JsonRpcProvider + Wallet against the
 * chain served over HTTP and a real API.
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture, disputedTaskFixture, STATUS, TASK_HASH, USDC } from "../../helpers/fixtures";
import { startTestApi, type TestApi } from "../../helpers/api";
import { hardhatPrivateKey, verifierPrivateKey } from "../../helpers/keys";
import { agentPublicKey } from "../../../server/domain/briefs";
import { freshWallet, minedNonce, serveChain, type ServedChain } from "../../helpers/rpc";
import {
  MarketApi,
  postTask,
  evidenceHash,
  resolveDispute,
  sendTaskOperation,
  submitResult,
  waitForTask,
  type TaskState,
} from "../../../client/sdk/index";
import { expectCode } from "../../helpers/marketErrors";

describe("SDK task operations and following a task", () => {
  let chain: ServedChain;
  let api: TestApi | undefined;

  beforeEach(async () => {
    chain = await serveChain();
  });
  afterEach(async () => {
    await api?.close();
    api = undefined;
    await chain.close();
  });

  it("cancels a posted task (checked, signed, confirmed); waitForTask follows it to cancelled", async () => {
    const fixture = await loadFixture(deployEscrowFixture);
    api = await startTestApi(fixture.book);
    const poster = await freshWallet(chain.provider);
    await (await fixture.usdc.mint(poster.address, USDC(10))).wait();
    const market = new MarketApi({ baseUrl: api.url, apiKey: await api.createKey(poster.address) });
    const posted = await postTask(
      { brief: "Cancel me.", privacy: "public", amount: USDC(4) },
      { api: market, signer: poster },
    );

    // A service answering a transaction to another address: refused before signing, nothing sent.
    const nonce = await minedNonce(chain.provider, poster.address);
    const tampering = new MarketApi({
      baseUrl: api.url,
      apiKey: market.apiKey,
      fetch: async (input, init) => {
        const answer = await fetch(input, init);
        if (!String(input).endsWith("/cancel")) return answer;
        const body = await answer.json();
        body.data.unsignedTx.to = Wallet.createRandom().address;
        return new Response(JSON.stringify(body), { status: answer.status, headers: answer.headers });
      },
    });
    await expectCode(
      sendTaskOperation({ api: tampering, signer: poster }, "cancel", posted.taskHash),
      "ESCROW_MISMATCH",
    );
    expect(await minedNonce(chain.provider, poster.address)).to.equal(nonce);

    const seen: TaskState["status"][] = [];
    const following = waitForTask(market, posted.taskHash, {
      readIntervalMs: 2000,
      timeoutMs: 30_000,
      onChange: (state) => seen.push(state.status),
    });
    const cancelled = await sendTaskOperation({ api: market, signer: poster }, "cancel", posted.taskHash);
    expect(cancelled).to.deep.include({ taskHash: posted.taskHash, onChainTaskId: posted.onChainTaskId });
    const done = await following;
    expect(done.state.status).to.equal("cancelled");
    expect(seen[0]).to.equal("open");
    expect(seen[seen.length - 1]).to.equal("cancelled");
    expect(Number((await fixture.escrow.getTask(posted.onChainTaskId)).status)).to.equal(STATUS.Cancelled);
    expect(await fixture.usdc.balanceOf(poster.address)).to.equal(USDC(10));
  });

  it("submitResult: the worker's result stored and submitEvidence of its hash checked, signed, confirmed", async () => {
    const fixture = await loadFixture(deployEscrowFixture);
    api = await startTestApi(fixture.book, { VERIFIER_PRIVATE_KEY: verifierPrivateKey() });
    const poster = await freshWallet(chain.provider);
    const worker = await freshWallet(chain.provider);
    await (await fixture.usdc.mint(poster.address, USDC(10))).wait();
    const market = new MarketApi({ baseUrl: api.url, apiKey: await api.createKey(poster.address) });
    const posted = await postTask(
      { brief: "Deliver me.", privacy: "public", amount: USDC(4) },
      { api: market, signer: poster },
    );
    const workerApi = new MarketApi({ baseUrl: api.url, apiKey: await api.createKey(worker.address) });
    await workerApi.registerExecutor({ publicKey: agentPublicKey(worker.privateKey), capabilities: [] });
    await workerApi.accept(posted.taskHash);
    const result = { summary: "delivered", words: 1 };

    // A service answering submitEvidence of another hash: refused before signing, nothing sent.
    const nonce = await minedNonce(chain.provider, worker.address);
    const tampering = new MarketApi({
      baseUrl: api.url,
      apiKey: workerApi.apiKey,
      fetch: async (input, init) => {
        const answer = await fetch(input, init);
        if (!String(input).endsWith("/submit") || answer.status !== 200) return answer;
        const body = await answer.json();
        const data = body.data.unsignedTx.data as string;
        body.data.unsignedTx.data = data.slice(0, -64) + "ab".repeat(32);
        return new Response(JSON.stringify(body), { status: answer.status, headers: answer.headers });
      },
    });
    await expectCode(submitResult({ api: tampering, signer: worker }, posted.taskHash, result), "TX_MISMATCH");
    expect(await minedNonce(chain.provider, worker.address)).to.equal(nonce);
    // Without a signer nothing is asked of the service.
    await expectCode(submitResult({ api: workerApi }, posted.taskHash, result), "NO_SIGNER");

    const delivered = await submitResult({ api: workerApi, signer: worker }, posted.taskHash, result);
    expect(delivered).to.deep.include({
      taskHash: posted.taskHash,
      onChainTaskId: posted.onChainTaskId,
      attempt: 1,
      evidenceHash: evidenceHash(result),
    });
    const onChain = await fixture.escrow.getTask(posted.onChainTaskId);
    expect(Number(onChain.status)).to.equal(STATUS.Submitted);
    expect(onChain.worker).to.equal(worker.address);
    expect(onChain.evidenceHash).to.equal(evidenceHash(result));
  });

  it("resolveDispute: the escrow admin rules for the worker; anyone else is OWNER_MISMATCH", async () => {
    const fixture = await loadFixture(disputedTaskFixture);
    api = await startTestApi(fixture.book);
    await api.synced();
    const market = new MarketApi({ baseUrl: api.url });
    const stranger = await freshWallet(chain.provider);
    await expectCode(resolveDispute({ api: market, signer: stranger }, TASK_HASH, true), "OWNER_MISMATCH");
    const admin = new Wallet(hardhatPrivateKey(0), chain.provider);
    const before = await fixture.usdc.balanceOf(fixture.worker.address);
    const ruled = await resolveDispute({ api: market, signer: admin }, TASK_HASH, true);
    expect(ruled.onChainTaskId).to.equal(1);
    expect(Number((await fixture.escrow.getTask(1)).status)).to.equal(STATUS.Completed);
    const fee = (fixture.amount * (await fixture.escrow.feeBps())) / 10_000n;
    expect((await fixture.usdc.balanceOf(fixture.worker.address)) - before).to.equal(fixture.amount - fee);
  });
});
