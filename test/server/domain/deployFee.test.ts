/**
 * The agent deploy fee over HTTP on a Hardhat chain: the terms, paying with the unsigned transactions the API builds,
 * verifying once (DEPLOY_FEE_IN_USE after), a fee paid by another wallet (PAYER_NOT_LINKED), a transaction that paid
 * nothing, a reverted one, an RPC failure, and twenty concurrent verifications of one fee giving one credit; the
 * indexer's credits from AgentDeployed events (and a reorg undoing one); spending a credit (NO_DEPLOY_CREDIT).
 */
import { expect } from "chai";
import { ethers, network } from "hardhat";
import { mine } from "@nomicfoundation/hardhat-network-helpers";
import { type Market, withMarket } from "../../helpers/market";
import type { ApiResponse } from "../../helpers/api";
import { spendDeployCredit, verifyDeployFee } from "../../../server/domain/deployFee";
import { AppError } from "../../../server/errors";

const FEE = "/api/v1/agents/deploy-fee";
const VERIFY = `${FEE}/verify`;

function expectError(res: ApiResponse, status: number, code: string) {
  expect(res.status, res.text).to.equal(status);
  expect(res.json.error.code, res.text).to.equal(code);
}

/** Pays the fee from `signer` with the transactions the API built for `key`; returns the deployAgent tx hash. */
async function payFee(m: Market, signer: typeof m.worker, key: string): Promise<string> {
  const terms = (await m.api.request("GET", FEE, { key })).json.data;
  await (await m.usdc.mint(signer.address, BigInt(terms.amount_raw))).wait();
  for (const tx of [terms.transactions.approve, terms.transactions.deployAgent]) {
    expect(tx.from).to.equal(signer.address.toLowerCase());
    await (await signer.sendTransaction({ to: tx.to, data: tx.data })).wait();
  }
  const logs = await m.agentFactory.queryFilter(m.agentFactory.filters.AgentDeployed(signer.address), -1);
  return logs[logs.length - 1].transactionHash;
}

describe("The agent deploy fee", () => {
  it("reads the terms, and with a key the unsigned approve and deployAgent(0) for the key's wallet", () =>
    withMarket(async (m) => {
      const open = await m.api.request("GET", FEE);
      expect(open.status, open.text).to.equal(200);
      expect(open.json.data).to.deep.equal({
        required: true,
        factory: (await m.agentFactory.getAddress()).toLowerCase(),
        token: m.token.toLowerCase(),
        amount_raw: (await m.agentFactory.deployFee()).toString(),
        treasury: m.treasury.address.toLowerCase(),
        how: open.json.data.how,
      });
      const key = await m.api.createKey(m.worker.address);
      const mine = (await m.api.request("GET", FEE, { key })).json.data;
      expect(mine.credits).to.equal(0);
      const approve = new ethers.Interface(["function approve(address,uint256)"]).decodeFunctionData(
        "approve",
        mine.transactions.approve.data,
      );
      expect(approve[0].toLowerCase()).to.equal(mine.factory);
      expect(approve[1]).to.equal(BigInt(mine.amount_raw));
      expect(mine.transactions.deployAgent.to).to.equal(mine.factory);
      const [funding] = m.agentFactory.interface.decodeFunctionData("deployAgent", mine.transactions.deployAgent.data);
      expect(funding).to.equal(0n);
    }));

  it("answers { required: false } where no fee is charged", () =>
    withMarket(
      async (m) => {
        expect((await m.api.request("GET", FEE)).json.data).to.deep.equal({ required: false });
        const key = await m.api.createKey(m.worker.address);
        expectError(
          await m.api.request("POST", VERIFY, { key, body: { txHash: ethers.hexlify(ethers.randomBytes(32)) } }),
          409,
          "DEPLOY_FEE_UNAVAILABLE",
        );
      },
      { DEPLOY_FEE_REQUIRED: "false" },
    ));

  it("verifies a paid fee once, and refuses every other case with its code", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      const strangerKey = await m.api.createKey(m.stranger.address);
      const paid = await payFee(m, m.worker, key);

      const stranger = await m.api.request("POST", VERIFY, { key: strangerKey, body: { txHash: paid } });
      expectError(stranger, 402, "DEPLOY_FEE_NOT_PAID");
      expect(stranger.json.error.reason).to.equal("PAYER_NOT_LINKED");

      const verified = await m.api.request("POST", VERIFY, { key, body: { txHash: paid } });
      expect(verified.status, verified.text).to.equal(200);
      expect(verified.json.data).to.include({ payer: m.worker.address.toLowerCase(), credits: 1 });
      // A fee paid before the factory's fee was raised is below the current fee.
      const older = await payFee(m, m.stranger, strangerKey);
      const fee = await m.agentFactory.deployFee();
      await (await m.agentFactory.connect(m.admin).setDeployFee(fee * 2n)).wait();
      const low = await m.api.request("POST", VERIFY, { key: strangerKey, body: { txHash: older } });
      expectError(low, 402, "DEPLOY_FEE_NOT_PAID");
      expect(low.json.error.reason).to.equal("FEE_TOO_LOW");
      await (await m.agentFactory.connect(m.admin).setDeployFee(fee)).wait();
      expectError(await m.api.request("POST", VERIFY, { key, body: { txHash: paid } }), 409, "DEPLOY_FEE_IN_USE");
      expect((await m.api.request("GET", FEE, { key })).json.data.credits).to.equal(1);

      const unrelated = await (await m.usdc.connect(m.worker).approve(await m.escrow.getAddress(), 1)).wait();
      expectError(
        await m.api.request("POST", VERIFY, { key, body: { txHash: unrelated!.hash } }),
        409,
        "DEPLOY_FEE_NOT_FOUND",
      );
      expectError(
        await m.api.request("POST", VERIFY, { key, body: { txHash: ethers.hexlify(ethers.randomBytes(32)) } }),
        409,
        "DEPLOY_FEE_NOT_FOUND",
      );
      // Mined and reverted (Hardhat refuses a reverting send while automining: mine it by hand).
      await network.provider.send("evm_setAutomine", [false]);
      let reverted;
      try {
        reverted = await m.worker.sendTransaction({
          to: await m.agentFactory.getAddress(),
          data: m.agentFactory.interface.encodeFunctionData("deployAgent", [1]),
          gasLimit: 200_000,
        });
        await network.provider.send("evm_mine", []);
      } finally {
        await network.provider.send("evm_setAutomine", [true]);
      }
      expect((await ethers.provider.getTransactionReceipt(reverted.hash))?.status).to.equal(0);
      expectError(
        await m.api.request("POST", VERIFY, { key, body: { txHash: reverted.hash } }),
        402,
        "DEPLOY_FEE_REVERTED",
      );
      expectError(await m.api.request("POST", VERIFY, { key, body: { txHash: "0x12" } }), 400, "VALIDATION_ERROR");

      const receipt = m.api.deps.chain!.receipt;
      m.api.deps.chain!.receipt = async () => {
        throw new Error("connect ECONNREFUSED");
      };
      try {
        expectError(
          await m.api.request("POST", VERIFY, { key, body: { txHash: paid } }),
          503,
          "DEPLOY_FEE_CHECK_FAILED",
        );
      } finally {
        m.api.deps.chain!.receipt = receipt;
      }
    }));

  it("gives one credit for twenty concurrent verifications of one fee", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      const paid = await payFee(m, m.worker, key);
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => m.api.request("POST", VERIFY, { key, body: { txHash: paid } })),
      );
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses.filter((s) => s === 200)).to.have.length(1);
      expect(statuses.filter((s) => s === 409)).to.have.length(19);
      for (const a of answers.filter((x) => x.status === 409)) expect(a.json.error.code).to.equal("DEPLOY_FEE_IN_USE");
      expect((await m.api.request("GET", FEE, { key })).json.data.credits).to.equal(1);
    }));

  it("indexes each AgentDeployed payment as a credit of its payer; a verification then confirms it once", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      const strangerKey = await m.api.createKey(m.stranger.address);
      const paid = await payFee(m, m.worker, key);
      const unverified = await payFee(m, m.stranger, strangerKey);
      await m.api.synced();
      // Credits from the chain alone, before any verification.
      expect((await m.api.request("GET", FEE, { key })).json.data.credits).to.equal(1);
      expect((await m.api.request("GET", FEE, { key: strangerKey })).json.data.credits).to.equal(1);
      const row = await m.api.deps.db("deploy_fee_payments").where({ tx_hash: unverified.toLowerCase() }).first();
      expect(row).to.include({ payer: m.stranger.address.toLowerCase(), verified_at: null, amount: null });
      expect(Number(row.indexed_at)).to.be.greaterThan(0);

      const verified = await m.api.request("POST", VERIFY, { key, body: { txHash: paid } });
      expect(verified.status, verified.text).to.equal(200);
      expect(verified.json.data).to.deep.equal({
        txHash: paid.toLowerCase(),
        payer: m.worker.address.toLowerCase(),
        amount_raw: (await m.agentFactory.deployFee()).toString(),
        credits: 1,
      });
      // Another process (its own connection pool) verifying the same fee: already used.
      const otherProcess = { ...m.api.deps, db: m.api.testDb.reopen() };
      let refused: unknown;
      try {
        await verifyDeployFee(otherProcess, m.worker.address, paid);
      } catch (error) {
        refused = error;
      }
      expect(refused).to.be.instanceOf(AppError);
      expect((refused as AppError).code).to.equal("DEPLOY_FEE_IN_USE");
      expect((await m.api.request("GET", FEE, { key })).json.data.credits).to.equal(1);
    }));

  it("forgets an indexed credit whose block a reorg undid", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      await m.api.synced();
      const snapshot = await network.provider.send("evm_snapshot");
      const before = await ethers.provider.getBlockNumber();
      await payFee(m, m.worker, key);
      await m.api.synced();
      expect((await m.api.request("GET", FEE, { key })).json.data.credits).to.equal(1);
      await network.provider.send("evm_revert", [snapshot]);
      await mine((await ethers.provider.getBlockNumber()) - before + 10);
      await m.api.synced();
      expect((await m.api.request("GET", FEE, { key })).json.data.credits).to.equal(0);
      const left = (await m.api.deps.db("deploy_fee_payments").count({ n: "*" }).first()) as { n: number | string };
      expect(Number(left.n)).to.equal(0);
    }));

  it("spends one credit per deploy: twenty concurrent spends of one credit succeed once, then NO_DEPLOY_CREDIT", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      await payFee(m, m.worker, key);
      await m.api.synced();
      const outcomes = await Promise.allSettled(
        Array.from({ length: 20 }, () => spendDeployCredit(m.api.deps, m.worker.address)),
      );
      const spent = outcomes.filter((o) => o.status === "fulfilled");
      expect(spent).to.have.length(1);
      for (const o of outcomes.filter((x): x is PromiseRejectedResult => x.status === "rejected")) {
        expect(o.reason).to.be.instanceOf(AppError);
        expect((o.reason as AppError).code).to.equal("NO_DEPLOY_CREDIT");
        expect((o.reason as AppError).status).to.equal(402);
      }
      expect((await m.api.request("GET", FEE, { key })).json.data.credits).to.equal(0);
    }));

  it("answers DEPLOY_FEE_UNAVAILABLE: 503 when the factory cannot be read, 409 when it charges no fee", () =>
    withMarket(async (m) => {
      const book = m.api.deps.chain!.book;
      const factory = book.agentFactory.proxy;
      book.agentFactory.proxy = ethers.Wallet.createRandom().address; // no contract there
      try {
        expectError(await m.api.request("GET", FEE), 503, "DEPLOY_FEE_UNAVAILABLE");
      } finally {
        book.agentFactory.proxy = factory;
      }
      await (await m.agentFactory.connect(m.admin).setDeployFee(0)).wait();
      expectError(await m.api.request("GET", FEE), 409, "DEPLOY_FEE_UNAVAILABLE");
      const key = await m.api.createKey(m.worker.address);
      expectError(
        await m.api.request("POST", VERIFY, { key, body: { txHash: ethers.hexlify(ethers.randomBytes(32)) } }),
        409,
        "DEPLOY_FEE_UNAVAILABLE",
      );
    }));
});
