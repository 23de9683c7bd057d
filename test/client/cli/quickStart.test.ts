/**
 * docs/api.md's quick start as a user runs it: the shell block between its `quick-start` markers, run by bash
 * against a devnet (curl, jq and `npx market tx send`), posts a task that the chain and the service then hold. And
 * `market tx send` refuses, sending nothing, an answer whose approval is not exactly the reward.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { ethers } from "hardhat";
import { runCli, startCliDevnet, type CliDevnet } from "./run";
import { MockUSDC__factory, TaskEscrow__factory } from "../../../typechain-types";

const ROOT = path.join(__dirname, "..", "..", "..");

/** The shell block of docs/api.md between `<!-- quick-start -->` and `<!-- /quick-start -->`. */
function quickStartScript(): string {
  const doc = fs.readFileSync(path.join(ROOT, "docs", "api.md"), "utf8");
  const block = /<!-- quick-start -->\s*```sh\n([\s\S]*?)```\s*<!-- \/quick-start -->/.exec(doc);
  if (!block) throw new Error("docs/api.md has no quick-start block");
  return block[1];
}

function bash(script: string, cwd: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn("bash", ["-euo", "pipefail", "-c", script], { cwd, env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The commands the quick start uses beyond Node: absent ones make the suite skip, saying how to get them. */
const missingCommands = ["curl", "jq"].filter((name) => spawnSync("bash", ["-c", `command -v ${name}`]).status !== 0);

describe("docs/api.md quick start: curl and market tx send", function () {
  this.timeout(240_000);
  let net: CliDevnet;
  before(async function () {
    if (missingCommands.length > 0) {
      console.log(`    skipped: the quick start needs ${missingCommands.join(" and ")} (apt-get install -y curl jq)`);
      this.skip();
    }
    net = await startCliDevnet();
  });
  after(async () => net?.close());

  it("posts and lists a task, approving exactly the reward", async () => {
    const poster = net.devnet.accounts.find((a) => a.role === "poster-2")!;
    const { book } = net.devnet.deployment;
    const usdc = MockUSDC__factory.connect(book.token.address, ethers.provider);
    const escrow = TaskEscrow__factory.connect(book.escrow.proxy, ethers.provider);
    const before = await usdc.balanceOf(poster.address);
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "quick-start-"));
    // `npx market` finds this checkout's bin from any folder below it: run where the package is, files in `work`.
    const script =
      `cd ${JSON.stringify(work)}\n` + quickStartScript().replace("npx market", `npx --prefix ${ROOT} market`);
    const run = await bash(script, ROOT, {
      ...net.env("poster-2"),
      API: net.devnet.apiUrl!,
      RPC: net.devnet.rpcUrl,
      KEY: poster.apiKey,
      PK: poster.privateKey,
    });
    expect(run.code, run.stdout + run.stderr).to.equal(0);
    const indexed = JSON.parse(run.stdout);
    expect(indexed.success, run.stdout).to.equal(true);

    const taskHash = ethers.sha256(ethers.toUtf8Bytes("Write a haiku about escrow."));
    const built = JSON.parse(fs.readFileSync(path.join(work, "built.json"), "utf8")).data;
    expect(built.approveTx, "a fresh wallet has no allowance").to.not.equal(null);
    const task = await escrow.getTask((await escrow.nextTaskId()) - 1n);
    expect(task.taskHash).to.equal(taskHash);
    expect(task.poster).to.equal(poster.address);
    expect(before - (await usdc.balanceOf(poster.address))).to.equal(3_000_000n);
    expect(await usdc.allowance(poster.address, book.escrow.proxy)).to.equal(0n); // exactly the reward was approved
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("tx send refuses an approval above the reward, sending nothing", async () => {
    const poster = net.devnet.accounts.find((a) => a.role === "poster")!;
    const { book } = net.devnet.deployment;
    const env = net.env("poster");
    const headers = { "x-api-key": poster.apiKey, "content-type": "application/json" };
    const api = net.devnet.apiUrl!;
    const brief = Buffer.from("tx send: an approval for more than the reward");
    const uploaded = await (
      await fetch(`${api}/api/v1/storage/upload`, {
        method: "POST",
        headers,
        body: JSON.stringify({ data: brief.toString("base64") }),
      })
    ).json();
    const built = await (
      await fetch(`${api}/api/v1/tasks`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          taskHash: uploaded.data.rootHash,
          amount: "1000000",
          locationZone: "global",
          duration: "3600",
        }),
      })
    ).json();
    const usdc = MockUSDC__factory.connect(book.token.address, ethers.provider);
    await (
      await usdc.connect(new ethers.Wallet(poster.privateKey, ethers.provider)).approve(book.escrow.proxy, 0n)
    ).wait();
    const answer = {
      ...built.data,
      approveTx: {
        to: book.token.address,
        from: poster.address.toLowerCase(),
        value: "0",
        data: usdc.interface.encodeFunctionData("approve", [book.escrow.proxy, 1_000_001n]),
      },
    };
    const file = path.join(net.home, "tampered.json");
    fs.writeFileSync(file, JSON.stringify(answer));
    const nonce = await ethers.provider.getTransactionCount(poster.address);
    const refused = await runCli(["tx", "send", file, "--json"], env);
    expect(refused.code, refused.stdout + refused.stderr).to.equal(6);
    expect(refused.json.error.code).to.equal("TX_MISMATCH");
    expect(await ethers.provider.getTransactionCount(poster.address)).to.equal(nonce);

    // The answer as the service gave it goes through.
    fs.writeFileSync(file, JSON.stringify(built));
    const sent = await runCli(["tx", "send", file, "--json"], env);
    expect(sent.code, sent.stdout + sent.stderr).to.equal(0);
    expect((await ethers.provider.getTransactionReceipt(sent.json.txHash))?.status).to.equal(1);
    expect(sent.json.approveTxHash).to.be.a("string");
  });
});
