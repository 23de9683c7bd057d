/**
 * GET /metrics as Prometheus meets it (docs/operations.md, "Metrics"): scraped over HTTP from a running API on the
 * in-process chain and parsed by a Prometheus text parser. Requests by route template, method and status with their
 * latency; the indexer's position; the verifier's intents; webhook deliveries by outcome; open event streams; hosted
 * agents by state and host; rate-limit refusals by family; process metrics. Off unless configured; a separate
 * listener with METRICS_PORT.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { ethers } from "hardhat";
import { withMarket } from "../../helpers/market";
import { openEvents } from "../../helpers/sse";
import { scrape } from "../../helpers/prometheus";
import { insertHostedAgent } from "../../helpers/hostedAgentRows";
import { assignKey } from "../../../server/verifier/types";
import { createMetrics, startMetricsListener } from "../../../server/observability/metrics";

/** A webhook receiver on 127.0.0.1 answering every delivery with `status`. */
async function receiver(status: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(status).end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const HOUR_MS = 3_600_000;

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("GET /metrics (Prometheus)", function () {
  this.timeout(120_000);

  it("counts requests by route template, method and status, with a latency histogram and process metrics", () =>
    withMarket(
      async (m) => {
        for (let i = 0; i < 3; i++) expect((await m.api.request("GET", "/api/v1/stats")).status).to.equal(200);
        const missing = await m.api.request("GET", "/api/v1/tasks/999999");
        expect(missing.status).to.equal(404);
        expect((await m.api.request("GET", "/api/v1/no-such-route")).status).to.equal(404);

        const s = await scrape(`${m.api.url}/metrics`);
        expect(s.families.get("market_http_requests_total")!.type).to.equal("COUNTER");
        expect(
          s.value("market_http_requests_total", { route: "/api/v1/stats", method: "GET", status: "200" }),
        ).to.equal(3);
        // The task id is not a label: the route's template is.
        expect(s.value("market_http_requests_total", { route: "/api/v1/tasks/:id", status: "404" })).to.equal(1);
        expect(s.value("market_http_requests_total", { route: "unmatched", status: "404" })).to.equal(1);
        const stats = { route: "/api/v1/stats", method: "GET" };
        expect(s.families.get("market_http_request_duration_seconds")!.type).to.equal("HISTOGRAM");
        expect(s.value("market_http_request_duration_seconds_count", stats)).to.equal(3);
        expect(s.value("market_http_request_duration_seconds_bucket", { ...stats, le: "+Inf" })).to.equal(3);
        expect(s.value("market_http_request_duration_seconds_bucket", { ...stats, le: "10" })).to.equal(3);
        expect(s.value("market_http_request_duration_seconds_sum", stats)).to.be.greaterThan(0);
        // The process's own metrics.
        expect(s.value("market_process_resident_memory_bytes")).to.be.greaterThan(0);
        expect(s.families.has("market_nodejs_eventloop_lag_p99_seconds")).to.equal(true);
        // The scrape itself is counted by the next one.
        const again = await scrape(`${m.api.url}/metrics`);
        expect(again.value("market_http_requests_total", { route: "/metrics", status: "200" })).to.equal(1);
      },
      { METRICS: "on" },
    ));

  it("reports the indexer, the verifier's intents, webhook deliveries, open streams and hosted agents", () =>
    withMarket(
      async (m) => {
        const ok = await receiver(204);
        const broken = await receiver(500);
        try {
          for (const url of [ok.url, broken.url]) {
            const created = await m.post("/api/v1/webhooks", m.posterKey, { url });
            expect(created.status, created.text).to.equal(201);
          }
          const stream = await openEvents(m.api.url, { key: m.posterKey });
          expect(stream.status).to.equal(200);
          let s = await scrape(`${m.api.url}/metrics`);
          expect(s.value("market_event_streams_open")).to.equal(1);

          // A listed task accepted by a worker: one assignment intent, confirmed; events to both webhooks.
          const { taskHash } = await m.list();
          await m.register(m.worker.address);
          const workerKey = await m.api.createKey(m.worker.address);
          const accepted = await m.post(`/api/v1/a2a/tasks/${taskHash}/accept`, workerKey);
          expect(accepted.status, accepted.text).to.equal(200);
          await m.marketVerifier.settled(assignKey(accepted.json.data.onChainTaskId));
          await m.api.synced();
          await until(async () => {
            const rows = await m.api.deps.db("webhook_deliveries").whereIn("status", ["delivered", "failed"]);
            return rows.some((r) => r.status === "delivered") && rows.some((r) => r.status === "failed");
          }, "a delivered and a failed delivery");
          const kek = m.api.deps.config.hostedAgents.keyEncryptionKey;
          for (const state of ["running", "running", "stopped"] as const) {
            const wallet = ethers.Wallet.createRandom();
            const { id } = await insertHostedAgent(m.api.deps.db, kek, {
              privateKey: wallet.privateKey,
              wallet: wallet.address,
              desiredState: state,
            });
            await m.api.deps
              .db("hosted_agents")
              .where({ id })
              .update({
                status: state,
                lease_host: state === "running" ? "host-a" : null,
              });
          }
          stream.close();
          await stream.ended.catch(() => undefined);

          s = await scrape(`${m.api.url}/metrics`);
          // The index as of the scrape: no further than the indexer is now, and past the accepted task's blocks.
          const indexer = m.api.indexer.status();
          const checkpoint = s.value("market_indexer_checkpoint_block", { chain: "base", network: "hardhat" });
          expect(checkpoint)
            .to.be.at.most(indexer.checkpoint!)
            .and.at.least(indexer.checkpoint! - 5);
          expect(s.value("market_indexer_head_block", { chain: "base", network: "hardhat" })).to.be.at.least(
            checkpoint,
          );
          expect(s.value("market_indexer_lag_blocks", { chain: "base", network: "hardhat" })).to.equal(
            s.value("market_indexer_head_block", { chain: "base", network: "hardhat" }) -
              s.value("market_indexer_checkpoint_block", { chain: "base", network: "hardhat" }),
          );
          expect(s.value("market_verifier_intents", { chain: "base", state: "confirmed" })).to.equal(1);
          expect(s.has("market_verifier_intents", { chain: "base", state: "failed" })).to.equal(true);
          expect(s.value("market_verifier_intents", { chain: "base", state: "failed" })).to.equal(0);
          const deliveries = await m.api.deps.db("webhook_deliveries").select("status");
          for (const outcome of ["delivered", "failed", "pending"]) {
            expect(s.value("market_webhook_deliveries", { outcome }), outcome).to.equal(
              deliveries.filter((d) => d.status === outcome).length,
            );
          }
          expect(s.value("market_webhook_deliveries", { outcome: "failed" })).to.be.greaterThan(0);
          expect(s.families.has("market_webhook_queue_depth")).to.equal(true);
          expect(s.value("market_hosted_agents", { state: "running", host: "host-a" })).to.equal(2);
          expect(s.value("market_hosted_agents", { state: "stopped", host: "" })).to.equal(1);
          await until(
            async () => (await scrape(`${m.api.url}/metrics`)).value("market_event_streams_open") === 0,
            "the closed stream to be counted out",
          );
        } finally {
          await ok.close();
          await broken.close();
        }
      },
      { METRICS: "on", WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_MAX_ATTEMPTS: "1", RATE_IP_PER_WINDOW: "100000" },
    ));

  it("counts the webhook queue: deliveries due now, not those waiting for a later retry", () =>
    withMarket(
      async (m) => {
        const broken = await receiver(500);
        try {
          const created = await m.post("/api/v1/webhooks", m.posterKey, { url: broken.url });
          expect(created.status, created.text).to.equal(201);
          await m.list();
          await m.api.synced();
          // Each delivery failed once and waits an hour for its retry: kept as pending, none due now.
          const pending = async () => m.api.deps.db("webhook_deliveries").where({ status: "pending" });
          await until(
            async () => (await pending()).length > 0 && (await pending()).every((d) => Number(d.attempts) === 1),
            "deliveries attempted once and waiting for their retry",
          );
          const waiting = (await pending()).length;
          const now = await scrape(`${m.api.url}/metrics`);
          expect(now.value("market_webhook_deliveries", { outcome: "pending" })).to.equal(waiting);
          expect(now.families.get("market_webhook_queue_depth")!.type).to.equal("GAUGE");
          expect(now.has("market_webhook_queue_depth")).to.equal(true);
          expect(now.value("market_webhook_queue_depth")).to.equal(0);

          // Two hours on (a registry reading a clock past the retries), every one of them is due.
          const clock = m.api.deps.clock;
          const later = Object.assign(Object.create(clock) as typeof clock, {
            wallNowMs: () => clock.wallNowMs() + 2 * HOUR_MS,
          });
          const listener = await startMetricsListener(createMetrics({ ...m.api.deps, clock: later }), "127.0.0.1", 0);
          try {
            expect((await scrape(listener.url)).value("market_webhook_queue_depth")).to.equal(waiting);
          } finally {
            await listener.close();
          }
        } finally {
          await broken.close();
        }
      },
      {
        METRICS: "on",
        WEBHOOK_ALLOW_PRIVATE: "true",
        WEBHOOK_MAX_ATTEMPTS: "3",
        WEBHOOK_RETRY_BASE_MS: String(HOUR_MS),
        WEBHOOK_RETRY_MAX_MS: String(HOUR_MS),
        RATE_IP_PER_WINDOW: "100000",
      },
    ));

  it("counts rate-limit refusals by family", () =>
    withMarket(
      async (m) => {
        const statuses: number[] = [];
        for (let i = 0; i < 8; i++) statuses.push((await m.api.request("GET", "/api/v1/stats")).status);
        const refused = statuses.filter((status) => status === 429).length;
        expect(refused).to.be.greaterThan(0);
        // The scrape is outside the per-IP window: it answers while the address is refused.
        const s = await scrape(`${m.api.url}/metrics`);
        expect(s.value("market_rate_limit_refusals_total", { family: "ip" })).to.equal(refused);
        // Refused before routing: the per-IP window comes first, so these count under `unmatched`.
        expect(s.value("market_http_requests_total", { route: "unmatched", status: "429" })).to.equal(refused);
      },
      { METRICS: "on", RATE_IP_PER_WINDOW: "4" },
    ));

  it("is off on the API's port by default, and served alone on METRICS_PORT's listener", () =>
    withMarket(async (m) => {
      const res = await m.api.request("GET", "/metrics");
      expect(res.status).to.equal(404);
      const metrics = createMetrics(m.api.deps);
      const listener = await startMetricsListener(metrics, "127.0.0.1", 0);
      try {
        const s = await scrape(listener.url);
        expect(s.families.has("market_verifier_intents")).to.equal(true);
        expect((await fetch(listener.url.replace("/metrics", "/api/v1/stats"))).status).to.equal(404);
      } finally {
        await listener.close();
      }
    }));
});
