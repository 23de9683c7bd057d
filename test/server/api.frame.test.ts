import zlib from "node:zlib";
import { expect } from "chai";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture } from "../helpers/fixtures";
import { startTestApi } from "../helpers/api";

describe("API frame: envelope, body reading, errors", () => {
  async function withApi<T>(fn: (api: Awaited<ReturnType<typeof startTestApi>>) => Promise<T>) {
    const { book } = await loadFixture(deployEscrowFixture);
    const api = await startTestApi(book, { JSON_BODY_LIMIT_BYTES: "2048" });
    try {
      return await fn(api);
    } finally {
      await api.close();
    }
  }

  it("answers unknown routes NOT_FOUND in the envelope with a request id", () =>
    withApi(async (api) => {
      const res = await api.request("GET", "/api/v1/nope");
      expect(res.status).to.equal(404);
      expect(res.json).to.deep.include({ success: false });
      expect(res.json.error.code).to.equal("NOT_FOUND");
      expect(res.headers.get("x-request-id")).to.match(/^[0-9a-f-]{36}$/);
    }));

  it("answers a wrong method METHOD_NOT_ALLOWED", () =>
    withApi(async (api) => {
      const res = await api.request("DELETE", "/api/v1/stats");
      expect(res.status).to.equal(405);
      expect(res.json.error.code).to.equal("METHOD_NOT_ALLOWED");
    }));

  it("wraps success in { success: true, data }", () =>
    withApi(async (api) => {
      const res = await api.request("GET", "/api/v1/stats");
      expect(res.status).to.equal(200);
      expect(res.json.success).to.equal(true);
      expect(res.json.data).to.have.keys(["openTasks", "totalAgents", "activeAgents", "registeredUsers", "completedTasks"]);
    }));
});
