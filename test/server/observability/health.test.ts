/**
 * GET /health/live and GET /health/ready over HTTP (docs/operations.md, "Health"): ready when the database, Redis
 * (when configured), the chain RPC and an index near the head all answer; otherwise 503 NOT_READY naming each failing
 * part. The failures are real ones: a PostgreSQL and a Redis nobody listens on, an RPC that refuses connections, an
 * indexer stopped while the chain moves on, a process shutting down.
 */
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { JsonRpcProvider } from "ethers";
import { network } from "hardhat";
import { withMarket, type Market } from "../../helpers/market";
import { createApp } from "../../../server/api/app";
import { createHttpServer } from "../../../server/api/httpServer";
import { createDb } from "../../../server/db/knex";
import { createLimitStore } from "../../../server/limits/store";
import type { Deps } from "../../../server/domain/deps";
import type { Config } from "../../../server/config";

/** Nothing listens on port 1 of the loopback: connections are refused. */
const DEAD = "127.0.0.1:1";

/** An API over `deps` (the market's, with parts swapped) on an ephemeral port; GET `path`. */
async function getWith(deps: Deps, path: string, draining?: () => boolean) {
  const server = createHttpServer(createApp(deps, undefined, { draining }).callback(), deps.config.api.timeouts);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`);
    return { status: response.status, json: await response.json(), requestId: response.headers.get("x-request-id") };
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function withObservability(m: Market, changes: Partial<Config["observability"]>, api: Partial<Config["api"]> = {}) {
  const config = m.api.deps.config;
  return {
    ...config,
    api: { ...config.api, ...api },
    observability: { ...config.observability, ...changes },
  } as Config;
}

describe("GET /health/live and /health/ready", function () {
  this.timeout(120_000);

  it("answers live, and ready with each check when every part answers", () =>
    withMarket(async (m) => {
      await m.api.synced();
      const live = await m.api.request("GET", "/health/live");
      expect(live.status).to.equal(200);
      expect(live.json).to.deep.equal({ success: true, data: { status: "live" } });
      const ready = await m.api.request("GET", "/health/ready");
      expect(ready.status, ready.text).to.equal(200);
      expect(ready.json.data.status).to.equal("ready");
      const checks = ready.json.data.checks;
      for (const part of ["database", "chain", "indexer"]) expect(checks[part].ok, part).to.equal(true);
      expect(checks.indexer.detail).to.match(/^\d+ blocks behind the head$/);
      // Redis is checked exactly when it is configured.
      expect(checks.redis?.ok).to.equal(process.env.REDIS_URL ? true : undefined);
      expect(ready.headers.get("cache-control")).to.equal("no-store");
    }));

  it("is not ready when the index falls more than READY_MAX_INDEXER_LAG blocks behind the head", () =>
    withMarket(
      async (m) => {
        await m.api.synced();
        const before = await m.api.request("GET", "/health/ready");
        expect(before.status, before.text).to.equal(200);
        await m.api.indexer.stop();
        await network.provider.send("hardhat_mine", ["0x5"]);
        const res = await m.api.request("GET", "/health/ready");
        expect(res.status, res.text).to.equal(503);
        expect(res.json.error.code).to.equal("NOT_READY");
        expect(res.json.error.details.failing).to.deep.equal(["indexer"]);
        expect(res.json.error.message).to.match(/^not ready: indexer \(\d+ blocks behind the head \(\d+\); at most 2/);
        expect(res.json.error.requestId).to.equal(res.headers.get("x-request-id"));
        // Liveness does not depend on it.
        expect((await m.api.request("GET", "/health/live")).status).to.equal(200);
      },
      { READY_MAX_INDEXER_LAG: "2" },
    ));

  it("names the database when it does not answer (and cannot check the index without it)", () =>
    withMarket(async (m) => {
      const dead = createDb({
        databaseUrl: `postgres://postgres@${DEAD}/none`,
        sqliteFile: "",
        sqliteDriver: "better-sqlite3",
      });
      try {
        const res = await getWith({ ...m.api.deps, db: dead }, "/health/ready");
        expect(res.status).to.equal(503);
        expect(res.json.error.details.failing).to.deep.equal(["database", "indexer"]);
        expect(res.json.error.details.checks.database.detail).to.match(/ECONNREFUSED|connect/);
        expect(res.json.error.message).to.match(/^not ready: database \(/);
      } finally {
        await dead.destroy();
      }
    }));

  it("names the chain RPC when it does not answer", () =>
    withMarket(async (m) => {
      const provider = new JsonRpcProvider(`http://${DEAD}`, undefined, { staticNetwork: true });
      try {
        const chain = { ...m.api.deps.chain!, provider };
        const config = withObservability(m, { readyTimeoutMs: 1000 });
        const res = await getWith({ ...m.api.deps, chain, config }, "/health/ready");
        expect(res.status).to.equal(503);
        expect(res.json.error.details.failing).to.deep.equal(["chain", "indexer"]);
        expect(res.json.error.details.checks.database.ok).to.equal(true);
      } finally {
        provider.destroy();
      }
    }));

  it("names Redis when it is configured and does not answer", () =>
    withMarket(async (m) => {
      await m.api.synced();
      const limits = createLimitStore(`redis://${DEAD}`, "health-test:");
      try {
        const config = withObservability(m, { readyTimeoutMs: 500 }, { redisUrl: `redis://${DEAD}` });
        const res = await getWith({ ...m.api.deps, limits, config }, "/health/ready");
        expect(res.status).to.equal(503);
        expect(res.json.error.details.failing).to.deep.equal(["redis"]);
        expect(res.json.error.details.checks.redis.detail).to.match(/no answer within 500 ms|ECONNREFUSED|max retries/);
      } finally {
        await limits.close().catch(() => undefined);
      }
    }));

  it("answers 503 shutdown as soon as the process drains, while live stays 200", () =>
    withMarket(async (m) => {
      await m.api.synced();
      const ready = await getWith(m.api.deps, "/health/ready", () => true);
      expect(ready.status).to.equal(503);
      expect(ready.json.error.details.failing).to.deep.equal(["shutdown"]);
      expect((await getWith(m.api.deps, "/health/live", () => true)).status).to.equal(200);
    }));
});
