/**
 * Renting an agent end to end, over HTTP on the Hardhat chain, each party acting only through the API and its own
 * wallet: an agent registers and lists a service; a poster finds it, builds a task pinned to it paying less than the
 * price (the listing is refused, UNDERPAID), then one paying the price; the task is offered to the agent only, another
 * agent is refused (NOT_TARGET_EXECUTOR); the agent accepts, delivers, and is paid the price less the fee.
 */
import crypto from "node:crypto";
import { expect } from "chai";
import { ethers } from "hardhat";
import { DAY, FEE_BPS, USDC } from "../helpers/fixtures";
import { type Market, withMarket } from "../helpers/market";
import { agentPublicKey } from "../../server/domain/briefs";

/** A new wallet funded with gas, registered as an agent through the API, with its API key. */
async function registeredAgent(m: Market, capabilities: string[]) {
  const wallet = ethers.Wallet.createRandom().connect(ethers.provider);
  await (await m.admin.sendTransaction({ to: wallet.address, value: ethers.parseEther("1") })).wait();
  const key = await m.api.createKey(wallet.address);
  const publicKey = agentPublicKey(wallet.privateKey);
  const registered = await m.post("/api/v1/a2a/executors", key, { publicKey, capabilities });
  expect(registered.status, registered.text).to.be.oneOf([200, 201]);
  return { wallet, key, address: wallet.address.toLowerCase(), publicKey: publicKey.toLowerCase() };
}

/** The poster uploads a public brief, builds the task through the API, approves exactly the reward and funds it. */
async function fundTask(m: Market, amount: bigint) {
  const brief = `Translate this page into French (${crypto.randomUUID()})`;
  const upload = await m.post("/api/v1/storage/upload", m.posterKey, { data: Buffer.from(brief).toString("base64") });
  expect(upload.status, upload.text).to.equal(201);
  const taskHash = upload.json.data.rootHash as string;
  const build = await m.post("/api/v1/tasks", m.posterKey, {
    taskHash,
    token: m.token,
    amount: amount.toString(),
    locationZone: "global",
    duration: String(DAY),
    verificationMode: "manual",
  });
  expect(build.status, build.text).to.equal(200);
  const { to, data } = build.json.data.unsignedTx;
  await (await m.usdc.connect(m.poster).approve(to, amount)).wait();
  const sent = await m.poster.sendTransaction({ to, data });
  await sent.wait();
  return { taskHash, txHash: sent.hash, brief };
}

describe("e2e: renting an agent over HTTP", () => {
  it("lists a service, refuses an underpaid rental, offers the paid one to its agent only, and pays the agent", () =>
    withMarket(async (m) => {
      const seller = await registeredAgent(m, ["translation"]);
      const other = await registeredAgent(m, ["translation"]);
      const price = USDC(12);
      const listed = await m.post("/api/v1/marketplace/services", seller.key, {
        name: "Page translation",
        description: "English to French, one page",
        price_raw: Number(price),
        capabilities: ["translation"],
        delivery_time_seconds: 3600,
      });
      expect(listed.status, listed.text).to.equal(201);

      // The poster finds the service and reads it.
      const found = await m.api.request("GET", `/api/v1/marketplace/services?agent=${seller.address}`);
      expect(found.json.data.total).to.equal(1);
      const service = (await m.api.request("GET", `/api/v1/marketplace/services/${found.json.data.services[0].id}`))
        .json.data;
      expect(service).to.include({ agent_address: seller.address, agent_public_key: seller.publicKey });
      expect(service.price_raw).to.equal(Number(price));
      const card = (await m.api.request("GET", `/.well-known/agents/${seller.address}.json`)).json;
      expect(card.blindmarket.invoke.api.body).to.deep.equal({ targetExecutor: seller.address, serviceId: service.id });
      const rent = { targetExecutor: seller.address, serviceId: service.id, privacy: "public" };

      // Paying less than the price: funded on-chain, but the listing is refused.
      const cheap = await fundTask(m, BigInt(service.price_raw) - 1n);
      const refused = await m.post("/api/v1/a2a/tasks/index", m.posterKey, {
        txHash: cheap.txHash,
        taskHash: cheap.taskHash,
        publicBrief: cheap.brief,
        ...rent,
      });
      expect(refused.status, refused.text).to.equal(409);
      expect(refused.json.error.code).to.equal("UNDERPAID");

      // Paying the price: listed, pinned to the seller.
      const paid = await fundTask(m, BigInt(service.price_raw));
      const indexed = await m.post("/api/v1/a2a/tasks/index", m.posterKey, {
        txHash: paid.txHash,
        taskHash: paid.taskHash,
        publicBrief: paid.brief,
        ...rent,
      });
      expect(indexed.status, indexed.text).to.equal(200);
      await m.api.synced();
      const open = await m.api.request("GET", "/api/v1/a2a/tasks");
      expect(open.json.data.tasks.map((t: { meta: { taskHash: string } }) => t.meta.taskHash)).not.to.include(
        paid.taskHash,
      );
      const offered = await m.api.request("GET", "/api/v1/a2a/tasks/offered", { key: seller.key });
      expect(offered.json.data.tasks.map((t: { meta: { taskHash: string } }) => t.meta.taskHash)).to.deep.equal([
        paid.taskHash,
      ]);

      const accept = (key: string) => m.post(`/api/v1/a2a/tasks/${paid.taskHash}/accept`, key);
      const stranger = await accept(other.key);
      expect(stranger.status, stranger.text).to.equal(403);
      expect(stranger.json.error.code).to.equal("NOT_TARGET_EXECUTOR");
      // Accepted at once: no bid, no offer window.
      const accepted = await accept(seller.key);
      expect(accepted.status, accepted.text).to.equal(200);
      await m.api.synced();

      const submitted = await m.post(`/api/v1/a2a/tasks/${paid.taskHash}/submit`, seller.key, {
        result: { text: "Traduisez cette page en français" },
      });
      expect(submitted.status, submitted.text).to.equal(200);
      expect(submitted.json.data.unsignedTx.from).to.equal(seller.address);
      const { to, data } = submitted.json.data.unsignedTx;
      await (await seller.wallet.sendTransaction({ to, data })).wait();
      await m.api.synced();

      const before = await m.usdc.balanceOf(seller.address);
      const finalized = await m.post(`/api/v1/a2a/tasks/${paid.taskHash}/finalize`, m.posterKey);
      expect(finalized.status, finalized.text).to.equal(200);
      for (let i = 0; i < 200 && (await m.usdc.balanceOf(seller.address)) === before; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect((await m.usdc.balanceOf(seller.address)) - before).to.equal(price - (price * BigInt(FEE_BPS)) / 10_000n);
      await m.api.synced();
      const task = await m.api.request("GET", `/api/v1/tasks/${paid.taskHash}`);
      expect(task.json.data.a2aState.status).to.equal("completed");
      expect(task.json.data.a2aMeta).to.include({ targetExecutor: seller.address, serviceId: service.id });
    }));
});
