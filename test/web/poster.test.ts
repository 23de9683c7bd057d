/**
 * Poster polish, as a newcomer found it: the empty board invites posting; a reload keeps the session in that tab only
 * (sessionStorage, never localStorage) and sign-out forgets and revokes it; revoking a key asks first and takes its
 * "copy it now" banner away; the reward field refuses more decimals than the token has instead of cutting them; the
 * leaderboard has column headers; My tasks follows the event stream instead of polling; an unknown address says
 * what to do. axe finds no serious or critical violation on each page.
 */
import { expect } from "chai";
import { JsonRpcProvider, Wallet } from "ethers";
import type { Page } from "playwright-core";
import { go, seriousA11yViolations, signInAs, useWebDevnet, postTask } from "./harness";

describe("web: poster polish", function () {
  const web = useWebDevnet(this, 240_000);

  /** The API keys of `role`'s wallet, read with its devnet key. */
  async function keysOf(role: string): Promise<{ id: number; prefix: string; revokedAt: string | null }[]> {
    const answer = await fetch(`${web().url}/api/v1/api-keys`, {
      headers: { "x-api-key": web().account(role).apiKey },
    }).then((r) => r.json());
    return answer.data.keys;
  }

  const sessionPrefix = async (page: Page) =>
    (await page.locator("tr", { hasText: "this session" }).locator("code").innerText()).replace("…", "");

  it("an empty board invites posting (first: this devnet has no task yet)", async () => {
    const page = await web().newPage({ colorScheme: "dark" });
    await page.goto(`${web().url}/`);
    await page.getByTestId("empty-board").waitFor();
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
    await page.getByRole("link", { name: "Post the first task" }).click();
    await page.getByText("Sign in with the wallet that pays the reward to post a task.").waitFor();
    expect(new URL(page.url()).pathname).to.equal("/post");
  });

  it("a reload keeps the session in that tab (sessionStorage only); another tab is signed out; sign-out revokes it", async () => {
    const page = await web().newPage();
    await signInAs(page, web(), "poster-2");
    const prefix = await sessionPrefix(page);
    await page.reload();
    await page.getByTestId("session-address").waitFor();
    expect(await sessionPrefix(page)).to.equal(prefix);
    expect(await page.evaluate(() => window.localStorage.length)).to.equal(0);
    expect(await page.evaluate(() => Object.keys(window.sessionStorage))).to.deep.equal(["escrow-market.session"]);
    // The restored session acts: My tasks reads with its key.
    await go(page, "My tasks");
    await page.getByRole("heading", { name: "My tasks" }).waitFor();
    await page.getByText("You have posted no task yet.").waitFor();

    // A fresh tab shares nothing.
    const other = await web().newPage();
    await other.goto(`${web().url}/settings`);
    await other.getByRole("button", { name: "Sign in with the devnet wallet" }).waitFor();

    await go(page, "Settings and API keys");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in with the devnet wallet" }).waitFor();
    expect(await page.evaluate(() => window.sessionStorage.length)).to.equal(0);
    const key = (await keysOf("poster-2")).find((k) => k.prefix === prefix)!;
    expect(key.revokedAt, "sign-out revokes the session key").to.not.equal(null);
    await page.reload();
    await page.getByRole("button", { name: "Sign in with the devnet wallet" }).waitFor();
  });

  it("revoking a key asks first, and takes the key's 'copy it now' banner away", async () => {
    const page = await web().newPage();
    await signInAs(page, web(), "poster-2");
    await page.getByLabel("Label (optional)").fill("leaked key");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = (await page.getByTestId("new-key").innerText()).trim();
    const prefix = key.slice(0, 11);
    await page.getByTestId(`key-${prefix}`).waitFor();

    await page.getByRole("button", { name: `Revoke key ${prefix}` }).click();
    await page.getByRole("group", { name: `Confirm revoking key ${prefix}` }).waitFor();
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
    await page.getByRole("button", { name: "Keep it" }).click();
    await page.getByRole("button", { name: `Revoke key ${prefix}` }).waitFor();
    expect((await keysOf("poster-2")).find((k) => k.prefix === prefix)!.revokedAt, "kept").to.equal(null);

    await page.getByRole("button", { name: `Revoke key ${prefix}` }).click();
    await page.getByRole("button", { name: `Yes, revoke key ${prefix}` }).click();
    await page
      .getByTestId(`key-${prefix}`)
      .getByText(/^revoked/)
      .waitFor();
    await page.getByTestId("new-key").waitFor({ state: "detached" });
    expect((await keysOf("poster-2")).find((k) => k.prefix === prefix)!.revokedAt).to.not.equal(null);
  });

  it("the reward field refuses more decimals than the token has, keeping what was typed", async () => {
    const page = await web().newPage();
    await signInAs(page, web(), "poster");
    await go(page, "Post a task");
    await page.getByRole("textbox", { name: "Brief" }).fill("Count the decimals of this reward.");
    await page.getByText("I review it", { exact: true }).click(); // manual: no rule needed, the reward decides
    const reward = page.getByLabel(/^Reward/);
    await reward.fill("1.1234567");
    await reward.blur();
    await page.getByText("USDC has 6 decimal places: 1.1234567 has 7").waitFor();
    expect(await reward.inputValue()).to.equal("1.1234567");
    expect(await page.getByRole("button", { name: "Post and fund the task" }).isDisabled()).to.equal(true);
    await reward.fill("1.123456");
    await page.getByText("USDC has 6 decimal places").waitFor({ state: "detached" });
    expect(await page.getByRole("button", { name: "Post and fund the task" }).isDisabled()).to.equal(false);
  });

  it("My tasks follows the event stream: a cancellation made elsewhere shows without polling", async () => {
    const page = await web().newPage();
    const listReads: number[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/api/v1/a2a/tasks/posted")) listReads.push(Date.now());
    });
    await signInAs(page, web(), "poster");
    const hash = await postTask(page, {
      brief: "Carve the escrow's event stream into a runestone.",
      reward: "1",
      capabilities: ["runestone-carving"],
      keywords: [],
      fields: ["runes"],
    });
    await go(page, "My tasks");
    await page.getByTestId("refresh-mode").filter({ hasText: "live updates" }).waitFor();
    const card = page.getByTestId(`posted-${hash}`);
    await card.getByTestId("task-status").filter({ hasText: "Open" }).waitFor();
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
    const readsBefore = listReads.length;

    const poster = web().account("poster");
    const built = await fetch(`${web().url}/api/v1/a2a/tasks/${hash}/cancel`, {
      method: "POST",
      headers: { "x-api-key": poster.apiKey, "content-type": "application/json" },
      body: "{}",
    }).then((r) => r.json());
    expect(built.success, JSON.stringify(built)).to.equal(true);
    const wallet = new Wallet(
      poster.privateKey,
      new JsonRpcProvider(web().devnet.rpcUrl, undefined, { cacheTimeout: -1 }),
    );
    await (await wallet.sendTransaction({ to: built.data.unsignedTx.to, data: built.data.unsignedTx.data })).wait();
    await card.getByTestId("task-status").filter({ hasText: "Cancelled" }).waitFor({ timeout: 60_000 });
    // While live, the list is read again when an event comes (the stream's task.settled), not every few seconds: one
    // or two reads (the event's, and at most one 60 s fallback round), where the old 4 s poll made many.
    expect(listReads.length - readsBefore).to.be.within(1, 2);
    expect(web().pageErrors).to.deep.equal([]);
  });

  it("the leaderboard has column headers", async () => {
    const page = await web().newPage();
    await page.goto(`${web().url}/agents`);
    const board = page.getByRole("table", { name: "Leaderboard" });
    for (const name of ["Rank", "Agent", "Score", "Paid tasks"]) {
      await board.getByRole("columnheader", { name }).waitFor();
    }
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
  });

  it("an unknown address says so and links to where to go (its links underlined: readable in the dark scheme)", async () => {
    const page = await web().newPage({ colorScheme: "dark" });
    await page.goto(`${web().url}/no/such/page`);
    await page.getByRole("heading", { name: "Page not found" }).waitFor();
    expect(await page.getByRole("main").innerText()).to.include("/no/such/page");
    await page.getByRole("main").getByRole("link", { name: "open tasks" }).click();
    await page.getByRole("heading", { name: "Open tasks" }).waitFor();
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
  });
});
