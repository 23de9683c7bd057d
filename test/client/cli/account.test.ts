/**
 * The `market` binary as a user meets it first: `--help` lists the commands and the exit codes, a mistake shows its
 * code, the message and what to do with a non-zero exit, `login` signs in with the wallet and saves a working
 * API key in a config file only its owner can read, and `logout` revokes it and removes it from the file.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { runCli, startCli, startCliDevnet, type CliDevnet } from "./run";

/** Resolves when the child's stderr has matched `pattern`. */
function stderrMatching(child: ChildProcess, pattern: RegExp): Promise<void> {
  return new Promise((resolve) => {
    let seen = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (pattern.test(seen)) resolve();
    });
  });
}

const COMMANDS = [
  "login",
  "whoami",
  "post",
  "post-many",
  "tasks",
  "status",
  "watch",
  "review",
  "cancel",
  "reclaim",
  "dispute",
  "escalate",
  "release",
  "agent",
  "services",
  "deploy-fee",
  "hosted",
  "admin",
];

describe("market CLI: help, errors and login", () => {
  it("--help lists every command, the configuration variables and the exit codes", async () => {
    const help = await runCli(["--help"], {});
    expect(help.code, help.stderr).to.equal(0);
    for (const command of COMMANDS) expect(help.stdout).to.match(new RegExp(`^  ${command}\\b`, "m"));
    for (const variable of ["MARKET_API_URL", "MARKET_API_KEY", "MARKET_PRIVATE_KEY", "MARKET_RPC_URL"]) {
      expect(help.stdout).to.include(variable);
    }
    expect(help.stdout).to.include("Exit codes");
    const agent = await runCli(["agent", "--help"], {});
    expect(agent.stdout)
      .to.match(/^ {2}register\b/m)
      .and.to.match(/^ {2}run\b/m);
    const admin = await runCli(["admin", "--help"], {});
    expect(admin.stdout).to.match(/^ {2}resolve\b/m);
  });

  it("a bad input shows the code, the message and what to do, and exits non-zero", async () => {
    const human = await runCli(["status", "task-42"], {});
    expect(human.code).to.equal(2);
    expect(human.stderr).to.include("error INVALID_TASK:").and.to.include("what to do:");

    const json = await runCli(["post", "--text", "x", "--public", "--amount", "1.5.0", "--json"], {});
    expect(json.code).to.equal(2);
    expect(json.json.error).to.include({ code: "INVALID_AMOUNT", exitCode: 2 });
    expect(json.json.error.hint).to.be.a("string").that.is.not.empty;

    const unknown = await runCli(["post", "--no-such-flag", "--json"], {});
    expect(unknown.code).to.equal(2);
    expect(unknown.json.error.code).to.equal("USAGE");
  });

  it("logout without a reachable service still removes the key, saying it stays valid", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "market-logout-"));
    try {
      const configPath = path.join(dir, "market.json");
      fs.writeFileSync(configPath, JSON.stringify({ apiUrl: "http://127.0.0.1:9", apiKey: `sk_${"1".repeat(64)}` }));
      const logout = await runCli(["logout", "--json", "--config", configPath], {});
      expect(logout.code, logout.stderr).to.equal(0);
      expect(logout.json).to.include({ removed: true, revoked: false, configPath });
      expect(logout.json.revokeError).to.be.a("string").that.is.not.empty;
      expect(JSON.parse(fs.readFileSync(configPath, "utf8"))).to.deep.equal({ apiUrl: "http://127.0.0.1:9" });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  describe("against a devnet", () => {
    let net: CliDevnet;
    before(async function () {
      this.timeout(120_000);
      net = await startCliDevnet();
    });
    after(async () => net?.close());

    it("login signs in with the wallet and saves a working API key with mode 0600", async () => {
      const { MARKET_API_KEY: _unused, ...env } = net.env("poster-2");
      const configPath = path.join(net.home, "conf", "market.json");
      const login = await runCli(["login", "--json", "--config", configPath], env);
      expect(login.code, login.stdout + login.stderr).to.equal(0);
      const poster = net.devnet.accounts.find((a) => a.role === "poster-2")!;
      expect(login.json).to.include({ address: poster.address.toLowerCase(), configPath });

      expect(fs.statSync(configPath).mode & 0o777).to.equal(0o600);
      expect(fs.statSync(path.dirname(configPath)).mode & 0o777).to.equal(0o700);
      const saved = JSON.parse(fs.readFileSync(configPath, "utf8"));
      expect(saved.apiKey).to.match(/^sk_[0-9a-f]{64}$/);
      expect(saved.apiUrl).to.equal(net.devnet.apiUrl);
      expect(JSON.stringify(saved)).to.not.include(poster.privateKey.slice(2));

      // The saved key works without MARKET_API_KEY: whoami reads it from the file.
      const { MARKET_PRIVATE_KEY: _pk, ...noSecrets } = env;
      const whoami = await runCli(["whoami", "--json", "--config", configPath], noSecrets);
      expect(whoami.code, whoami.stderr).to.equal(0);
      expect(whoami.json).to.include({ address: poster.address.toLowerCase() });
      expect(whoami.json.sources.apiKey).to.equal("config");
    });

    it("logout revokes the saved key on the service and removes it from the file", async () => {
      const { MARKET_API_KEY: _unused, ...env } = net.env("poster-2");
      const configPath = path.join(net.home, "logout", "market.json");
      expect((await runCli(["login", "--json", "--config", configPath], env)).code).to.equal(0);
      const key = JSON.parse(fs.readFileSync(configPath, "utf8")).apiKey;
      const { MARKET_PRIVATE_KEY: _pk, ...noSecrets } = env;
      expect((await runCli(["whoami", "--json", "--config", configPath], noSecrets)).code).to.equal(0);

      const logout = await runCli(["logout", "--json", "--config", configPath], noSecrets);
      expect(logout.code, logout.stdout + logout.stderr).to.equal(0);
      expect(logout.json).to.deep.equal({ removed: true, revoked: true, configPath });
      expect(JSON.parse(fs.readFileSync(configPath, "utf8"))).to.not.have.property("apiKey");
      // The key itself no longer works, wherever a copy of it is.
      const after = await fetch(`${net.devnet.apiUrl}/api/v1/api-keys/whoami`, { headers: { "X-API-Key": key } });
      expect(after.status).to.equal(401);
      const again = await runCli(["logout", "--json", "--config", configPath], noSecrets);
      expect(again.json).to.include({ removed: false, revoked: false });
    });

    it("without a key, a command that needs one says how to get one (exit 3)", async () => {
      const { MARKET_API_KEY: _unused, ...env } = net.env("poster");
      const tasks = await runCli(["tasks", "--config", path.join(net.home, "none.json")], env);
      expect(tasks.code).to.equal(3);
      expect(tasks.stderr).to.include("error NO_API_KEY:").and.to.include("market login");
    });

    it("deploy-fee shows the fee, --pay pays exactly it into one credit, and a fee above --max-fee is refused", async () => {
      const env = net.env("agent-2");
      const fee = await runCli(["deploy-fee", "--json"], env);
      expect(fee.code, fee.stderr).to.equal(0);
      expect(fee.json).to.include({ required: true, credits: 0 });
      expect(fee.json.amount_raw).to.match(/^\d+$/);

      const capped = await runCli(["deploy-fee", "--pay", "--max-fee", "1", "--json"], env);
      expect(capped.code).to.equal(2);
      expect(capped.json.error.code).to.equal("DEPLOY_FEE_ABOVE_MAX");

      const paid = await runCli(["deploy-fee", "--pay", "--json"], env);
      expect(paid.code, paid.stdout + paid.stderr).to.equal(0);
      expect(paid.json).to.include({ required: true, credits: 1, amount_raw: fee.json.amount_raw });
      expect(paid.json.txHash).to.match(/^0x[0-9a-f]{64}$/);
    });

    it("a registered agent lists a service priced in USDC, and services lists it", async () => {
      const env = net.env("agent-3");
      const agent = net.devnet.accounts.find((a) => a.role === "agent-3")!;
      expect((await runCli(["agent", "register", "--capabilities", "review"], env)).code).to.equal(0);
      const added = await runCli(
        ["services", "add", "--name", "Essay review", "--description", "A careful read", "--price", "3", "--json"],
        env,
      );
      expect(added.code, added.stdout + added.stderr).to.equal(0);
      expect(added.json).to.include({ name: "Essay review", price_raw: 3_000_000 });
      const listed = await runCli(["services", "--agent", agent.address, "--json"], env);
      expect(listed.json.services.map((s: { id: number }) => s.id)).to.deep.equal([added.json.id]);
    });

    it("Ctrl-C (SIGINT/SIGTERM) stops agent run cleanly (exit 0, its report) and watch with exit 7", async () => {
      const agent = startCli(["agent", "run", "--exec", "cat", "--capabilities", "nothing-here"], net.env("agent-2"));
      const missing = `0x${"cd".repeat(32)}`;
      const watch = startCli(["watch", missing], net.env("poster"));
      // Signal once each is running (its progress line is out), as a person pressing Ctrl-C would.
      await Promise.all([stderrMatching(agent.child, /waiting for work/), stderrMatching(watch.child, /… watching/)]);
      agent.child.kill("SIGTERM");
      watch.child.kill("SIGINT");
      const stopped = await agent.done;
      expect(stopped.code, stopped.stdout + stopped.stderr).to.equal(0);
      expect(stopped.stdout).to.match(/^Agent 0x[0-9a-fA-F]{40} delivered 0 task\(s\)\.$/m);
      const watched = await watch.done;
      expect(watched.code, watched.stdout + watched.stderr).to.equal(7);
      expect(watched.stderr).to.include("error INTERRUPTED:");
    });

    it("a refusal of the service shows its code (exit 4)", async () => {
      const missing = `0x${"ab".repeat(32)}`;
      const status = await runCli(["status", missing, "--json"], net.env("poster"));
      expect(status.code).to.equal(4);
      expect(status.json.error).to.include({ code: "NOT_FOUND", status: 404 });
    });
  });
});
