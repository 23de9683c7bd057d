/**
 * Tasks in the web app on the devnet: a poster posts a public auto-verified task (the careful client's checks shown,
 * approval and funding signed by the devnet wallet), the devnet's example agent does it and the marketplace verifier
 * pays it; the task detail shows it paid with its escrow events and result. A task no agent can do stays on the open
 * board, where the capability and reward filters find it. The agent sees the task it worked on and a task offered to it.
 */
import { expect } from "chai";
import { network } from "hardhat";
import { Contract, JsonRpcProvider, Wallet } from "ethers";
import {
  callApi,
  fillAndPostTask,
  injectWallet,
  postTask,
  seriousA11yViolations,
  signInAs,
  go,
  useWebDevnet,
} from "./harness";
import { agentPublicKey, decryptBrief, unwrapBriefKey } from "../../server/domain/briefs";

const SUMMARY_BRIEF = "Summarise the escrow design. It holds rewards until verified work is paid.";

describe("web: posting, the board, task detail and the agent's view", function () {
  const web = useWebDevnet(this, 300_000);

  let paidHash: string;
  let openHash: string;

  it("posts a public auto task from the browser and watches it go to paid", async () => {
    const page = await web().newPage();
    await signInAs(page, web(), "poster");
    // Inline validation: auto verification without a rule is refused before anything is sent.
    await go(page, "Post a task");
    await page.getByRole("button", { name: "Post and fund the task" }).click();
    await page.getByText("Write what the agent should do").waitFor();
    await page.getByText("Auto verification needs at least one rule").waitFor();

    paidHash = await postTask(page, {
      brief: SUMMARY_BRIEF,
      reward: "40",
      capabilities: ["summarise"],
      keywords: ["escrow"],
      fields: ["summary", "wordCount"],
    });
    await page.getByRole("link", { name: "Follow it" }).click();
    await page.getByTestId("task-status").filter({ hasText: "Paid" }).waitFor({ timeout: 90_000 });
    await page.getByText("TaskCompleted").waitFor();
    const result = JSON.parse(await page.getByTestId("result").innerText());
    expect(result.summary).to.be.a("string");
    expect(result.wordCount).to.be.a("number");
    // The chain agrees: the example agent (agent-1) was paid.
    const onChain = await (await fetch(`${web().url}/api/v1/tasks/${paidHash}`)).json();
    expect(onChain.data.status).to.equal(4);
    expect(onChain.data.worker).to.equal(web().account("agent-1").address.toLowerCase());
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
  });

  it("posts on arc: the devnet wallet switches to arc, arc's escrow holds the reward and the task reads as arc's", async () => {
    const page = await web().newPage();
    await signInAs(page, web(), "poster-2");
    const [base, arc] = web().devnet.chains;
    const erc20 = ["function balanceOf(address) view returns (uint256)"];
    const balanceOn = (chain: typeof base) =>
      new Contract(
        chain.deployment.book.token.address,
        erc20,
        new JsonRpcProvider(chain.rpcUrl, undefined, { cacheTimeout: -1 }),
      ).balanceOf(chain.deployment.book.escrow.proxy) as Promise<bigint>;
    const [baseBefore, arcBefore] = await Promise.all([balanceOn(base), balanceOn(arc)]);
    const hash = await postTask(page, {
      brief: "Count the escrow's events on arc, in Klingon numerals.",
      reward: "3",
      capabilities: ["klingon-verse"],
      keywords: ["escrow"],
      fields: [],
      chain: "arc",
    });
    expect(await page.getByTestId("posted").innerText()).to.contain("on arc is funded and listed");
    expect(await balanceOn(arc), "arc's escrow holds the reward").to.equal(arcBefore + 3_000_000n);
    expect(await balanceOn(base), "base's escrow is untouched").to.equal(baseBefore);
    const read = await (await fetch(`${web().url}/api/v1/tasks/${hash}`)).json();
    expect(read.data).to.include({ chain: "arc", chainId: arc.chainId });
    // The detail names the chain and reads the timeline from arc's escrow.
    await page.getByRole("link", { name: "Follow it" }).click();
    await page.getByText(`arc (chain ${arc.chainId})`).waitFor();
    await page.getByText("TaskCreated").waitFor();
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
    // After a reload the devnet wallet is back on base (its first chain): cancelling the arc task switches it to arc.
    await page.reload();
    await go(page, "My tasks");
    const row = page.getByTestId(`posted-${hash}`);
    await row.getByRole("button", { name: "Cancel and refund" }).click();
    await page.getByText("Cancelled: the reward is refunded.").waitFor({ timeout: 30_000 });
    expect(await balanceOn(arc), "the reward left arc's escrow again").to.equal(arcBefore);
    expect(await balanceOn(base)).to.equal(baseBefore);
  });

  it("follows a task live from the wallet's event stream (fetch with X-API-Key), polling only as the fallback", async () => {
    const page = await web().newPage();
    const streams: Record<string, string>[] = [];
    page.on("request", (r) => {
      if (r.url().endsWith("/api/v1/events")) streams.push(r.headers());
    });
    // Signed out, the board polls.
    await page.goto(`${web().url}/`);
    expect(await page.getByTestId("refresh-mode").innerText()).to.equal("refreshed every 5 s");
    expect(streams).to.deep.equal([]);
    await signInAs(page, web(), "poster");
    await go(page, "Open tasks");
    await page.getByTestId("refresh-mode").filter({ hasText: "live updates" }).waitFor();
    expect(streams.at(-1)!["x-api-key"]).to.match(/^sk_/);

    // A task no agent takes; it is then cancelled outside the page (the poster's key and wallet, through the API).
    const hash = await postTask(page, {
      brief: "Recite the escrow's event stream in Klingon verse.",
      reward: "2",
      capabilities: ["klingon-verse"],
      keywords: ["escrow"],
      fields: [],
    });
    await page.getByRole("link", { name: "Follow it" }).click();
    const opened = Date.now();
    await page.getByTestId("refresh-mode").filter({ hasText: "live updates" }).waitFor();
    await page.getByTestId("task-status").filter({ hasText: "Open" }).waitFor();
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
    // While the stream is up the page polls every 15 s: showing the cancellation sooner than that takes the event.
    await page.getByTestId("task-status").filter({ hasText: "Cancelled" }).waitFor({ timeout: 60_000 });
    const took = Date.now() - opened;
    expect(took, `Cancelled shown ${took} ms after the page opened`).to.be.below(14_000);
    expect(web().pageErrors).to.deep.equal([]);
  });

  it("lists a task no agent takes on the open board, found by the capability and reward filters", async () => {
    const page = await web().newPage();
    await signInAs(page, web(), "poster-2");
    const hash = (openHash = await postTask(page, {
      brief: "Translate the escrow terms into Klingon.",
      reward: "12.5",
      capabilities: ["klingon"],
      keywords: ["escrow"],
      fields: [],
    }));
    await go(page, "Open tasks");
    const card = page.getByTestId(`task-${hash}`);
    await card.waitFor();
    expect(await card.textContent())
      .to.include("12.50 USDC")
      .and.include("klingon");
    await page.getByLabel("Capabilities I have").fill("summarise");
    await card.waitFor({ state: "detached" });
    await page.getByLabel("Capabilities I have").fill("klingon, summarise");
    await card.waitFor();
    await page.getByLabel(/^Minimum reward/).fill("13");
    await card.waitFor({ state: "detached" });
    await page.getByLabel(/^Minimum reward/).fill("12");
    await card.waitFor();
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
  });

  it("as poster: passes a manual submission (paid), disputes one, fails one, cancels an open task (refunded)", async () => {
    const page = await web().newPage();
    await signInAs(page, web(), "poster-2");
    const manual = await postTask(page, {
      brief: "Summarise for my review: the escrow pays on a passing verdict.",
      reward: "9",
      capabilities: ["text"],
      keywords: [],
      fields: [],
      mode: "manual",
    });
    await go(page, "My tasks");
    const card = page.getByTestId(`posted-${manual}`);
    await card.getByTestId("task-status").filter({ hasText: "Submitted" }).waitFor({ timeout: 60_000 });
    await card.getByRole("button", { name: "Pass and pay" }).click();
    await card.getByTestId("task-status").filter({ hasText: "Paid" }).waitFor({ timeout: 60_000 });

    // A second submission the poster contests: the dispute is signed by the poster's wallet.
    const contested = await postTask(page, {
      brief: "Summarise for my review: a disputed delivery goes to the admin.",
      reward: "4",
      capabilities: ["text"],
      keywords: [],
      fields: [],
      mode: "manual",
    });
    await go(page, "My tasks");
    const disputed = page.getByTestId(`posted-${contested}`);
    await disputed.getByTestId("task-status").filter({ hasText: "Submitted" }).waitFor({ timeout: 60_000 });
    await disputed.getByRole("button", { name: "Dispute" }).click();
    await disputed.getByTestId("task-status").filter({ hasText: "Disputed" }).waitFor({ timeout: 30_000 });
    expect((await (await fetch(`${web().url}/api/v1/tasks/${contested}`)).json()).data.status).to.equal(6);

    // A third the poster fails: the marketplace verifier records the failed verdict on chain.
    const failed = await postTask(page, {
      brief: "Summarise for my review: a failed verdict lets the worker resubmit or appeal.",
      reward: "4",
      capabilities: ["text"],
      keywords: [],
      fields: [],
      mode: "manual",
    });
    await go(page, "My tasks");
    const failing = page.getByTestId(`posted-${failed}`);
    await failing.getByTestId("task-status").filter({ hasText: "Submitted" }).waitFor({ timeout: 60_000 });
    await failing.getByRole("button", { name: "Fail" }).click();
    await page.getByText("Failed verdict recorded").waitFor();
    for (let i = 0; i < 100; i++) {
      const task = (await (await fetch(`${web().url}/api/v1/tasks/${failed}`)).json()).data;
      if (task.failedVerdictAt > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect((await (await fetch(`${web().url}/api/v1/tasks/${failed}`)).json()).data.failedVerdictAt).to.be.greaterThan(
      0,
    );

    const open = page.getByTestId(`posted-${openHash}`);
    await open.getByRole("button", { name: "Cancel and refund" }).click();
    await open.getByTestId("task-status").filter({ hasText: "Cancelled" }).waitFor({ timeout: 30_000 });
    const onChain = await (await fetch(`${web().url}/api/v1/tasks/${openHash}`)).json();
    expect(onChain.data.status).to.equal(5);
    expect(onChain.data.refund).to.equal("12500000");
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
  });

  it("with a browser wallet on another chain: signs nothing while it refuses to switch, posts once it switches", async () => {
    const page = await web().newPage();
    const wallet = await injectWallet(page, web(), web().account("poster-2").privateKey, {
      chainId: 1,
      allowSwitch: false,
    });
    await page.goto(`${web().url}/settings`);
    await page.getByRole("button", { name: "Test Wallet" }).click();
    await page.getByTestId("session-address").waitFor();
    const task = { reward: "3", capabilities: ["klingon"], keywords: ["klingon"], fields: [] };

    // Refused: the chain check fails, shown to the user, and no transaction is asked for.
    await go(page, "Post a task");
    await page.getByRole("textbox", { name: "Brief" }).fill("Say hello in Klingon, from a wallet on chain 1.");
    await page.getByRole("combobox", { name: "Must contain the keywords" }).fill("klingon");
    await page.keyboard.press("Enter");
    await page.getByRole("button", { name: "Post and fund the task" }).click();
    await page.getByText("A check failed: nothing was signed.").waitFor();
    const failed = page
      .getByTestId("checks")
      .getByRole("listitem")
      .filter({ has: page.getByLabel("failed") });
    expect(await failed.count()).to.equal(1);
    expect(await failed.textContent()).to.include("The wallet's chain (1)");
    expect(wallet.calls).to.include("wallet_switchEthereumChain");
    expect(wallet.calls).to.not.include("eth_sendTransaction");

    // Agreed: the wallet moves to the settlement chain and the task is funded from it.
    wallet.allowSwitch = true;
    const hash = await postTask(page, { ...task, brief: "Say hello in Klingon, from a wallet that switched." });
    expect(wallet.chainId).to.equal(web().devnet.deployment.book.chainId);
    const listed = await (await fetch(`${web().url}/api/v1/tasks/${hash}`)).json();
    expect(listed.data.poster).to.equal(wallet.address.toLowerCase());
  });

  it("posts a private task: the brief is encrypted in the page and the network never carries the plaintext", async () => {
    const page = await web().newPage();
    const sent: { url: string; body: string }[] = [];
    page.on("request", (request) => sent.push({ url: request.url(), body: request.postData() ?? "" }));
    await signInAs(page, web(), "poster");
    const agent = web().account("agent-1");
    const secret = "Translate the vault combination 4711-SECRET into Klingon.";
    const hash = await postTask(page, {
      brief: secret,
      reward: "7",
      capabilities: ["klingon"],
      keywords: ["klingon"],
      fields: [],
      privateTo: [agent.address],
    });
    expect(await page.getByTestId("posted").innerText()).to.include("(private)");
    const forms = [secret, Buffer.from(secret).toString("base64"), encodeURIComponent(secret), "4711-SECRET"];
    for (const request of sent) {
      for (const form of forms) expect(`${request.url} ${request.body}`).to.not.include(form, request.url);
    }
    // The uploaded blob is the sealed brief; the chosen agent opens it with its own key.
    const index = sent.find((r) => r.url.endsWith("/api/v1/a2a/tasks/index"));
    const { wrappedKeys, privacy } = JSON.parse(index!.body);
    expect(privacy).to.equal("private");
    expect(Object.keys(wrappedKeys)).to.deep.equal([agent.address.toLowerCase()]);
    const blob = Buffer.from(await (await fetch(`${web().url}/api/v1/storage/blobs/${hash}`)).arrayBuffer());
    const briefKey = unwrapBriefKey(wrappedKeys[agent.address.toLowerCase()], agent.privateKey);
    expect(decryptBrief(blob, briefKey).toString("utf8")).to.equal(secret);
    // The public projection shows no brief.
    const listed = await (await fetch(`${web().url}/api/v1/tasks/${hash}`)).json();
    expect(listed.data.a2aMeta.privacy).to.equal("private");
    expect(JSON.stringify(listed.data)).to.not.include("4711");
  });

  it("shows the agent the task it worked on and a task offered to it", async () => {
    // A task pinned to agent-2 (the rental flow), posted through the API by the poster's devnet key.
    const poster = web().account("poster");
    const agent = web().account("agent-2");
    const call = (path: string, key: string, body?: unknown) => callApi(web(), path, key, body);
    const registered = await call("/api/v1/a2a/executors", agent.apiKey, {
      publicKey: agentPublicKey(agent.privateKey),
      capabilities: ["review"],
    });
    expect(registered.status, JSON.stringify(registered.json)).to.be.oneOf([200, 201]);
    const brief = "Review the escrow contract for agent-2.";
    const upload = await call("/api/v1/storage/upload", poster.apiKey, { data: Buffer.from(brief).toString("base64") });
    const taskHash = upload.json.data.rootHash;
    const settlement = (await call("/api/v1/health/settlement", poster.apiKey)).json.data;
    const chain = settlement.chains.find((c: { chain: string }) => c.chain === settlement.postingChain);
    const amount = 3_000_000n;
    const built = await call("/api/v1/tasks", poster.apiKey, {
      taskHash,
      token: chain.token.address,
      amount: amount.toString(),
      locationZone: "global",
      duration: "86400",
    });
    expect(built.status, JSON.stringify(built.json)).to.equal(200);
    const wallet = new Wallet(
      poster.privateKey,
      new JsonRpcProvider(web().devnet.rpcUrl, undefined, { cacheTimeout: -1 }),
    );
    const usdc = new Contract(chain.token.address, ["function approve(address,uint256) returns (bool)"], wallet);
    await (await usdc.approve(chain.escrowAddress, amount)).wait();
    const sent = await wallet.sendTransaction({
      to: built.json.data.unsignedTx.to,
      data: built.json.data.unsignedTx.data,
    });
    await sent.wait();
    const indexed = await call("/api/v1/a2a/tasks/index", poster.apiKey, {
      txHash: sent.hash,
      taskHash,
      privacy: "public",
      publicBrief: brief,
      targetExecutor: agent.address,
    });
    expect(indexed.status, JSON.stringify(indexed.json)).to.equal(200);

    const page = await web().newPage();
    await signInAs(page, web(), "agent-2");
    await go(page, "My tasks");
    await page.getByRole("tab", { name: "As agent" }).click();
    await page.getByTestId("offered").getByTestId(`task-${taskHash}`).waitFor();

    const worker = await web().newPage();
    await signInAs(worker, web(), "agent-1");
    await go(worker, "My tasks");
    await worker.getByRole("tab", { name: "As agent" }).click();
    const worked = worker.getByTestId("working").getByTestId(`task-${paidHash}`);
    await worked.waitFor();
    expect(await worked.getByTestId("task-status").textContent()).to.equal("Paid");

    // The directory and the agent's card: agent-1's reputation counts the paid tasks.
    await go(worker, "Agents");
    const agent1 = web().account("agent-1").address;
    await worker.getByRole("table", { name: "Agents" }).getByTitle(agent1.toLowerCase()).click();
    const card = worker.getByRole("dialog", { name: "Agent" });
    await card.getByText(agent1.toLowerCase()).waitFor();
    const paidRow = card.getByRole("row", { name: /Paid tasks/ });
    expect(Number((await paidRow.getByRole("cell").textContent())!.trim())).to.be.greaterThan(0);
    expect(await seriousA11yViolations(worker)).to.deep.equal([]);
  });

  it("rents an agent's service from the Agents page: the task is pinned to the agent, paying at least the price", async () => {
    // agent-3 registers and offers a service through the API.
    const agent = web().account("agent-3");
    const call = (path: string, key: string, body?: unknown) => callApi(web(), path, key, body);
    const registered = await call("/api/v1/a2a/executors", agent.apiKey, {
      publicKey: agentPublicKey(agent.privateKey),
      capabilities: ["audit"],
    });
    expect(registered.status, JSON.stringify(registered.json)).to.be.oneOf([200, 201]);
    const offered = await call("/api/v1/marketplace/services", agent.apiKey, {
      name: "Solidity audit",
      description: "A written review of one contract.",
      price_raw: 4_500_000,
      capabilities: ["audit"],
      delivery_time_seconds: 86400,
    });
    expect(offered.status, JSON.stringify(offered.json)).to.equal(201);
    const service = offered.json.data;

    const page = await web().newPage();
    await signInAs(page, web(), "poster");
    await go(page, "Agents");
    await page.getByLabel("Capabilities").fill("audit");
    await page.getByRole("table", { name: "Agents" }).getByTitle(agent.address.toLowerCase()).click();
    const card = page.getByRole("dialog", { name: "Agent" }).getByTestId(`service-${service.id}`);
    await card.waitFor();
    expect(await card.innerText())
      .to.include("Solidity audit")
      .and.include("4.50 USDC")
      .and.include("1 day");
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
    await card.getByRole("link", { name: "Rent Solidity audit" }).click();

    // The form is pinned to the agent; the reward starts at the price and may not go below it.
    await page.getByTestId("rental").waitFor();
    expect(await page.getByTestId("rental").innerText()).to.include("4.50 USDC");
    expect(await page.getByLabel(/^Reward/).inputValue()).to.equal("4.5");
    await page.getByLabel(/^Reward/).fill("4");
    await page.getByRole("button", { name: "Post and fund the task" }).click();
    await page.getByText("At least the service's price, 4.50 USDC", { exact: true }).waitFor();
    await page.getByLabel(/^Reward/).fill("5");
    const listing = page.waitForResponse((r) => r.url().endsWith("/api/v1/a2a/tasks/index"));
    const hash = await fillAndPostTask(page, {
      brief: "Audit the escrow contract's reclaim path.",
      capabilities: [],
      keywords: ["reclaim"],
      fields: [],
    });
    const indexed = await listing;
    expect(indexed.status()).to.equal(200);
    const body = JSON.parse(indexed.request().postData()!);
    expect(body.targetExecutor).to.equal(service.agent_address);
    expect(body.serviceId).to.equal(service.id);

    // In the agent's offered list (API and page), never on the open board.
    const list = await call("/api/v1/a2a/tasks/offered", agent.apiKey);
    const task = list.json.data.tasks.find((t: { meta: { taskHash: string } }) => t.meta.taskHash === hash);
    expect(task, JSON.stringify(list.json)).to.not.equal(undefined);
    expect(task.meta.amount).to.equal("5000000");
    expect(task.meta.serviceId).to.equal(service.id);
    expect(task.meta.targetExecutor).to.equal(service.agent_address);
    const board = (await call("/api/v1/a2a/tasks?limit=100", agent.apiKey)).json.data.tasks;
    expect(board.map((t: { meta: { taskHash: string } }) => t.meta.taskHash)).to.not.include(hash);
    const agentPage = await web().newPage();
    await signInAs(agentPage, web(), "agent-3");
    await go(agentPage, "My tasks");
    await agentPage.getByRole("tab", { name: "As agent" }).click();
    await agentPage.getByTestId("offered").getByTestId(`task-${hash}`).waitFor();
  });

  // Last: it moves the chain's clock past deadlines.
  it("as poster: reclaims submitted work after the deadline (refused before it, saying so)", async () => {
    const page = await web().newPage();
    await signInAs(page, web(), "poster-2");
    const hash = await postTask(page, {
      brief: "Summarise for my review within the hour: escrow deadlines.",
      reward: "2",
      capabilities: ["text"],
      keywords: [],
      fields: [],
      mode: "manual",
      deadline: "1 hour",
    });
    await go(page, "My tasks");
    const card = page.getByTestId(`posted-${hash}`);
    await card.getByTestId("task-status").filter({ hasText: "Submitted" }).waitFor({ timeout: 60_000 });
    await card.getByRole("button", { name: "Reclaim after the deadline" }).click();
    await page.getByText("(DEADLINE_NOT_REACHED)").waitFor();

    await network.provider.send("evm_increaseTime", [2 * 3600]);
    await network.provider.send("evm_mine", []);
    // No wait for the server's one-second chain-time cache: a time refusal re-reads the chain first.
    await card.getByRole("button", { name: "Reclaim after the deadline" }).click();
    await page.getByText("Reclaimed (escalate).").waitFor({ timeout: 30_000 });
    // The page saw the receipt; the index follows within a poll or two.
    let escalated = false;
    for (let i = 0; i < 100 && !escalated; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      escalated = (await (await fetch(`${web().url}/api/v1/tasks/${hash}`)).json()).data.escalated === true;
    }
    expect(escalated, "the task's record shows the escalation").to.equal(true);
  });
});
