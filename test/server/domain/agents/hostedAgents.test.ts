/**
 * The hosted-agent domain under concurrency: creates racing for one slug spend exactly one credit between them,
 * creates racing for a wallet's last credit never share it, and starts racing for the hosts' last places never
 * exceed their capacity.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture } from "../../../helpers/fixtures";
import { startTestApi, type TestApi } from "../../../helpers/api";
import { actOnAgent, createHostedAgent } from "../../../../server/domain/agents/hostedAgents";
import { heartbeatHost } from "../../../../server/db/repositories/agentHosts";
import { createAgentBodySchema } from "../../../../server/domain/schemas/agents";
import { countDeployCredits, recordDeployFeePayment } from "../../../../server/db/repositories/deployFees";
import { AppError } from "../../../../server/errors";

async function withApi(fn: (api: TestApi) => Promise<void>) {
  const fixture = await loadFixture(deployEscrowFixture);
  const api = await startTestApi(fixture.book, { DEPLOY_FEE_REQUIRED: "true" });
  try {
    await fn(api);
  } finally {
    await api.close();
  }
}

/** `count` deploy credits of `wallet`, as verified payments. */
async function grantCredits(api: TestApi, wallet: string, count: number) {
  for (let i = 0; i < count; i++) {
    await recordDeployFeePayment(api.deps.db, {
      txHash: ethers.hexlify(ethers.randomBytes(32)),
      logIndex: 0,
      payer: wallet,
      amount: "1",
      nonce: i,
      blockNumber: 1,
      verifiedAt: 1,
    });
  }
}

const codeOf = (outcome: PromiseSettledResult<unknown>) =>
  outcome.status === "fulfilled" ? "created" : outcome.reason instanceof AppError ? outcome.reason.code : "other";

describe("Hosted agents (domain)", () => {
  it("spends one credit for eight creates racing for one slug", () =>
    withApi(async (api) => {
      const owner = ethers.Wallet.createRandom().address.toLowerCase();
      await grantCredits(api, owner, 8);
      const body = createAgentBodySchema.parse({ slug: "contested", name: "C" });
      const outcomes = await Promise.allSettled(
        Array.from({ length: 8 }, () => createHostedAgent(api.deps, owner, body)),
      );
      const codes = outcomes.map(codeOf).sort();
      expect(codes).to.deep.equal(
        [
          "SLUG_TAKEN",
          "SLUG_TAKEN",
          "SLUG_TAKEN",
          "SLUG_TAKEN",
          "SLUG_TAKEN",
          "SLUG_TAKEN",
          "SLUG_TAKEN",
          "created",
        ].sort(),
      );
      expect(await countDeployCredits(api.deps.db, owner)).to.equal(7);
    }));

  it("never lets two creates share the last credit", () =>
    withApi(async (api) => {
      const owner = ethers.Wallet.createRandom().address.toLowerCase();
      await grantCredits(api, owner, 2);
      const outcomes = await Promise.allSettled(
        Array.from({ length: 5 }, (_, i) =>
          createHostedAgent(api.deps, owner, createAgentBodySchema.parse({ slug: `racer-${i}`, name: "R" })),
        ),
      );
      const codes = outcomes.map(codeOf);
      expect(codes.filter((c) => c === "created")).to.have.length(2);
      expect(codes.filter((c) => c === "NO_DEPLOY_CREDIT")).to.have.length(3);
      expect(await countDeployCredits(api.deps.db, owner)).to.equal(0);
      const rows = await api.deps.db("hosted_agents").where({ owner }).select("deploy_tx_hash");
      expect(new Set(rows.map((r: { deploy_tx_hash: string }) => r.deploy_tx_hash)).size).to.equal(2);
    }));

  it("starts no more agents than the live hosts hold when starts race for the last places", () =>
    withApi(async (api) => {
      const owner = ethers.Wallet.createRandom().address.toLowerCase();
      const agents = 6;
      await grantCredits(api, owner, agents);
      for (let i = 0; i < agents; i++) {
        await createHostedAgent(api.deps, owner, createAgentBodySchema.parse({ slug: `starter-${i}`, name: "S" }));
      }
      await heartbeatHost(api.deps.db, { id: "host-a", capacity: 2, nowMs: api.deps.clock.wallNowMs() });
      const outcomes = await Promise.allSettled(
        Array.from({ length: agents }, (_, i) =>
          actOnAgent(api.deps, owner, { agentId: `starter-${i}`, action: "start" }),
        ),
      );
      const codes = outcomes.map(codeOf);
      expect(
        codes.filter((c) => c === "created"),
        "started",
      ).to.have.length(2);
      expect(codes.filter((c) => c === "AGENT_CAPACITY")).to.have.length(agents - 2);
      const full = outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult;
      expect((full.reason as AppError).details).to.deep.equal({ running: 2, capacity: 2 });
      const running = await api.deps.db("hosted_agents").where({ owner, desired_state: "running" }).count({ n: "*" });
      expect(Number(running[0].n)).to.equal(2);
    }));
});
