/**
 * `market hosted` with the real binary against a devnet, as an agent owner meets it: the skills catalog, a create
 * refused without a deploy credit and made with --pay, skill installs with their refusals, start (the devnet's agent
 * host runs it), its log, stop and delete; another on one chain with an extra capability, then its chains and
 * capabilities changed (market hosted update); every refusal with the service's code and the CLI's exit code (2 for
 * bad input, 4 for a refusal).
 */
import { expect } from "chai";
import { runCli, startCliDevnet, type CliDevnet } from "./run";

describe("market CLI: hosted agents against a devnet", function () {
  this.timeout(240_000);
  let net: CliDevnet;
  before(async () => {
    net = await startCliDevnet();
  });
  after(async () => net?.close());

  it("creates (paying the fee), installs skills, starts, reads the log, stops and deletes a hosted agent", async () => {
    const env = net.env("agent-2");
    const cli = (...args: string[]) => runCli(args, env);

    const catalog = await cli("hosted", "skills", "--json");
    expect(catalog.code, catalog.stderr).to.equal(0);
    expect(catalog.json.skills.map((s: { id: string }) => s.id)).to.include.members(["summary", "webhook", "verifier"]);

    const unpaid = await cli("hosted", "create", "--slug", "cli-agent", "--name", "CLI agent", "--json");
    expect(unpaid.code).to.equal(4);
    expect(unpaid.json.error.code).to.equal("NO_DEPLOY_CREDIT");

    const created = await cli(
      "hosted",
      "create",
      "--slug",
      "cli-agent",
      "--name",
      "CLI agent",
      "--skill",
      "keywords",
      "--pay",
      "--json",
    );
    expect(created.code, created.stderr).to.equal(0);
    expect(created.json).to.include({ slug: "cli-agent", status: "stopped" });
    expect(created.json.skills.map((s: { skill: string }) => s.skill)).to.deep.equal(["keywords"]);

    const unknown = await cli("hosted", "install", "cli-agent", "nope", "--json");
    expect([unknown.code, unknown.json.error.code]).to.deep.equal([4, "SKILL_NOT_FOUND"]);
    const webhookConfig = JSON.stringify({ url: "https://owner.example/agent", capabilities: ["translate"] });
    const noSecret = await cli("hosted", "install", "cli-agent", "webhook", "--skill-config", webhookConfig, "--json");
    // A 400 is bad input (exit 2); a refusal of the request as it stands is exit 4.
    expect([noSecret.code, noSecret.json.error.code]).to.deep.equal([2, "SKILL_NEEDS_SECRETS"]);
    const badConfig = await cli("hosted", "install", "cli-agent", "webhook", "--skill-config", "[1]");
    expect(badConfig.code).to.equal(2);
    expect(badConfig.stderr).to.include("INVALID_CONFIG");
    const installed = await cli(
      "hosted",
      "install",
      "cli-agent",
      "webhook",
      "--skill-config",
      webhookConfig,
      "--secret",
      "signingSecret=owner-secret",
      "--json",
    );
    expect(installed.code, installed.stderr).to.equal(0);
    expect(installed.json.capabilities).to.include("translate");
    expect(JSON.stringify(installed.json)).not.to.include("owner-secret");

    const started = await cli("hosted", "start", "cli-agent", "--json");
    expect(started.code, started.stderr).to.equal(0);
    expect(started.json.desiredState).to.equal("running");
    const again = await cli("hosted", "start", "cli-agent", "--json");
    expect([again.code, again.json.error.code]).to.deep.equal([4, "AGENT_RUNNING"]);
    let status = "";
    for (let i = 0; i < 300 && status !== "running"; i++) {
      const listed = await cli("hosted", "--json");
      status = listed.json.agents.find((a: { slug: string }) => a.slug === "cli-agent")?.status;
      if (status !== "running") await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status).to.equal("running");
    const table = await cli("hosted");
    expect(table.stdout)
      .to.match(/^SLUG\s+STATUS/m)
      .and.to.match(/^cli-agent\s+running/m);
    const log = await cli("hosted", "logs", "cli-agent", "--json");
    expect(log.json.logs.map((l: { message: string }) => l.message).join("\n")).to.include("worker ready");

    const running = await cli("hosted", "delete", "cli-agent", "--json");
    expect([running.code, running.json.error.code]).to.deep.equal([4, "AGENT_RUNNING"]);
    expect((await cli("hosted", "stop", "cli-agent", "--json")).code).to.equal(0);
    const deleted = await cli("hosted", "delete", "cli-agent", "--json");
    expect(deleted.code, deleted.stderr).to.equal(0);
    expect((await cli("hosted", "--json")).json.agents).to.deep.equal([]);
  });

  it("creates an agent on one chain with an extra capability, then changes its chains and capabilities", async () => {
    const env = net.env("agent-3");
    const cli = (...args: string[]) => runCli(args, env);
    const created = await cli(
      "hosted",
      "create",
      "--slug",
      "cli-chains",
      "--name",
      "CLI chains",
      "--chains",
      "base",
      "--capabilities",
      "Haiku",
      "--pay",
    );
    expect(created.code, created.stderr).to.equal(0);
    expect(created.stdout).to.include("Chains: base.").and.to.include("capabilities: haiku.");
    const read = await cli("hosted", "--json");
    expect(read.json.agents[0]).to.deep.include({ chains: ["base"], extraCapabilities: ["haiku"] });

    const both = await cli("hosted", "update", "cli-chains", "--chains", "base,arc", "--capabilities", "", "--json");
    expect(both.code, both.stderr).to.equal(0);
    expect(both.json).to.deep.include({ chains: ["arc", "base"], extraCapabilities: [], generation: 1 });
    const unknown = await cli("hosted", "update", "cli-chains", "--chains", "solana", "--json");
    expect([unknown.code, unknown.json.error.code]).to.deep.equal([2, "INVALID_CHAIN"]);
    const nothing = await cli("hosted", "update", "cli-chains");
    expect(nothing.code).to.equal(2);
    expect(nothing.stderr).to.include("NOTHING_TO_CHANGE");
  });
});
