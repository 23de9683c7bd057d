/**
 * The SDK posting on arc as its users run it: an API settling on base (the posting chain) and arc, arc served over
 * JSON-RPC HTTP, a plain ethers JsonRpcProvider + fresh Wallet on arc, and `postTask`/`postTasks` with
 * `chain: "arc"`. The careful checks pin arc's escrow, token and chain id from the settlement record's arc entry;
 * money moves on arc only; the listings belong to arc.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { Contract, Wallet } from "ethers";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture, USDC } from "../../helpers/fixtures";
import { ARC_CHAIN_ID, arcFixture, serveArcChain, type ArcFixture } from "../../helpers/arc";
import { startTestApi, type TestApi } from "../../helpers/api";
import { serveChain, type ServedChain } from "../../helpers/rpc";
import { findListingByHash } from "../../../server/db/repositories/listings";
import {
  agentPublicKey,
  decryptBrief,
  MarketApi,
  postTask,
  postTasks,
  sendTaskOperation,
} from "../../../client/sdk/index";
import { expectCode } from "../../helpers/marketErrors";

const ERC20 = [
  "function balanceOf(address) view returns (uint256)",
  "function allowance(address,address) view returns (uint256)",
];

describe('SDK posting on arc (chain: "arc", plain JsonRpcProvider + Wallet on arc\'s RPC)', function () {
  this.timeout(60_000);
  let base: Awaited<ReturnType<typeof deployEscrowFixture>>;
  let arc: ArcFixture;
  let arcRpc: ServedChain;
  let api: TestApi;
  let poster: Wallet;
  let market: MarketApi;
  let arcToken: Contract;

  beforeEach(async () => {
    base = await loadFixture(deployEscrowFixture);
    arc = await arcFixture();
    arcRpc = await serveArcChain();
    api = await startTestApi(base.book, {}, { arc });
    // A fresh wallet with gas and USDC on arc only (nothing on base).
    poster = new Wallet(Wallet.createRandom().privateKey, arcRpc.provider);
    await (await arc.admin.sendTransaction({ to: poster.address, value: ethers.parseEther("10") })).wait();
    await (await arc.usdc.mint(poster.address, USDC(1_000))).wait();
    market = new MarketApi({ baseUrl: api.url, apiKey: await api.createKey(poster.address) });
    arcToken = new Contract(arc.book.token.address, ERC20, arcRpc.provider);
  });

  afterEach(async () => {
    await api.close();
    await arcRpc.close();
  });

  const arcBalance = async () => (await arcToken.balanceOf(poster.address)) as bigint;
  const baseBalance = async () => base.usdc.balanceOf(poster.address);

  it("posts a private task on arc: arc's escrow is paid exactly the reward, base untouched, listed with chain arc", async () => {
    const agent = ethers.Wallet.createRandom();
    const agentApi = new MarketApi({ baseUrl: api.url, apiKey: await api.createKey(agent.address) });
    await agentApi.registerExecutor({
      publicKey: agentPublicKey(agent.privateKey),
      capabilities: ["translate"],
      supportedChains: ["arc"],
    });
    const before = await arcBalance();
    const brief = "Translate the attached letter into Portuguese.";
    const posted = await postTask(
      { brief, amount: USDC(25), requiredCapabilities: ["translate"] },
      { api: market, signer: poster, chain: "arc" },
    );
    expect(posted).to.deep.include({ chain: "arc", chainId: ARC_CHAIN_ID, privacy: "private", onChainTaskId: 1 });
    expect(await arcBalance()).to.equal(before - USDC(25));
    expect(await baseBalance()).to.equal(0n);
    expect(await arcToken.allowance(poster.address, arc.book.escrow.proxy), "exactly the reward approved").to.equal(0n);
    const onChain = await arc.escrow.getTask(1);
    expect(onChain.taskHash).to.equal(posted.taskHash);
    expect(onChain.poster).to.equal(poster.address);
    expect(await base.escrow.nextTaskId(), "nothing funded on base").to.equal(1n);
    expect((await findListingByHash(api.deps.db, posted.taskHash))?.chain).to.equal("arc");
    const blob = await market.blob(posted.taskHash);
    expect(decryptBrief(blob, Buffer.from(posted.briefKey!, "hex")).toString()).to.equal(brief);
  });

  it("posts a public batch on arc in one createTasks on arc's escrow, every task listed with chain arc", async () => {
    const before = await arcBalance();
    const posted = await postTasks(
      [1, 2, 3].map((n) => ({
        brief: `Summarise arc report ${n}.`,
        privacy: "public" as const,
        amount: USDC(n),
        verificationMode: "auto" as const,
        verificationCriteria: { required_fields: ["summary"] },
      })),
      { api: market, signer: poster, chain: "arc" },
    );
    expect(posted.map((p) => p.onChainTaskId)).to.deep.equal([1, 2, 3]);
    expect(new Set(posted.map((p) => p.txHash)).size, "one funding transaction").to.equal(1);
    expect(posted.every((p) => p.chain === "arc" && p.chainId === ARC_CHAIN_ID)).to.equal(true);
    expect(await arcBalance()).to.equal(before - USDC(6));
    expect(await baseBalance()).to.equal(0n);
    const receipt = await arcRpc.provider.getTransactionReceipt(posted[0].txHash);
    expect(receipt?.to).to.equal(arc.book.escrow.proxy);
    for (const p of posted) expect((await findListingByHash(api.deps.db, p.taskHash))?.chain).to.equal("arc");
  });

  it("refuses before paying when the signer is on base's RPC while posting on arc, or when the pinned escrow moved", async () => {
    // A wallet connected to base's RPC cannot post on arc: the chain id check fails before anything is sent.
    const baseRpc = await serveChain();
    try {
      const onBase = new Wallet(poster.privateKey, baseRpc.provider);
      await expectCode(
        postTask({ brief: "wrong network", amount: USDC(1) }, { api: market, signer: onBase, chain: "arc" }),
        "WRONG_CHAIN",
      );
    } finally {
      await baseRpc.close();
    }
    // Pinning base's escrow while posting on arc: the arc entry's escrow differs, nothing is paid.
    const before = await arcBalance();
    await expectCode(
      postTask(
        { brief: "pinned elsewhere", amount: USDC(1) },
        { api: market, signer: poster, chain: "arc", expect: { escrow: base.book.escrow.proxy } },
      ),
      "SETTLEMENT_CHANGED",
    );
    expect(await arcBalance()).to.equal(before);
  });

  it("cancels an arc task through arc's escrow with a wallet on arc's RPC; a wallet on base's RPC is refused first", async () => {
    const posted = await postTask(
      { brief: "Cancel me on arc.", privacy: "public", amount: USDC(4) },
      { api: market, signer: poster, chain: "arc" },
    );
    // The signer on base's RPC: WRONG_CHAIN before anything is signed (the task is arc's).
    const baseRpc = await serveChain();
    try {
      const onBase = new Wallet(poster.privateKey, baseRpc.provider);
      await expectCode(sendTaskOperation({ api: market, signer: onBase }, "cancel", posted.taskHash), "WRONG_CHAIN");
    } finally {
      await baseRpc.close();
    }
    const before = await arcBalance();
    const cancelled = await sendTaskOperation({ api: market, signer: poster }, "cancel", posted.taskHash);
    const receipt = await arcRpc.provider.getTransactionReceipt(cancelled.txHash);
    expect(receipt!.to!.toLowerCase(), "sent to arc's escrow").to.equal(arc.book.escrow.proxy.toLowerCase());
    expect(await arcBalance(), "the reward came back on arc").to.equal(before + USDC(4));
  });
});
