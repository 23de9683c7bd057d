/**
 * Hosted agents' tokens over HTTP: acting as the agent's wallet (whoami), refused where delegation is disabled (API
 * keys, listing them included, the owner's agent routes, webhooks), BAD_TOKEN (garbage, expired, wrong secret, stopped or deleted agent,
 * another wallet), NO_JWT_SECRET, and the agent's own window of 300 requests a minute instead of the IP's.
 */
import { expect } from "chai";
import { withMarket, type Market } from "../../helpers/market";
import { AGENTS, act, addLiveHost, agentToken, bearer, createAgent, expectError } from "../../helpers/hostedAgents";
import { issueAgentToken } from "../../../server/domain/agents/tokens";
import { createHostedAgent } from "../../../server/domain/agents/hostedAgents";
import { createAgentBodySchema } from "../../../server/domain/schemas/agents";
import { loadConfig } from "../../../server/config";

const WHOAMI = "/api/v1/api-keys/whoami";
const NO_FEE = { DEPLOY_FEE_REQUIRED: "false" };

/** A started agent of the worker (a live host gives room), with its token. */
async function runningAgent(m: Market, key: string, slug: string) {
  await addLiveHost(m.api, `host-${slug}`, 1);
  const agent = await createAgent(m.api, key, { slug });
  const started = await act(m.api, key, agent.id, "start");
  expect(started.status, started.text).to.equal(200);
  return { ...agent, token: await agentToken(m.api, agent) };
}

describe("Hosted agents' tokens", () => {
  it("act as the agent's wallet, and may not manage keys, agents or webhooks (DELEGATION_DISABLED)", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      const agent = await runningAgent(m, key, "tokened");
      const headers = bearer(agent.token);

      const me = await m.api.request("GET", WHOAMI, { headers });
      expect(me.status, me.text).to.equal(200);
      expect(me.json.data).to.deep.equal({ address: agent.wallet, addresses: [agent.wallet] });
      // An API-key route works as the agent's wallet (not registered as an executor yet).
      expectError(await m.api.request("GET", "/api/v1/a2a/executors/me", { headers }), 404, "NOT_REGISTERED");

      const refused: [string, string, unknown?][] = [
        ["POST", "/api/v1/api-keys", {}],
        ["GET", "/api/v1/api-keys"],
        ["DELETE", "/api/v1/api-keys/1"],
        ["GET", AGENTS],
        ["POST", AGENTS, { slug: "child", name: "Child" }],
        ["GET", `${AGENTS}/${agent.id}`],
        ["POST", `${AGENTS}/action`, { agentId: agent.id, action: "stop" }],
        ["POST", `${AGENTS}/${agent.id}/export/challenge`],
        ["POST", "/api/v1/webhooks", { url: "https://example.com/hook" }],
        ["GET", "/api/v1/webhooks"],
        ["DELETE", "/api/v1/webhooks/1"],
      ];
      for (const [method, path, body] of refused) {
        const res = await m.api.request(method, path, { headers, body });
        expectError(res, 403, "DELEGATION_DISABLED");
      }
      // No key was created for the agent's wallet, and its owner's agent still runs.
      expect(await m.api.deps.db("api_keys").where({ address: agent.wallet })).to.have.length(0);
      expect((await m.api.request("GET", `${AGENTS}/${agent.id}`, { key })).json.data.desiredState).to.equal("running");
      // The owner's key does not stand for the agent either way round: the owner is still its own wallet.
      expect((await m.api.request("GET", WHOAMI, { key })).json.data.address).to.equal(m.worker.address.toLowerCase());
    }, NO_FEE));

  it("answers BAD_TOKEN for garbage, expired, foreign, stopped, deleted or mismatched tokens", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      const agent = await runningAgent(m, key, "checked");
      const hosted = m.api.deps.config.hostedAgents;
      const whoami = (token: string) => m.api.request("GET", WHOAMI, { headers: bearer(token) });

      expectError(await whoami("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.bm90LWEtc2lnbmF0dXJl"), 401, "BAD_TOKEN");
      const expired = await issueAgentToken(hosted, agent, Math.floor(Date.now() / 1000) - 2 * hosted.tokenTtlSeconds);
      expectError(await whoami(expired.token), 401, "BAD_TOKEN");
      const foreign = await issueAgentToken({ ...hosted, jwtSecret: "another-secret-another-secret-another" }, agent);
      expectError(await whoami(foreign.token), 401, "BAD_TOKEN");
      const otherWallet = await issueAgentToken(hosted, { agentId: agent.id, wallet: m.stranger.address });
      expectError(await whoami(otherWallet.token), 401, "BAD_TOKEN");
      const unknown = await issueAgentToken(hosted, { agentId: "agt_000000000000000000000000", wallet: agent.wallet });
      expectError(await whoami(unknown.token), 401, "BAD_TOKEN");
      const bad = await whoami(foreign.token);
      expect(bad.headers.get("www-authenticate")).to.contain("invalid_token");

      // Paused still acts (it finishes accepted work); stopped does not; deleted never again.
      expect((await act(m.api, key, agent.id, "pause")).status).to.equal(200);
      expect((await whoami(agent.token)).status).to.equal(200);
      expect((await act(m.api, key, agent.id, "stop")).status).to.equal(200);
      expectError(await whoami(agent.token), 401, "BAD_TOKEN", "stopped");
      expect((await m.api.request("DELETE", `${AGENTS}/${agent.id}`, { key })).status).to.equal(200);
      expectError(await whoami(agent.token), 401, "BAD_TOKEN");
    }, NO_FEE));

  it("answers NO_JWT_SECRET where no token secret is configured", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      const agent = await runningAgent(m, key, "secretless");
      const other = await createAgent(m.api, key, { slug: "never-started" });
      // Off the devnet without AGENT_JWT_SECRET the configuration has none.
      const offDevnet = loadConfig({
        NETWORK: "base-sepolia",
        RPC_URL: "http://127.0.0.1:1",
        AGENT_KEY_ENCRYPTION_KEY: `0x${"ab".repeat(32)}`,
        LOG_LEVEL: "silent",
      });
      expect(offDevnet.hostedAgents.jwtSecret).to.equal(undefined);
      m.api.deps.config = { ...m.api.deps.config, hostedAgents: offDevnet.hostedAgents };
      await addLiveHost(m.api, "spare", 5);
      expectError(await act(m.api, key, other.id, "start"), 500, "NO_JWT_SECRET", "AGENT_JWT_SECRET");
      expectError(await m.api.request("GET", WHOAMI, { headers: bearer(agent.token) }), 500, "NO_JWT_SECRET");
    }, NO_FEE));

  describe("the rate limit", () => {
    it("is 300 requests a minute per agent by default", () =>
      withMarket(async (m) => {
        const { limits } = m.api.deps.config.api;
        expect(limits.agentPerWindow).to.equal(300);
        expect(limits.windowMs).to.equal(60_000);
        const key = await m.api.createKey(m.worker.address);
        const agent = await runningAgent(m, key, "limited");
        const res = await m.api.request("GET", WHOAMI, { headers: bearer(agent.token) });
        expect(res.headers.get("ratelimit-policy")).to.equal("300;w=60");
      }, NO_FEE));

    it("counts each agent's requests in its own window instead of the IP's; invalid tokens count as the IP", () =>
      withMarket(
        async (m) => {
          const { deps } = m.api;
          const { limits } = deps.config.api;
          // Set up without HTTP: the IP's window is small.
          const owner = m.worker.address.toLowerCase();
          const agents = [];
          for (const slug of ["rate-a", "rate-b"]) {
            const view = await createHostedAgent(deps, owner, createAgentBodySchema.parse({ slug, name: slug }));
            await deps.db("hosted_agents").where({ id: view.id }).update({ desired_state: "running" });
            agents.push({ ...view, token: await agentToken(m.api, view) });
          }
          const [a, b] = agents;
          const call = (token: string) => m.api.request("GET", WHOAMI, { headers: bearer(token) });
          for (let i = 0; i < 5; i++) {
            const res = await call(a.token);
            expect(res.status, res.text).to.equal(200);
            expect(res.headers.get("ratelimit-policy")).to.equal("5;w=60");
          }
          const over = await call(a.token);
          expectError(over, 429, "RATE_LIMIT", a.id);
          expect(Number(over.headers.get("retry-after"))).to.be.within(1, 60);
          expect(over.headers.get("ratelimit-policy")).to.equal("5;w=60");
          // The other agent has its own window; the IP's has not moved (its limit is 3).
          for (let i = 0; i < 5; i++) expect((await call(b.token)).status).to.equal(200);
          expectError(await call(b.token), 429, "RATE_LIMIT");
          expect((await deps.limits.peekWindow("ip:127.0.0.1", limits.windowMs)).count).to.equal(0);
          expect((await deps.limits.peekWindow(`agent:${a.id}`, limits.windowMs)).count).to.equal(6);

          // An invalid token is the IP's request.
          expectError(await call("eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl"), 401, "BAD_TOKEN");
          expect((await deps.limits.peekWindow("ip:127.0.0.1", limits.windowMs)).count).to.equal(1);
          const anonymous = await m.api.request("GET", "/api/v1/agents/skills");
          expect(anonymous.status).to.equal(200);
          expect(anonymous.headers.get("ratelimit-policy")).to.equal("3;w=60");
        },
        { ...NO_FEE, RATE_AGENT_PER_WINDOW: "5", RATE_IP_PER_WINDOW: "3" },
      ));
  });
});
