/**
 * A browser-based MCP host on another origin (docs/oauth.md, "Browser-based hosts"): a page served at
 * http://mcp-host.test (Chromium resolves that name to loopback) calls the API's /mcp and OAuth endpoints with fetch,
 * as a web MCP client does: preflighted requests with its key, the 401 challenge without one, the refused key's
 * message, discovery and registration. The REST API, which has no CORS, is refused by the browser: the page is truly
 * cross-origin.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { chromium, type Browser } from "playwright-core";
import { withMarket } from "../helpers/market";
import { CHROMIUM, CHROMIUM_FLAGS, skipWithoutChromium } from "./harness";

const PAGE_HOST = "mcp-host.test";

interface PageAnswers {
  initialize: { status: number; protocolVersion?: string; exposedHeaders: string | null };
  tools: { status: number; names: string[] };
  anonymous: { status: number; challenge: string | null; message: string };
  wrongKey: { status: number; message: string };
  metadata: { status: number; resource: string };
  registered: { status: number; clientId: string };
  rest: string;
}

describe("MCP from a web page on another origin (CORS, Chromium)", function () {
  this.timeout(120_000);
  let browser: Browser | undefined;
  let page: http.Server | undefined;

  before(function () {
    skipWithoutChromium(this);
  });

  after(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (page ? page.close(() => resolve()) : resolve()));
  });

  it("calls /mcp and the OAuth endpoints with fetch; REST stays closed to it", () =>
    withMarket(async (m) => {
      page = http.createServer((_req, res) =>
        res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>MCP host</title>"),
      );
      await new Promise<void>((resolve) => page!.listen(0, "127.0.0.1", resolve));
      const pagePort = (page.address() as AddressInfo).port;
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [...CHROMIUM_FLAGS, `--host-resolver-rules=MAP ${PAGE_HOST} 127.0.0.1`],
      });
      const tab = await browser.newPage();
      await tab.goto(`http://${PAGE_HOST}:${pagePort}/`);
      expect(await tab.evaluate(() => location.origin)).to.equal(`http://${PAGE_HOST}:${pagePort}`);

      const answers = await tab.evaluate(
        async ({ api, key }): Promise<PageAnswers> => {
          const mcp = (body: unknown, headers: Record<string, string>) =>
            fetch(`${api}/mcp`, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                accept: "application/json, text/event-stream",
                "mcp-protocol-version": "2025-06-18",
                ...headers,
              },
              body: JSON.stringify(body),
            });
          const initialize = await mcp(
            {
              jsonrpc: "2.0",
              id: 1,
              method: "initialize",
              params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "page", version: "1" } },
            },
            { "x-api-key": key },
          );
          const initialized = await initialize.json();
          const tools = await mcp({ jsonrpc: "2.0", id: 2, method: "tools/list" }, { authorization: `Bearer ${key}` });
          const toolList = await tools.json();
          const anonymous = await mcp({ jsonrpc: "2.0", id: 3, method: "tools/list" }, {});
          const anonymousBody = await anonymous.json();
          const wrongKey = await mcp(
            { jsonrpc: "2.0", id: 4, method: "tools/list" },
            { "x-api-key": `sk_${"0".repeat(64)}` },
          );
          const wrongBody = await wrongKey.json();
          const metadata = await fetch(`${api}/.well-known/oauth-protected-resource/mcp`, {
            headers: { "mcp-protocol-version": "2025-06-18" },
          });
          const metadataBody = await metadata.json();
          const registered = await fetch(`${api}/oauth/register`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ client_name: "Page host", redirect_uris: ["http://127.0.0.1:9/callback"] }),
          });
          const registeredBody = await registered.json();
          const rest = await fetch(`${api}/api/v1/oauth/clients`, { headers: { "x-api-key": key } }).then(
            (r) => `answered ${r.status}`,
            (e: Error) => `refused: ${e.name}`,
          );
          return {
            initialize: {
              status: initialize.status,
              protocolVersion: initialized.result?.protocolVersion,
              exposedHeaders: initialize.headers.get("access-control-expose-headers"),
            },
            tools: { status: tools.status, names: toolList.result.tools.map((t: { name: string }) => t.name) },
            anonymous: {
              status: anonymous.status,
              challenge: anonymous.headers.get("www-authenticate"),
              message: anonymousBody.error.message,
            },
            wrongKey: { status: wrongKey.status, message: wrongBody.error.message },
            metadata: { status: metadata.status, resource: metadataBody.resource },
            registered: { status: registered.status, clientId: registeredBody.client_id },
            rest,
          };
        },
        { api: m.api.url, key: m.posterKey },
      );

      expect(answers.initialize.status).to.equal(200);
      expect(answers.initialize.protocolVersion).to.equal("2025-06-18");
      expect(answers.tools.status).to.equal(200);
      expect(answers.tools.names).to.include("browse_tasks");
      expect(answers.anonymous.status).to.equal(401);
      // The page reads the challenge (exposed): where a web host starts OAuth.
      expect(answers.anonymous.challenge).to.include(
        `resource_metadata="${m.api.url}/.well-known/oauth-protected-resource/mcp"`,
      );
      expect(answers.anonymous.message).to.include("No marketplace API key was sent");
      expect(answers.wrongKey.status).to.equal(403);
      expect(answers.wrongKey.message).to.include("(sk_0000...) was refused");
      expect(answers.metadata).to.deep.equal({ status: 200, resource: `${m.api.url}/mcp` });
      expect(answers.registered.status).to.equal(201);
      expect(answers.registered.clientId).to.match(/^mcp_[0-9a-f]{32}$/);
      expect(answers.rest, "the REST API has no CORS: the browser refuses the page its answer").to.equal(
        "refused: TypeError",
      );
    }));
});
