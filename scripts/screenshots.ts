/**
 * `npm run screenshots`: the main pages of the web app on a fresh devnet, light and dark, desktop and phone, saved as
 * docs/screenshots/<page>-<scheme>-<device>.png, with an axe-core check of each page in each scheme (exits non-zero on
 * a serious or critical violation). Needs Chromium (`apt-get install -y chromium`).
 */
import fs from "node:fs";
import path from "node:path";
import {
  CHROMIUM,
  DESKTOP,
  PHONE,
  go,
  postTask,
  seriousA11yViolations,
  signInAs,
  startWebDevnet,
} from "../test/web/harness";

const OUT = path.join(__dirname, "..", "docs", "screenshots");
const SCHEMES = ["light", "dark"] as const;
const DEVICES = { desktop: DESKTOP, phone: PHONE } as const;

async function main() {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(`Chromium not found at ${CHROMIUM}: run \`apt-get install -y chromium\``);
  fs.mkdirSync(OUT, { recursive: true });
  const web = await startWebDevnet();
  const problems: string[] = [];
  try {
    const page = await web.newPage();
    await signInAs(page, web, "poster");
    // Content: one task the example agent takes and is paid for, two that stay open.
    const paid = await postTask(page, {
      brief: "Summarise the escrow design. It holds rewards until verified work is paid.",
      reward: "40",
      capabilities: ["summarise"],
      keywords: ["escrow"],
      fields: ["summary", "wordCount"],
    });
    await postTask(page, {
      brief: "Translate the escrow terms of service into Klingon, keeping the legal meaning.",
      reward: "12.5",
      capabilities: ["klingon"],
      keywords: ["escrow"],
      fields: [],
    });
    await postTask(page, {
      brief: "Review the settlement contract for re-entrancy and report findings as JSON.",
      reward: "250",
      capabilities: ["audit", "solidity"],
      keywords: ["reentrancy"],
      fields: ["findings"],
    });

    const pages: { name: string; open: () => Promise<void> }[] = [
      { name: "board", open: () => go(page, "Open tasks") },
      {
        name: "task",
        open: async () => {
          await go(page, "Open tasks");
          await page.evaluate((hash) => {
            window.history.pushState({}, "", `/tasks/${hash}`);
            window.dispatchEvent(new PopStateEvent("popstate"));
          }, paid);
          await page.getByTestId("task-status").filter({ hasText: "Paid" }).waitFor({ timeout: 90_000 });
          await page.getByText("TaskCompleted").waitFor();
        },
      },
      { name: "post", open: () => go(page, "Post a task") },
      { name: "settings", open: () => go(page, "Settings and API keys") },
      { name: "my-tasks", open: () => go(page, "My tasks") },
      { name: "agents", open: () => go(page, "Agents") },
      { name: "not-found", open: () => page.goto(`${web.url}/no/such/page`).then(() => undefined) },
      {
        // The owner of the devnet's example and verifier agents, both running.
        name: "hosted",
        open: async () => {
          await go(page, "Settings and API keys");
          await page.getByRole("button", { name: "Sign out" }).click();
          await page.getByRole("button", { name: "Sign in with the devnet wallet" }).waitFor();
          await signInAs(page, web, "agent-1");
          await go(page, "Hosted agents");
          await page.getByTestId("hosted-example-agent").getByTestId("hosted-status").waitFor();
        },
      },
      { name: "services", open: () => go(page, "My services") },
    ];
    for (const { name, open } of pages) {
      await page.setViewportSize(DESKTOP);
      await open();
      await page.waitForLoadState("networkidle").catch(() => undefined);
      for (const scheme of SCHEMES) {
        await page.emulateMedia({ colorScheme: scheme });
        for (const [device, viewport] of Object.entries(DEVICES)) {
          await page.setViewportSize(viewport);
          await page.waitForTimeout(400);
          const file = path.join(OUT, `${name}-${scheme}-${device}.png`);
          await page.screenshot({ path: file, fullPage: true });
          console.log(`saved ${path.relative(process.cwd(), file)}`);
        }
        for (const violation of await seriousA11yViolations(page)) problems.push(`${name} (${scheme}): ${violation}`);
      }
    }
    if (web.pageErrors.length) problems.push(...web.pageErrors.map((e) => `uncaught: ${e}`));
  } finally {
    await web.close();
  }
  if (problems.length) {
    console.error(problems.join("\n"));
    process.exitCode = 1;
  } else {
    console.log("axe-core: no serious or critical violation on any page, light or dark");
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
