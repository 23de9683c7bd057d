/**
 * Posting with the real `market` binary against a devnet, as a script would: `post --json` answers the task hash,
 * the on-chain id and the funding transaction; `watch --json` follows the task until the devnet's example agent is
 * paid; `status`, `tasks` and `post-many` read and post what the chain and the service hold.
 */
import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { ethers } from "hardhat";
import { runCli, startCliDevnet, type CliDevnet } from "./run";
import { MockUSDC__factory } from "../../../typechain-types";

describe("market CLI: posting against a devnet", function () {
  this.timeout(240_000);
  let net: CliDevnet;
  before(async () => {
    net = await startCliDevnet();
  });
  after(async () => net?.close());

  it("post --json answers taskHash, onChainTaskId and txHash, and watch follows the task to paid", async () => {
    const env = net.env("poster");
    const poster = net.devnet.accounts.find((a) => a.role === "poster")!;
    const usdc = MockUSDC__factory.connect(net.devnet.deployment.book.token.address, ethers.provider);
    const before = await usdc.balanceOf(poster.address);

    const posted = await runCli(
      [
        "post",
        "--json",
        "--text",
        "Summarise: the CLI posts a task and follows it until it is paid.",
        "--public",
        "--mode",
        "auto",
        "--criteria",
        '{"required_fields":["summary"]}',
        "--capabilities",
        "summarise",
        "--amount",
        "2.5",
        "--duration",
        "1h",
      ],
      env,
    );
    expect(posted.code, posted.stdout + posted.stderr).to.equal(0);
    const { taskHash, onChainTaskId, txHash } = posted.json;
    expect(taskHash).to.equal(
      ethers.sha256(ethers.toUtf8Bytes("Summarise: the CLI posts a task and follows it until it is paid.")),
    );
    expect(onChainTaskId).to.be.a("number");
    const receipt = await ethers.provider.getTransactionReceipt(txHash);
    expect(receipt?.status).to.equal(1);
    expect(before - (await usdc.balanceOf(poster.address))).to.equal(2_500_000n); // exactly the reward

    const watched = await runCli(["watch", taskHash, "--json", "--timeout", "2m"], env, 150_000);
    expect(watched.code, watched.stdout + watched.stderr).to.equal(0);
    expect(watched.json).to.include({ taskHash, state: "completed", outcome: "paid" });

    const status = await runCli(["status", taskHash, "--json"], env);
    expect(status.json).to.include({ taskHash, onChainTaskId, state: "completed", outcome: "paid" });
    expect(status.json.worker.toLowerCase()).to.equal(net.devnet.agent!.address.toLowerCase());
    expect(status.json.resultData).to.have.property("summary");

    const tasks = await runCli(["tasks", "posted", "--json"], env);
    expect(tasks.json.tasks.map((t: { taskHash: string }) => t.taskHash)).to.include(taskHash);
  });

  it("post --chain arc funds the task on arc through arc's RPC (MARKET_ARC_RPC_URL), base untouched", async () => {
    const env = net.env("poster-2");
    const [base, arc] = net.devnet.chains;
    const poster = net.devnet.accounts.find((a) => a.role === "poster-2")!;
    const balanceOn = (chain: typeof base) =>
      MockUSDC__factory.connect(
        chain.deployment.book.token.address,
        new ethers.JsonRpcProvider(chain.rpcUrl, undefined, { cacheTimeout: -1 }),
      ).balanceOf(poster.address);
    const [baseBefore, arcBefore] = await Promise.all([balanceOn(base), balanceOn(arc)]);
    const posted = await runCli(
      ["post", "--json", "--chain", "arc", "--text", "Tally the arc escrow's events.", "--public", "--amount", "1.5"],
      env,
    );
    expect(posted.code, posted.stdout + posted.stderr).to.equal(0);
    expect(posted.json).to.include({ chain: "arc", chainId: arc.chainId });
    expect(arcBefore - (await balanceOn(arc))).to.equal(1_500_000n);
    expect(await balanceOn(base)).to.equal(baseBefore);
    const receipt = await new ethers.JsonRpcProvider(arc.rpcUrl).getTransactionReceipt(posted.json.txHash);
    expect(receipt?.to?.toLowerCase()).to.equal(arc.deployment.book.escrow.proxy.toLowerCase());
  });

  it("human output: each step of the posting as a plain line off a TTY, then the task and what to do next", async () => {
    const posted = await runCli(["post", "--text", "Review my essay", "--private", "--amount-raw", "700000"], {
      ...net.env("poster-2"),
    });
    // A private task needs an agent that can read it: the devnet's example agent is registered.
    expect(posted.code, posted.stderr).to.equal(0);
    expect(posted.stderr).to.match(/^… posting the task from 0x[0-9a-fA-F]{40} on \w+ \(chain \d+\)$/m);
    expect(posted.stderr)
      .to.match(/^ {2}brief prepared \(private: encrypted/m)
      .and.to.match(/^ {2}brief uploaded/m)
      .and.to.match(/^ {2}task listed/m);
    expect(posted.stderr).to.match(/^✓ posting the task .*: #\d+$/m);
    expect(posted.stdout)
      .to.match(/^Task 0x[0-9a-f]{64}$/m)
      .and.to.include("Follow it: market watch 0x");
  });

  it("a service that does not answer is exit 5 with the code and what to do", async () => {
    const env = { ...net.env("poster-2"), MARKET_API_URL: "http://127.0.0.1:9" };
    const failed = await runCli(["post", "--text", "unreachable", "--public", "--amount", "1"], env);
    expect(failed.code).to.equal(5);
    expect(failed.stderr).to.match(/error API_UNREACHABLE:/);
    expect(failed.stderr).to.include("what to do: check --api-url");
  });

  it("post-many posts every row of a CSV in one batch, and INVALID_ROWS names the bad rows", async () => {
    const env = net.env("poster-2");
    const dir = fs.mkdtempSync(path.join(net.home, "rows-"));
    const good = path.join(dir, "tasks.csv");
    fs.writeFileSync(
      good,
      [
        "text,amount,duration,mode,capabilities",
        '"Translate ""hello"", please",1,1h,manual,text',
        "Count the words of this line,0.5,2d,manual,",
      ].join("\n"),
    );
    const posted = await runCli(["post-many", good, "--public", "--json"], env);
    expect(posted.code, posted.stdout + posted.stderr).to.equal(0);
    expect(posted.json.tasks).to.have.length(2);
    expect(posted.json.tasks[0].taskHash).to.equal(ethers.sha256(ethers.toUtf8Bytes('Translate "hello", please')));
    expect(posted.json.tasks.map((t: { amount: string }) => t.amount)).to.deep.equal(["1000000", "500000"]);

    const bad = path.join(dir, "bad.jsonl");
    fs.writeFileSync(
      bad,
      [
        JSON.stringify({ text: "fine row", amount: "1" }),
        JSON.stringify({ text: "no amount" }),
        "{ not json",
        JSON.stringify({ text: "bad duration", amount: "1", duration: "soon" }),
      ].join("\n"),
    );
    const refused = await runCli(["post-many", bad, "--public", "--json"], env);
    expect(refused.code).to.equal(2);
    expect(refused.json.error.code).to.equal("INVALID_ROWS");
    expect(refused.json.error.details.rows.map((r: { row: number }) => r.row)).to.deep.equal([3]);

    const parsed = fs
      .readFileSync(bad, "utf8")
      .split("\n")
      .filter((l) => l !== "{ not json")
      .join("\n");
    fs.writeFileSync(bad, parsed);
    const rows = await runCli(["post-many", bad, "--public", "--json"], env);
    expect(rows.code).to.equal(2);
    expect(rows.json.error.details.rows).to.deep.equal([
      { row: 2, code: "INVALID_AMOUNT", message: "give --amount <USDC> or --amount-raw <units>" },
      { row: 3, code: "INVALID_DURATION", message: '--duration "soon" is not seconds or <n>[smhdw]' },
    ]);
  });

  it("agent run delivers what --exec prints for a private task offered to it, and the poster's watch sees it paid", async () => {
    const agentEnv = net.env("agent-3");
    const agent = net.devnet.accounts.find((a) => a.role === "agent-3")!;
    const registered = await runCli(["agent", "register", "--capabilities", "shout", "--json"], agentEnv);
    expect(registered.code, registered.stderr).to.equal(0);
    expect(registered.json).to.include({ address: agent.address.toLowerCase() });

    const running = runCli(
      ["agent", "run", "--exec", "tr a-z A-Z", "--capabilities", "shout", "--max-tasks", "1", "--json"],
      agentEnv,
      150_000,
    );
    const brief = "shout this back, privately";
    const posted = await runCli(
      [
        "post",
        "--json",
        "--text",
        brief,
        "--private",
        "--to",
        agent.address,
        "--mode",
        "auto",
        "--criteria",
        '{"contains_keywords":["PRIVATELY"]}',
        "--capabilities",
        "shout",
        "--amount",
        "1",
      ],
      net.env("poster"),
    );
    expect(posted.code, posted.stdout + posted.stderr).to.equal(0);
    expect(posted.json.privacy).to.equal("private");

    const ran = await running;
    expect(ran.code, ran.stdout + ran.stderr).to.equal(0);
    expect(ran.json.delivered).to.deep.equal([posted.json.taskHash]);

    const watched = await runCli(["watch", posted.json.taskHash, "--json", "--timeout", "2m"], net.env("poster"));
    expect(watched.json).to.include({ state: "completed", outcome: "paid" });
    const status = await runCli(["status", posted.json.taskHash, "--json"], net.env("poster"));
    expect(status.json.resultData).to.equal(brief.toUpperCase());
    expect(status.json.worker.toLowerCase()).to.equal(agent.address.toLowerCase());
    // The agent's lists: the paid task stays in its work, and is no longer offered to it.
    const working = await runCli(["tasks", "working", "--json"], agentEnv);
    expect(working.code, working.stderr).to.equal(0);
    expect(working.json.which).to.equal("working");
    const worked = working.json.tasks.find((t: { taskHash: string }) => t.taskHash === posted.json.taskHash);
    expect(worked).to.include({ status: "completed", privacy: "private" });
    const offered = await runCli(["tasks", "offered", "--json"], agentEnv);
    expect(offered.code, offered.stderr).to.equal(0);
    expect(offered.json.tasks.map((t: { taskHash: string }) => t.taskHash)).to.not.include(posted.json.taskHash);
  });

  it("review --pass on a manual task: the poster's verdict pays the worker; a verdict without a delivery is refused", async () => {
    const env = net.env("poster");
    const post = async (text: string, capabilities: string) => {
      const args = ["post", "--json", "--text", text, "--public", "--capabilities", capabilities, "--amount", "1"];
      const posted = await runCli(args, env);
      expect(posted.code, posted.stderr).to.equal(0);
      return posted.json.taskHash as string;
    };
    // Nobody can take this one: nothing is delivered, and the service refuses a verdict with its code.
    const idle = await post("A manual task nobody takes.", "nobody");
    const early = await runCli(["review", idle, "--fail", "--json"], env);
    expect(early.code).to.equal(4);
    expect(early.json.error.code).to.equal("INVALID_STATE");

    const taskHash = await post("Summarise: a manual review.", "text");
    let state = "";
    for (let i = 0; i < 60 && state !== "submitted"; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 1000));
      state = (await runCli(["status", taskHash, "--json"], env)).json.state;
    }
    expect(state).to.equal("submitted"); // the devnet's example agent delivered

    const reviewed = await runCli(["review", taskHash, "--pass", "--json"], env);
    expect(reviewed.code, reviewed.stdout + reviewed.stderr).to.equal(0);
    expect(reviewed.json).to.include({ taskHash, passed: true, attempt: 1 });
    const watched = await runCli(["watch", taskHash, "--json", "--timeout", "2m"], env);
    expect(watched.json).to.include({ state: "completed", outcome: "paid" });
  });
});
