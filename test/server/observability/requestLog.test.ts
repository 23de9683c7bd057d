/**
 * One JSON log line per request, with a request id that the client gets back (X-Request-Id, and error.requestId in
 * every error envelope) and that every line logged while serving the request carries, the domain's included
 * (docs/operations.md, "Logs"). Over HTTP against the market's API, its logger writing to a buffer.
 */
import { Writable } from "node:stream";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { withMarket, type Market } from "../../helpers/market";
import { createApp } from "../../../server/api/app";
import { createHttpServer } from "../../../server/api/httpServer";
import { createLogger } from "../../../server/logger";
import type { BlobStore } from "../../../server/storage/blobStore";

interface LogLine {
  [field: string]: unknown;
  msg: string;
  level: string;
}

/** The market's API with a logger writing JSON lines into `lines` (and `blobs` swapped when given). */
async function loggedApi(m: Market, blobs?: BlobStore) {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  const logger = createLogger("info", { service: "api" }, sink as unknown as { write(msg: string): void });
  const deps = { ...m.api.deps, logger, ...(blobs ? { blobs } : {}) };
  const server = createHttpServer(createApp(deps).callback(), deps.config.api.timeouts);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    lines,
    url,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("request logs and request ids", function () {
  this.timeout(120_000);

  it("writes one JSON line per request with its route, status and time, under the id answered in X-Request-Id", () =>
    withMarket(async (m) => {
      const api = await loggedApi(m);
      try {
        const ok = await fetch(`${api.url}/api/v1/stats`);
        const id = ok.headers.get("x-request-id")!;
        expect(id).to.match(/^[0-9a-f-]{36}$/);
        const missing = await fetch(`${api.url}/api/v1/tasks/424242`);
        const missingBody = await missing.json();
        const requests = api.lines.filter((l) => l.msg === "request");
        expect(requests).to.have.length(2);
        expect(requests[0]).to.include({
          level: "info",
          service: "api",
          component: "http",
          method: "GET",
          path: "/api/v1/stats",
          route: "/api/v1/stats",
          status: 200,
          requestId: id,
        });
        expect(requests[0].ms).to.be.a("number").and.at.least(0);
        expect(requests[1]).to.include({ route: "/api/v1/tasks/:id", status: 404 });
        // The error envelope carries the id the client got in the header and the log line has.
        expect(missingBody.error.requestId).to.equal(missing.headers.get("x-request-id"));
        expect(requests[1].requestId).to.equal(missingBody.error.requestId);
        expect(requests[0].requestId).to.not.equal(requests[1].requestId);
      } finally {
        await api.close();
      }
    }));

  it("writes no request lines with LOG_REQUESTS=off, and still answers and propagates the id", () =>
    withMarket(
      async (m) => {
        const api = await loggedApi(m);
        try {
          const res = await fetch(`${api.url}/api/v1/tasks/424242`, { headers: { "x-request-id": "quiet-request-1" } });
          expect(res.headers.get("x-request-id")).to.equal("quiet-request-1");
          expect((await res.json()).error.requestId).to.equal("quiet-request-1");
          expect(api.lines.filter((l) => l.msg === "request")).to.deep.equal([]);
        } finally {
          await api.close();
        }
      },
      { LOG_REQUESTS: "off" },
    ));

  it("keeps a sane incoming X-Request-Id and replaces one that is not", () =>
    withMarket(async (m) => {
      const api = await loggedApi(m);
      try {
        const kept = await fetch(`${api.url}/api/v1/stats`, { headers: { "x-request-id": "client-req.0042_a" } });
        expect(kept.headers.get("x-request-id")).to.equal("client-req.0042_a");
        for (const bad of ["short", "has space in it", "x".repeat(65), 'quote"injection1']) {
          const res = await fetch(`${api.url}/api/v1/stats`, { headers: { "x-request-id": bad } });
          expect(res.headers.get("x-request-id"), bad).to.match(/^[0-9a-f-]{36}$/);
        }
        const ids = api.lines.filter((l) => l.msg === "request").map((l) => l.requestId);
        expect(ids[0]).to.equal("client-req.0042_a");
        expect(ids.slice(1).every((id) => typeof id === "string" && /^[0-9a-f-]{36}$/.test(id))).to.equal(true);
      } finally {
        await api.close();
      }
    }));

  it("carries the id into the domain's log lines and the error envelope of a failed request", () =>
    withMarket(async (m) => {
      const failing: BlobStore = {
        decentralized: false,
        put: () => Promise.reject(new Error("disk on fire")),
        get: () => Promise.resolve(undefined),
      };
      const api = await loggedApi(m, failing);
      try {
        const res = await fetch(`${api.url}/api/v1/storage/upload`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": m.posterKey, "x-request-id": "upload-0001" },
          body: JSON.stringify({ data: Buffer.from("a brief").toString("base64") }),
        });
        const body = await res.json();
        expect(res.status).to.equal(503);
        expect(body.error).to.include({ code: "STORAGE_UNAVAILABLE", requestId: "upload-0001" });
        // The domain's warning (server/domain/storage.ts) is written under the request's id, before its request line.
        const domain = api.lines.find((l) => l.msg === "blob store failed")!;
        expect(domain).to.include({ level: "warn", requestId: "upload-0001" });
        const request = api.lines.find((l) => l.msg === "request")!;
        expect(request).to.include({ requestId: "upload-0001", status: 503, route: "/api/v1/storage/upload" });
        expect(api.lines.indexOf(domain)).to.be.below(api.lines.indexOf(request));
        // Lines written outside any request carry no id.
        const outside = createLogger("info", {}, { write: (line: string) => api.lines.push(JSON.parse(line)) });
        outside.info("background work");
        expect(api.lines.at(-1)).to.not.have.property("requestId");
      } finally {
        await api.close();
      }
    }));
});
