/**
 * GET /api/v1/events as an agent meets it (docs/api.md, "Events"): real HTTP on the in-process chain, the real
 * marketplace verifier. A task's life in order on the poster's and the worker's streams; resume with Last-Event-ID
 * after a dropped connection and after the API restarted (a second startServer over the same database); heartbeat;
 * the per-key connection limit; the open stream outside the per-IP budget; a clean end when the server stops.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import SwaggerParser from "@apidevtools/swagger-parser";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { CATEGORY, DAY, USDC, ZONE, deployEscrowFixture } from "../../helpers/fixtures";
import { ENV, INDEX, withMarket, type Market } from "../../helpers/market";
import { freePort } from "../../helpers/api";
import { openEvents, type SseEvent } from "../../helpers/sse";
import { loadConfig } from "../../../server/config";
import { silentLogger } from "../../../server/logger";
import { startServer, type RunningServer } from "../../../server/main";
import { insertApiKey } from "../../../server/db/repositories/apiKeys";
import { newApiKey } from "../../../server/domain/credentials";
import { createDb, dbOptions } from "../../../server/db/knex";
import { canonicalJson } from "../../../server/domain/marketplace/canonicalJson";
import { assignKey } from "../../../server/verifier/types";
import { insertMarketEvents } from "../../../server/db/repositories/marketEvents";

const taskPath = (hash: string, op: string) => `/api/v1/a2a/tasks/${hash}/${op}`;
const types = (events: SseEvent[]) => events.map((e) => e.event);
const TX = /^0x[0-9a-f]{64}$/;

/** Every event is well formed: id line = data.id, event line = data.type, ids strictly increasing. */
function expectWellFormed(events: SseEvent[]) {
  let last = 0;
  for (const e of events) {
    expect(e.data.id).to.equal(e.id);
    expect(e.data.type).to.equal(e.event);
    expect(Number(e.id)).to.be.greaterThan(last);
    last = Number(e.id);
    expect(new Date(e.data.at).toISOString()).to.equal(e.data.at);
  }
}

/** The fixture's worker registered as an agent, with an API key. */
async function hardhatWorker(m: Market) {
  await m.register(m.worker.address);
  return m.api.createKey(m.worker.address);
}

/** Accepts as the worker, submits a result and mines submitEvidence. */
async function acceptAndSubmit(m: Market, workerKey: string, taskHash: string) {
  const accepted = await m.post(taskPath(taskHash, "accept"), workerKey);
  expect(accepted.status, accepted.text).to.equal(200);
  // The marketplace verifier's marketplaceAssign, mined and indexed, before the worker submits.
  expect(await m.marketVerifier.settled(assignKey(accepted.json.data.onChainTaskId))).to.include({
    status: "confirmed",
  });
  await m.api.synced();
  const result = { answer: 42 };
  const submitted = await m.post(taskPath(taskHash, "submit"), workerKey, {
    result,
    evidenceHash: ethers.keccak256(ethers.toUtf8Bytes(canonicalJson(result))),
  });
  expect(submitted.status, submitted.text).to.equal(200);
  await m.send(m.worker, submitted);
}

describe("GET /api/v1/events (SSE push)", function () {
  this.timeout(120_000);

  it("delivers a task's whole life in order to the poster and the worker, with ids, roles, states and tx hashes", () =>
    withMarket(async (m) => {
      const workerKey = await hardhatWorker(m);
      const poster = await openEvents(m.api.url, { key: m.posterKey });
      const worker = await openEvents(m.api.url, { key: workerKey });
      try {
        expect(poster.status).to.equal(200);
        expect(poster.headers["content-type"]).to.match(/^text\/event-stream/);
        const { taskHash, taskId } = await m.list({ verificationMode: "manual" });
        await acceptAndSubmit(m, workerKey, taskHash);
        const finalized = await m.post(taskPath(taskHash, "finalize"), m.posterKey);
        expect(finalized.status, finalized.text).to.equal(200);

        const posterEvents = await poster.waitForEvents(5);
        const workerEvents = await worker.waitForEvents(5);
        expect(types(posterEvents)).to.deep.equal([
          "task.listed",
          "task.assigned",
          "task.submitted",
          "task.verdict",
          "task.settled",
        ]);
        expect(types(workerEvents)).to.deep.equal([
          "task.open",
          "task.assigned",
          "task.submitted",
          "task.verdict",
          "task.settled",
        ]);
        expectWellFormed(posterEvents);
        expectWellFormed(workerEvents);
        for (const e of [...posterEvents, ...workerEvents]) {
          expect(e.data.taskHash).to.equal(taskHash);
          expect(e.data.onChainTaskId).to.equal(String(taskId));
          expect(e.data.txHash).to.match(TX);
        }
        expect(posterEvents.map((e) => e.data.role)).to.deep.equal(Array(5).fill("poster"));
        expect(workerEvents.map((e) => e.data.role)).to.deep.equal(["executor", ...Array(4).fill("worker")]);
        expect(posterEvents.map((e) => e.data.state)).to.deep.equal([
          "open",
          "assigned",
          "submitted",
          "completed",
          "completed",
        ]);
        // The same chain events reach both, with the same ids.
        expect(posterEvents.slice(1).map((e) => e.id)).to.deep.equal(workerEvents.slice(1).map((e) => e.id));

        const detail = await m.api.request("GET", `/api/v1/tasks/${taskHash}`);
        expect(posterEvents[0].data.txHash).to.equal(detail.json.data.a2aMeta.fundingTxHash);
        expect(posterEvents[0].data).to.include({ privacy: "public", amount: USDC(25).toString() });
        expect(posterEvents[1].data.worker).to.equal(m.worker.address.toLowerCase());
        expect(posterEvents[2].data).to.include({ attempt: 1 });
        expect(posterEvents[3].data).to.include({ passed: true, attempt: 1 });
        const fee = (USDC(25) * (await m.escrow.feeBps())) / 10_000n;
        expect(posterEvents[4].data).to.include({ outcome: "paid", payout: (USDC(25) - fee).toString() });
        // A stranger's stream (not a registered agent when it opens) replays none of it. An offer pinned to the
        // stranger afterwards is its first event: the stream sends in id order, so an earlier event of the task
        // would have come before it.
        const stranger = await openEvents(m.api.url, {
          key: await m.api.createKey(m.stranger.address),
          lastEventId: "0",
        });
        await m.register(m.stranger.address);
        const { taskHash: offeredHash } = await m.list({ targetExecutor: m.stranger.address });
        const [first] = await stranger.waitForEvents(1);
        expect([first.event, first.data.taskHash]).to.deep.equal(["task.offered", offeredHash]);
        expect(stranger.events).to.have.length(1);
        stranger.close();
      } finally {
        poster.close();
        worker.close();
      }
    }));

  it("announces a dispute and the admin's ruling (refunded) to both parties", () =>
    withMarket(async (m) => {
      const workerKey = await hardhatWorker(m);
      const { taskHash, taskId } = await m.list({ verificationMode: "manual" });
      const worker = await openEvents(m.api.url, { key: workerKey });
      try {
        await acceptAndSubmit(m, workerKey, taskHash);
        await m.send(m.poster, await m.post(taskPath(taskHash, "dispute"), m.posterKey));
        await (await m.escrow.connect(m.admin).resolveDispute(taskId, false)).wait();
        await m.api.synced();
        const events = await worker.waitForEvents(4);
        expect(types(events)).to.deep.equal(["task.assigned", "task.submitted", "task.disputed", "task.settled"]);
        expect(events[2].data).to.include({ by: m.poster.address.toLowerCase(), state: "disputed", role: "worker" });
        expect(events[3].data).to.include({ outcome: "refunded", refund: USDC(25).toString(), state: "cancelled" });
      } finally {
        worker.close();
      }
    }));

  it("sends task.offered to the agent a task is pinned to, not task.open to everyone", () =>
    withMarket(async (m) => {
      const target = await m.newAgent();
      const other = await m.newAgent();
      const targetStream = await openEvents(m.api.url, { key: target.key });
      const otherStream = await openEvents(m.api.url, { key: other.key });
      try {
        const { taskHash } = await m.list({ targetExecutor: target.address });
        const [offered] = await targetStream.waitForEvents(1);
        expect(offered.data).to.include({ type: "task.offered", role: "target", taskHash, state: "open" });
        expect(offered.data.targetExecutor).to.equal(target.address);
        const { taskHash: open } = await m.list();
        await otherStream.waitForEvents(1);
        expect(otherStream.events.map((e) => [e.event, e.data.taskHash])).to.deep.equal([["task.open", open]]);
      } finally {
        targetStream.close();
        otherStream.close();
      }
    }));

  it("replays what a dropped connection missed, from Last-Event-ID (header or query), without duplicates", () =>
    withMarket(async (m) => {
      const first = await openEvents(m.api.url, { key: m.posterKey });
      const a = await m.list();
      const [listedA] = await first.waitForEvents(1);
      first.close();
      await first.ended;
      // Missed while disconnected: two listings and a cancel mined on-chain.
      const b = await m.list();
      const c = await m.list();
      await (await m.escrow.connect(m.poster).cancelTask(a.taskId)).wait();
      await m.api.synced();

      const resumed = await openEvents(m.api.url, { key: m.posterKey, lastEventId: listedA.id });
      const viaQuery = await openEvents(m.api.url, { key: m.posterKey, query: `?lastEventId=${listedA.id}` });
      try {
        const missed = await resumed.waitForEvents(3);
        expect(missed.map((e) => [e.event, e.data.taskHash])).to.deep.equal([
          ["task.listed", b.taskHash],
          ["task.listed", c.taskHash],
          ["task.settled", a.taskHash],
        ]);
        expect(missed[2].data).to.include({ outcome: "cancelled", state: "cancelled" });
        expect((await viaQuery.waitForEvents(3)).map((e) => e.id)).to.deep.equal(missed.map((e) => e.id));
        // Then live, with nothing sent twice.
        const d = await m.list();
        const [live] = await resumed.waitFor((e) => e.data.taskHash === d.taskHash).then((e) => [e]);
        expect(Number(live.id)).to.be.greaterThan(Number(missed[2].id));
        expect(new Set(resumed.events.map((e) => e.id)).size).to.equal(resumed.events.length);
      } finally {
        resumed.close();
        viaQuery.close();
      }
    }));

  it("sends a keep-alive comment at the configured interval", () =>
    withMarket(
      async (m) => {
        const stream = await openEvents(m.api.url, { key: m.posterKey });
        try {
          const started = Date.now();
          await stream.waitForComments("keep-alive", 3, 5_000);
          expect(Date.now() - started).to.be.at.least(250);
        } finally {
          stream.close();
        }
      },
      { EVENTS_HEARTBEAT_MS: "100" },
    ));

  it("limits concurrent streams per API key (429 RATE_LIMIT) and frees a slot when a stream closes", () =>
    withMarket(
      async (m) => {
        const one = await openEvents(m.api.url, { key: m.posterKey });
        const two = await openEvents(m.api.url, { key: m.posterKey });
        expect([one.status, two.status]).to.deep.equal([200, 200]);
        const three = await openEvents(m.api.url, { key: m.posterKey });
        expect(three.status).to.equal(429);
        expect(three.json.error.code).to.equal("RATE_LIMIT");
        expect(three.headers["retry-after"]).to.equal("5");
        // Another key (even of the same wallet) has its own slots.
        const otherKey = await openEvents(m.api.url, { key: await m.api.createKey(m.poster.address) });
        expect(otherKey.status).to.equal(200);
        one.close();
        await one.ended;
        let again = await openEvents(m.api.url, { key: m.posterKey });
        for (let i = 0; again.status !== 200 && i < 20; i++) {
          await new Promise((r) => setTimeout(r, 50));
          again = await openEvents(m.api.url, { key: m.posterKey });
        }
        expect(again.status).to.equal(200);
        for (const s of [two, again, otherKey]) s.close();
      },
      { EVENTS_MAX_STREAMS_PER_KEY: "2" },
    ));

  it("keeps an open stream flowing after the per-IP request budget is spent", () =>
    withMarket(
      async (m) => {
        const stream = await openEvents(m.api.url, { key: m.posterKey }); // request 1 of 4
        try {
          const { taskId } = await m.list(); // request 2
          await m.api.request("GET", "/api/v1/a2a/tasks"); // 3
          await m.api.request("GET", "/api/v1/a2a/tasks"); // 4
          const refused = await m.api.request("GET", "/api/v1/a2a/tasks");
          expect(refused.status).to.equal(429);
          await (await m.escrow.connect(m.poster).cancelTask(taskId)).wait();
          const events = await stream.waitForEvents(2);
          expect(types(events)).to.deep.equal(["task.listed", "task.settled"]);
        } finally {
          stream.close();
        }
      },
      { RATE_IP_PER_WINDOW: "4" },
    ));

  it("takes the key as Authorization: Bearer too, and is described in the OpenAPI document with the push routes", () =>
    withMarket(async (m) => {
      const bearer = await openEvents(m.api.url, { key: m.posterKey, bearer: true });
      expect(bearer.status).to.equal(200);
      const { taskHash } = await m.list();
      expect((await bearer.waitForEvents(1))[0].data).to.include({ type: "task.listed", taskHash });
      bearer.close();

      const doc = (await m.api.request("GET", "/api/v1/openapi.json")).json;
      await SwaggerParser.validate(structuredClone(doc));
      const events = doc.paths["/api/v1/events"].get;
      expect(Object.keys(events.responses["200"].content)).to.deep.equal(["text/event-stream"]);
      expect(events.responses["200"].content["text/event-stream"].schema.$ref).to.equal(
        "#/components/schemas/MarketEvent",
      );
      expect(events.responses.default.description).to.include("RATE_LIMIT");
      for (const [path, method] of [
        ["/api/v1/webhooks", "post"],
        ["/api/v1/webhooks", "get"],
        ["/api/v1/webhooks/{id}", "delete"],
        ["/api/v1/webhooks/{id}/deliveries", "get"],
        ["/api/v1/a2a/tasks/working", "get"],
        ["/api/v1/a2a/tasks/{hash}/keys", "post"],
      ]) {
        expect(doc.paths[path]?.[method], `${method} ${path}`).to.not.equal(undefined);
      }
      expect(doc.paths["/api/v1/webhooks"].post.responses.default.description).to.include("WEBHOOK_URL_NOT_PUBLIC");
      expect(doc.paths["/api/v1/a2a/tasks/{hash}/keys"].post.responses.default.description).to.include(
        "KEY_ALREADY_WRAPPED",
      );
    }));

  it("finds events another process wrote (no in-process wake-up) by the slow poll", () =>
    withMarket(
      async (m) => {
        const stream = await openEvents(m.api.url, { key: m.posterKey });
        // Another process's indexer: its own connection pool, and nobody calls the hub's notify().
        const other = m.api.testDb.reopen();
        const taskHash = `0x${"ab".repeat(32)}`;
        await other.transaction((trx) =>
          insertMarketEvents(trx, [
            {
              type: "task.settled",
              taskId: 99,
              taskHash,
              poster: m.poster.address.toLowerCase(),
              worker: null,
              target: null,
              toPoster: true,
              toWorker: false,
              toTarget: false,
              toExecutors: false,
              onChainStatus: 5,
              txHash: null,
              fields: { outcome: "cancelled", refund: "1" },
              atMs: Date.now(),
              source: "test:other-process",
            },
          ]),
        );
        const started = Date.now();
        const [event] = await stream.waitForEvents(1, 5_000);
        expect(event.data).to.include({ type: "task.settled", taskHash, onChainTaskId: "99", state: "cancelled" });
        expect(Date.now() - started).to.be.below(2_000);
        stream.close();
      },
      { EVENTS_POLL_MS: "100" },
    ));

  it("refuses a malformed Last-Event-ID and a missing key", () =>
    withMarket(async (m) => {
      const bad = await openEvents(m.api.url, { key: m.posterKey, lastEventId: "yesterday" });
      expect(bad.status).to.equal(400);
      expect(bad.json.error.code).to.equal("VALIDATION_ERROR");
      expect(bad.json.error.message).to.match(/^Last-Event-ID: /);
      const badQuery = await openEvents(m.api.url, { key: m.posterKey, query: "?lastEventId=-1" });
      expect(badQuery.status).to.equal(400);
      expect(badQuery.json.error.message).to.match(/lastEventId/);
      const anonymous = await openEvents(m.api.url);
      expect(anonymous.status).to.equal(401);
      expect(anonymous.json.error.code).to.equal("UNAUTHORIZED");
    }));
});

describe("GET /api/v1/events across an API restart", function () {
  this.timeout(120_000);

  it("ends open streams cleanly on stop, and resumes after the restart with no event lost", async () => {
    const fx = await loadFixture(deployEscrowFixture);
    const deploymentsDir = fs.mkdtempSync(path.join(os.tmpdir(), "events-deployments-"));
    fs.writeFileSync(path.join(deploymentsDir, "hardhat.json"), JSON.stringify(fx.book));
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "events-data-"));
    const schema = `t_${crypto.randomBytes(6).toString("hex")}`;
    const config = loadConfig({
      ...ENV,
      NETWORK: "hardhat",
      DEPLOYMENTS_DIR: deploymentsDir,
      DATA_DIR: dataDir,
      LOG_LEVEL: "silent",
      API_PORT: String(await freePort()),
      INDEXER_POLL_MS: "20",
      DATABASE_URL: process.env.DATABASE_URL ?? "",
      ...(process.env.DATABASE_URL ? { DATABASE_SCHEMA: schema } : {}),
      REDIS_URL: process.env.REDIS_URL ?? "",
      RATE_LIMIT_PREFIX: `test:${crypto.randomBytes(6).toString("hex")}:`,
    });
    const start = () => startServer({ config, provider: ethers.provider, logger: silentLogger });
    let server: RunningServer | undefined = await start();
    try {
      const { key, keyHash, prefix } = newApiKey();
      await insertApiKey(server.deps.db, {
        address: fx.poster.address.toLowerCase(),
        keyHash,
        prefix,
        label: "test",
        createdAt: Math.floor(Date.now() / 1000),
      });
      const token = await fx.usdc.getAddress();
      const fundAndList = async (url: string) => {
        const taskHash = ethers.sha256(ethers.randomBytes(32));
        const tx = await fx.escrow.connect(fx.poster).createTask(taskHash, token, USDC(5), CATEGORY, ZONE, DAY);
        await tx.wait();
        const res = await fetch(`${url}${INDEX}`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": key },
          body: JSON.stringify({ txHash: tx.hash, taskHash, privacy: "public" }),
        });
        expect(res.status, await res.clone().text()).to.equal(200);
        return { taskHash, taskId: Number(await fx.escrow.nextTaskId()) - 1 };
      };

      const stream = await openEvents(server.url, { key });
      const a = await fundAndList(server.url);
      const [seen] = await stream.waitForEvents(1);
      const b = await fundAndList(server.url); // sent on the stream too, but the client loses it with the restart
      const stopping = Date.now();
      await server.close();
      server = undefined;
      await stream.ended;
      expect(Date.now() - stopping).to.be.below(5_000);
      // While the API is down, the chain moves on.
      await (await fx.escrow.connect(fx.poster).cancelTask(a.taskId)).wait();

      server = await start();
      const resumed = await openEvents(server.url, { key, lastEventId: seen.id });
      try {
        const missed = await resumed.waitForEvents(2);
        expect(missed.map((e) => [e.event, e.data.taskHash])).to.deep.equal([
          ["task.listed", b.taskHash],
          ["task.settled", a.taskHash],
        ]);
        expectWellFormed([seen, ...missed]);
      } finally {
        resumed.close();
      }
    } finally {
      await server?.close();
      if (process.env.DATABASE_URL) {
        const db = createDb(dbOptions(config));
        await db.raw(`drop schema if exists "${schema}" cascade`);
        await db.destroy();
      }
      fs.rmSync(deploymentsDir, { recursive: true, force: true });
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
