/**
 * The first hour in the terminal, as a newcomer meets it with the real `market` binary against a devnet: the devnet
 * says what it is doing while it starts and keeps the specification's rate limits; a single `post` speaks of the task
 * (not of batch rows); a misspelt verification rule is named with the nearest one; `status`, `watch` and the signed
 * operations take the on-chain id (`2` or `#2`); `watch --json` names the settling transaction; `reclaim` on an
 * expired, untaken task says to cancel it; a wallet without the token is told the amounts in USDC and, on a devnet,
 * about `market faucet`; `market keys` lists and revokes keys; a key the devnet does not know says it was restarted.
 */
import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { ethers, network } from "hardhat";
import { Wallet } from "ethers";
import { runCli, startCliDevnet, type CliDevnet } from "./run";
import { MockUSDC__factory } from "../../../typechain-types";
import { devnetServerConfig, devnetSummary, NEW_CHAIN_NOTICE } from "../../../scripts/devnet";

describe("market CLI: the first hour against a devnet", function () {
  this.timeout(240_000);
  let net: CliDevnet;
  before(async () => {
    net = await startCliDevnet();
  });
  after(async () => net?.close());

  /** Posts a public task nobody on the devnet takes (no agent has the capability): its hash and on-chain id. */
  async function postUntaken(text: string) {
    const posted = await runCli(
      [
        "post",
        "--json",
        "--text",
        text,
        "--public",
        "--capabilities",
        "no-such-skill",
        "--amount",
        "1",
        "--duration",
        "1h",
      ],
      net.env("poster"),
    );
    expect(posted.code, posted.stdout + posted.stderr).to.equal(0);
    return posted.json as { taskHash: string; onChainTaskId: number; txHash: string };
  }

  it("the devnet says each step while starting, that a restart is a new chain, and keeps 100 requests a minute per IP", () => {
    expect(net.progress.join("\n")).to.match(/Deploying the escrow/);
    expect(net.progress.some((line) => line.startsWith("Starting the API"))).to.equal(true);
    expect(net.progress.some((line) => line.startsWith("Starting the hosted example agent"))).to.equal(true);
    expect(devnetSummary(net.devnet)).to.include(NEW_CHAIN_NOTICE);
    expect(NEW_CHAIN_NOTICE)
      .to.match(/new chain with new keys/)
      .and.to.include("market login");

    const { RATE_IP_PER_WINDOW: _raised, ...env } = process.env;
    const config = devnetServerConfig(env, {
      rpcUrl: net.devnet.rpcUrl,
      dataDir: net.home,
      apiPort: 1,
      outDir: net.home,
    });
    expect(config.api.limits.ipPerWindow).to.equal(100);
    expect(config.api.limits.windowMs).to.equal(60_000);
  });

  it("a single post refuses a short duration as INVALID_DURATION about the task, not about rows", async () => {
    const posted = await runCli(
      ["post", "--text", "Too short a deadline", "--public", "--amount", "1", "--duration", "30m"],
      net.env("poster"),
    );
    expect(posted.code).to.equal(2);
    expect(posted.stderr).to.match(/^error INVALID_DURATION: --duration 30m is 1800 seconds/m);
    expect(posted.stderr).to.not.match(/\brows?\b/);
    const json = await runCli(
      ["post", "--json", "--text", "Too long", "--public", "--amount", "1", "--duration", "91d"],
      net.env("poster"),
    );
    expect(json.json.error).to.include({ code: "INVALID_DURATION", exitCode: 2 });
  });

  it("an unknown verification rule key is named with the nearest known one", async () => {
    const posted = await runCli(
      [
        "post",
        "--json",
        "--text",
        "Rules",
        "--public",
        "--mode",
        "auto",
        "--criteria",
        '{"min_len":20}',
        "--amount",
        "1",
      ],
      net.env("poster"),
    );
    expect(posted.code).to.equal(2);
    expect(posted.json.error.code).to.equal("INVALID_CRITERIA");
    expect(posted.json.error.message).to.include('"min_len" (did you mean min_length?)');
    const fields = await runCli(
      [
        "post",
        "--json",
        "--text",
        "Rules",
        "--public",
        "--mode",
        "auto",
        "--criteria",
        '{"required_field":["a"]}',
        "--amount",
        "1",
      ],
      net.env("poster"),
    );
    expect(fields.json.error.message).to.include("did you mean required_fields?");
  });

  it("watch --json names the transaction that paid the worker", async () => {
    const env = net.env("poster");
    const text = "Summarise: the first hour in the terminal, paid and followed by its on-chain id.";
    const posted = await runCli(
      [
        "post",
        "--json",
        "--text",
        text,
        "--public",
        "--mode",
        "auto",
        "--criteria",
        '{"required_fields":["summary"]}',
        "--capabilities",
        "summarise",
        "--amount",
        "1.5",
        "--duration",
        "1h",
      ],
      env,
    );
    expect(posted.code, posted.stdout + posted.stderr).to.equal(0);
    expect(posted.stdout).to.not.include("undefined");
    const watched = await runCli(["watch", `#${posted.json.onChainTaskId}`, "--json", "--timeout", "2m"], env, 150_000);
    expect(watched.code, watched.stdout + watched.stderr).to.equal(0);
    expect(watched.json).to.include({ taskHash: posted.json.taskHash, state: "completed", outcome: "paid" });
    const receipt = await ethers.provider.getTransactionReceipt(watched.json.txHash);
    expect(receipt?.status).to.equal(1);
    const escrow = net.devnet.deployment.escrow;
    const completed = receipt!.logs
      .map((log) =>
        log.address.toLowerCase() === net.devnet.deployment.book.escrow.proxy.toLowerCase()
          ? escrow.interface.parseLog(log)
          : null,
      )
      .find((parsed) => parsed?.name === "TaskCompleted");
    expect(completed?.args.taskId).to.equal(BigInt(posted.json.onChainTaskId));
  });

  it("status takes the on-chain id (2 and #2); reclaim on an expired, untaken task says to cancel it; watch names the refund", async () => {
    const env = net.env("poster");
    const task = await postUntaken("Translate this into Klingon: nobody on the devnet can.");
    for (const ref of [String(task.onChainTaskId), `#${task.onChainTaskId}`]) {
      const status = await runCli(["status", ref, "--json"], env);
      expect(status.code, status.stdout + status.stderr).to.equal(0);
      expect(status.json).to.include({ taskHash: task.taskHash, onChainTaskId: task.onChainTaskId, state: "open" });
    }
    const human = await runCli(["status", `#${task.onChainTaskId}`], env);
    // The devnet's posting chain is base (chain id 31337); the line names it beside the on-chain id.
    expect(human.stdout).to.include(`Task      ${task.taskHash} (id ${task.onChainTaskId} on base, chain id 31337)`);

    // Past its deadline, nobody having taken it.
    await network.provider.send("evm_increaseTime", [2 * 3600]);
    await network.provider.send("evm_mine", []);
    const reclaim = await runCli(["reclaim", `#${task.onChainTaskId}`], env);
    expect(reclaim.code, reclaim.stdout + reclaim.stderr).to.equal(4);
    expect(reclaim.stderr).to.match(/^error USE_CANCEL: nobody took task 0x[0-9a-f]{64} before its deadline/m);
    expect(reclaim.stderr).to.include(`what to do: market cancel ${task.taskHash} refunds the whole reward to you`);

    const cancelled = await runCli(["cancel", `#${task.onChainTaskId}`, "--json"], env);
    expect(cancelled.code, cancelled.stdout + cancelled.stderr).to.equal(0);
    const watched = await runCli(["watch", task.taskHash, "--json", "--timeout", "1m"], env);
    expect(watched.code, watched.stdout + watched.stderr).to.equal(0);
    expect(watched.json).to.include({ state: "cancelled", outcome: "refunded", txHash: cancelled.json.txHash });
  });

  describe("a new wallet", () => {
    const wallet = Wallet.createRandom();
    let env: Record<string, string>;
    let configPath: string;
    before(async () => {
      const { MARKET_API_KEY: _unused, ...base } = net.env("poster");
      configPath = path.join(net.home, "newcomer", "market.json");
      env = { ...base, MARKET_PRIVATE_KEY: wallet.privateKey, MARKET_CONFIG: configPath };
      const login = await runCli(["login", "--json"], env);
      expect(login.code, login.stdout + login.stderr).to.equal(0);
    });

    it("without the token: the amounts in USDC and, on the devnet, market faucet; after the faucet it posts", async () => {
      const posted = await runCli(["post", "--text", "My first task", "--public", "--amount", "1"], env);
      expect(posted.code, posted.stdout + posted.stderr).to.equal(4);
      expect(posted.stderr).to.include(
        `error INSUFFICIENT_BALANCE: the wallet ${wallet.address} holds 0 USDC, the reward is 1 USDC`,
      );
      expect(posted.stderr).to.include("what to do: this is a devnet: `market faucet` gives your wallet test USDC");

      const faucet = await runCli(["faucet", "--json"], env);
      expect(faucet.code, faucet.stdout + faucet.stderr).to.equal(0);
      const usdc = MockUSDC__factory.connect(net.devnet.deployment.book.token.address, ethers.provider);
      expect(await usdc.balanceOf(wallet.address)).to.equal(1000n * 10n ** 6n);
      expect(faucet.json).to.include({ minted: "1000000000", balance: "1000000000" });
      expect(await ethers.provider.getBalance(wallet.address)).to.be.greaterThan(0n);

      const again = await runCli(["post", "--json", "--text", "My first task", "--public", "--amount", "1"], env);
      expect(again.code, again.stdout + again.stderr).to.equal(0);
      expect(await usdc.balanceOf(wallet.address)).to.equal(999n * 10n ** 6n);
    });

    it("keys lists the wallet's keys and revokes one; a revoked key on a devnet says to log in again", async () => {
      const listed = await runCli(["keys", "--json"], env);
      expect(listed.code, listed.stdout + listed.stderr).to.equal(0);
      expect(listed.json.keys).to.have.length(1);
      const [key] = listed.json.keys;
      expect(key).to.include({ current: true, revokedAt: null, label: "market cli" });
      const human = await runCli(["keys"], env);
      expect(human.stdout)
        .to.match(/^ID\s+KEY\s+LABEL/m)
        .and.to.include("(this one)");

      const missing = await runCli(["keys", "revoke", "999999", "--json"], env);
      expect(missing.code).to.equal(4);
      expect(missing.json.error.code).to.equal("NOT_FOUND");

      const revoked = await runCli(["keys", "revoke", String(key.id), "--json"], env);
      expect(revoked.code, revoked.stdout + revoked.stderr).to.equal(0);
      expect(revoked.json).to.include({ id: key.id, revoked: true, current: true });
      expect(JSON.parse(fs.readFileSync(configPath, "utf8")).apiKey).to.be.a("string");

      // The saved key is gone on the service, as after a devnet restart: the CLI says what happened and what to do.
      const after = await runCli(["keys"], env);
      expect(after.code).to.equal(3);
      expect(after.stderr).to.match(/^error UNAUTHORIZED:/m);
      expect(after.stderr).to.include("every devnet start is a new chain with new keys").and.to.include("market login");
    });
  });

  it("faucet refuses a service that is not a devnet", async () => {
    const env = { ...net.env("poster"), MARKET_API_URL: `${net.devnet.apiUrl}/not-the-api` };
    const faucet = await runCli(["faucet", "--json"], env);
    expect(faucet.code).to.equal(4);
    expect(faucet.json.error.code).to.equal("NOT_DEVNET");
  });
});
