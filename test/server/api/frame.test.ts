import crypto from "node:crypto";
import http from "node:http";
import net from "node:net";
import zlib from "node:zlib";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import fc from "fast-check";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture } from "../../helpers/fixtures";
import { startTestApi, type TestApi } from "../../helpers/api";
import { createApp } from "../../../server/api/app";
import { pathShape } from "../../../server/api/router";
import { allRoutes } from "../../../server/api/routes";
import { openApiRoute } from "../../../server/api/routes/openapi";
import { statsRoute } from "../../../server/operations/system";
import type { Deps } from "../../../server/domain/deps";
import type { Logger } from "../../../server/logger";

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

  it("routes a method and path the same way every time (matches are kept), each method to its own route", () =>
    withApi(async (api) => {
      const key = await api.createKey("0x" + "ab".repeat(20));
      for (let round = 0; round < 3; round++) {
        // One path, two methods, two routes: the kept match of one never answers the other.
        const list = await api.request("GET", "/api/v1/api-keys", { key });
        expect(list.status, list.text).to.equal(200);
        expect(list.json.data.keys).to.be.an("array");
        const created = await api.request("POST", "/api/v1/api-keys", { key, body: { label: `k${round}` } });
        expect(created.status, created.text).to.equal(201);
        expect((await api.request("DELETE", "/api/v1/stats")).status).to.equal(405);
        // Ids share one kept match (the path's shape); each request still reads its own id from its path.
        for (const id of [`${999_000 + round}`, `0x${String(round + 1).repeat(64)}`]) {
          const missing = await api.request("GET", `/api/v1/tasks/${id}`);
          expect(missing.json.error.code).to.equal("NOT_FOUND");
          expect(missing.json.error.message).to.contain(id);
        }
      }
    }));

  it("has no route with a literal path segment shaped like an id, a hash or an address (kept matches rely on it)", () => {
    expect(pathShape("/api/v1/tasks/12/x/0x" + "ab".repeat(32) + "/0x" + "cd".repeat(20))).to.equal(
      "/api/v1/tasks/:id/x/:hash/:address",
    );
    expect(pathShape("/api/v1/a2a/tasks/index-batch")).to.equal("/api/v1/a2a/tasks/index-batch");
    for (const route of allRoutes) {
      for (const segment of route.path.split("/").filter((s) => s && !s.startsWith(":"))) {
        expect(pathShape(`/${segment}`), `${route.method} ${route.path}`).to.equal(`/${segment}`);
      }
    }
  });

  it("wraps success in { success: true, data }", () =>
    withApi(async (api) => {
      const res = await api.request("GET", "/api/v1/stats");
      expect(res.status).to.equal(200);
      expect(res.json.success).to.equal(true);
      expect(res.json.data).to.have.keys([
        "openTasks",
        "totalAgents",
        "activeAgents",
        "registeredUsers",
        "completedTasks",
        "byChain",
      ]);
    }));

  it("documents in its OpenAPI document exactly the routes the app was built with", () =>
    withApi(async (api) => {
      const full = (await api.request("GET", "/api/v1/openapi.json")).json;
      expect(Object.keys(full.paths)).to.include.members(["/api/v1/stats", "/api/v1/tasks"]);
      const small = createApp(api.deps, [statsRoute, openApiRoute]);
      const server = http.createServer(small.callback());
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        const port = (server.address() as AddressInfo).port;
        const doc = await (await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`)).json();
        expect(Object.keys(doc.paths).sort()).to.deep.equal(["/api/v1/openapi.json", "/api/v1/stats"]);
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      // The full app's document is not replaced by the small one's.
      expect((await api.request("GET", "/api/v1/openapi.json")).json).to.deep.equal(full);
    }));
});

/**
 * A second server over the same deps, whose logger, requests and outcomes the test can read. `holdUntilHangUp` keeps
 * each request before its body is read until its client has hung up (a slow database during authentication, say).
 */
async function recordedServer(deps: Deps, options: { holdUntilHangUp?: boolean } = {}) {
  const errors: { msg: string; fields?: Record<string, unknown> }[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (msg, fields) => errors.push({ msg, fields }),
    child: () => logger,
  };
  const outcomes: { path: string; status: number; code?: string }[] = [];
  const requests: http.IncomingMessage[] = [];
  const app = createApp({ ...deps, logger });
  app.middleware.unshift(async (ctx, next) => {
    requests.push(ctx.req);
    try {
      if (options.holdUntilHangUp) {
        await new Promise((resolve) => (ctx.req.destroyed ? resolve(undefined) : ctx.req.once("close", resolve)));
      }
      await next();
    } finally {
      outcomes.push({
        path: ctx.path,
        status: ctx.status,
        code: (ctx.body as { error?: { code?: string } })?.error?.code,
      });
    }
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    errors,
    requests,
    outcomes,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Sends a request head and part of its body over a raw socket, then destroys the socket once `hangUpWhen(bytesSent)`
 * holds.
 */
async function sendAndAbort(
  port: number,
  head: string[],
  partial: Buffer | string,
  hangUpWhen: (bytesSent: number) => boolean,
): Promise<void> {
  const socket = net.connect(port, "127.0.0.1");
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    const bytes = Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`), Buffer.from(partial)]);
    socket.write(bytes);
    await until(() => hangUpWhen(bytes.length), "moment to hang up");
  } finally {
    socket.destroy();
  }
}

async function until(condition: () => boolean, what: string, timeoutMs = 5000) {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`no ${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("API frame: body-reading codes (over the upload routes)", () => {
  const UPLOAD = "/api/v1/storage/upload";
  const BATCH = "/api/v1/storage/upload-batch";
  const sha256 = (bytes: Buffer) => `0x${crypto.createHash("sha256").update(bytes).digest("hex")}`;

  async function withKey<T>(fn: (api: TestApi, key: string) => Promise<T>, env: Record<string, string> = {}) {
    const { book, poster } = await loadFixture(deployEscrowFixture);
    const api = await startTestApi(book, env);
    try {
      return await fn(api, await api.createKey(poster.address));
    } finally {
      await api.close();
    }
  }

  const json = { "content-type": "application/json" };

  it("answers INVALID_JSON for malformed JSON", () =>
    withKey(async (api, key) => {
      for (const rawBody of ['{"data": ', '{"data":"aGk="}x', "{'data':'aGk='}", "nul"]) {
        const res = await api.request("POST", UPLOAD, { key, rawBody, headers: json });
        expect(res.status, rawBody).to.equal(400);
        expect(res.json.error.code, rawBody).to.equal("INVALID_JSON");
      }
    }));

  it("answers 413 PAYLOAD_TOO_LARGE for a body above the route's limit, also when a gzip body inflates past it", () =>
    withKey(async (api, key) => {
      const big = JSON.stringify({ items: [{ data: "A".repeat(2 * 1024 * 1024) }] });
      const plain = await api.request("POST", BATCH, { key, rawBody: big, headers: json });
      expect(plain.status).to.equal(413);
      expect(plain.json.error.code).to.equal("PAYLOAD_TOO_LARGE");

      const gzipped = zlib.gzipSync(big);
      expect(gzipped.length).to.be.below(64 * 1024);
      const inflated = await api.request("POST", BATCH, {
        key,
        rawBody: gzipped,
        headers: { ...json, "content-encoding": "gzip" },
      });
      expect(inflated.status).to.equal(413);
      expect(inflated.json.error.code).to.equal("PAYLOAD_TOO_LARGE");
    }));

  it("answers 415 UNSUPPORTED_CHARSET for a charset other than UTF-8", () =>
    withKey(async (api, key) => {
      const res = await api.request("POST", UPLOAD, {
        key,
        rawBody: JSON.stringify({ data: "aGk=" }),
        headers: { "content-type": "application/json; charset=latin1" },
      });
      expect(res.status).to.equal(415);
      expect(res.json.error.code).to.equal("UNSUPPORTED_CHARSET");
      const utf8 = await api.request("POST", UPLOAD, {
        key,
        rawBody: JSON.stringify({ data: "aGk=" }),
        headers: { "content-type": "application/json; charset=UTF-8" },
      });
      expect(utf8.status).to.equal(201);
    }));

  it("answers 415 UNSUPPORTED_ENCODING for Content-Encoding compress", () =>
    withKey(async (api, key) => {
      const res = await api.request("POST", UPLOAD, {
        key,
        rawBody: JSON.stringify({ data: "aGk=" }),
        headers: { ...json, "content-encoding": "compress" },
      });
      expect(res.status).to.equal(415);
      expect(res.json.error.code).to.equal("UNSUPPORTED_ENCODING");
    }));

  it("answers 415 UNSUPPORTED_MEDIA_TYPE for a body that is not JSON", () =>
    withKey(async (api, key) => {
      for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
        const res = await api.request("POST", UPLOAD, {
          key,
          rawBody: JSON.stringify({ data: "aGk=" }),
          headers: { "content-type": type },
        });
        expect(res.status, type).to.equal(415);
        expect(res.json.error.code, type).to.equal("UNSUPPORTED_MEDIA_TYPE");
      }
    }));

  it("accepts gzip, deflate and br bodies", () =>
    withKey(async (api, key) => {
      const bytes = Buffer.from("a compressed brief");
      const body = Buffer.from(JSON.stringify({ data: bytes.toString("base64") }));
      const encoded: Record<string, Buffer> = {
        gzip: zlib.gzipSync(body),
        deflate: zlib.deflateSync(body),
        br: zlib.brotliCompressSync(body),
      };
      for (const [encoding, rawBody] of Object.entries(encoded)) {
        const res = await api.request("POST", UPLOAD, {
          key,
          rawBody,
          headers: { ...json, "content-encoding": encoding },
        });
        expect(res.status, encoding).to.equal(201);
        expect(res.json.data.rootHash, encoding).to.equal(sha256(bytes));
      }
    }));

  it("answers 400 BAD_REQUEST for a body that is not valid data of its Content-Encoding", () =>
    withKey(async (api, key) => {
      for (const encoding of ["gzip", "deflate", "br"]) {
        const res = await api.request("POST", UPLOAD, {
          key,
          rawBody: Buffer.from("this is not compressed at all"),
          headers: { ...json, "content-encoding": encoding },
        });
        expect(res.status, encoding).to.equal(400);
        expect(res.json.error.code, encoding).to.equal("BAD_REQUEST");
      }
    }));

  it("answers REQUEST_ABORTED, logs no 500 and keeps serving when the client hangs up mid-body", () =>
    withKey(async (api, key) => {
      const server = await recordedServer(api.deps);
      try {
        const head = (extra: string[]) => [
          `POST ${UPLOAD} HTTP/1.1`,
          "Host: 127.0.0.1",
          "Content-Type: application/json",
          `X-API-Key: ${key}`,
          ...extra,
        ];
        const gzipped = zlib.gzipSync(JSON.stringify({ data: crypto.randomBytes(4096).toString("base64") }));
        const cases: [string, string[], Buffer | string][] = [
          ["identity", head(["Content-Length: 1000"]), '{"data":"aGk'],
          ["gzip", head([`Content-Length: ${gzipped.length}`, "Content-Encoding: gzip"]), gzipped.subarray(0, 100)],
          ["chunked", head(["Transfer-Encoding: chunked"]), 'c\r\n{"data":"aGk\r\n'],
        ];
        for (const [name, lines, partial] of cases) {
          const seen = server.outcomes.length;
          // Mid-body: the server reads the body (its request flows) and has received every byte sent so far.
          await sendAndAbort(server.port, lines, partial, (sent) => {
            const request = server.requests[seen];
            return request?.readableFlowing === true && (request.socket?.bytesRead ?? 0) >= sent;
          });
          await until(() => server.outcomes.length > seen, `an answer to the ${name} request`);
          expect(server.outcomes[seen], name).to.deep.equal({ path: UPLOAD, status: 400, code: "REQUEST_ABORTED" });
        }
        expect(server.errors).to.deep.equal([]);

        const after = await fetch(`${server.url}${UPLOAD}`, {
          method: "POST",
          headers: { ...json, "x-api-key": key },
          body: JSON.stringify({ data: "aGk=" }),
        });
        expect(after.status).to.equal(201);
      } finally {
        await server.close();
      }
    }));

  it("answers REQUEST_ABORTED when the client hung up before the body is read", () =>
    withKey(async (api, key) => {
      const server = await recordedServer(api.deps, { holdUntilHangUp: true });
      try {
        const head = (extra: string[]) => [
          `POST ${UPLOAD} HTTP/1.1`,
          "Host: 127.0.0.1",
          "Content-Type: application/json",
          `X-API-Key: ${key}`,
          ...extra,
        ];
        const cases: [string, string[]][] = [
          ["identity", head(["Content-Length: 1000"])],
          ["gzip", head(["Content-Length: 1000", "Content-Encoding: gzip"])],
        ];
        for (const [name, lines] of cases) {
          const seen = server.outcomes.length;
          // The request reached the app, which holds it before reading its body.
          await sendAndAbort(server.port, lines, "{", () => server.requests.length > seen);
          await until(() => server.outcomes.length > seen, `an answer to the ${name} request`);
          expect(server.outcomes[seen], name).to.deep.equal({ path: UPLOAD, status: 400, code: "REQUEST_ABORTED" });
        }
        expect(server.errors).to.deep.equal([]);
      } finally {
        await server.close();
      }
    }));

  it("never answers 500 to malformed bodies (fuzz)", () =>
    withKey(
      async (api, key) => {
        const server = await recordedServer(api.deps);
        try {
          const body = fc.oneof(
            fc.string(),
            fc.json(),
            fc.jsonValue().map((v) => JSON.stringify({ data: v })),
            fc.jsonValue().map((v) => JSON.stringify({ items: v })),
            fc.array(fc.jsonValue(), { maxLength: 5 }).map((items) => JSON.stringify({ items })),
            fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
          );
          const type = fc.constantFrom(
            "application/json",
            "application/json; charset=utf-8",
            "text/plain",
            "",
            ";;",
            'application/json; charset="',
          );
          const encoding = fc.constantFrom("", "gzip", "deflate", "br", "identity", "x-unknown");
          await fc.assert(
            fc.asyncProperty(fc.constantFrom(UPLOAD, BATCH), body, type, encoding, async (route, raw, ct, ce) => {
              const headers: Record<string, string> = { "x-api-key": key };
              if (ct) headers["content-type"] = ct;
              if (ce) headers["content-encoding"] = ce;
              const res = await fetch(`${server.url}${route}`, { method: "POST", headers, body: raw });
              const answer = (await res.json()) as { success: boolean; error?: { code: string } };
              expect(res.status, JSON.stringify({ route, raw: String(raw), ct, ce })).to.be.below(500);
              expect(answer.success === true || typeof answer.error?.code === "string").to.equal(true);
            }),
            { numRuns: 150 },
          );
          expect(server.errors).to.deep.equal([]);
          expect(server.outcomes.filter((o) => o.status >= 500)).to.deep.equal([]);
        } finally {
          await server.close();
        }
      },
      { RATE_IP_PER_WINDOW: "100000", RATE_WALLET_FAMILY_PER_MINUTE: "100000", RATE_IP_POSTING_PER_MINUTE: "100000" },
    ));
});
