/**
 * Settling tasks with the real `market` binary against a devnet: cancel an open task, reclaim an assigned one after
 * its deadline, dispute a delivery and have the devnet admin rule on it, and the worker's escalate-then-release path
 * when the poster never judges. Each checks the chain or the service, not only the CLI's answer.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { time } from "@nomicfoundation/hardhat-network-helpers";
import { runCli, startCliDevnet, type CliDevnet } from "./run";
import { hardhatPrivateKey } from "../../helpers/keys";
import { MarketApi, agentPublicKey } from "../../../client/sdk/index";
import { MockUSDC__factory } from "../../../typechain-types";

const DAY = 86_400;

describe("market CLI: settling tasks against a devnet", function () {
  this.timeout(300_000);
  let net: CliDevnet;
  before(async () => {
    net = await startCliDevnet();
  });
  after(async () => net?.close());

  /** Posts a public manual task; `capabilities` "nobody" keeps the devnet's example agent away from it. */
  async function post(role: string, text: string, capabilities: string): Promise<{ taskHash: string }> {
    const args = ["post", "--json", "--text", text, "--public", "--capabilities", capabilities, "--amount", "1"];
    const posted = await runCli([...args, "--duration", "1h"], net.env(role));
    expect(posted.code, posted.stdout + posted.stderr).to.equal(0);
    return posted.json;
  }

  async function stateOf(taskHash: string, until?: string): Promise<string> {
    for (let i = 0; ; i++) {
      const state = (await runCli(["status", taskHash, "--json"], net.env("poster"))).json.state;
      if (!until || state === until || i === 60) return state;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  it("cancel refunds an open task; reclaim of an open task says to cancel (USE_CANCEL, exit 4)", async () => {
    const poster = net.devnet.accounts.find((a) => a.role === "poster")!;
    const usdc = MockUSDC__factory.connect(net.devnet.deployment.book.token.address, ethers.provider);
    const before = await usdc.balanceOf(poster.address);
    const { taskHash } = await post("poster", "A task nobody can do: cancel it.", "nobody");

    const reclaim = await runCli(["reclaim", taskHash, "--json"], net.env("poster"));
    expect(reclaim.code).to.equal(4);
    expect(reclaim.json.error.code).to.equal("USE_CANCEL");

    const cancelled = await runCli(["cancel", taskHash, "--json"], net.env("poster"));
    expect(cancelled.code, cancelled.stdout + cancelled.stderr).to.equal(0);
    expect(cancelled.json).to.include({ operation: "cancel", taskHash });
    expect((await ethers.provider.getTransactionReceipt(cancelled.json.txHash))?.status).to.equal(1);
    expect(await usdc.balanceOf(poster.address)).to.equal(before);
    expect(await stateOf(taskHash, "cancelled")).to.equal("cancelled");

    const other = await runCli(["cancel", taskHash, "--json"], net.env("poster-2"));
    expect(other.code).to.equal(4);
    expect(other.json.error.code).to.equal("NOT_POSTER");
  });

  it("reclaim after the deadline refunds a task its agent never delivered", async () => {
    const { taskHash } = await post("poster-2", "Accepted, then never delivered.", "nobody");
    // agent-3 takes it through the SDK and goes silent.
    const agent = net.devnet.accounts.find((a) => a.role === "agent-3")!;
    const api = new MarketApi({ baseUrl: net.devnet.apiUrl!, apiKey: agent.apiKey });
    await api.registerExecutor({ publicKey: agentPublicKey(agent.privateKey), capabilities: ["nobody"] });
    await api.accept(taskHash);
    expect(await stateOf(taskHash, "assigned")).to.equal("assigned");

    const early = await runCli(["reclaim", taskHash, "--json"], net.env("poster-2"));
    expect(early.code).to.equal(4);
    expect(early.json.error).to.include({ code: "DEADLINE_NOT_REACHED" });
    expect(early.stdout).to.include("availableAt");

    await time.increase(2 * 3600);
    const reclaimed = await runCli(["reclaim", taskHash, "--json"], net.env("poster-2"));
    expect(reclaimed.code, reclaimed.stdout + reclaimed.stderr).to.equal(0);
    expect(reclaimed.json).to.include({ operation: "reclaim", outcome: "refund" });
    expect(await stateOf(taskHash, "cancelled")).to.equal("cancelled");
  });

  it("dispute a delivery, then the devnet admin rules for the worker: admin resolve --worker pays it", async () => {
    const { taskHash } = await post("poster", "Summarise: disputed, then ruled on.", "text");
    expect(await stateOf(taskHash, "submitted")).to.equal("submitted"); // the example agent delivered

    const disputed = await runCli(["dispute", taskHash, "--json"], net.env("poster"));
    expect(disputed.code, disputed.stdout + disputed.stderr).to.equal(0);
    expect(await stateOf(taskHash, "disputed")).to.equal("disputed");

    const notAdmin = await runCli(["admin", "resolve", taskHash, "--worker", "--json"], net.env("poster"));
    expect(notAdmin.code).to.equal(3);
    expect(notAdmin.json.error.code).to.equal("OWNER_MISMATCH");

    const adminEnv = { ...net.env("poster"), MARKET_PRIVATE_KEY: hardhatPrivateKey(0) };
    const ruled = await runCli(["admin", "resolve", taskHash, "--worker", "--json"], adminEnv);
    expect(ruled.code, ruled.stdout + ruled.stderr).to.equal(0);
    expect(ruled.json).to.include({ taskHash, workerFavored: true });
    expect(await stateOf(taskHash, "completed")).to.equal("completed");
  });

  it("the poster never judges: the worker escalates 3 days after the deadline and releases 14 days later", async () => {
    const { taskHash } = await post("poster-2", "Summarise: judged by nobody.", "text");
    expect(await stateOf(taskHash, "submitted")).to.equal("submitted");
    const worker = net.env("agent-1"); // the devnet's example agent delivered it

    await time.increase(3600 + 3 * DAY + 60);
    const escalated = await runCli(["escalate", taskHash, "--json"], worker);
    expect(escalated.code, escalated.stdout + escalated.stderr).to.equal(0);
    expect(await stateOf(taskHash, "disputed")).to.equal("disputed");

    const early = await runCli(["release", taskHash, "--json"], worker);
    expect(early.code).to.equal(4);
    expect(early.json.error.code).to.equal("DISPUTE_WINDOW_ACTIVE");

    await time.increase(14 * DAY + 60);
    const released = await runCli(["release", taskHash, "--json"], worker);
    expect(released.code, released.stdout + released.stderr).to.equal(0);
    expect(await stateOf(taskHash, "completed")).to.equal("completed");
  });
});
