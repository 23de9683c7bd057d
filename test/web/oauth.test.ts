/**
 * MCP authorization as a mainstream MCP host meets it on the devnet (docs/oauth.md): the MCP SDK's own OAuth client
 * (an `OAuthClientProvider` given to `StreamableHTTPClientTransport`, with a loopback redirect server) discovers the
 * metadata from the 401, registers itself (RFC 7591), sends the owner to the web app's approval page, where a real
 * Chromium signs in with the devnet wallet and approves, and exchanges the code. With the tokens it lists the tools
 * and takes a task through its life (poster and worker each connected by OAuth, their wallets signing what the tools
 * return). The owner then disconnects the poster's client in Settings: its next call is refused.
 */
import crypto from "node:crypto";
import http from "node:http";
import { expect } from "chai";
import { Contract, JsonRpcProvider, Wallet } from "ethers";
import type { Page } from "playwright-core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientMetadata } from "@modelcontextprotocol/sdk/shared/auth.js";
import { secp256k1 } from "@noble/curves/secp256k1";
import { agentPublicKey } from "../../server/domain/briefs";
import { seriousA11yViolations, useWebDevnet, type WebDevnet } from "./harness";
import { MemoryOAuthHost } from "../helpers/oauthHost";

/** The loopback redirect of the MCP host (its own port, in this suite's range). */
const REDIRECT_PORT = 18302;
const REDIRECT_URL = `http://127.0.0.1:${REDIRECT_PORT}/callback`;

/** What a host keeps between runs, in memory: its registration, tokens and the PKCE verifier; where it was sent. */
class MemoryProvider extends MemoryOAuthHost {
  constructor(private readonly name: string) {
    super();
  }

  get redirectUrl() {
    return REDIRECT_URL;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [REDIRECT_URL],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() {
    return crypto.randomBytes(8).toString("hex");
  }
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    if (scope === "all" || scope === "tokens") this.saved = undefined;
    if (scope === "all" || scope === "client") this.client = undefined;
  }
}

/** The host's loopback redirect server: resolves with the query of the first request to /callback. */
async function redirectServer(): Promise<{ next(): Promise<URLSearchParams>; close(): Promise<void> }> {
  let waiting: ((query: URLSearchParams) => void) | undefined;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", REDIRECT_URL);
    res.writeHead(200, { "content-type": "text/plain" }).end("You can close this window.");
    if (url.pathname === "/callback") waiting?.(url.searchParams);
  });
  await new Promise<void>((resolve) => server.listen(REDIRECT_PORT, "127.0.0.1", resolve));
  return {
    next: () => new Promise((resolve) => (waiting = resolve)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Signs in on the page already open (the approval page shows the sign-in panel) with the devnet wallet of `role`. */
async function signInHere(page: Page, role: string): Promise<void> {
  await page.getByRole("combobox", { name: "Demo account" }).click();
  await page.getByRole("option", { name: new RegExp(`^${role} \\(`) }).click();
  await page.getByRole("button", { name: "Sign in with the devnet wallet" }).click();
}

/**
 * The whole authorization of a host for the devnet wallet `role`: the SDK meets the 401, discovers, registers and
 * asks to open the authorization URL; Chromium signs in and approves; the redirect's code is exchanged. Answers the
 * connected client and the page (still signed in, for Settings).
 */
async function connectWithOAuth(web: WebDevnet, role: string, name: string) {
  const provider = new MemoryProvider(name);
  const mcpUrl = new URL(`${web.url}/mcp`);
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  const refused = await new Client({ name, version: "1.0.0" }).connect(first).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(refused, "the first connection must ask for authorization").to.be.instanceOf(UnauthorizedError);
  expect(provider.client?.client_id, "registered by RFC 7591").to.match(/^mcp_[0-9a-f]{32}$/);
  const authorizationUrl = provider.authorizationUrls.at(-1)!;
  expect(authorizationUrl.origin + authorizationUrl.pathname).to.equal(`${web.url}/oauth/authorize`);
  expect(authorizationUrl.searchParams.get("code_challenge_method")).to.equal("S256");
  expect(authorizationUrl.searchParams.get("resource")).to.equal(`${web.url}/mcp`);

  const redirects = await redirectServer();
  try {
    const page = await web.newPage();
    const answered = redirects.next();
    await page.goto(authorizationUrl.toString());
    expect(await page.getByTestId("oauth-client-name").innerText()).to.equal(name);
    expect(await page.getByTestId("oauth-redirect").innerText()).to.equal(REDIRECT_URL);
    await signInHere(page, role);
    for (const scope of ["market:read", "market:post", "market:work"]) {
      expect(await page.getByRole("checkbox", { name: scope }).isChecked(), scope).to.equal(true);
    }
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
    await page.getByRole("button", { name: "Approve" }).click();
    const query = await answered;
    expect(query.get("error"), query.get("error_description") ?? "").to.equal(null);
    expect(query.get("iss")).to.equal(web.url);
    await first.finishAuth(query.get("code")!);
    expect(provider.saved?.access_token).to.match(/^mat_/);
    expect(provider.saved?.expires_in).to.equal(900);

    const client = new Client({ name, version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    return { client, provider, page };
  } finally {
    await redirects.close();
  }
}

interface ToolAnswer {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const answer = (await client.callTool({ name, arguments: args })) as ToolAnswer;
  expect(answer.isError, `${name}: ${JSON.stringify(answer.structuredContent)}`).to.not.equal(true);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return answer.structuredContent as Record<string, any>;
}

describe("web: MCP authorization with the MCP SDK's OAuth client and a browser", function () {
  const web = useWebDevnet(this, 300_000);

  it("registers, is approved in the page, lists tools and takes a task to paid with its tokens; a disconnected client is refused", async () => {
    const poster = await connectWithOAuth(web(), "poster", "Poster's MCP host");
    const worker = await connectWithOAuth(web(), "agent-2", "Worker's MCP host");
    // A connected client keeps its GET stream open (and reopens it): closed whatever happens, or the devnet's server
    // never finishes closing.
    try {
      await takeTaskToPaidAndDisconnect(poster, worker);
    } finally {
      await poster.client.close();
      await worker.client.close();
    }
  });

  async function takeTaskToPaidAndDisconnect(
    poster: Awaited<ReturnType<typeof connectWithOAuth>>,
    worker: Awaited<ReturnType<typeof connectWithOAuth>>,
  ): Promise<void> {
    const { tools } = await poster.client.listTools();
    expect(tools.map((t) => t.name)).to.include.members(["build_task", "index_task", "accept_task", "submit_result"]);

    const rpc = new JsonRpcProvider(web().devnet.rpcUrl, undefined, { cacheTimeout: -1 });
    const posterWallet = new Wallet(web().account("poster").privateKey, rpc);
    const workerWallet = new Wallet(web().account("agent-2").privateKey, rpc);
    const send = async (wallet: Wallet, tx: { to: string; data: string }) =>
      (await wallet.sendTransaction({ to: tx.to, data: tx.data })).wait();
    const token = web().devnet.deployment.book.token.address;
    const amount = 3_000_000n;

    // Poster, through its OAuth tokens: upload, build (approve exactly the reward), fund, list.
    const brief = Buffer.from(`Recite the escrow's rules as a sonnet in Klingon. ${crypto.randomUUID()}`);
    const { rootHash: taskHash } = await ok(poster.client, "upload_brief", { data: brief.toString("base64") });
    const built = await ok(poster.client, "build_task", {
      taskHash,
      token,
      amount: amount.toString(),
      locationZone: "global",
      duration: String(24 * 3600),
      verificationMode: "manual",
    });
    if (built.approveTx) await send(posterWallet, built.approveTx);
    const funding = await send(posterWallet, built.unsignedTx);
    await ok(poster.client, "index_task", {
      txHash: funding!.hash,
      taskHash,
      privacy: "public",
      publicBrief: "a Klingon sonnet",
      requiredCapabilities: ["klingon-verse"],
    });

    // Worker, through its own OAuth tokens: register, bid, accept, read, deliver.
    await ok(worker.client, "register_executor", {
      publicKey: agentPublicKey(secp256k1.utils.randomPrivateKey()),
      capabilities: ["klingon-verse"],
    });
    await ok(worker.client, "bid_on_task", { hash: taskHash, message: "qapla'" });
    await ok(worker.client, "accept_task", { hash: taskHash });
    let fetched: Record<string, string> | undefined;
    for (let i = 0; i < 100 && !fetched; i++) {
      const answer = (await worker.client.callTool({
        name: "fetch_brief",
        arguments: { hash: taskHash },
      })) as ToolAnswer;
      if (!answer.isError) fetched = answer.structuredContent as Record<string, string>;
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(Buffer.from(fetched!.blobBase64, "base64").equals(brief)).to.equal(true);
    // The assignment is confirmed on-chain by the marketplace verifier shortly after the accept: until then
    // submit_result answers ASSIGNMENT_PENDING, "retry shortly".
    let submitted: ToolAnswer | undefined;
    for (let i = 0; i < 150; i++) {
      submitted = (await worker.client.callTool({
        name: "submit_result",
        arguments: { hash: taskHash, result: { text: "sonnet" } },
      })) as ToolAnswer;
      const code = (submitted.structuredContent?.error as { code?: string } | undefined)?.code;
      if (code !== "ASSIGNMENT_PENDING") break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(submitted!.isError, JSON.stringify(submitted!.structuredContent)).to.not.equal(true);
    await send(workerWallet, submitted!.structuredContent!.unsignedTx as { to: string; data: string });

    // Poster accepts the submission: the marketplace verifier pays the worker.
    const usdc = new Contract(token, ["function balanceOf(address) view returns (uint256)"], rpc);
    const before: bigint = await usdc.balanceOf(workerWallet.address);
    for (let i = 0; i < 100; i++) {
      const answer = (await poster.client.callTool({
        name: "finalize_task",
        arguments: { hash: taskHash },
      })) as ToolAnswer;
      if (!answer.isError) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    let status = "";
    for (let i = 0; i < 150 && status !== "completed"; i++) {
      status = (await ok(poster.client, "get_task", { id: taskHash })).a2aState.status;
      if (status !== "completed") await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status).to.equal("completed");
    expect(((await usdc.balanceOf(workerWallet.address)) as bigint) > before, "the worker was paid").to.equal(true);

    // The owner disconnects the poster's host in Settings: its next call is refused (and the SDK is sent back to
    // ask the owner again), while the worker's host keeps working.
    const page = poster.page;
    await page.goto(`${web().url}/settings`);
    const clientId = poster.provider.client!.client_id;
    await page.getByTestId(`oauth-client-${clientId}`).waitFor();
    await page.getByRole("button", { name: "Disconnect Poster's MCP host" }).click();
    await page.getByRole("button", { name: "Yes, disconnect Poster's MCP host" }).click();
    await page.getByTestId(`oauth-client-${clientId}`).waitFor({ state: "detached" });
    const raw = await fetch(`${web().url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${poster.provider.saved!.access_token}`,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(raw.status).to.equal(401);
    const asked = poster.provider.authorizationUrls.length;
    const refused = await poster.client.callTool({ name: "browse_tasks", arguments: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused, "the disconnected host is refused").to.be.instanceOf(UnauthorizedError);
    expect(poster.provider.authorizationUrls.length, "and sent back to the owner").to.equal(asked + 1);
    await ok(worker.client, "browse_tasks", {});
  }
});
