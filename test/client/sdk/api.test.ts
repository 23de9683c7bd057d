/**
 * The SDK's typed REST calls: one method for every route the service serves (checked against the route table, so a
 * new route without an SDK call fails here), answers as the envelope's `data`, and errors as typed values carrying
 * the service's `error.code` and status, against the real API over HTTP.
 */
import { expect } from "chai";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture } from "../../helpers/fixtures";
import { startTestApi } from "../../helpers/api";
import { allRoutes } from "../../../server/api/routes";
import { ApiError, MarketApi, isMarketError, subscribe } from "../../../client/sdk/index";

const HASH = "0x" + "ab".repeat(32);
const ADDRESS = "0x" + "cd".repeat(20);

/** Calls every method of the SDK once (recording, not sending). */
async function callEverything(api: MarketApi) {
  const calls: (() => Promise<unknown>)[] = [
    () => api.stats(),
    () => api.settlement(),
    () => api.openApi(),
    () => api.authNonce(ADDRESS),
    () => api.authVerify({ message: "m", signature: "0x" }),
    () => api.signOut("ses_x"),
    () => api.createApiKey({ label: "x" }),
    () => api.listApiKeys(),
    () => api.revokeApiKey(1),
    () => api.whoami(),
    () => api.upload("brief"),
    () => api.uploadBatch(["a", "b"]),
    () => api.blob(HASH),
    () => api.buildTask({ taskHash: HASH, amount: "1", locationZone: "global", duration: "3600" }),
    () => api.buildTaskBatch({ token: ADDRESS, tasks: [] }),
    () => api.indexTask({ txHash: HASH, taskHash: HASH }),
    () => api.indexTaskBatch({ txHash: HASH, tasks: [] }),
    () => api.openTasks(),
    () => api.postedTasks(),
    () => api.offeredTasks(),
    () => api.task(HASH),
    () => api.registerExecutor({ publicKey: "04" }),
    () => api.ownExecutor(),
    () => api.heartbeat(),
    () => api.executors({ capabilities: "a,b" }),
    () => api.leaderboard(),
    () => api.reputation(ADDRESS),
    () => api.bid(HASH),
    () => api.applicants(HASH),
    () => api.accept(HASH),
    () => api.brief(HASH),
    () => api.assign(HASH, ADDRESS),
    () => api.cancel(HASH),
    () => api.submit(HASH, { result: { a: 1 } }),
    () => api.verify(HASH, { passed: true }),
    () => api.finalize(HASH),
    () => api.decline(HASH),
    () => api.escalate(HASH),
    () => api.release(HASH),
    () => api.reclaim(HASH),
    () => api.dispute(HASH),
    () => api.splitUnruled(HASH),
    () => api.contestOpen(HASH),
    () => api.judgeOpen(HASH, { winner: ADDRESS }),
    () => api.credits(ADDRESS),
    () => api.withdraw({ token: ADDRESS }),
    () => api.platformCard(),
    () => api.a2aAgentCard(),
    () => api.agentCard(ADDRESS),
    () => api.createService({ name: "n", description: "d", price_raw: 1 }),
    () => api.updateService(1, { active: false }),
    () => api.deleteService(1),
    () => api.services(),
    () => api.service(1),
    () => api.deployFee(),
    () => api.verifyDeployFee(HASH),
    () => api.skillCatalog(),
    () => api.createHostedAgent({ slug: "abc", name: "n" }),
    () => api.hostedAgents(),
    () => api.hostedAgent("abc"),
    () => api.updateHostedAgent("abc", { chains: ["base"] }),
    () => api.hostedAgentAction("abc", "start"),
    () => api.deleteHostedAgent("abc"),
    () => api.hostedAgentLogs("abc", { after: 1 }),
    () => api.installSkill("abc", { skill: "webhook" }),
    () => api.uninstallSkill("abc", "webhook"),
    () => api.keyExportChallenge("abc"),
    () => api.exportAgentKey("abc", { message: "m", signature: "0x" }),
    () => api.workingTasks(),
    () => api.judgingTasks(),
    () => api.addBriefKeys(HASH, { wrappedKeys: { [ADDRESS]: "0x00" } }),
    () => api.devnetWallets(),
    () => api.createWebhook({ url: "https://example.com/hook" }),
    () => api.listWebhooks(),
    () => api.deleteWebhook(1),
    () => api.webhookDeliveries(1),
    () => api.describeOAuthAuthorization({ client_id: "mcp_x" }),
    () => api.decideOAuthAuthorization({ client_id: "mcp_x", approve: false }),
    () => api.listOAuthClients(),
    () => api.revokeOAuthClient("mcp_x"),
    // GET /api/v1/events is the event stream's: one connection attempt, then stopped.
    async () => {
      const subscription = subscribe(api, () => undefined);
      await new Promise((resolve) => setTimeout(resolve, 20));
      await subscription.close();
    },
  ];
  for (const call of calls) await call();
}

describe("SDK REST calls", () => {
  it("has a typed call for every route of the service", async () => {
    const seen: { method: string; path: string }[] = [];
    const recording = new MarketApi({
      baseUrl: "http://sdk.invalid",
      fetch: async (input, init) => {
        seen.push({ method: String(init?.method), path: new URL(String(input)).pathname });
        return new Response(JSON.stringify({ success: true, data: {} }), {
          headers: { "content-type": "application/json" },
        });
      },
    });
    await callEverything(recording);
    const uncovered = allRoutes.filter((route) => {
      const pattern = new RegExp("^" + route.path.replace(/\./g, "\\.").replace(/:[a-zA-Z]+/g, "[^/]+") + "$");
      return !seen.some((s) => s.method === route.method.toUpperCase() && pattern.test(s.path));
    });
    expect(uncovered.map((r) => `${r.method.toUpperCase()} ${r.path}`)).to.deep.equal([]);
  });

  it("answers `data` typed, and errors as ApiError with the service's code, status and details", async () => {
    const { book, poster } = await loadFixture(deployEscrowFixture);
    const api = await startTestApi(book);
    try {
      const market = new MarketApi({ baseUrl: api.url, apiKey: await api.createKey(poster.address) });
      const settlement = await market.settlement();
      expect(settlement.chains.map((c) => c.chain)).to.include(settlement.postingChain);
      expect((await market.whoami()).address).to.equal(poster.address.toLowerCase());
      const stored = await market.upload("Write a haiku about escrow.");
      expect((await market.blob(stored.rootHash)).toString()).to.equal("Write a haiku about escrow.");
      expect((await market.openApi()).openapi).to.equal("3.0.3");

      const refused = async (call: Promise<unknown>) => {
        try {
          await call;
        } catch (error) {
          expect(isMarketError(error)).to.equal(true);
          return error as ApiError;
        }
        expect.fail("expected an ApiError");
      };
      const notFound = await refused(market.task(HASH));
      expect(notFound).to.be.instanceOf(ApiError);
      expect([notFound.code, notFound.status]).to.deep.equal(["NOT_FOUND", 404]);
      const badId = await refused(market.task("0x1234"));
      expect([badId.code, badId.status]).to.deep.equal(["INVALID_TASK_ID", 400]);
      const noKey = await refused(new MarketApi({ baseUrl: api.url }).whoami());
      expect([noKey.code, noKey.status]).to.deep.equal(["UNAUTHORIZED", 401]);
      const rows = await refused(market.uploadBatch(["ok", ""]));
      expect(rows.code).to.equal("INVALID_ITEMS");
      expect((rows.details!.errors as { index: number; code: string }[])[0]).to.deep.include({
        index: 1,
        code: "EMPTY_DATA",
      });
    } finally {
      await api.close();
    }
  });
});
