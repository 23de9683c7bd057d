/**
 * The API's hardening: strings that cannot be UTF-8, prototype keys, the duration's documented forms, responses that
 * validate against the OpenAPI document with a standard validator, and connections that stall.
 */
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { expect } from "chai";
import { config, ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { deployEscrowFixture, DAY } from "../../helpers/fixtures";
import { startTestApi, type ApiResponse, type TestApi } from "../../helpers/api";
import { ERROR_STATUS } from "../../../server/errors";

type Fixture = Awaited<ReturnType<typeof deployEscrowFixture>>;

const ENV = {
  RATE_IP_PER_WINDOW: "100000",
  RATE_WALLET_FAMILY_PER_MINUTE: "100000",
  RATE_IP_POSTING_PER_MINUTE: "100000",
};
const brief = (text: string) => ethers.sha256(ethers.toUtf8Bytes(text));

async function withApi(
  fn: (ctx: Fixture & { api: TestApi; key: string }) => Promise<void>,
  env: Record<string, string> = {},
) {
  const fixture = await loadFixture(deployEscrowFixture);
  const api = await startTestApi(fixture.book, { ...ENV, ...env });
  try {
    await fn({ ...fixture, api, key: await api.createKey(fixture.poster.address) });
  } finally {
    await api.close();
  }
}

function expectError(res: ApiResponse, status: number, code: string, field?: string) {
  expect(res.status, res.text).to.equal(status);
  expect(res.json?.error?.code, res.text).to.equal(code);
  if (field) expect(res.json.error.message.startsWith(`${field}:`), res.json.error.message).to.equal(true);
}

/** A build body as JSON text with `locationZone` spliced in raw (so escapes such as \ud800 reach the server as is). */
const rawTask = (text: string, rawZone: string) =>
  `{"taskHash":"${brief(text)}","amount":"5000000","locationZone":"${rawZone}","duration":"${DAY}"}`;

/** The schema of property `name` in `schema`, following $ref and allOf. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function findProperty(doc: any, schema: any, name: string): any {
  if (schema.$ref) return findProperty(doc, doc.components.schemas[schema.$ref.split("/").pop()], name);
  if (schema.properties?.[name]) return schema.properties[name];
  for (const part of schema.allOf ?? []) {
    const found = findProperty(doc, part, name);
    if (found) return found;
  }
  return undefined;
}

describe("API hardening", () => {
  describe("strings that reach the chain or the database", () => {
    for (const [name, zone] of [
      ["a lone high surrogate", "\\ud800"],
      ["a lone low surrogate", "\\udc00"],
      ["a reversed pair", "\\udc00\\ud800"],
    ]) {
      it(`refuses ${name} in locationZone with 400 VALIDATION_ERROR naming the field, on both build routes`, () =>
        withApi(async ({ api, key }) => {
          const headers = { "content-type": "application/json" };
          expectError(
            await api.request("POST", "/api/v1/tasks", { key, headers, rawBody: rawTask("single", zone) }),
            400,
            "VALIDATION_ERROR",
            "body.locationZone",
          );
          const batch = `{"tasks":[${rawTask("batch a", "global")},${rawTask("batch b", zone)}]}`;
          expectError(
            await api.request("POST", "/api/v1/tasks/batch", { key, headers, rawBody: batch }),
            400,
            "VALIDATION_ERROR",
            "body.tasks[1].locationZone",
          );
        }));
    }

    it("accepts a well-formed pair (an emoji) in locationZone", () =>
      withApi(async ({ api, key }) => {
        const res = await api.request("POST", "/api/v1/tasks", {
          key,
          headers: { "content-type": "application/json" },
          rawBody: rawTask("emoji", "\\ud83d\\ude00"),
        });
        expect(res.status, res.text).to.equal(200);
      }));

    it("refuses a lone surrogate in a key", () =>
      withApi(async ({ api, key }) => {
        const rawBody = `{"taskHash":"${brief("k")}","amount":"5000000","locationZone":"g","duration":"${DAY}","\\ud800":1}`;
        const res = await api.request("POST", "/api/v1/tasks", {
          key,
          headers: { "content-type": "application/json" },
          rawBody,
        });
        expectError(res, 400, "VALIDATION_ERROR");
      }));
  });

  describe("prototype keys", () => {
    for (const forbidden of ["__proto__", "constructor", "prototype"]) {
      it(`refuses a ${forbidden} key as an unknown key, at any depth`, () =>
        withApi(async ({ api, key }) => {
          const top = `{"${forbidden}":{"isAdmin":true},"taskHash":"${brief("p")}","amount":"5000000","locationZone":"g","duration":"${DAY}"}`;
          expectError(
            await api.request("POST", "/api/v1/tasks", {
              key,
              headers: { "content-type": "application/json" },
              rawBody: top,
            }),
            400,
            "VALIDATION_ERROR",
            `body.${forbidden}`,
          );
          const nested = `{"tasks":[{"taskHash":"${brief("q")}","amount":"5000000","locationZone":"g","duration":"${DAY}","${forbidden}":{}}]}`;
          expectError(
            await api.request("POST", "/api/v1/tasks/batch", {
              key,
              headers: { "content-type": "application/json" },
              rawBody: nested,
            }),
            400,
            "VALIDATION_ERROR",
            `body.tasks[0].${forbidden}`,
          );
        }));
    }

    it("answers a client error, never a 500, for a body nested 100,000 levels deep", () =>
      withApi(async ({ api, key }) => {
        const rawBody = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
        const res = await api.request("POST", "/api/v1/tasks", {
          key,
          headers: { "content-type": "application/json" },
          rawBody,
        });
        expect(res.status, res.text).to.equal(400);
      }));
  });

  describe("duration", () => {
    it("documents both accepted forms, a string of digits and a JSON integer, and accepts both", () =>
      withApi(async ({ api, key }) => {
        const doc = (await api.request("GET", "/api/v1/openapi.json")).json;
        const body = doc.paths["/api/v1/tasks"].post.requestBody.content["application/json"].schema;
        const types = findProperty(doc, body, "duration").anyOf.map((s: { type: string }) => s.type);
        expect(types).to.have.members(["string", "integer"]);
        for (const duration of [String(DAY), DAY]) {
          const res = await api.request("POST", "/api/v1/tasks", {
            key,
            body: { taskHash: brief(`d${duration}`), amount: "5000000", locationZone: "g", duration },
          });
          expect(res.status, res.text).to.equal(200);
        }
        for (const duration of [86_400.5, true, [DAY], { seconds: DAY }]) {
          const res = await api.request("POST", "/api/v1/tasks", {
            key,
            body: { taskHash: brief("bad"), amount: "5000000", locationZone: "g", duration },
          });
          expect(res.status, `${JSON.stringify(duration)}: ${res.text}`).to.equal(400);
          expect(["INVALID_DURATION", "VALIDATION_ERROR"]).to.include(res.json.error.code);
        }
      }));
  });

  describe("the OpenAPI document", () => {
    /** Validates `res`'s JSON body against the document's schema for the route, with Ajv (OpenAPI 3.0 `nullable`). */
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    function validateResponse(doc: any, path: string, res: ApiResponse) {
      const ajv = new Ajv({ strict: false, allErrors: true });
      addFormats(ajv);
      const response = doc.paths[path].get.responses[String(res.status)] ?? doc.paths[path].get.responses.default;
      const schema = response.content["application/json"].schema;
      const validate = ajv.compile({ ...schema, components: doc.components });
      const ok = validate(res.json);
      expect(ok, `${path}: ${JSON.stringify(validate.errors)}`).to.equal(true);
    }

    it("describes the responses the API sends, checked by a standard validator (a null verificationCriteria too)", () =>
      withApi(async ({ api, key, escrow, usdc, poster }) => {
        const doc = (await api.request("GET", "/api/v1/openapi.json")).json;
        const taskHash = brief("openapi task");
        const tx = await escrow
          .connect(poster)
          .createTask(taskHash, await usdc.getAddress(), 5_000_000n, "general", "global", DAY);
        await tx.wait();
        const indexed = await api.request("POST", "/api/v1/a2a/tasks/index", {
          key,
          body: { txHash: tx.hash, taskHash },
        });
        expect(indexed.status, indexed.text).to.equal(200);

        const read = await api.request("GET", `/api/v1/tasks/${taskHash}`, { key });
        expect(read.status, read.text).to.equal(200);
        expect(JSON.stringify(read.json)).to.include('"verificationCriteria":null');
        validateResponse(doc, "/api/v1/tasks/{id}", read);
        validateResponse(doc, "/api/v1/a2a/tasks", await api.request("GET", "/api/v1/a2a/tasks"));
        validateResponse(
          doc,
          "/api/v1/a2a/tasks/posted",
          await api.request("GET", "/api/v1/a2a/tasks/posted", { key }),
        );
        validateResponse(doc, "/api/v1/stats", await api.request("GET", "/api/v1/stats"));
        validateResponse(doc, "/api/v1/health/settlement", await api.request("GET", "/api/v1/health/settlement"));
        validateResponse(doc, "/api/v1/tasks/{id}", await api.request("GET", `/api/v1/tasks/0x${"ee".repeat(32)}`));
      }));

    it("declares its own route as the bare document it serves, not the envelope", () =>
      withApi(async ({ api }) => {
        const res = await api.request("GET", "/api/v1/openapi.json");
        expect(res.json).to.not.have.property("success");
        const schema = res.json.paths["/api/v1/openapi.json"].get.responses["200"].content["application/json"].schema;
        expect(schema.properties).to.have.property("openapi");
        expect(schema.properties).to.not.have.property("success");
        const ajv = new Ajv({ strict: false });
        expect(ajv.validate({ ...schema, components: res.json.components }, res.json)).to.equal(true);
      }));
  });

  describe("reads after writes", () => {
    /** Funds a task with `text`'s brief as the poster and lists it; returns its hash. */
    async function fundAndIndex(
      { api, key, escrow, usdc, poster }: Fixture & { api: TestApi; key: string },
      text: string,
    ) {
      const taskHash = brief(text);
      const tx = await escrow
        .connect(poster)
        .createTask(taskHash, await usdc.getAddress(), 5_000_000n, "general", "global", DAY);
      await tx.wait();
      const indexed = await api.request("POST", "/api/v1/a2a/tasks/index", {
        key,
        body: { txHash: tx.hash, taskHash },
      });
      expect(indexed.status, indexed.text).to.equal(200);
      expect(indexed.json.data.indexed).to.equal(true);
      return taskHash;
    }

    it("shows the lister its task on the read right after indexing, with a slow indexer", () =>
      withApi(
        async (ctx) => {
          const taskHash = await fundAndIndex(ctx, "read your writes");
          const read = await ctx.api.request("GET", `/api/v1/tasks/${taskHash}`, { key: ctx.key });
          expect(read.status, read.text).to.equal(200);
          expect(read.json.data.taskHash).to.equal(taskHash);
        },
        { INDEXER_POLL_MS: "1500" },
      ));

    it("answers NOT_INDEXED_YET, not NOT_FOUND, for a listed task whose block the indexer has not reached", () =>
      withApi(async (ctx) => {
        await ctx.api.indexer.stop();
        const taskHash = await fundAndIndex(ctx, "indexer stopped");
        expectError(
          await ctx.api.request("GET", `/api/v1/tasks/${taskHash}`, { key: ctx.key }),
          404,
          "NOT_INDEXED_YET",
        );
        expectError(
          await ctx.api.request("GET", `/api/v1/tasks/0x${"ee".repeat(32)}`, { key: ctx.key }),
          404,
          "NOT_FOUND",
        );
      }));
  });

  describe("connections", () => {
    /** Opens `count` sockets that each write `prefix` and then stall; resolves with how long each stayed open. */
    async function stall(url: string, count: number, prefix: string): Promise<number[]> {
      const { hostname, port } = new URL(url);
      const started = Date.now();
      return Promise.all(
        Array.from(
          { length: count },
          () =>
            new Promise<number>((resolve) => {
              const socket = net.connect(Number(port), hostname, () => socket.write(prefix));
              socket.on("data", () => undefined);
              socket.on("error", () => undefined);
              socket.on("close", () => resolve(Date.now() - started));
              setTimeout(() => socket.destroy(), 10_000).unref();
            }),
        ),
      );
    }

    // The request timeout is far above the bound asserted below: what closes the sockets is the idle, keep-alive or
    // headers timeout.
    const TIMEOUTS = {
      API_HEADERS_TIMEOUT_MS: "400",
      API_REQUEST_TIMEOUT_MS: "60000",
      API_IDLE_TIMEOUT_MS: "600",
      API_KEEP_ALIVE_TIMEOUT_MS: "600",
    };

    it("closes 20 connections that send their headers and then stall the body", () =>
      withApi(async ({ api }) => {
        const closedAfter = await stall(
          api.url,
          20,
          "POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
        );
        expect(Math.max(...closedAfter)).to.be.below(5_000);
      }, TIMEOUTS));

    it("closes connections that never finish their headers", () =>
      withApi(async ({ api }) => {
        const closedAfter = await stall(api.url, 5, "GET /api/v1/stats HTTP/1.1\r\nHost: x\r\n");
        expect(Math.max(...closedAfter)).to.be.below(5_000);
      }, TIMEOUTS));

    it("still serves a client that sends its request promptly", () =>
      withApi(async ({ api }) => {
        expect((await api.request("GET", "/api/v1/stats")).status).to.equal(200);
      }, TIMEOUTS));
  });

  describe("error codes", () => {
    it("documents every code the spec does not name in docs/api.md, with its status", function () {
      const specFile = path.resolve(config.paths.root, "../shared/spec/marketplace-spec.md");
      if (!fs.existsSync(specFile)) {
        console.log(`      (skipped: the specification is not at ${specFile}; CI has it beside the checkout)`);
        this.skip();
      }
      const spec = fs.readFileSync(specFile, "utf8");
      const guide = fs.readFileSync(path.resolve(config.paths.root, "docs/api.md"), "utf8");
      const beyond = Object.keys(ERROR_STATUS).filter((code) => !new RegExp(`\\b${code}\\b`).test(spec));
      expect(beyond).to.include.members([
        "UNAUTHORIZED",
        "METHOD_NOT_ALLOWED",
        "UNSUPPORTED_MEDIA_TYPE",
        "INTERNAL_ERROR",
      ]);
      for (const code of beyond) {
        const status = ERROR_STATUS[code as keyof typeof ERROR_STATUS];
        expect(guide, `${code} (${status}) in docs/api.md`).to.match(new RegExp(`\\| \`${code}\` \\| ${status} \\|`));
      }
    });
  });
});
