import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { secp256k1 } from "@noble/curves/secp256k1";
import { ClientFactory } from "@a2a-js/sdk/client";
import { deployEscrowFixture } from "../../helpers/fixtures";
import { startTestApi, type TestApi } from "../../helpers/api";
import { agentPublicKey } from "../../../server/domain/briefs";
import { PLATFORM } from "../../../server/protocols/cards";
import { MCP_TOOLS } from "../../../server/protocols/mcp/tools";

const PUBLIC_URL = "https://market.example";

async function withApi(fn: (ctx: { api: TestApi; worker: string; workerKey: string }) => Promise<void>) {
  const { book, worker } = await loadFixture(deployEscrowFixture);
  const api = await startTestApi(book, { PUBLIC_URL, RATE_IP_PER_WINDOW: "100000" });
  try {
    const workerKey = await api.createKey(worker.address);
    await fn({ api, worker: worker.address.toLowerCase(), workerKey });
  } finally {
    await api.close();
  }
}

describe("Discovery cards", () => {
  it("serves the spec's platform card with absolute URLs from PUBLIC_URL, cacheable with an ETag", () =>
    withApi(async ({ api }) => {
      const res = await api.request("GET", "/.well-known/agent.json");
      expect(res.status).to.equal(200);
      expect(res.headers.get("content-type")).to.match(/^application\/json/);
      expect(res.headers.get("cache-control")).to.equal("public, max-age=300");
      const card = res.json;
      // Exactly the spec's fields.
      expect(card).to.have.keys(["name", "url", "version", "capabilities", "skills", "endpoints"]);
      expect(card.url).to.equal(PUBLIC_URL);
      expect(card.version).to.equal("1.1.0");
      expect(card.capabilities).to.deep.equal({ a2a: true, streaming: false, pushNotifications: false });
      expect(card.skills.map((s: { id: string }) => s.id)).to.deep.equal([
        "task_execution",
        "blind_escrow",
        "rent_an_agent",
      ]);
      expect(card.endpoints).to.deep.equal({
        mcp: `${PUBLIC_URL}/mcp`,
        openapi: `${PUBLIC_URL}/api/v1/openapi.json`,
        a2aJsonRpc: `${PUBLIC_URL}/a2a/v1`,
        agentCards: `${PUBLIC_URL}/.well-known/agents/{address}.json`,
        app: `${PUBLIC_URL}/`,
      });
      const etag = res.headers.get("etag")!;
      expect(etag).to.match(/^"[A-Za-z0-9_-]+"$/);
      const again = await api.request("GET", "/.well-known/agent.json", { headers: { "if-none-match": etag } });
      expect(again.status).to.equal(304);
      expect(again.text).to.equal("");
    }));

  it("serves the platform as an A2A AgentCard that the official A2A client discovers", () =>
    withApi(async ({ api }) => {
      const res = await api.request("GET", "/.well-known/agent-card.json");
      expect(res.status).to.equal(200);
      expect(res.headers.get("cache-control")).to.equal("public, max-age=300");
      const etag = res.headers.get("etag")!;
      const again = await api.request("GET", "/.well-known/agent-card.json", { headers: { "if-none-match": etag } });
      expect(again.status).to.equal(304);
      const card = res.json;
      const platform = (await api.request("GET", "/.well-known/agent.json")).json;
      // One source: the same name, description, version and skill ids.
      expect(card.name).to.equal(platform.name);
      expect(card.description).to.equal(PLATFORM.description);
      expect(card.skills.map((s: { id: string }) => s.id)).to.deep.equal(
        platform.skills.map((s: { id: string }) => s.id),
      );
      for (const skill of card.skills) expect(skill.tags).to.be.an("array").that.is.not.empty;
      expect(card.defaultInputModes).to.include("text/plain");
      expect(card.defaultOutputModes).to.include("application/json");
      expect(card.capabilities).to.include({ streaming: false, pushNotifications: false });
      expect(card.supportedInterfaces).to.deep.include({
        url: `${PUBLIC_URL}/a2a/v1`,
        protocolBinding: "JSONRPC",
        protocolVersion: "1.0",
        tenant: "",
      });
      expect(card.url).to.equal(`${PUBLIC_URL}/a2a/v1`);
      expect(card.protocolVersion).to.equal("0.3.0");

      // The SDK's resolver fetches /.well-known/agent-card.json from the base URL (the test server, not PUBLIC_URL).
      const client = await new ClientFactory().createFromUrl(api.url);
      const seen = await client.getAgentCard();
      expect(seen.name).to.equal(card.name);
      expect(seen.skills.map((s) => s.id)).to.deep.equal(["task_execution", "blind_escrow", "rent_an_agent"]);
    }));

  it("serves a registered agent's card keyed `blindmarket`; BAD_ADDRESS and NOT_FOUND otherwise", () =>
    withApi(async ({ api, worker, workerKey }) => {
      const publicKey = agentPublicKey(secp256k1.utils.randomPrivateKey());
      const registered = await api.request("POST", "/api/v1/a2a/executors", {
        key: workerKey,
        body: { publicKey, capabilities: ["translation", "python"], verifier: { optIn: true, name: "Translator" } },
      });
      expect(registered.status, registered.text).to.be.oneOf([200, 201]);
      const res = await api.request("GET", `/.well-known/agents/${ethers.getAddress(worker)}.json`);
      expect(res.status, res.text).to.equal(200);
      expect(res.headers.get("cache-control")).to.equal("public, max-age=60");
      const etag = res.headers.get("etag")!;
      const cached = await api.request("GET", `/.well-known/agents/${worker}.json`, {
        headers: { "if-none-match": etag },
      });
      expect(cached.status).to.equal(304);
      const card = res.json;
      expect(card.name).to.equal("Translator");
      expect(card.skills).to.deep.equal([]);
      expect(Object.keys(card)).to.include("blindmarket");
      expect(card.blindmarket).to.deep.include({
        address: worker,
        publicKey: publicKey.toLowerCase(),
        capabilities: ["python", "translation"],
        reputation: 0,
        tasksCompleted: 0,
      });
      expect(card.blindmarket.invoke.mcp.url).to.equal(`${PUBLIC_URL}/mcp`);
      // The tool it names exists and takes the arguments it gives.
      const tool = MCP_TOOLS.find((t) => t.name === card.blindmarket.invoke.mcp.tool)!;
      expect(tool, card.blindmarket.invoke.mcp.tool).to.not.equal(undefined);
      expect((tool.inputSchema as { properties: object }).properties).to.include.keys(
        Object.keys(card.blindmarket.invoke.mcp.arguments),
      );
      expect(card.blindmarket.invoke.api.body.targetExecutor).to.equal(worker);
      expect(card.url).to.equal(`${PUBLIC_URL}/.well-known/agents/${worker}.json`);

      const bad = await api.request("GET", "/.well-known/agents/0x1234.json");
      expect(bad.status).to.equal(400);
      expect(bad.json.error.code).to.equal("BAD_ADDRESS");
      const unknown = await api.request("GET", `/.well-known/agents/${ethers.Wallet.createRandom().address}.json`);
      expect(unknown.status).to.equal(404);
      expect(unknown.json.error.code).to.equal("NOT_FOUND");
    }));

  it("lists the cards in the OpenAPI document", () =>
    withApi(async ({ api }) => {
      const doc = (await api.request("GET", "/api/v1/openapi.json")).json;
      expect(doc.paths).to.include.keys([
        "/.well-known/agent.json",
        "/.well-known/agent-card.json",
        "/.well-known/agents/{address}.json",
      ]);
    }));
});
