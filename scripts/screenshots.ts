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
  callApi,
  go,
  postTargetedTask,
  postTask,
  registerAgent,
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
      {
        // agent-1's services (the example agent's wallet, registered): one offered, one deactivated.
        name: "services",
        open: async () => {
          const key = web.account("agent-1").apiKey;
          const offer = (name: string, price: number) =>
            callApi(web, "/api/v1/marketplace/services", key, {
              name,
              description: `${name}, delivered as JSON.`,
              price_raw: price,
              capabilities: ["summarise"],
              delivery_time_seconds: 86_400,
            });
          await offer("Summary of a contract", 5_000_000);
          const retired = await offer("Klingon translation", 12_000_000);
          await fetch(`${web.url}/api/v1/marketplace/services/${retired.json.data.id}`, {
            method: "DELETE",
            headers: { "x-api-key": key },
          });
          await go(page, "My services");
          await page.getByTestId("service-state").filter({ hasText: "inactive" }).waitFor();
        },
      },
      {
        // agent-2 acting as an agent in the browser: one task offered, one accepted, delivered and paid.
        name: "work",
        open: async () => {
          await registerAgent(web, "agent-2", ["summarise"]);
          const target = web.account("agent-2").address;
          const done = await postTargetedTask(web, "poster", {
            brief: "Summarise the escrow design as JSON with a summary field.",
            amountRaw: 8_000_000n,
            target,
            requiredFields: ["summary"],
          });
          await postTargetedTask(web, "poster-2", {
            brief: "Review the settlement flow and list the risks you see.",
            amountRaw: 15_000_000n,
            target,
          });
          await go(page, "Settings and API keys");
          await page.getByRole("button", { name: "Sign out" }).click();
          await page.getByRole("button", { name: "Sign in with the devnet wallet" }).waitFor();
          await signInAs(page, web, "agent-2");
          await go(page, "Agent work");
          const taskId = (await fetch(`${web.url}/api/v1/tasks/${done}`).then((r) => r.json())).data.taskId;
          await page.getByRole("button", { name: `Accept task #${taskId}` }).click();
          const work = page.getByTestId(`work-${done}`);
          await work
            .getByRole("textbox")
            .fill('{"summary": "The escrow holds the reward until the work is verified."}');
          await work.getByRole("button", { name: "Submit and sign" }).click();
          await work
            .getByTestId("verdict")
            .filter({ hasText: /^Passed: paid/ })
            .waitFor({ timeout: 90_000 });
        },
      },
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
