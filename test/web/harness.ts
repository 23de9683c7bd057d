/**
 * The web app in a real browser: a devnet on free ports (chain, API serving web/dist, indexer, marketplace verifier,
 * example agent), the app built if stale, and Chromium driven by playwright-core. Without /usr/bin/chromium the
 * browser tests skip, saying how to install it (`apt-get install -y chromium`).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Contract, JsonRpcProvider, Wallet, getBytes, toQuantity } from "ethers";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { startDevnet, type DemoAccount, type Devnet } from "../../scripts/devnet";
import { ensureWebBuilt } from "../../scripts/webBuild";
import { freePort } from "../helpers/api";
import { agentPublicKey } from "../../server/domain/briefs";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 860 };

/** Skips the suite, loudly, when Chromium is absent. Call from a `before` hook: `skipWithoutChromium(this)`. */
export function skipWithoutChromium(context: Mocha.Context): void {
  if (fs.existsSync(CHROMIUM)) return;
  console.warn(`    SKIPPED: browser tests need Chromium at ${CHROMIUM}: run \`apt-get install -y chromium\``);
  context.skip();
}

export interface WebDevnet {
  devnet: Devnet;
  url: string;
  browser: Browser;
  /** Saves a screenshot of every open page under $TMPDIR/web-failures (after a failed test). */
  snapshot(title: string): Promise<void>;
  /** Uncaught exceptions of every page so far. */
  pageErrors: string[];
  account(role: string): DemoAccount;
  /** A fresh browser context (no shared state) with a page; `colorScheme` picks the system theme. */
  newPage(options?: { viewport?: { width: number; height: number }; colorScheme?: "light" | "dark" }): Promise<Page>;
  close(): Promise<void>;
}

/**
 * Mocha hooks every browser test file uses: skip without Chromium (saying how to install it), one devnet for the file,
 * a screenshot of a failed test, and no uncaught exception in the page. Returns the running devnet (after `before`).
 */
export function useWebDevnet(suite: Mocha.Suite, timeoutMs: number): () => WebDevnet {
  let web: WebDevnet | undefined;
  suite.timeout(timeoutMs);
  before(async function () {
    skipWithoutChromium(this);
    web = await startWebDevnet();
  });
  after(async () => {
    await web?.close();
  });
  afterEach(async function () {
    if (this.currentTest?.state === "failed" && web) await web.snapshot(this.currentTest.title);
    if (web) expect(web.pageErrors, "uncaught exceptions in the page").to.deep.equal([]);
  });
  return () => web!;
}

/** A JSON call to the devnet's API with a key (POST when `body` is given), as a test's own client. */
export async function callApi(
  web: WebDevnet,
  path: string,
  key: string,
  body?: unknown,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<{ status: number; json: any }> {
  const response = await fetch(`${web.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

export async function startWebDevnet(): Promise<WebDevnet> {
  ensureWebBuilt((line) => console.log(`    ${line}`));
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "web-devnet-out-"));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "web-devnet-data-"));
  const deploymentsDir = fs.mkdtempSync(path.join(os.tmpdir(), "web-devnet-deployments-"));
  // Quieter logs; one IP carries several browsers' polling and the example agent's: a window wider than the devnet's.
  const saved = { LOG_LEVEL: process.env.LOG_LEVEL, RATE_IP_PER_WINDOW: process.env.RATE_IP_PER_WINDOW };
  process.env.LOG_LEVEL = "warn";
  process.env.RATE_IP_PER_WINDOW = "100000";
  let devnet: Devnet;
  try {
    devnet = await startDevnet({ port: await freePort(), apiPort: await freePort(), outDir, dataDir, deploymentsDir });
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  const contexts: BrowserContext[] = [];
  const pageErrors: string[] = [];
  return {
    pageErrors,
    devnet,
    url: devnet.apiUrl!,
    browser,
    account: (role) => {
      const found = devnet.accounts.find((a) => a.role === role);
      expect(found, role).to.not.equal(undefined);
      return found!;
    },
    async newPage(options = {}) {
      const context = await browser.newContext({
        viewport: options.viewport ?? DESKTOP,
        colorScheme: options.colorScheme ?? "light",
        permissions: ["clipboard-read", "clipboard-write"],
      });
      contexts.push(context);
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      // An uncaught exception in the app is collected; tests assert there is none (pageErrors).
      page.on("pageerror", (error) => pageErrors.push(`${page.url()}: ${error.message}`));
      return page;
    },
    async snapshot(title) {
      const dir = path.join(os.tmpdir(), "web-failures");
      fs.mkdirSync(dir, { recursive: true });
      const pages = contexts.flatMap((c) => c.pages());
      for (const [i, page] of pages.entries()) {
        const file = path.join(dir, `${title.replace(/[^a-z0-9]+/gi, "-").slice(0, 60)}-${i}.png`);
        await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
        console.warn(`    screenshot of ${page.url()}: ${file}`);
      }
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => undefined);
      await browser.close();
      await devnet.close();
      fs.rmSync(outDir, { recursive: true, force: true });
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(deploymentsDir, { recursive: true, force: true });
    },
  };
}

/** Signs in on /settings with the devnet wallet of `role` (the EIP-4361 flow through /api/v1/auth/*). */
export async function signInAs(page: Page, web: WebDevnet, role: string): Promise<void> {
  const account = web.account(role);
  await page.goto(`${web.url}/settings`);
  await page.getByRole("combobox", { name: "Demo account" }).click();
  await page.getByRole("option", { name: new RegExp(`^${role} \\(`) }).click();
  await page.getByRole("button", { name: "Sign in with the devnet wallet" }).click();
  await page.getByTestId("session-address").waitFor();
  expect(await page.getByTestId("session-address").innerText()).to.equal(account.address.toLowerCase());
}

/** axe-core in the page: the serious and critical violations (none expected). */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  // Colours are judged at rest: wait for running transitions (a drawer sliding in) to end; spinners loop forever.
  await page.waitForFunction(
    () =>
      document.getAnimations().every((a) => a.playState !== "running" || a.effect?.getTiming().iterations === Infinity),
    undefined,
    { timeout: 5000 },
  );
  const source = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
  await page.evaluate(source); // evaluated through the DevTools protocol: the page's CSP stays as served
  const result = (await page.evaluate(() => (window as unknown as { axe: { run(): Promise<unknown> } }).axe.run())) as {
    violations: { id: string; impact: string; help: string; nodes: { target: string[]; failureSummary?: string }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")}): ${v.nodes[0]?.failureSummary}`,
    );
}

/** Follows a link of the main navigation by its exact name ("Agents" is not "Hosted agents"), as a user clicks it. */
export async function go(page: Page, label: string): Promise<void> {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: label, exact: true }).click();
}

export interface NewTask {
  brief: string;
  /** The reward in tokens; absent: the form's own (a rental's price). */
  reward?: string;
  capabilities: string[];
  keywords: string[];
  fields: string[];
  /** Private, readable by these agents (addresses); public when absent. */
  privateTo?: string[];
  /** "manual": the poster reviews the submission (default: automatic rules). */
  mode?: "manual";
  /** A label of the Deadline choices (default "1 day"). */
  deadline?: string;
  /** The settlement chain to post on (default the form's: the posting chain). */
  chain?: "base" | "arc";
}

/** Posts a task through the Post page as the signed-in wallet; returns its task hash once listed. */
export async function postTask(page: Page, task: NewTask): Promise<string> {
  // Following "Post a task" opens a fresh form (a new key: a remount React commits after the click has returned).
  // Wait for the new form's brief box, or the first fields could be typed into the form that is going away (a loaded
  // CI machine did: the brief was lost and the button stayed disabled).
  await page.evaluate(() => {
    const box = document.querySelector("textarea");
    if (box) (box as HTMLTextAreaElement & { leaving?: boolean }).leaving = true;
  });
  await go(page, "Post a task");
  await page.waitForFunction(() => {
    const box = document.querySelector("textarea");
    return box !== null && !(box as HTMLTextAreaElement & { leaving?: boolean }).leaving;
  });
  return fillAndPostTask(page, task);
}

/** Fills the post form already open (a fresh one, or a rental's) and posts it; returns the task hash once listed. */
export async function fillAndPostTask(page: Page, task: NewTask): Promise<string> {
  if (task.chain) await page.getByText(new RegExp(`^${task.chain} \\(chain \\d+\\)$`)).click();
  if (task.privateTo) {
    await page.getByText("Private", { exact: true }).click();
    for (const address of task.privateTo) {
      await page.getByRole("combobox", { name: "Agents who may read the brief" }).click();
      await page.getByRole("option", { name: new RegExp(`^${address.slice(0, 6)}`) }).click();
    }
    await page.keyboard.press("Escape");
  }
  await page.getByRole("textbox", { name: "Brief" }).fill(task.brief);
  if (task.reward) await page.getByLabel(/^Reward/).fill(task.reward);
  for (const c of task.capabilities) {
    await page.getByRole("combobox", { name: "Required capabilities" }).fill(c);
    await page.keyboard.press("Enter");
  }
  if (task.deadline) {
    await page.getByRole("combobox", { name: "Deadline" }).click();
    await page.getByRole("option", { name: task.deadline }).click();
  }
  if (task.mode === "manual") await page.getByText("I review it", { exact: true }).click();
  for (const k of task.keywords) {
    await page.getByRole("combobox", { name: "Must contain the keywords" }).fill(k);
    await page.keyboard.press("Enter");
  }
  for (const f of task.fields) {
    await page.getByRole("combobox", { name: "Must have the JSON fields" }).fill(f);
    await page.keyboard.press("Enter");
  }
  await page.getByRole("button", { name: "Post and fund the task" }).click();
  await page.getByTestId("posted").waitFor({ timeout: 60_000 });
  // The four checks ran and passed before anything was signed.
  const checks = page.getByTestId("checks").getByRole("listitem");
  expect(await checks.count()).to.equal(4);
  expect(await page.getByTestId("checks").getByLabel("failed").count()).to.equal(0);
  const href = await page.getByRole("link", { name: "Follow it" }).getAttribute("href");
  return href!.replace("/tasks/", "");
}

export interface InjectedWallet {
  address: string;
  /** The chain the wallet says it is on (eth_chainId); starts on the devnet's unless `chainId` is given. */
  chainId: number;
  /** Whether the wallet agrees to wallet_switchEthereumChain. */
  allowSwitch: boolean;
  /** Every method the page asked of the wallet, in order. */
  calls: string[];
}

/**
 * A stand-in browser extension for `page`: an EIP-1193 provider announced with EIP-6963 as "Test Wallet", whose
 * requests a Node-side ethers Wallet answers (signing, sending to the devnet chain; other calls go to the chain).
 * Call before the page loads.
 */
export async function injectWallet(
  page: Page,
  web: WebDevnet,
  privateKey: string,
  options: { chainId?: number; allowSwitch?: boolean } = {},
): Promise<InjectedWallet> {
  const provider = new JsonRpcProvider(web.devnet.rpcUrl, undefined, { cacheTimeout: -1 });
  const wallet = new Wallet(privateKey, provider);
  const realChain = web.devnet.deployment.book.chainId;
  const state: InjectedWallet = {
    address: wallet.address,
    chainId: options.chainId ?? realChain,
    allowSwitch: options.allowSwitch ?? true,
    calls: [],
  };
  await page.exposeFunction("__testWallet", async (method: string, params: unknown[]) => {
    state.calls.push(method);
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [wallet.address];
      case "eth_chainId":
        return toQuantity(state.chainId);
      case "personal_sign":
        return wallet.signMessage(getBytes(String(params[0])));
      case "wallet_switchEthereumChain":
        if (!state.allowSwitch) throw new Error("User rejected the request.");
        state.chainId = Number((params[0] as { chainId: string }).chainId);
        return null;
      case "eth_sendTransaction": {
        if (state.chainId !== realChain) throw new Error(`the wallet is on chain ${state.chainId}`);
        const tx = params[0] as { to: string; data?: string; value?: string };
        return (await wallet.sendTransaction({ to: tx.to, data: tx.data, value: tx.value ?? 0n })).hash;
      }
      default:
        return provider.send(method, params);
    }
  });
  await page.addInitScript(() => {
    const scope = window as unknown as { __testWallet(method: string, params: unknown[]): Promise<unknown> };
    const provider = {
      request: ({ method, params }: { method: string; params?: unknown[] }) => scope.__testWallet(method, params ?? []),
    };
    const info = {
      uuid: "6f1f3b4c-0000-4000-8000-000000000001",
      name: "Test Wallet",
      icon: "data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg'/>",
      rdns: "test.wallet",
    };
    const announce = () =>
      window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail: Object.freeze({ info, provider }) }));
    window.addEventListener("eip6963:requestProvider", announce);
    announce();
  });
  return state;
}

/** Registers the devnet account `role` as an agent (executor) with its public key, through the API. */
export async function registerAgent(web: WebDevnet, role: string, capabilities: string[]): Promise<void> {
  const agent = web.account(role);
  const registered = await callApi(web, "/api/v1/a2a/executors", agent.apiKey, {
    publicKey: agentPublicKey(agent.privateKey),
    capabilities,
  });
  expect(registered.status, JSON.stringify(registered.json)).to.be.oneOf([200, 201]);
}

/**
 * Posts a public task pinned to `target` (an agent's address) through the API as the devnet account `posterRole`, as
 * a script would: upload, build, approve and fund with the poster's key, list. Returns the task hash.
 */
export async function postTargetedTask(
  web: WebDevnet,
  posterRole: string,
  task: { brief: string; amountRaw: bigint; target: string; requiredFields?: string[] },
): Promise<string> {
  const poster = web.account(posterRole);
  const call = (path: string, body?: unknown) => callApi(web, path, poster.apiKey, body);
  const upload = await call("/api/v1/storage/upload", { data: Buffer.from(task.brief).toString("base64") });
  const taskHash = upload.json.data.rootHash as string;
  const settlement = (await call("/api/v1/health/settlement")).json.data;
  const chain = settlement.chains.find((c: { chain: string }) => c.chain === settlement.postingChain);
  const built = await call("/api/v1/tasks", {
    taskHash,
    token: chain.token.address,
    amount: task.amountRaw.toString(),
    locationZone: "global",
    duration: "86400",
  });
  expect(built.status, JSON.stringify(built.json)).to.equal(200);
  const wallet = new Wallet(poster.privateKey, new JsonRpcProvider(web.devnet.rpcUrl, undefined, { cacheTimeout: -1 }));
  const usdc = new Contract(chain.token.address, ["function approve(address,uint256) returns (bool)"], wallet);
  await (await usdc.approve(chain.escrowAddress, task.amountRaw)).wait();
  const sent = await wallet.sendTransaction({
    to: built.json.data.unsignedTx.to,
    data: built.json.data.unsignedTx.data,
  });
  await sent.wait();
  const indexed = await call("/api/v1/a2a/tasks/index", {
    txHash: sent.hash,
    taskHash,
    privacy: "public",
    publicBrief: task.brief,
    targetExecutor: task.target,
    ...(task.requiredFields
      ? { verificationMode: "auto", verificationCriteria: { required_fields: task.requiredFields } }
      : {}),
  });
  expect(indexed.status, JSON.stringify(indexed.json)).to.equal(200);
  return taskHash;
}
