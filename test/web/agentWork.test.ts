/**
 * Agent work in the browser: a person acting as an agent (the devnet wallet of agent-2, registered) sees a task
 * offered to it, accepts it, delivers a result the rules fail (the verdict says so), delivers again, and sees it paid.
 * Each delivery is stored by the service and signed by the wallet after the SDK's checks (submitResult).
 */
import { expect } from "chai";
import { go, postTargetedTask, registerAgent, seriousA11yViolations, signInAs, useWebDevnet } from "./harness";

describe("web: agent work (offered, accept, submit, verdict)", function () {
  const web = useWebDevnet(this, 300_000);

  it("accepts an offered task, sees a failed verdict, delivers again and is paid", async () => {
    await registerAgent(web(), "agent-2", ["summarise"]);
    const agent = web().account("agent-2");
    const taskHash = await postTargetedTask(web(), "poster", {
      brief: "Summarise the escrow design for agent-2, as JSON with a summary field.",
      amountRaw: 4_000_000n,
      target: agent.address,
      requiredFields: ["summary"],
    });

    const page = await web().newPage();
    await signInAs(page, web(), "agent-2");
    await go(page, "Agent work");
    await page.getByTestId("refresh-mode").filter({ hasText: "Live updates." }).waitFor();
    const offered = page.getByTestId("offered").getByTestId(`task-${taskHash}`);
    await offered.waitFor();
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
    const taskId = (await fetch(`${web().url}/api/v1/tasks/${taskHash}`).then((r) => r.json())).data.taskId as number;
    await page.getByRole("button", { name: `Accept task #${taskId}` }).click();
    await page.getByText(`Accepted task #${taskId}`).waitFor();

    // Working on it: the result form. A result without the required field: delivered, then failed by the rules.
    const work = page.getByTestId(`work-${taskHash}`);
    await work.waitFor();
    const box = work.getByRole("textbox", { name: `Result for task #${taskId}` });
    await box.fill('{"note": "no summary here"}');
    await work.getByRole("button", { name: "Submit and sign" }).click();
    await work.getByTestId("delivered").filter({ hasText: "attempt 1" }).waitFor({ timeout: 60_000 });
    await work.getByTestId("verdict").filter({ hasText: "Failed verification" }).waitFor({ timeout: 90_000 });
    expect(await seriousA11yViolations(page)).to.deep.equal([]);

    // Another attempt with the field: passed and paid, the payout in the token's units.
    await box.fill('{"summary": "The escrow holds the reward until verified work is paid."}');
    await work.getByRole("button", { name: "Submit and sign" }).click();
    await work.getByTestId("delivered").filter({ hasText: "attempt 2" }).waitFor({ timeout: 60_000 });
    await work
      .getByTestId("verdict")
      .filter({ hasText: /^Passed: paid/ })
      .waitFor({ timeout: 90_000 });
    // The verdict can be heard on the event stream before the refetched list shows the indexed completion.
    await work.getByTestId("task-status").filter({ hasText: "Paid" }).waitFor({ timeout: 60_000 });
    expect(await work.getByTestId("task-status").textContent()).to.equal("Paid");

    // The chain agrees: the task is completed with agent-2 as its worker.
    const detail = await fetch(`${web().url}/api/v1/tasks/${taskHash}`).then((r) => r.json());
    expect(detail.data.worker.toLowerCase()).to.equal(agent.address.toLowerCase());
    expect(detail.data.a2aState.status).to.equal("completed");
    expect(detail.data.submissionAttempts).to.equal(2);
  });

  it("tells a wallet that is not a registered agent how to register", async () => {
    const page = await web().newPage();
    await signInAs(page, web(), "agent-3");
    await go(page, "Agent work");
    await page.getByText("This wallet is not a registered agent").waitFor();
    await page.getByText("No task is offered to this wallet now.").waitFor();
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
  });
});
