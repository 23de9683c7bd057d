/**
 * The API process's Prometheus metrics (prom-client, text format), served at GET /metrics on the API's port when
 * METRICS=on (the devnet) and on a separate listener when METRICS_PORT is set (production: docs/operations.md,
 * "Metrics"). HTTP series are counted as requests are answered; the rest is read when scraped: each chain's indexer
 * from its status (or the shared checkpoint when this process runs none), background work from the database, so any
 * API process reports the same shared figures. Series of a settlement chain carry its `chain` label (`base`, `arc`);
 * the indexer's also its `network` (the address book's name).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Middleware } from "koa";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Deps } from "../domain/deps";
import { getCheckpoint } from "../db/repositories/checkpoints";
import {
  countDueWebhookDeliveries,
  countHostedAgents,
  countVerifierIntents,
  countWebhookDeliveries,
} from "../db/repositories/operationalCounts";
import { CHECKPOINT_NAME } from "../indexer/sync";
import { routeLabel } from "./routeLabel";
import type { ChainName } from "../escrow/records";

const INTENT_STATES = ["pending", "sent", "confirmed", "failed"];
const DELIVERY_OUTCOMES = ["pending", "delivered", "failed"];

export interface Metrics {
  registry: Registry;
  /** Counts every request (route, method, status) and its latency; tracks open event streams. */
  middleware(): Middleware;
  /** The scrape: the text format and its content type. */
  scrape(): Promise<{ contentType: string; body: string }>;
}

export function createMetrics(deps: Deps): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "market_" });
  const warnOnce = new Set<string>();
  /** A scrape answers even when one source fails: the failing series keep their last value and the log says why. */
  const guarded = async (source: string, read: () => Promise<void>) => {
    try {
      await read();
      warnOnce.delete(source);
    } catch (error) {
      if (!warnOnce.has(source)) deps.logger.warn("metrics source unavailable", { source, error });
      warnOnce.add(source);
    }
  };

  const requests = new Counter({
    name: "market_http_requests_total",
    help: "HTTP requests answered, by route template, method and status",
    labelNames: ["route", "method", "status"] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: "market_http_request_duration_seconds",
    help: "Time to answer an HTTP request (an event stream: until it is open), by route template and method",
    labelNames: ["route", "method"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const inFlight = new Gauge({
    name: "market_http_requests_in_flight",
    help: "HTTP requests being served by this process (open event streams included)",
    registers: [registry],
  });
  const openStreams = new Gauge({
    name: "market_event_streams_open",
    help: "Server-sent event streams open on this process",
    registers: [registry],
  });
  const refusals = new Counter({
    name: "market_rate_limit_refusals_total",
    help: "Requests refused by a rate limit, by limit family",
    labelNames: ["family"] as const,
    registers: [registry],
  });

  const gauge = (name: string, help: string, labelNames: string[] = []) =>
    new Gauge({ name, help, labelNames, registers: [registry] });
  const headGauge = gauge("market_indexer_head_block", "The chain's head block as last read, by chain", [
    "chain",
    "network",
  ]);
  const checkpointGauge = gauge("market_indexer_checkpoint_block", "The last block the index holds completely", [
    "chain",
    "network",
  ]);
  const lagGauge = gauge("market_indexer_lag_blocks", "Blocks between the chain's head and the index's checkpoint", [
    "chain",
    "network",
  ]);
  const intentsGauge = gauge("market_verifier_intents", "The marketplace verifier's transactions by chain and state", [
    "chain",
    "state",
  ]);
  const deliveriesGauge = gauge(
    "market_webhook_deliveries",
    "Webhook deliveries kept, by outcome (pending: not delivered yet, retrying)",
    ["outcome"],
  );
  const queueDepth = gauge("market_webhook_queue_depth", "Webhook deliveries due now or overdue");
  const agentsGauge = gauge(
    "market_hosted_agents",
    "Hosted agents by reported state and the host holding their lease (host empty: none)",
    ["state", "host"],
  );

  /** Reads the scrape-time sources, each on its own, before the registry is written out. */
  const refresh = () =>
    Promise.all([
      ...deps.config.chains.map(({ name: chain, network }) =>
        guarded(`indexer:${chain}`, async () => {
          const { head, checkpoint } = await indexerPosition(deps, chain);
          const labels = { chain, network };
          if (head !== null) headGauge.set(labels, head);
          if (checkpoint !== null) checkpointGauge.set(labels, checkpoint);
          if (head !== null && checkpoint !== null) lagGauge.set(labels, Math.max(0, head - checkpoint));
        }),
      ),
      guarded("verifier_intents", async () => {
        const counts = await countVerifierIntents(deps.db);
        // Every chain a verifier signs on shows each state (0 until one happens); other chains' rows as they are.
        const chains = new Set([...(deps.verifiers?.keys() ?? []), ...counts.map((c) => c.chain)]);
        for (const chain of chains) {
          const ofChain = counts.filter((c) => c.chain === chain);
          for (const state of new Set([...INTENT_STATES, ...ofChain.map((c) => c.state)])) {
            intentsGauge.set({ chain, state }, ofChain.find((c) => c.state === state)?.count ?? 0);
          }
        }
      }),
      guarded("webhook_deliveries", async () => {
        const [counts, due] = await Promise.all([
          countWebhookDeliveries(deps.db),
          countDueWebhookDeliveries(deps.db, deps.clock.wallNowMs()),
        ]);
        for (const outcome of new Set([...DELIVERY_OUTCOMES, ...counts.map((c) => c.state)])) {
          deliveriesGauge.set({ outcome }, counts.find((c) => c.state === outcome)?.count ?? 0);
        }
        queueDepth.set(due);
      }),
      guarded("hosted_agents", async () => {
        const counts = await countHostedAgents(deps.db);
        agentsGauge.reset();
        for (const c of counts) agentsGauge.set({ state: c.state, host: c.host }, c.count);
      }),
    ]);

  return {
    registry,
    middleware() {
      return async (ctx, next) => {
        inFlight.inc();
        const started = process.hrtime.bigint();
        let stream = false;
        ctx.res.once("close", () => {
          inFlight.dec();
          if (stream) openStreams.dec();
        });
        try {
          await next();
        } finally {
          const route = routeLabel(ctx);
          const method = ctx.method;
          requests.inc({ route, method, status: String(ctx.status) });
          latency.observe({ route, method }, Number(process.hrtime.bigint() - started) / 1e9);
          if (typeof ctx.state.rateLimited === "string") refusals.inc({ family: ctx.state.rateLimited });
          if (
            !ctx.res.writableEnded &&
            !ctx.res.destroyed &&
            String(ctx.response.get("Content-Type")).startsWith("text/event-stream")
          ) {
            stream = true;
            openStreams.inc();
          }
        }
      };
    },
    async scrape() {
      await refresh();
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

/**
 * `chain`'s indexer head and checkpoint: this process's indexer of that chain, else the shared checkpoint and the
 * chain's head.
 */
async function indexerPosition(
  deps: Deps,
  chain: ChainName,
): Promise<{ head: number | null; checkpoint: number | null }> {
  const posting = chain === deps.config.api.postingChain;
  const status = (posting ? (deps.indexer ?? deps.indexers?.get(chain)) : deps.indexers?.get(chain))?.status();
  if (status && status.state !== "waiting-for-lock" && status.state !== "stopped") {
    return { head: status.head, checkpoint: status.checkpoint };
  }
  const stored = await getCheckpoint(deps.db, chain, CHECKPOINT_NAME);
  const gateway = posting ? deps.chain : deps.chains.get(chain);
  const head = gateway ? await gateway.provider.getBlockNumber() : null;
  return { head, checkpoint: stored?.blockNumber ?? null };
}

/** GET /metrics on the API's port (METRICS=on). */
export function metricsRoute(metrics: Metrics): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== "/metrics" || (ctx.method !== "GET" && ctx.method !== "HEAD")) return next();
    const { contentType, body } = await metrics.scrape();
    ctx.set("Cache-Control", "no-store");
    ctx.type = contentType;
    ctx.body = body;
  };
}

/** A listener of its own that serves only GET /metrics (METRICS_PORT), for a port the public never reaches. */
export async function startMetricsListener(
  metrics: Metrics,
  host: string,
  port: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("only GET /metrics here\n");
      return;
    }
    metrics.scrape().then(
      ({ contentType, body }) =>
        res.writeHead(200, { "Content-Type": contentType, "Cache-Control": "no-store" }).end(body),
      () => res.writeHead(500, { "Content-Type": "text/plain" }).end("scrape failed\n"),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
