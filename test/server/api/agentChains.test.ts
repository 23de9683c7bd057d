/**
 * Hosted agents' settlement chains and extra capabilities over HTTP: set at creation (default: every chain the
 * service settles on; an unknown name INVALID_CHAIN, a known one the service does not settle on CHAIN_NOT_SERVED),
 * changed by the owner (PATCH /agents/{agent}), the agent's executor record following them so the marketplace
 * refuses it a task on another chain (CHAIN_UNSUPPORTED) and takes it once the chain is enabled again.
 */
import { expect } from "chai";
import { withMarket } from "../../helpers/market";
import { AGENTS, createAgent, expectError } from "../../helpers/hostedAgents";
import { findExecutor } from "../../../server/db/repositories/executors";
import { agentPublicKey } from "../../../server/domain/briefs";
import { ethers } from "hardhat";

const NO_FEE = { DEPLOY_FEE_REQUIRED: "false" };
const TWO_CHAINS = { ...NO_FEE, CHAINS: "base,arc", ARC_NETWORK: "hardhat-arc", ARC_GAS_SYMBOL: "USDC" };
const accept = (hash: string) => `/api/v1/a2a/tasks/${hash}/accept`;

describe("Hosted agents' chains and capabilities", () => {
  it("on one configured chain: defaults to it, refuses a known chain not served and an unknown one", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      const plain = await createAgent(m.api, key, { slug: "one-chain" });
      expect(plain.chains).to.deep.equal(["base"]);

      const arc = await m.api.request("POST", AGENTS, { key, body: { slug: "arc-one", name: "A", chains: ["arc"] } });
      expectError(arc, 400, "CHAIN_NOT_SERVED", "does not settle on arc");
      expect(arc.json.error.details).to.deep.equal({ chain: "arc", configured: ["base"] });
      const unknown = await m.api.request("POST", AGENTS, {
        key,
        body: { slug: "sol-one", name: "S", chains: ["base", "solana"] },
      });
      expectError(unknown, 400, "INVALID_CHAIN", "solana");
      expectError(
        await m.api.request("POST", AGENTS, { key, body: { slug: "none-one", name: "N", chains: [] } }),
        400,
        "VALIDATION_ERROR",
        "at least one chain",
      );
      // Nothing was created by the refusals.
      const listed = (await m.api.request("GET", AGENTS, { key })).json.data.agents;
      expect(listed.map((a: { slug: string }) => a.slug)).to.deep.equal(["one-chain"]);

      expectError(
        await m.api.request("PATCH", `${AGENTS}/one-chain`, { key, body: { chains: ["arc"] } }),
        400,
        "CHAIN_NOT_SERVED",
      );
      expect((await m.api.request("GET", `${AGENTS}/one-chain`, { key })).json.data).to.deep.include({
        chains: ["base"],
        generation: 0,
      });
    }, NO_FEE));

  it("on two chains: all by default, one when chosen, and the capabilities given; both shown back", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      const both = await createAgent(m.api, key, { slug: "both-chains" });
      expect(both.chains).to.deep.equal(["arc", "base"]);
      const arcOnly = await createAgent(m.api, key, {
        slug: "arc-only",
        chains: ["arc", "arc"],
        capabilities: ["Klingon-Verse"],
      });
      expect(arcOnly).to.deep.include({ chains: ["arc"], extraCapabilities: ["klingon-verse"] });
      expect(arcOnly.capabilities).to.include("klingon-verse");
      const read = (await m.api.request("GET", `${AGENTS}/arc-only`, { key })).json.data;
      expect(read.chains).to.deep.equal(["arc"]);
      const stored = await m.api.deps.db("hosted_agents").where({ id: arcOnly.id }).first();
      expect(JSON.parse(stored.chains)).to.deep.equal(["arc"]);
    }, TWO_CHAINS));

  it("the owner changes them; the executor record follows and the marketplace refuses a task on another chain", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      const agent = await createAgent(m.api, key, { slug: "moving-agent" });
      expect(agent.chains).to.deep.equal(["arc", "base"]);
      // Registered as its worker registers it (its chains), with an API key of its wallet to act in the marketplace.
      const wallet = ethers.Wallet.createRandom();
      await m.register(agent.wallet, {
        publicKey: agentPublicKey(wallet.privateKey),
        supportedChains: ["arc", "base"],
      });
      const agentKey = await m.api.createKey(agent.wallet);
      const patch = (body: unknown, as = key) =>
        m.api.request("PATCH", `${AGENTS}/${agent.id}`, { key: as, body: body as Record<string, unknown> });

      const arcOnly = await patch({ chains: ["arc"] });
      expect(arcOnly.status, arcOnly.text).to.equal(200);
      expect(arcOnly.json.data).to.deep.include({ chains: ["arc"], extraCapabilities: [], generation: 1 });
      expect((await findExecutor(m.api.deps.db, agent.wallet))!.supportedChains).to.deep.equal(["arc"]);

      // The task is on base, the posting chain: refused while the agent settles on arc alone.
      const { taskHash } = await m.list();
      expectError(await m.post(accept(taskHash), agentKey), 409, "CHAIN_UNSUPPORTED", "not among the supported chains");

      const back = await patch({ chains: ["base", "arc"], capabilities: ["Translate", "translate"] });
      expect(back.status, back.text).to.equal(200);
      expect(back.json.data).to.deep.include({
        chains: ["arc", "base"],
        extraCapabilities: ["translate"],
        generation: 2,
      });
      expect((await findExecutor(m.api.deps.db, agent.wallet))!.supportedChains).to.deep.equal(["arc", "base"]);
      const accepted = await m.post(accept(taskHash), agentKey);
      expect(accepted.status, accepted.text).to.equal(200);

      // Capabilities alone leave the chains; [] removes the extra ones.
      const caps = await patch({ capabilities: [] });
      expect(caps.json.data).to.deep.include({ chains: ["arc", "base"], extraCapabilities: [], generation: 3 });

      expectError(await patch({}), 400, "VALIDATION_ERROR", "at least one setting");
      expectError(await patch({ chains: ["solana"] }), 400, "INVALID_CHAIN");
      expectError(await patch({ minReward: "5" }), 400, "VALIDATION_ERROR");
      const strangerKey = await m.api.createKey(m.stranger.address);
      expectError(await patch({ chains: ["base"] }, strangerKey), 404, "NOT_FOUND");
      expect((await m.api.request("GET", `${AGENTS}/${agent.id}`, { key })).json.data.chains).to.deep.equal([
        "arc",
        "base",
      ]);
    }, TWO_CHAINS));

  it("a deleted agent's settings are not changed (NOT_FOUND)", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      const agent = await createAgent(m.api, key, { slug: "gone-agent" });
      expect((await m.api.request("DELETE", `${AGENTS}/${agent.id}`, { key })).status).to.equal(200);
      expectError(
        await m.api.request("PATCH", `${AGENTS}/${agent.id}`, { key, body: { chains: ["base"] } }),
        404,
        "NOT_FOUND",
      );
    }, NO_FEE));
});
