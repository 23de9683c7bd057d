/**
 * The `market` CLI over two settlement chains: `status` reads a numeric id on the posting chain unless `--chain arc`,
 * a hash on whichever chain holds it, and shows the chain; `tasks` shows a CHAIN column and filters with `--chain`.
 * The real CLI process against an API serving base and arc, task 1 listed on each (test/helpers/twoChains.ts).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { ethers } from "hardhat";
import { runCli } from "./run";
import { ARC_CHAIN_ID, serveArcChain } from "../../helpers/arc";
import { hardhatPrivateKey } from "../../helpers/keys";
import { BASE_CHAIN_ID, withTwoChains, type TwoChains } from "../../helpers/twoChains";

function cliEnv(t: TwoChains, home: string, key?: string): Record<string, string> {
  return {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    MARKET_API_URL: t.api.url,
    ...(key ? { MARKET_API_KEY: key } : {}),
  };
}

describe("market CLI over two chains", function () {
  this.timeout(180_000);
  let home: string;
  beforeEach(() => (home = fs.mkdtempSync(path.join(os.tmpdir(), "market-chains-"))));
  afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

  it("status: id 1 on the posting chain, --chain arc for arc's task 1, a hash on either chain", async () => {
    await withTwoChains(async (t) => {
      const env = cliEnv(t, home);
      const base = await runCli(["status", "1", "--json"], env);
      expect(base.code, base.stderr).to.equal(0);
      expect(base.json).to.include({ chain: "base", chainId: BASE_CHAIN_ID, onChainTaskId: 1, taskHash: t.baseHash });

      const arc = await runCli(["status", "#1", "--chain", "arc", "--json"], env);
      expect(arc.code, arc.stderr).to.equal(0);
      expect(arc.json).to.include({ chain: "arc", chainId: ARC_CHAIN_ID, onChainTaskId: 1, taskHash: t.arcHash });
      expect(arc.json.amount).to.equal("7000000");

      const byHash = await runCli(["status", t.arcHash], env);
      expect(byHash.code, byHash.stderr).to.equal(0);
      expect(byHash.stdout).to.contain(`(id 1 on arc, chain id ${ARC_CHAIN_ID})`);

      const unknown = await runCli(["status", "1", "--chain", "polygon"], env);
      expect(unknown.code).to.not.equal(0);
      expect(unknown.stderr).to.match(/polygon/);
    });
  });

  it("cancel --chain arc: the poster's wallet signs through arc's RPC (MARKET_ARC_RPC_URL), the reward comes back on arc", async () => {
    await withTwoChains(async (t) => {
      const arcRpc = await serveArcChain();
      try {
        const env = {
          ...cliEnv(t, home, t.posterKey),
          MARKET_PRIVATE_KEY: hardhatPrivateKey(3), // the fixtures' poster, on both chains
          MARKET_ARC_RPC_URL: arcRpc.url,
          MARKET_RPC_URL: "http://127.0.0.1:9", // base's RPC is not needed for arc's task: nothing listens here
        };
        const before = await t.arc.usdc.balanceOf(t.arc.poster.address);
        const cancelled = await runCli(["cancel", "#1", "--chain", "arc", "--json"], env);
        expect(cancelled.code, cancelled.stdout + cancelled.stderr).to.equal(0);
        const receipt = await arcRpc.provider.getTransactionReceipt(cancelled.json.txHash);
        expect(receipt!.to!.toLowerCase()).to.equal(t.arc.book.escrow.proxy.toLowerCase());
        expect(await t.arc.usdc.balanceOf(t.arc.poster.address)).to.equal(before + 7_000_000n);
      } finally {
        await arcRpc.close();
      }
    });
  });

  it("tasks: a CHAIN column with both chains' tasks 1, and --chain to keep one", async () => {
    await withTwoChains(async (t) => {
      const env = cliEnv(t, home, t.posterKey);
      const all = await runCli(["tasks", "posted", "--json"], env);
      expect(all.code, all.stderr).to.equal(0);
      expect(
        all.json.tasks.map((r: { chain: string; onChainTaskId: number }) => [r.chain, r.onChainTaskId]),
      ).to.have.deep.members([
        ["base", 1],
        ["arc", 1],
      ]);
      const text = await runCli(["tasks", "posted"], env);
      expect(text.stdout).to.match(/CHAIN/);
      expect(text.stdout.split("\n").filter((line) => / arc +1 /.test(line))).to.have.length(1);
      expect(text.stdout.split("\n").filter((line) => / base +1 /.test(line))).to.have.length(1);

      const arcOnly = await runCli(["tasks", "posted", "--chain", "arc", "--json"], env);
      expect(arcOnly.code, arcOnly.stderr).to.equal(0);
      expect(arcOnly.json.total).to.equal(1);
      expect(arcOnly.json.tasks[0]).to.include({ chain: "arc", taskHash: t.arcHash });
    });
  });

  it("watch: --chain arc follows arc's task 1 to its end and names its chain", async () => {
    await withTwoChains(async (t) => {
      const { escrow, verifier, worker } = t.arc;
      await (await escrow.connect(verifier).marketplaceAssign(1, worker.address)).wait();
      await (await escrow.connect(worker).submitEvidence(1, ethers.id("evidence"))).wait();
      await (await escrow.connect(verifier).completeVerification(1, true)).wait();
      await t.api.synced();
      const env = cliEnv(t, home);
      const watched = await runCli(["watch", "1", "--chain", "arc", "--timeout", "60", "--json"], env);
      expect(watched.code, watched.stdout + watched.stderr).to.equal(0);
      expect(watched.json).to.include({ taskHash: t.arcHash, chain: "arc", state: "completed", outcome: "paid" });
      const text = await runCli(["watch", t.arcHash, "--timeout", "60"], env);
      expect(text.stdout).to.contain(`Task ${t.arcHash} on arc is completed (paid).`);
    });
  });
});
