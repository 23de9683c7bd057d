/**
 * MCP authorization over real HTTP (docs/oauth.md): the metadata documents and the 401 that names them, both ways of
 * registering a client (Dynamic Client Registration, a Client ID Metadata Document on a loopback server), PKCE and
 * resource checks, the token endpoint's rotation and reuse detection, revocation, scopes on MCP tools (through the
 * official MCP client), and API keys unchanged. The whole flow through the SDK's OAuth client and a browser is
 * test/web/oauth.test.ts.
 */
import crypto from "node:crypto";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { OAuthMetadataSchema, OAuthProtectedResourceMetadataSchema } from "@modelcontextprotocol/sdk/shared/auth.js";
import { type Market, withMarket } from "../../helpers/market";
import { MemoryOAuthHost } from "../../helpers/oauthHost";

const REDIRECT = "http://127.0.0.1:18301/callback";

function pkce() {
  const verifier = crypto.randomBytes(32).toString("base64url");
  return { verifier, challenge: crypto.createHash("sha256").update(verifier).digest("base64url") };
}

async function form(url: string, fields: Record<string, string>) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: response.status, headers: response.headers, json: (await response.json()) as any };
}

async function register(m: Market, body: Record<string, unknown> = {}) {
  const response = await fetch(`${m.api.url}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "Test host", redirect_uris: [REDIRECT], ...body }),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: response.status, json: (await response.json()) as any };
}

function authorizationParams(m: Market, clientId: string, challenge: string, extra: Record<string, string> = {}) {
  return {
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    scope: "market:read market:post market:work",
    state: "st-1",
    resource: `${m.api.url}/mcp`,
    ...extra,
  };
}

/** The owner approves (with an API key of theirs here; the web app uses the session) and gets the redirect. */
async function approve(
  m: Market,
  clientId: string,
  challenge: string,
  extra: Record<string, string> = {},
  body: Record<string, unknown> = {},
) {
  const res = await m.api.request("POST", "/api/v1/oauth/authorization", {
    key: m.posterKey,
    body: { ...authorizationParams(m, clientId, challenge, extra), approve: true, ...body },
  });
  expect(res.status, res.text).to.equal(200);
  return new URL(res.json.data.redirectTo as string);
}

/** A client registered, approved for `scope` and holding tokens. */
async function connected(m: Market, scope = "market:read market:post market:work") {
  const client = (await register(m)).json.client_id as string;
  const { verifier, challenge } = pkce();
  const redirect = await approve(m, client, challenge, { scope });
  const tokens = await form(`${m.api.url}/oauth/token`, {
    grant_type: "authorization_code",
    code: redirect.searchParams.get("code")!,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    client_id: client,
    resource: `${m.api.url}/mcp`,
  });
  expect(tokens.status, JSON.stringify(tokens.json)).to.equal(200);
  return { client, tokens: tokens.json as { access_token: string; refresh_token: string; scope: string } };
}

/**
 * A loopback server of Client ID Metadata Documents on a free port: `document(url)` is the JSON served at `url`.
 * Counts the requests it answered.
 */
async function documentServer(document: (url: string) => Record<string, unknown>) {
  let served = 0;
  const server = http.createServer((req, res) => {
    served++;
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${req.url}`;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(document(url)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served: () => served,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A self-signed certificate for https://127.0.0.1 (openssl), or undefined where openssl cannot make one. */
function loopbackCertificate(): { key: string; cert: string } | undefined {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cimd-cert-"));
  try {
    const made = spawnSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        path.join(dir, "key.pem"),
        "-out",
        path.join(dir, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    if (made.status !== 0) return undefined;
    return {
      key: fs.readFileSync(path.join(dir, "key.pem"), "utf8"),
      cert: fs.readFileSync(path.join(dir, "cert.pem"), "utf8"),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** An MCP host's OAuth provider that names itself by a Client ID Metadata Document URL (no registration). */
class DocumentClientProvider extends MemoryOAuthHost {
  constructor(readonly clientMetadataUrl: string) {
    super();
  }
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return { client_name: "SDK document host", redirect_uris: [REDIRECT] };
  }
}

async function mcpStatus(m: Market, token: string): Promise<number> {
  const response = await fetch(`${m.api.url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  await response.text();
  return response.status;
}

async function mcpClient(m: Market, token: string): Promise<Client> {
  const client = new Client({ name: "oauth-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${m.api.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

describe("MCP authorization (OAuth 2.1)", function () {
  this.timeout(60_000);

  it("publishes RFC 9728 and RFC 8414 metadata, and every 401 of /mcp names the resource metadata", () =>
    withMarket(async (m) => {
      for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
        const response = await fetch(`${m.api.url}${path}`);
        expect(response.status, path).to.equal(200);
        const prm = OAuthProtectedResourceMetadataSchema.parse(await response.json());
        expect(prm.resource).to.equal(`${m.api.url}/mcp`);
        expect(prm.authorization_servers).to.deep.equal([m.api.url]);
        expect(prm.scopes_supported).to.deep.equal(["market:read", "market:post", "market:work"]);
      }
      const as = OAuthMetadataSchema.parse(
        await (await fetch(`${m.api.url}/.well-known/oauth-authorization-server`)).json(),
      );
      expect(as.issuer).to.equal(m.api.url);
      expect(as.authorization_endpoint).to.equal(`${m.api.url}/oauth/authorize`);
      expect(as.token_endpoint).to.equal(`${m.api.url}/oauth/token`);
      expect(as.registration_endpoint).to.equal(`${m.api.url}/oauth/register`);
      expect(as.revocation_endpoint).to.equal(`${m.api.url}/oauth/revoke`);
      expect(as.code_challenge_methods_supported).to.deep.equal(["S256"]);
      expect(as.response_types_supported).to.deep.equal(["code"]);
      expect((as as Record<string, unknown>).client_id_metadata_document_supported).to.equal(true);
      // A browser-based host calls the exchange from its own page: CORS preflight allowed, no cookie involved.
      const preflight = await fetch(`${m.api.url}/oauth/token`, { method: "OPTIONS" });
      expect(preflight.status).to.equal(204);
      expect(preflight.headers.get("access-control-allow-origin")).to.equal("*");
      expect(preflight.headers.get("access-control-allow-methods")).to.equal("POST");

      const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
      for (const extra of <Record<string, string>[]>[{}, { authorization: `Bearer mat_${"1".repeat(64)}` }]) {
        const response = await fetch(`${m.api.url}/mcp`, { method: "POST", headers: { ...headers, ...extra }, body });
        expect(response.status).to.equal(401);
        const challenge = response.headers.get("www-authenticate")!;
        expect(challenge).to.match(/^Bearer realm="mcp"/);
        expect(challenge).to.include(`resource_metadata="${m.api.url}/.well-known/oauth-protected-resource/mcp"`);
        // The body still names the key and how to get one.
        const error = (await response.json()).error;
        expect(error.message).to.include("X-API-Key: <key>").and.include(`${m.api.url}/settings`);
      }
      // A refused API key is a 403 without a challenge: its host shows the message instead of starting OAuth.
      const refusedKey = await fetch(`${m.api.url}/mcp`, {
        method: "POST",
        headers: { ...headers, "x-api-key": `sk_${"0".repeat(64)}` },
        body,
      });
      expect(refusedKey.status).to.equal(403);
      expect(refusedKey.headers.get("www-authenticate")).to.equal(null);
      expect((await refusedKey.json()).error.message).to.include("(sk_0000...) was refused");
      // The API key still works on /mcp as before.
      expect(await mcpStatus(m, m.posterKey)).to.equal(200);
    }));

  it("registers clients by RFC 7591 and refuses bad metadata", () =>
    withMarket(async (m) => {
      const ok = await register(m, { token_endpoint_auth_method: "client_secret_basic" });
      expect(ok.status).to.equal(201);
      expect(ok.json.client_id).to.match(/^mcp_[0-9a-f]{32}$/);
      expect(ok.json.redirect_uris).to.deep.equal([REDIRECT]);
      expect(ok.json.token_endpoint_auth_method, "public clients: PKCE, no secret").to.equal("none");
      expect(ok.json).to.not.have.property("client_secret");

      const plainHttp = await register(m, { redirect_uris: ["http://evil.example/cb"] });
      expect(plainHttp.status).to.equal(400);
      expect(plainHttp.json.error).to.equal("invalid_redirect_uri");
      const none = await register(m, { redirect_uris: [] });
      expect(none.json.error).to.equal("invalid_redirect_uri");
      const implicit = await register(m, { grant_types: ["implicit"] });
      expect(implicit.json.error).to.equal("invalid_client_metadata");
      const notJson = await fetch(`${m.api.url}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{",
      });
      expect(notJson.status).to.equal(400);
      expect((await notJson.json()).error).to.equal("invalid_client_metadata");

      // An unknown client is shown, never redirected to.
      const unknown = await m.api.request(
        "GET",
        `/api/v1/oauth/authorization?${new URLSearchParams(authorizationParams(m, `mcp_${"0".repeat(32)}`, pkce().challenge))}`,
      );
      expect(unknown.status).to.equal(401);
      expect(unknown.json.error.code).to.equal("OAUTH_INVALID_CLIENT");
      const otherRedirect = await m.api.request(
        "GET",
        `/api/v1/oauth/authorization?${new URLSearchParams(
          authorizationParams(m, ok.json.client_id, pkce().challenge, { redirect_uri: "http://127.0.0.1:9/other" }),
        )}`,
      );
      expect(otherRedirect.json.error.code).to.equal("OAUTH_INVALID_REDIRECT_URI");
      expect(otherRedirect.json.error.details?.redirectTo).to.equal(undefined);
    }));

  it("takes a Client ID Metadata Document as client_id (loopback allowed only with WEBHOOK_ALLOW_PRIVATE)", async () => {
    const documents = await documentServer((url) =>
      url.endsWith("/client.json")
        ? { client_id: url, client_name: "Document host", redirect_uris: [REDIRECT] }
        : { client_id: "https://someone.else/client.json", client_name: "Impostor", redirect_uris: [REDIRECT] },
    );
    const clientId = `${documents.url}/client.json`;
    try {
      await withMarket(
        async (m) => {
          const { challenge } = pkce();
          const query = new URLSearchParams(authorizationParams(m, clientId, challenge));
          const described = await m.api.request("GET", `/api/v1/oauth/authorization?${query}`);
          expect(described.status, described.text).to.equal(200);
          expect(described.json.data.client).to.deep.equal({
            clientId,
            name: "Document host",
            uri: null,
            registration: "metadata-document",
          });
          expect(described.json.data.scopes.map((s: { name: string }) => s.name)).to.deep.equal([
            "market:read",
            "market:post",
            "market:work",
          ]);
          // The document names another client_id: refused.
          const impostor = new URLSearchParams(authorizationParams(m, `${documents.url}/impostor.json`, challenge));
          const refused = await m.api.request("GET", `/api/v1/oauth/authorization?${impostor}`);
          expect(refused.json.error.code).to.equal("OAUTH_INVALID_CLIENT");
          expect(refused.json.error.message).to.include("names client_id https://someone.else/client.json");
        },
        { WEBHOOK_ALLOW_PRIVATE: "true" },
      );
      const before = documents.served();
      await withMarket(async (m) => {
        const query = new URLSearchParams(authorizationParams(m, clientId, pkce().challenge));
        const refused = await m.api.request("GET", `/api/v1/oauth/authorization?${query}`);
        expect(refused.json.error.code).to.equal("OAUTH_INVALID_CLIENT");
        expect(refused.json.error.message).to.include("not a public address");
      });
      expect(documents.served(), "a loopback document is never fetched without WEBHOOK_ALLOW_PRIVATE").to.equal(before);
    } finally {
      await documents.close();
    }
  });

  it("authorizes a Client ID Metadata Document client end to end: approval, code, tokens, MCP calls, refresh", async () => {
    const documents = await documentServer((url) => ({
      client_id: url,
      client_name: "Document host",
      client_uri: "https://host.example",
      redirect_uris: [REDIRECT],
    }));
    const clientId = `${documents.url}/host/client.json`;
    try {
      await withMarket(
        async (m) => {
          // A redirect the document does not list is shown, never redirected to.
          const elsewhere = await m.api.request(
            "GET",
            `/api/v1/oauth/authorization?${new URLSearchParams(
              authorizationParams(m, clientId, pkce().challenge, { redirect_uri: "http://127.0.0.1:9/other" }),
            )}`,
          );
          expect(elsewhere.json.error.code).to.equal("OAUTH_INVALID_REDIRECT_URI");
          expect(elsewhere.json.error.details?.redirectTo).to.equal(undefined);

          const { verifier, challenge } = pkce();
          const redirect = await approve(m, clientId, challenge, { scope: "market:read market:work" });
          expect(redirect.origin + redirect.pathname).to.equal(REDIRECT);
          expect(redirect.searchParams.get("state")).to.equal("st-1");
          expect(redirect.searchParams.get("iss")).to.equal(m.api.url);
          const code = redirect.searchParams.get("code")!;
          // The code is bound to the document's client_id: another client cannot spend it.
          const other = (await register(m)).json.client_id as string;
          const stolen = await form(`${m.api.url}/oauth/token`, {
            grant_type: "authorization_code",
            code,
            code_verifier: verifier,
            redirect_uri: REDIRECT,
            client_id: other,
          });
          expect(stolen.json.error).to.equal("invalid_grant");

          const { verifier: v2, challenge: c2 } = pkce();
          const code2 = (await approve(m, clientId, c2, { scope: "market:read market:work" })).searchParams.get(
            "code",
          )!;
          const tokens = await form(`${m.api.url}/oauth/token`, {
            grant_type: "authorization_code",
            code: code2,
            code_verifier: v2,
            redirect_uri: REDIRECT,
            client_id: clientId,
            resource: `${m.api.url}/mcp`,
          });
          expect(tokens.status, JSON.stringify(tokens.json)).to.equal(200);
          expect(tokens.json.scope).to.equal("market:read market:work");
          expect(tokens.json.access_token).to.match(/^mat_[0-9a-f]{64}$/);

          // The token works on /mcp through the official client, within its scopes.
          const client = await mcpClient(m, tokens.json.access_token);
          const browsed = (await client.callTool({ name: "browse_tasks", arguments: {} })) as { isError?: boolean };
          expect(browsed.isError, JSON.stringify(browsed)).to.not.equal(true);
          const posting = (await client.callTool({ name: "upload_brief", arguments: {} })) as {
            isError?: boolean;
            structuredContent?: { error?: { code: string } };
          };
          expect(posting.structuredContent?.error?.code).to.equal("INSUFFICIENT_SCOPE");
          await client.close();

          // Refresh with the document's client_id: rotated, and the new access token works.
          const refreshed = await form(`${m.api.url}/oauth/token`, {
            grant_type: "refresh_token",
            refresh_token: tokens.json.refresh_token,
            client_id: clientId,
          });
          expect(refreshed.status, JSON.stringify(refreshed.json)).to.equal(200);
          expect(refreshed.json.refresh_token).to.not.equal(tokens.json.refresh_token);
          expect(await mcpStatus(m, refreshed.json.access_token)).to.equal(200);

          // The owner's connected apps list it by its document.
          const connectedApps = await m.api.request("GET", "/api/v1/oauth/clients", { key: m.posterKey });
          expect(connectedApps.status, connectedApps.text).to.equal(200);
          expect(JSON.stringify(connectedApps.json.data)).to.include(clientId).and.include("Document host");
          // The document was fetched once for all of this (kept 5 minutes).
          expect(documents.served()).to.equal(1);
        },
        { WEBHOOK_ALLOW_PRIVATE: "true" },
      );
    } finally {
      await documents.close();
    }
  });

  it("the MCP SDK's client signs in with an https Client ID Metadata Document URL (SEP-991), no registration", async function () {
    const certificate = loopbackCertificate();
    if (!certificate) {
      console.log("      skipped: openssl could not make a certificate for the https metadata document");
      this.skip();
    }
    let served = 0;
    const server = https.createServer(certificate!, (req, res) => {
      served++;
      const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}${req.url}`;
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ client_id: url, client_name: "SDK document host", redirect_uris: [REDIRECT] }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const clientMetadataUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}/mcp-host/client.json`;
    // The API runs in this process: its fetch of the document trusts the test's certificate through the global agent.
    const trusted = https.globalAgent.options.ca;
    https.globalAgent.options.ca = certificate!.cert;
    try {
      await withMarket(
        async (m) => {
          const registrations = await m.api.deps.db("oauth_clients").where({ kind: "dcr" }).count({ n: "*" });
          const provider = new DocumentClientProvider(clientMetadataUrl);
          const first = new StreamableHTTPClientTransport(new URL(`${m.api.url}/mcp`), { authProvider: provider });
          const refused = await new Client({ name: "sdk-host", version: "1.0.0" }).connect(first).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(refused).to.be.instanceOf(UnauthorizedError);
          // The SDK read client_id_metadata_document_supported and named itself by its URL: no registration.
          const asked = provider.authorizationUrls[0];
          expect(asked.searchParams.get("client_id")).to.equal(clientMetadataUrl);
          expect(await m.api.deps.db("oauth_clients").where({ kind: "dcr" }).count({ n: "*" })).to.deep.equal(
            registrations,
          );

          // The owner approves what the host asked for (the web app's page does this call).
          const params = Object.fromEntries(asked.searchParams);
          const approval = await m.api.request("POST", "/api/v1/oauth/authorization", {
            key: m.posterKey,
            body: { ...params, approve: true },
          });
          expect(approval.status, approval.text).to.equal(200);
          const redirect = new URL(approval.json.data.redirectTo as string);
          await first.finishAuth(redirect.searchParams.get("code")!);
          expect(provider.saved?.access_token).to.match(/^mat_[0-9a-f]{64}$/);

          const client = new Client({ name: "sdk-host", version: "1.0.0" });
          await client.connect(
            new StreamableHTTPClientTransport(new URL(`${m.api.url}/mcp`), { authProvider: provider }),
          );
          expect((await client.listTools()).tools.map((t) => t.name)).to.include("browse_tasks");
          const browsed = (await client.callTool({ name: "browse_tasks", arguments: {} })) as { isError?: boolean };
          expect(browsed.isError, JSON.stringify(browsed)).to.not.equal(true);
          await client.close();
          expect(served, "the document was fetched over https").to.be.greaterThan(0);
        },
        { WEBHOOK_ALLOW_PRIVATE: "true" },
      );
    } finally {
      https.globalAgent.options.ca = trusted;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("requires PKCE S256 and this resource; a code is single use and bound to its verifier, client and redirect", () =>
    withMarket(async (m) => {
      const client = (await register(m)).json.client_id as string;
      const describe = (extra: Record<string, string>) =>
        m.api.request(
          "GET",
          `/api/v1/oauth/authorization?${new URLSearchParams(authorizationParams(m, client, pkce().challenge, extra))}`,
        );
      const plain = await describe({ code_challenge_method: "plain" });
      expect(plain.json.error.code).to.equal("OAUTH_INVALID_REQUEST");
      const redirectTo = new URL(plain.json.error.details.redirectTo);
      expect(redirectTo.origin + redirectTo.pathname).to.equal(REDIRECT);
      expect(redirectTo.searchParams.get("error")).to.equal("invalid_request");
      expect(redirectTo.searchParams.get("state")).to.equal("st-1");
      expect(redirectTo.searchParams.get("iss")).to.equal(m.api.url);
      const wrongResource = await describe({ resource: "https://other.example/mcp" });
      expect(wrongResource.json.error.code).to.equal("OAUTH_INVALID_TARGET");
      expect(new URL(wrongResource.json.error.details.redirectTo).searchParams.get("error")).to.equal("invalid_target");
      expect((await describe({ scope: "market:read admin" })).json.error.code).to.equal("OAUTH_INVALID_SCOPE");
      expect((await describe({ response_type: "token" })).json.error.code).to.equal("OAUTH_UNSUPPORTED_RESPONSE_TYPE");

      // Denied: access_denied back to the client, no code.
      const denied = await m.api.request("POST", "/api/v1/oauth/authorization", {
        key: m.posterKey,
        body: { ...authorizationParams(m, client, pkce().challenge), approve: false },
      });
      const deniedUrl = new URL(denied.json.data.redirectTo);
      expect(deniedUrl.searchParams.get("error")).to.equal("access_denied");
      expect(deniedUrl.searchParams.has("code")).to.equal(false);
      // Approving needs the owner signed in.
      const anonymous = await m.api.request("POST", "/api/v1/oauth/authorization", {
        body: { ...authorizationParams(m, client, pkce().challenge), approve: true },
      });
      expect(anonymous.status).to.equal(401);

      const { verifier, challenge } = pkce();
      const code = (await approve(m, client, challenge)).searchParams.get("code")!;
      const exchange = (fields: Record<string, string>) =>
        form(`${m.api.url}/oauth/token`, {
          grant_type: "authorization_code",
          code,
          code_verifier: verifier,
          redirect_uri: REDIRECT,
          client_id: client,
          ...fields,
        });
      const wrongTarget = await exchange({ resource: "https://other.example/mcp" });
      expect(wrongTarget.status).to.equal(400);
      expect(wrongTarget.json.error).to.equal("invalid_target");
      const wrongVerifier = await exchange({ code_verifier: pkce().verifier });
      expect(wrongVerifier.json.error).to.equal("invalid_grant");
      expect(wrongVerifier.json.error_description).to.include("PKCE");
      // The failed attempt used the code up: a stolen code with a guessed verifier leaves nothing to retry.
      const again = await exchange({});
      expect(again.json.error).to.equal("invalid_grant");

      const { verifier: v2, challenge: c2 } = pkce();
      const code2 = (await approve(m, client, c2)).searchParams.get("code")!;
      const other = (await register(m)).json.client_id as string;
      const stolen = await form(`${m.api.url}/oauth/token`, {
        grant_type: "authorization_code",
        code: code2,
        code_verifier: v2,
        redirect_uri: REDIRECT,
        client_id: other,
      });
      expect(stolen.json.error).to.equal("invalid_grant");

      const { verifier: v3, challenge: c3 } = pkce();
      const code3 = (await approve(m, client, c3)).searchParams.get("code")!;
      const good = await form(`${m.api.url}/oauth/token`, {
        grant_type: "authorization_code",
        code: code3,
        code_verifier: v3,
        redirect_uri: REDIRECT,
        client_id: client,
        resource: `${m.api.url}/mcp`,
      });
      expect(good.status).to.equal(200);
      expect(good.headers.get("cache-control")).to.equal("no-store");
      expect(good.json).to.include({
        token_type: "Bearer",
        expires_in: 900,
        scope: "market:read market:post market:work",
      });
      expect(good.json.access_token).to.match(/^mat_[0-9a-f]{64}$/);
      expect(good.json.refresh_token).to.match(/^mrt_[0-9a-f]{64}$/);
      const replay = await form(`${m.api.url}/oauth/token`, {
        grant_type: "authorization_code",
        code: code3,
        code_verifier: v3,
        redirect_uri: REDIRECT,
        client_id: client,
      });
      expect(replay.json.error).to.equal("invalid_grant");
      // The code came back: the tokens its first exchange issued are revoked.
      expect(await mcpStatus(m, good.json.access_token)).to.equal(401);
      expect(
        (await form(`${m.api.url}/oauth/token`, { grant_type: "password", client_id: client })).json.error,
      ).to.equal("unsupported_grant_type");
      expect((await form(`${m.api.url}/oauth/token`, { grant_type: "refresh_token" })).status).to.equal(401);
    }));

  it("rotates refresh tokens; a rotated one presented again revokes the whole family", () =>
    withMarket(async (m) => {
      const { client, tokens } = await connected(m);
      expect(await mcpStatus(m, tokens.access_token)).to.equal(200);
      const refresh = (token: string, extra: Record<string, string> = {}) =>
        form(`${m.api.url}/oauth/token`, {
          grant_type: "refresh_token",
          refresh_token: token,
          client_id: client,
          ...extra,
        });
      const narrowed = await refresh(tokens.refresh_token, { scope: "market:read" });
      expect(narrowed.status, JSON.stringify(narrowed.json)).to.equal(200);
      expect(narrowed.json.scope).to.equal("market:read");
      expect(narrowed.json.refresh_token).to.not.equal(tokens.refresh_token);
      const second = await refresh(narrowed.json.refresh_token);
      expect(second.status).to.equal(200);
      expect(await mcpStatus(m, second.json.access_token)).to.equal(200);

      // The first refresh token again: someone holds a copy. Every token of the family ends.
      const reuse = await refresh(tokens.refresh_token);
      expect(reuse.status).to.equal(400);
      expect(reuse.json.error).to.equal("invalid_grant");
      expect(reuse.json.error_description).to.include("already used");
      expect((await refresh(second.json.refresh_token)).json.error).to.equal("invalid_grant");
      expect(await mcpStatus(m, second.json.access_token)).to.equal(401);
      expect(await mcpStatus(m, tokens.access_token)).to.equal(401);
    }));

  it("access tokens last 15 minutes and only /mcp takes them (audience); RFC 7009 revocation ends them", () =>
    withMarket(async (m) => {
      const first = await connected(m);
      expect(await mcpStatus(m, first.tokens.access_token)).to.equal(200);
      // Bound to the MCP resource: REST does not take it.
      const rest = await fetch(`${m.api.url}/api/v1/api-keys/whoami`, {
        headers: { authorization: `Bearer ${first.tokens.access_token}` },
      });
      expect(rest.status).to.equal(401);
      m.api.clock.advanceWall(901);
      expect(await mcpStatus(m, first.tokens.access_token)).to.equal(401);
      // Still refreshable after the access token's end.
      const renewed = await form(`${m.api.url}/oauth/token`, {
        grant_type: "refresh_token",
        refresh_token: first.tokens.refresh_token,
        client_id: first.client,
      });
      expect(renewed.status).to.equal(200);
      expect(await mcpStatus(m, renewed.json.access_token)).to.equal(200);

      // Revoking an access token ends it; revoking the refresh token ends the family.
      expect(
        (await form(`${m.api.url}/oauth/revoke`, { token: renewed.json.access_token, client_id: first.client })).status,
      ).to.equal(200);
      expect(await mcpStatus(m, renewed.json.access_token)).to.equal(401);
      const other = await form(`${m.api.url}/oauth/token`, {
        grant_type: "refresh_token",
        refresh_token: renewed.json.refresh_token,
        client_id: first.client,
      });
      expect(other.status).to.equal(200);
      expect((await form(`${m.api.url}/oauth/revoke`, { token: other.json.refresh_token })).status).to.equal(200);
      expect(await mcpStatus(m, other.json.access_token)).to.equal(401);
      // Unknown tokens answer the same (RFC 7009).
      const unknown = await form(`${m.api.url}/oauth/revoke`, { token: "nothing" });
      expect(unknown.status).to.equal(200);
      expect((await form(`${m.api.url}/oauth/revoke`, {})).json.error).to.equal("invalid_request");
    }));

  it("scopes gate the tools: a read-only token reads, and posting tools refuse it with INSUFFICIENT_SCOPE", () =>
    withMarket(async (m) => {
      const { tokens } = await connected(m, "market:read");
      const client = await mcpClient(m, tokens.access_token);
      const browse = (await client.callTool({ name: "browse_tasks", arguments: {} })) as {
        isError?: boolean;
        structuredContent?: Record<string, unknown>;
      };
      expect(browse.isError, JSON.stringify(browse)).to.not.equal(true);
      for (const [name, args] of [
        ["upload_brief", { data: "x" }],
        ["build_task", {}],
        ["bid_on_task", { hash: `0x${"1".repeat(64)}` }],
      ] as const) {
        const answer = (await client.callTool({ name, arguments: args })) as {
          isError?: boolean;
          structuredContent?: { error: { code: string; message: string; details: { requiredScope: string } } };
        };
        expect(answer.isError, name).to.equal(true);
        expect(answer.structuredContent!.error.code, name).to.equal("INSUFFICIENT_SCOPE");
        expect(answer.structuredContent!.error.details.requiredScope, name).to.equal(
          name === "bid_on_task" ? "market:work" : "market:post",
        );
      }
      await client.close();
    }));

  it("lists the wallet's connected clients and disconnects one: its next MCP call is 401", () =>
    withMarket(async (m) => {
      const a = await connected(m);
      const b = await connected(m, "market:read");
      const listed = await m.api.request("GET", "/api/v1/oauth/clients", { key: m.posterKey });
      expect(listed.status, listed.text).to.equal(200);
      const ids = listed.json.data.clients.map((c: { clientId: string }) => c.clientId);
      expect(ids).to.have.members([a.client, b.client]);
      const rowB = listed.json.data.clients.find((c: { clientId: string }) => c.clientId === b.client);
      expect(rowB).to.include({ name: "Test host" });
      expect(rowB.scopes).to.deep.equal(["market:read"]);
      // Another wallet sees none of them and cannot disconnect them.
      const stranger = await m.newAgent();
      const theirs = await m.api.request("GET", "/api/v1/oauth/clients", { key: stranger.key });
      expect(theirs.json.data.clients).to.deep.equal([]);
      const notTheirs = await m.api.request("POST", "/api/v1/oauth/clients/revoke", {
        key: stranger.key,
        body: { clientId: a.client },
      });
      expect(notTheirs.status).to.equal(404);

      const revoked = await m.api.request("POST", "/api/v1/oauth/clients/revoke", {
        key: m.posterKey,
        body: { clientId: a.client },
      });
      expect(revoked.status, revoked.text).to.equal(200);
      expect(await mcpStatus(m, a.tokens.access_token)).to.equal(401);
      expect(await mcpStatus(m, b.tokens.access_token)).to.equal(200);
      const refresh = await form(`${m.api.url}/oauth/token`, {
        grant_type: "refresh_token",
        refresh_token: a.tokens.refresh_token,
        client_id: a.client,
      });
      expect(refresh.json.error).to.equal("invalid_grant");
      const after = await m.api.request("GET", "/api/v1/oauth/clients", { key: m.posterKey });
      expect(after.json.data.clients.map((c: { clientId: string }) => c.clientId)).to.deep.equal([b.client]);
    }));
});
