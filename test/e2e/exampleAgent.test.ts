/**
 * What a person sees on the devnet: they post a public auto-verified task, the example agent takes it and delivers,
 * the marketplace verifier settles the verdict, and the task goes from posted to paid.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture, DAY, STATUS, USDC } from "../helpers/fixtures";
import { startTestApi } from "../helpers/api";
import { hardhatPrivateKey, verifierPrivateKey } from "../helpers/keys";
import { ExampleAgent, summarise } from "../../client/exampleAgent";
import { AutoVerifier } from "../../server/domain/marketplace/autoVerifier";

const AGENT_ACCOUNT = 9;

describe("e2e: the example agent takes a public task from posted to paid", () => {
  it("registers, accepts, delivers; the auto verdict pays it amount minus fee and the treasury the fee", async () => {
    const { book, escrow, usdc, poster, treasury } = await loadFixture(deployEscrowFixture);
    const api = await startTestApi(book, { VERIFIER_PRIVATE_KEY: verifierPrivateKey() });
    const auto = new AutoVerifier(api.deps, { pollMs: 50 });
    auto.start();
    const agentKey = hardhatPrivateKey(AGENT_ACCOUNT);
    const agentAddress = new ethers.Wallet(agentKey).address;
    const agent = new ExampleAgent({
      apiUrl: api.url,
      apiKey: await api.createKey(agentAddress),
      privateKey: agentKey,
      provider: ethers.provider,
      pollIntervalMs: 100,
    });
    try {
      await agent.start();
      // The poster: a public brief, auto-verified by rules the example's output meets.
      const key = await api.createKey(poster.address);
      const brief = "Summarise the escrow design. It holds rewards until verified work is paid.";
      const upload = await api.request("POST", "/api/v1/storage/upload", {
        key,
        body: { data: Buffer.from(brief).toString("base64") },
      });
      const taskHash = upload.json.data.rootHash;
      const amount = USDC(40);
      const terms = {
        verificationMode: "auto",
        verificationCriteria: { required_fields: ["summary", "wordCount"], contains_keywords: ["escrow"] },
        requiredCapabilities: ["summarise"],
      };
      const build = await api.request("POST", "/api/v1/tasks", {
        key,
        body: { taskHash, amount: amount.toString(), locationZone: "global", duration: String(DAY), ...terms },
      });
      expect(build.status, build.text).to.equal(200);
      await (await usdc.connect(poster).approve(book.escrow.proxy, amount)).wait();
      const sent = await poster.sendTransaction({
        to: build.json.data.unsignedTx.to,
        data: build.json.data.unsignedTx.data,
      });
      await sent.wait();
      const indexed = await api.request("POST", "/api/v1/a2a/tasks/index", {
        key,
        body: { txHash: sent.hash, taskHash, privacy: "public", publicBrief: brief, ...terms },
      });
      expect(indexed.status, indexed.text).to.equal(200);
      const taskId = indexed.json.data.onChainTaskId;

      const before = { agent: await usdc.balanceOf(agentAddress), treasury: await usdc.balanceOf(treasury.address) };
      for (let i = 0; i < 300 && Number((await escrow.getTask(taskId)).status) !== STATUS.Completed; i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const onChain = await escrow.getTask(taskId);
      expect(Number(onChain.status), "paid").to.equal(STATUS.Completed);
      expect(onChain.worker).to.equal(agentAddress);
      const fee = (amount * (await escrow.feeBps())) / 10_000n;
      expect((await usdc.balanceOf(agentAddress)) - before.agent).to.equal(amount - fee);
      expect((await usdc.balanceOf(treasury.address)) - before.treasury).to.equal(fee);
      expect(agent.delivered()).to.deep.equal([taskHash]);

      // The poster reads the deliverable.
      await api.synced();
      const read = await api.request("GET", `/api/v1/tasks/${taskHash}`, { key });
      expect(read.json.data.resultData).to.deep.equal(summarise(brief));
    } finally {
      await agent.stop();
      await auto.stop();
      await api.close();
    }
  });
});
