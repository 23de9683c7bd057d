/**
 * The web app as a newcomer meets it on the devnet: the page at `endpoints.app` (cached and locked down as it should
 * be, the API beside it untouched), sign-in with the devnet wallet, an API key created (shown once), used, revoked in
 * the page and then refused by the API.
 */
import crypto from "node:crypto";
import http from "node:http";
import { expect } from "chai";
import { Wallet } from "ethers";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture } from "../helpers/fixtures";
import { freePort, startTestApi } from "../helpers/api";
import { PHONE, go, postTask, injectWallet, seriousA11yViolations, signInAs, useWebDevnet } from "./harness";

describe("web: the app, sign-in and API keys", function () {
  const web = useWebDevnet(this, 180_000);

  it("serves the app at endpoints.app with a CSP, no-cache HTML and immutable hashed assets; the API is unchanged", async () => {
    const card = await (await fetch(`${web().url}/.well-known/agent.json`)).json();
    expect(card.endpoints.app).to.equal(`${web().url}/`);
    const index = await fetch(card.endpoints.app, { headers: { accept: "text/html" } });
    expect(index.status).to.equal(200);
    expect(index.headers.get("content-type")).to.match(/^text\/html/);
    expect(index.headers.get("cache-control")).to.equal("no-cache");
    const csp = index.headers.get("content-security-policy")!;
    expect(csp).to.include("script-src 'self'").and.include("frame-ancestors 'none'").and.include("object-src 'none'");
    // The devnet wallet signs on both chains: the page may reach both RPCs.
    const connect = csp.split("; ").find((d) => d.startsWith("connect-src"))!;
    for (const chain of web().devnet.chains) expect(connect).to.include(new URL(chain.rpcUrl).origin);
    const html = await index.text();
    // Revalidation: the same index.html answers 304 to its ETag.
    // (cache "no-cache": fetch's default mode would add Cache-Control: no-cache, which rightly defeats a 304)
    const again = await fetch(card.endpoints.app, {
      headers: { accept: "text/html", "if-none-match": index.headers.get("etag")! },
      cache: "no-cache",
    });
    expect(again.status, `${index.headers.get("etag")} then ${again.headers.get("etag")}`).to.equal(304);
    const asset = html.match(/src="(\/assets\/[^"]+\.js)"/)![1];
    const script = await fetch(`${web().url}${asset}`);
    expect(script.status).to.equal(200);
    expect(script.headers.get("cache-control")).to.equal("public, max-age=31536000, immutable");
    expect(script.headers.get("content-type")).to.match(/^text\/javascript/);
    // An app route reloads into the app; a missing asset and unknown API paths stay JSON 404s.
    const deep = await fetch(`${web().url}/tasks/1`, { headers: { accept: "text/html" } });
    expect(deep.status).to.equal(200);
    expect(await deep.text()).to.equal(html);
    expect((await fetch(`${web().url}/assets/missing-0000.js`)).status).to.equal(404);
    const unknown = await fetch(`${web().url}/api/v1/nope`, { headers: { accept: "text/html" } });
    expect(unknown.status).to.equal(404);
    expect((await unknown.json()).error.code).to.equal("NOT_FOUND");
    expect((await fetch(`${web().url}/assets/..%2f..%2fpackage.json`)).status).to.equal(404);
    expect((await fetch(`${web().url}/..%2fpackage.json`, { headers: { accept: "text/html" } })).status).to.equal(404);
    const settlement = await fetch(`${web().url}/api/v1/health/settlement`);
    expect((await settlement.json()).success).to.equal(true);
  });

  it("signs in with the devnet wallet, creates a key shown once, revokes it, and the API then refuses it", async () => {
    const page = await web().newPage();
    await signInAs(page, web(), "poster");
    const poster = web().account("poster");

    await page.getByLabel("Label (optional)").fill("build server");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = (await page.getByTestId("new-key").innerText()).trim();
    expect(key).to.match(/^sk_[0-9a-f]{64}$/);
    // The copy button puts the key on the clipboard.
    await page.getByRole("button", { name: "Copy" }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(key);

    const whoami = async () =>
      fetch(`${web().url}/api/v1/api-keys/whoami`, { headers: { "x-api-key": key } }).then(async (r) => ({
        status: r.status,
        body: await r.json(),
      }));
    const before = await whoami();
    expect(before.status).to.equal(200);
    expect(before.body.data.address).to.equal(poster.address.toLowerCase());

    // Listed by prefix and date, never the key itself.
    const prefix = key.slice(0, 11);
    const row = page.getByTestId(`key-${prefix}`);
    await row.waitFor();
    expect(await row.innerText()).to.include("build server");
    expect(await row.getByTestId("key-expires").innerText(), "a key made in Settings never expires").to.equal("never");
    expect(await row.innerText()).to.not.include(key.slice(11, 40), "the list shows the prefix only");
    // Once dismissed, the key is gone from the page for good.
    await page.getByRole("button", { name: "Dismiss" }).click();
    await page.getByTestId("new-key").waitFor({ state: "detached" });
    expect(await page.content()).to.not.include(key.slice(11, 40));
    expect(await seriousA11yViolations(page)).to.deep.equal([]);

    await page.getByRole("button", { name: `Revoke key ${prefix}` }).click();
    await page.getByRole("button", { name: `Yes, revoke key ${prefix}` }).click();
    await row.getByText(/^revoked/).waitFor();
    const after = await whoami();
    expect(after.status).to.equal(401);
    expect(after.body.error.code).to.equal("UNAUTHORIZED");

    // Signing out revokes the key the app made for this browser session.
    const sessionRow = page.locator("tr", { hasText: "this session" });
    const sessionPrefix = (await sessionRow.locator("code").innerText()).replace("…", "");
    // The session's own key is a web session key: it ends by itself with the session, and the list says when.
    expect(await sessionRow.getByTestId("key-expires").innerText()).to.not.equal("never");
    const sessionToken = await page.evaluate(
      () => JSON.parse(sessionStorage.getItem("escrow-market.session") ?? "{}").sessionToken as string,
    );
    expect(sessionToken).to.match(/^ses_/);
    const listKeys = () =>
      fetch(`${web().url}/api/v1/api-keys`, { headers: { authorization: `Bearer ${sessionToken}` } });
    expect((await listKeys()).status, "the session token lists keys while signed in").to.equal(200);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in with the devnet wallet" }).waitFor();
    const keys = await fetch(`${web().url}/api/v1/api-keys`, { headers: { "x-api-key": poster.apiKey } }).then((r) =>
      r.json(),
    );
    const sessionKey = keys.data.keys.find((k: { prefix: string }) => k.prefix === sessionPrefix);
    expect(sessionKey.revokedAt, "the session key is revoked at sign-out").to.not.equal(null);
    expect(Date.parse(sessionKey.expiresAt) - Date.parse(sessionKey.createdAt), "SESSION_TTL_SECONDS").to.equal(
      3_600_000,
    );
    // And the session token itself ends (POST /api/v1/auth/signout): it lists keys no more.
    expect((await listKeys()).status, "the session token is refused after sign-out").to.equal(401);
  });

  it("registers a webhook (secret shown once), lists its delivery of a posted task as delivered, deletes it", async () => {
    // A receiver on loopback (the devnet allows private webhook addresses), keeping each request it gets.
    const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    const receiver = http.createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    const port = await freePort();
    await new Promise<void>((resolve) => receiver.listen(port, "127.0.0.1", resolve));
    try {
      const page = await web().newPage();
      await signInAs(page, web(), "poster-2");
      const hookUrl = `http://127.0.0.1:${port}/market-hook`;
      // Inline validation before anything is sent.
      await page.getByLabel(/^Endpoint URL/).fill("ftp://example.com");
      await page.getByText("An http(s) URL").waitFor();
      await page.getByLabel(/^Endpoint URL/).fill(hookUrl);
      await page.getByRole("combobox", { name: "Event types" }).click();
      await page.getByRole("option", { name: /^task\.listed/ }).click();
      await page.keyboard.press("Escape");
      await page.getByRole("button", { name: "Register webhook" }).click();
      const secret = (await page.getByTestId("new-webhook-secret").innerText()).trim();
      expect(secret).to.match(/^whsec_[0-9a-f]{64}$/);
      await page.getByRole("button", { name: "Copy secret" }).click();
      expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(secret);
      const card = page.locator("[data-testid^=webhook-]", { hasText: hookUrl });
      await card.waitFor();
      expect(await card.innerText()).to.include("task.listed");
      await card.getByText("No delivery yet.").waitFor();
      await page.getByRole("button", { name: "Dismiss" }).click();
      await page.getByTestId("new-webhook-secret").waitFor({ state: "detached" });
      expect(await page.content()).to.not.include(secret.slice(6));

      const hash = await postTask(page, {
        brief: "Count the vowels of the escrow terms.",
        reward: "3",
        capabilities: ["vowel-counting"],
        keywords: ["vowels"],
        fields: [],
      });
      await go(page, "Settings and API keys");
      const delivered = page.locator("[data-testid^=webhook-]", { hasText: hookUrl }).locator("tr", {
        hasText: "task.listed",
      });
      await delivered.getByText("delivered", { exact: true }).waitFor({ timeout: 30_000 });
      expect(await delivered.innerText()).to.include("204");
      // The receiver got the listing, signed with the secret the page showed.
      const listed = received.find((r) => r.headers["x-market-event"] === "task.listed");
      expect(listed, "a task.listed delivery").to.not.equal(undefined);
      expect(JSON.parse(listed!.body).taskHash).to.equal(hash);
      const { t, v1 } = Object.fromEntries(
        String(listed!.headers["x-market-signature"])
          .split(",")
          .map((kv) => kv.split("=", 2)),
      );
      expect(v1).to.equal(crypto.createHmac("sha256", secret).update(`${t}.${listed!.body}`).digest("hex"));
      expect(await seriousA11yViolations(page)).to.deep.equal([]);

      await page.getByRole("button", { name: `Delete webhook ${hookUrl}` }).click();
      await page.getByText("No webhook registered.").waitFor();
      const left = await fetch(`${web().url}/api/v1/webhooks`, {
        headers: { "x-api-key": web().account("poster-2").apiKey },
      }).then((r) => r.json());
      expect(left.data.webhooks).to.deep.equal([]);
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });

  it("finds a browser wallet announced with EIP-6963 and signs in with it (EIP-4361 through personal_sign)", async () => {
    // A stand-in extension announced with EIP-6963; a fresh random account (never seen by the server).
    const page = await web().newPage();
    const wallet = await injectWallet(page, web(), Wallet.createRandom().privateKey);
    const calls = wallet.calls;
    await page.goto(`${web().url}/settings`);
    await page.getByRole("button", { name: "Test Wallet" }).click();
    await page.getByTestId("session-address").waitFor();
    expect(await page.getByTestId("session-address").innerText()).to.equal(wallet.address.toLowerCase());
    expect(calls).to.include.members(["eth_requestAccounts", "personal_sign"]);
    expect(await page.getByText("Signed in with Test Wallet").count()).to.equal(1);
  });

  it("signs out by itself just before the hour-long session ends, revoking the session key", async () => {
    const page = await web().newPage();
    await page.clock.install();
    await signInAs(page, web(), "poster-2");
    const sessionRow = page.locator("tr", { hasText: "this session" });
    const prefix = (await sessionRow.locator("code").innerText()).replace("…", "");
    await page.clock.fastForward("59:30"); // the page's clock only: the server's session is still valid
    await page.getByText("Your session ended").waitFor();
    await page.getByRole("button", { name: "Sign in with the devnet wallet" }).waitFor();
    const keys = await fetch(`${web().url}/api/v1/api-keys`, {
      headers: { "x-api-key": web().account("poster-2").apiKey },
    }).then((r) => r.json());
    const key = keys.data.keys.find((k: { prefix: string }) => k.prefix === prefix);
    expect(key.revokedAt, "the session key is revoked").to.not.equal(null);
  });

  it("works on a phone-sized screen: the navigation folds behind a menu button", async () => {
    const page = await web().newPage({ viewport: PHONE, colorScheme: "dark" });
    await page.goto(`${web().url}/`);
    const settings = page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Settings and API keys" });
    // Folded: every navigation link is off the screen (the navbar slides out to the left).
    const folded = () =>
      page.waitForFunction(
        () => [...document.querySelectorAll("nav a")].every((a) => a.getBoundingClientRect().right <= 0),
        undefined,
        { timeout: 5000 },
      );
    await folded();
    await page.getByRole("button", { name: "Toggle navigation" }).click();
    await settings.click();
    await page.getByRole("button", { name: "Sign in with the devnet wallet" }).waitFor();
    await folded();
    // Nothing is wider than the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(PHONE.width);
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
  });

  it("serves the devnet's demo wallets and both chains to the picker (the devnet sets DEVNET_ACCOUNTS_FILE)", async () => {
    const answer = await (await fetch(`${web().url}/api/v1/devnet/wallets`)).json();
    expect(answer.data.chainId).to.equal(web().devnet.deployment.book.chainId);
    expect(answer.data.rpcUrl).to.equal(web().devnet.rpcUrl);
    expect(answer.data.chains).to.deep.equal([
      { chain: "base", chainId: web().devnet.deployment.book.chainId, rpcUrl: web().devnet.rpcUrl },
      { chain: "arc", chainId: 31338, rpcUrl: web().devnet.arcRpcUrl },
    ]);
    expect(answer.data.accounts.map((a: { role: string }) => a.role)).to.deep.equal(
      web().devnet.accounts.map((a) => a.role),
    );
  });
});

describe("web: the devnet wallet picker outside the devnet", () => {
  it("answers NOT_FOUND when the server does not run as the devnet (no DEVNET_ACCOUNTS_FILE)", async () => {
    const { book } = await loadFixture(deployEscrowFixture);
    const api = await startTestApi(book);
    try {
      const answer = await api.request("GET", "/api/v1/devnet/wallets");
      expect(answer.status).to.equal(404);
      expect(answer.json.error.code).to.equal("NOT_FOUND");
      expect(answer.text).to.not.match(/privateKey/);
    } finally {
      await api.close();
    }
  });
});
