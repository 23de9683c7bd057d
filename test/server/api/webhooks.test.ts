/**
 * /api/v1/webhooks as an integrator meets it (docs/api.md, "Webhooks"): a receiver on 127.0.0.1 (the API runs with
 * WEBHOOK_ALLOW_PRIVATE, as the devnet does) verifies each delivery's signature with the documented recipe; failures
 * are retried with growing waits a bounded number of times and every outcome is listed; non-public addresses are
 * refused when private delivery is not allowed; deliveries pending at a restart are sent by the next process.
 */
import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { withMarket, type Market } from "../../helpers/market";
import { WebhookDispatcher, startPush, stopPush } from "../../../server/domain/events";
import { createPush } from "../../../server/domain/events";

interface Received {
  at: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook endpoint on 127.0.0.1 answering `status(n)` to its n-th call (1-based). */
async function receiver(status: (n: number) => number = () => 200) {
  const calls: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      calls.push({ at: Date.now(), headers: req.headers, body });
      res.statusCode = status(calls.length);
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/market`;
  const waitForCalls = async (count: number, timeoutMs = 15_000) => {
    const until = Date.now() + timeoutMs;
    while (calls.length < count) {
      if (Date.now() > until) throw new Error(`timed out waiting for ${count} calls (got ${calls.length})`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return calls.slice(0, count);
  };
  return { url, calls, waitForCalls, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** The recipe of docs/api.md, "Verifying a delivery", as an integrator writes it. */
function verify(secret: string, header: string, rawBody: string, toleranceSeconds = 300): boolean {
  const parts = Object.fromEntries(header.split(",").map((kv) => kv.split("=", 2) as [string, string]));
  const timestamp = Number(parts.t);
  if (!Number.isInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = crypto.createHmac("sha256", secret).update(`${parts.t}.${rawBody}`).digest("hex");
  const given = Buffer.from(parts.v1 ?? "", "hex");
  return given.length === 32 && crypto.timingSafeEqual(given, Buffer.from(expected, "hex"));
}

const WEBHOOKS = "/api/v1/webhooks";
const ALLOW = { WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_RETRY_BASE_MS: "150", WEBHOOK_MAX_ATTEMPTS: "3" };

async function register(m: Market, url: string, extra: Record<string, unknown> = {}) {
  const res = await m.post(WEBHOOKS, m.posterKey, { url, ...extra });
  expect(res.status, res.text).to.equal(201);
  return res.json.data as { id: number; secret: string; url: string; events: string[] | null };
}

async function deliveries(m: Market, id: number) {
  const res = await m.api.request("GET", `${WEBHOOKS}/${id}/deliveries`, { key: m.posterKey });
  expect(res.status, res.text).to.equal(200);
  return res.json.data.deliveries;
}

/** Polls `condition` every 20 ms until it holds; fails after `timeoutMs`. */
async function eventually(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function waitForDelivery(m: Market, id: number, status: string, timeoutMs = 15_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const list = await deliveries(m, id);
    if (list.length > 0 && list.every((d: { status: string }) => d.status === status)) return list;
    if (Date.now() > until) throw new Error(`deliveries not ${status}: ${JSON.stringify(list)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("/api/v1/webhooks", function () {
  this.timeout(120_000);

  it("registers (secret answered once), delivers signed events the documented recipe verifies, lists, deletes", () =>
    withMarket(async (m) => {
      const endpoint = await receiver();
      try {
        const hook = await register(m, endpoint.url);
        expect(hook.secret).to.match(/^whsec_[0-9a-f]{64}$/);
        expect(hook.events).to.equal(null);
        const listed = await m.api.request("GET", WEBHOOKS, { key: m.posterKey });
        expect(listed.json.data.webhooks).to.deep.equal([
          { id: hook.id, url: endpoint.url, events: null, createdAt: listed.json.data.webhooks[0].createdAt },
        ]);
        expect(listed.text).to.not.include(hook.secret);

        const { taskHash, taskId } = await m.list();
        const [call] = await endpoint.waitForCalls(1);
        expect(call.headers["content-type"]).to.equal("application/json");
        expect(verify(hook.secret, String(call.headers["x-market-signature"]), call.body)).to.equal(true);
        expect(verify(hook.secret, String(call.headers["x-market-signature"]), call.body + " ")).to.equal(false);
        expect(verify("whsec_other", String(call.headers["x-market-signature"]), call.body)).to.equal(false);
        const event = JSON.parse(call.body);
        expect(event).to.include({
          type: "task.listed",
          role: "poster",
          taskHash,
          chain: "base",
          chainId: 31337,
          onChainTaskId: String(taskId),
          state: "open",
        });
        expect(call.headers["x-market-event-id"]).to.equal(event.id);
        expect(call.headers["x-market-event"]).to.equal("task.listed");
        const [delivered] = await waitForDelivery(m, hook.id, "delivered");
        expect(delivered).to.include({
          eventId: event.id,
          eventType: "task.listed",
          attempts: 1,
          lastStatusCode: 200,
          lastError: null,
          nextAttemptAt: null,
        });
        expect(call.headers["x-market-delivery"]).to.equal(String(delivered.id));

        const removed = await m.api.request("DELETE", `${WEBHOOKS}/${hook.id}`, { key: m.posterKey });
        expect(removed.status).to.equal(200);
        expect(removed.json.data).to.deep.equal({ deleted: true });
        const again = await m.api.request("DELETE", `${WEBHOOKS}/${hook.id}`, { key: m.posterKey });
        expect(again.status).to.equal(404);
        expect(again.json.error.code).to.equal("NOT_FOUND");
        // A webhook registered after the deletion receives the next event: the event was fanned out, not to it.
        const marker = await receiver();
        try {
          await register(m, marker.url);
          await m.list();
          await marker.waitForCalls(1);
        } finally {
          await marker.close();
        }
        expect(endpoint.calls).to.have.length(1);
      } finally {
        await endpoint.close();
      }
    }, ALLOW));

  it("filters by event type and never shows another wallet's webhook", () =>
    withMarket(async (m) => {
      const endpoint = await receiver();
      try {
        const hook = await register(m, endpoint.url, { events: ["task.settled"] });
        expect(hook.events).to.deep.equal(["task.settled"]);
        const { taskId } = await m.list();
        await (await m.escrow.connect(m.poster).cancelTask(taskId)).wait();
        const [call] = await endpoint.waitForCalls(1);
        expect(JSON.parse(call.body)).to.include({ type: "task.settled", outcome: "cancelled" });
        const stranger = await m.api.createKey(m.stranger.address);
        const theirs = await m.api.request("GET", `${WEBHOOKS}/${hook.id}/deliveries`, { key: stranger });
        expect(theirs.status).to.equal(404);
        expect((await m.api.request("GET", WEBHOOKS, { key: stranger })).json.data.webhooks).to.deep.equal([]);
      } finally {
        await endpoint.close();
      }
    }, ALLOW));

  it("retries a failing endpoint with doubling waits, stops after WEBHOOK_MAX_ATTEMPTS and lists the outcome", () =>
    withMarket(async (m) => {
      const endpoint = await receiver(() => 500);
      try {
        const hook = await register(m, endpoint.url);
        await m.list();
        const calls = await endpoint.waitForCalls(3);
        const [failed] = await waitForDelivery(m, hook.id, "failed");
        expect(failed).to.include({ attempts: 3, lastStatusCode: 500, nextAttemptAt: null });
        expect(failed.lastError).to.match(/HTTP 500/);
        // Waits of about 150 ms, then 300 ms; and no fourth attempt.
        expect(calls[1].at - calls[0].at).to.be.at.least(140);
        expect(calls[2].at - calls[1].at).to.be.at.least(290);
        // An hour later by the service's clock, a pass finds nothing due: the failed delivery is not tried again.
        m.api.clock.advanceWall(3600);
        m.api.deps.webhooks!.kick();
        await m.api.deps.webhooks!.idle();
        expect(endpoint.calls).to.have.length(3);
        // Every attempt carried the same event id, each signed afresh.
        expect(new Set(calls.map((c) => c.headers["x-market-event-id"])).size).to.equal(1);
        for (const c of calls)
          expect(verify(hook.secret, String(c.headers["x-market-signature"]), c.body)).to.equal(true);
      } finally {
        await endpoint.close();
      }
    }, ALLOW));

  it("delivers on a later attempt after failures (pending in between, with its next try)", () =>
    withMarket(
      async (m) => {
        const endpoint = await receiver((n) => (n < 2 ? 503 : 204));
        try {
          const hook = await register(m, endpoint.url);
          await m.list();
          await endpoint.waitForCalls(1);
          // The first attempt's outcome is recorded just after its answer; the retry waits a second.
          let pending = (await deliveries(m, hook.id))[0];
          for (let i = 0; pending.attempts < 1 && i < 100; i++) {
            await new Promise((r) => setTimeout(r, 20));
            pending = (await deliveries(m, hook.id))[0];
          }
          expect(pending).to.include({ status: "pending", attempts: 1, lastStatusCode: 503 });
          expect(pending.lastError).to.match(/HTTP 503/);
          expect(Date.parse(pending.nextAttemptAt) - Date.parse(pending.updatedAt)).to.be.within(900, 1100);
          const [delivered] = await waitForDelivery(m, hook.id, "delivered");
          expect(delivered).to.include({ attempts: 2, lastStatusCode: 204, lastError: null, nextAttemptAt: null });
        } finally {
          await endpoint.close();
        }
      },
      { ...ALLOW, WEBHOOK_RETRY_BASE_MS: "1000" },
    ));

  it("sends deliveries left pending by a stopped dispatcher when the next one starts", () =>
    withMarket(
      async (m) => {
        // An endpoint that is down: the first attempt fails and the delivery waits (a long back-off).
        const down = await receiver();
        const url = down.url;
        await down.close();
        const hook = await register(m, url);
        await m.list();
        await waitForDelivery(m, hook.id, "pending");
        const until = Date.now() + 10_000;
        while ((await deliveries(m, hook.id))[0].attempts < 1 && Date.now() < until) {
          await new Promise((r) => setTimeout(r, 50));
        }
        const [first] = await deliveries(m, hook.id);
        expect(first.attempts).to.equal(1);
        expect(first.lastError).to.match(/ECONNREFUSED/);
        // The process stops; the endpoint comes back on the same port; a new process's dispatcher finds the row.
        await stopPush(m.api.deps);
        const port = Number(new URL(url).port);
        const back = http.createServer((req, res) => {
          req.resume();
          req.on("end", () => res.end());
        });
        await new Promise<void>((resolve) => back.listen(port, "127.0.0.1", resolve));
        try {
          Object.assign(m.api.deps, createPush(m.api.deps));
          await startPush(m.api.deps);
          const [delivered] = await waitForDelivery(m, hook.id, "delivered", 20_000);
          expect(delivered.attempts).to.equal(2);
        } finally {
          await new Promise<void>((r) => back.close(() => r()));
        }
      },
      { ...ALLOW, WEBHOOK_RETRY_BASE_MS: "1000", WEBHOOK_MAX_ATTEMPTS: "5" },
    ));

  it("gives each attempt a hard deadline: a trickling endpoint never delays another webhook's deliveries", () =>
    withMarket(
      async (m) => {
        // One endpoint answers a header byte every 200 ms and never finishes: the socket is never idle.
        const trickled: { closed: boolean }[] = [];
        const slow = http.createServer((req, res) => {
          const attempt = { closed: false };
          trickled.push(attempt);
          req.resume();
          const socket = req.socket;
          socket.write("HTTP/1.1 200 OK\r\n");
          const timer = setInterval(() => socket.write("X-Slow: a\r\n"), 200);
          socket.on("close", () => {
            clearInterval(timer);
            attempt.closed = true;
          });
          void res;
        });
        await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
        const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hook`;
        const fast = await receiver();
        try {
          const slowHook = await register(m, slowUrl);
          await register(m, fast.url);
          await m.list();
          await fast.waitForCalls(1);
          // The slow webhook's first attempt is under way; later events still reach the other webhook.
          await m.list();
          await m.list();
          const calls = await fast.waitForCalls(3, 8_000);
          expect(new Set(calls.map((c) => c.headers["x-market-event-id"])).size).to.equal(3);
          // The trickling attempt was cut at its deadline (the client closed it) and recorded as a failure.
          const until = Date.now() + 10_000;
          let list = await deliveries(m, slowHook.id);
          while (!list.some((d: { attempts: number }) => d.attempts >= 1) && Date.now() < until) {
            await new Promise((r) => setTimeout(r, 50));
            list = await deliveries(m, slowHook.id);
          }
          const tried = list.find((d: { attempts: number }) => d.attempts >= 1);
          expect(tried, JSON.stringify(list)).to.not.equal(undefined);
          expect(tried.lastError).to.match(/no answer within 1000 ms/);
          expect(trickled[0].closed).to.equal(true);
        } finally {
          slow.closeAllConnections();
          await new Promise<void>((r) => slow.close(() => r()));
          await fast.close();
        }
      },
      { ...ALLOW, WEBHOOK_TIMEOUT_MS: "1000", WEBHOOK_RETRY_BASE_MS: "60000" },
    ));

  it("never sends one delivery twice at once from two processes: the claim outlives the attempt's deadline", () =>
    withMarket(
      async (m) => {
        // An endpoint that trickles a header byte every 200 ms and never answers, recording its connections: when
        // each came (the service's clock) and whether it is still open.
        const connections: { atMs: number; open: boolean }[] = [];
        const slow = http.createServer((req) => {
          const connection = { atMs: m.api.deps.clock.wallNowMs(), open: true };
          connections.push(connection);
          req.resume();
          const socket = req.socket;
          socket.write("HTTP/1.1 200 OK\r\n");
          const timer = setInterval(() => socket.write("X-Slow: a\r\n"), 200);
          socket.on("close", () => {
            clearInterval(timer);
            connection.open = false;
          });
        });
        await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
        // A second process's dispatcher over the same database.
        const second = new WebhookDispatcher(m.api.deps, m.api.deps.events!);
        second.start();
        try {
          const hook = await register(m, `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hook`);
          await m.list();
          // While the attempt runs, its claim (the row's next attempt time, the lease other processes respect)
          // reaches past the attempt's deadline, which is at most WEBHOOK_TIMEOUT_MS after the connection.
          await eventually(() => connections.length > 0, "the attempt's connection");
          const [during] = await deliveries(m, hook.id);
          expect(connections[0].open, "the attempt still under way when its delivery was read").to.equal(true);
          expect(during).to.include({ status: "pending", attempts: 0 });
          expect(Date.parse(during.nextAttemptAt)).to.be.greaterThan(connections[0].atMs + 2000);
          // The attempt is cut at its deadline and recorded; no other connection was made meanwhile.
          await eventually(async () => (await deliveries(m, hook.id))[0].attempts > 0, "the attempt's outcome");
          expect(connections.map((c) => c.open)).to.deep.equal([false]);
          const [delivery] = await deliveries(m, hook.id);
          expect(delivery).to.include({ status: "pending", attempts: 1 });
          expect(delivery.lastError).to.match(/no answer within 2000 ms/);
        } finally {
          await second.stop();
          slow.closeAllConnections();
          await new Promise<void>((r) => slow.close(() => r()));
        }
      },
      // A deadline long enough to read the delivery while its attempt runs, even on a loaded machine.
      { ...ALLOW, WEBHOOK_TIMEOUT_MS: "2000", WEBHOOK_RETRY_BASE_MS: "60000" },
    ));

  it("does not read a 2xx answer's endless body: the connection closes once the status is known", () =>
    withMarket(
      async (m) => {
        let closed = false;
        const endless = http.createServer((req, res) => {
          req.resume();
          res.writeHead(200, { "content-type": "text/plain" });
          const timer = setInterval(() => res.write("x".repeat(16_384)), 10);
          res.on("close", () => {
            clearInterval(timer);
            closed = true;
          });
        });
        await new Promise<void>((resolve) => endless.listen(0, "127.0.0.1", resolve));
        const url = `http://127.0.0.1:${(endless.address() as AddressInfo).port}/hook`;
        try {
          const hook = await register(m, url);
          await m.list();
          const [delivered] = await waitForDelivery(m, hook.id, "delivered");
          expect(delivered).to.include({ attempts: 1, lastStatusCode: 200 });
          const until = Date.now() + 5_000;
          while (!closed && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
          expect(closed).to.equal(true);
        } finally {
          endless.closeAllConnections();
          await new Promise<void>((r) => endless.close(() => r()));
        }
      },
      { ...ALLOW, WEBHOOK_TIMEOUT_MS: "60000" },
    ));

  it("refuses non-public addresses and names the field of every validation error", () =>
    withMarket(async (m) => {
      for (const url of [
        "http://127.0.0.1:9/hook",
        "http://localhost:9/hook",
        "http://10.1.2.3/hook",
        "http://172.16.0.1/hook",
        "http://192.168.1.1/hook",
        "http://169.254.169.254/latest",
        "http://100.64.0.1/hook",
        "http://[::1]:9/hook",
        "http://[fe80::1]/hook",
        "http://[fd00::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://0.0.0.0/hook",
        // IPv6 special-purpose ranges, in every spelling: IPv4-mapped (hex and dotted), IPv4-compatible, NAT64,
        // local-use NAT64, 6to4, discard-only, IETF protocol assignments (Teredo), documentation, site-local.
        "http://[::ffff:7f00:1]/hook",
        "http://[0:0:0:0:0:ffff:a00:1]/hook",
        "http://[::ffff:8.8.8.8]/hook",
        "http://[::127.0.0.1]/hook",
        "http://[::7f00:1]/hook",
        "http://[::]/hook",
        "http://[64:ff9b::7f00:1]/hook",
        "http://[64:ff9b::a9fe:a9fe]/hook",
        "http://[64:ff9b:1::1]/hook",
        "http://[2002:7f00:1::1]/hook",
        "http://[2002:a9fe:a9fe::]/hook",
        "http://[100::1]/hook",
        "http://[2001::1]/hook",
        "http://[2001:1ff:ffff::1]/hook",
        "http://[2001:db8::1]/hook",
        "http://[3fff::1]/hook",
        "http://[fec0::1]/hook",
        "http://[ff02::1]/hook",
        "http://192.88.99.1/hook",
      ]) {
        const res = await m.post(WEBHOOKS, m.posterKey, { url });
        expect(res.status, url).to.equal(400);
        expect(res.json.error.code, url).to.equal("WEBHOOK_URL_NOT_PUBLIC");
        expect(res.json.error.message, url).to.match(/^url: /);
      }
      const cases: [unknown, string][] = [
        [{}, "body.url"],
        [{ url: "not a url" }, "body.url"],
        [{ url: "ftp://93.184.216.34/x" }, "url: must be http or https"],
        [{ url: "https://user:pw@93.184.216.34/x" }, "url: must not carry"],
        [{ url: "https://93.184.216.34/x", events: ["task.unknown"] }, "body.events"],
        [{ url: "https://93.184.216.34/x", extra: 1 }, "extra"],
      ];
      for (const [body, field] of cases) {
        const res = await m.post(WEBHOOKS, m.posterKey, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.json.error.code).to.equal("VALIDATION_ERROR");
        expect(res.json.error.message, JSON.stringify(body)).to.include(field);
      }
      const bad = await m.api.request("GET", `${WEBHOOKS}/abc/deliveries`, { key: m.posterKey });
      expect(bad.status).to.equal(400);
      expect(bad.json.error.message).to.include("id");
      expect((await m.api.request("GET", WEBHOOKS)).status).to.equal(401);
    }));

  it("caps the webhooks of a wallet (WEBHOOK_LIMIT)", () =>
    withMarket(
      async (m) => {
        await register(m, "http://127.0.0.1:9/a");
        await register(m, "http://127.0.0.1:9/b");
        const third = await m.post(WEBHOOKS, m.posterKey, { url: "http://127.0.0.1:9/c" });
        expect(third.status).to.equal(409);
        expect(third.json.error.code).to.equal("WEBHOOK_LIMIT");
      },
      { ...ALLOW, WEBHOOK_MAX_PER_WALLET: "2" },
    ));
});
