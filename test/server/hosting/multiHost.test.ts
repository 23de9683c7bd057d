/**
 * Two agent host PROCESSES (server/hosting/main.ts, forked) sharing hosted agents through leases in one PostgreSQL
 * database: every agent runs on exactly one host, no host runs more than its capacity, and when one host is killed
 * (SIGKILL: no release) the other takes its agents over within one lease period (as far as its capacity allows).
 * A host sent SIGTERM exits 0 within SHUTDOWN_TIMEOUT_MS having released its leases: the other host takes the agents
 * at its next tick, before the released leases would have run out.
 * PostgreSQL only: with SQLite, hosts on separate machines cannot share a database (skipped without DATABASE_URL).
 *
 * This test checks the leases (which host runs what), not the agents' work (host.test.ts and
 * test/e2e/hostedAgent.flow.test.ts do that).
 */
import { fork, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Wallet } from "ethers";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture } from "../../helpers/fixtures";
import { startTestApi, type TestApi } from "../../helpers/api";
import { usingPostgres } from "../../helpers/db";
import { serveChain, type ServedChain } from "../../helpers/rpc";
import { insertHostedAgent } from "../../helpers/hostedAgentRows";
import { waitFor } from "../../helpers/agentMarket";

// Long enough that a host process starved of CPU for a second on a loaded CI machine still renews in time.
const LEASE_MS = 3000;
const CAPACITY = 3;
const SHUTDOWN_TIMEOUT_MS = 20_000;
const MAIN = path.join(__dirname, "../../../server/hosting/main.ts");

describe("agent hosts: two processes share agents through PostgreSQL leases", function () {
  this.timeout(120_000);
  let chain: ServedChain;
  let api: TestApi;
  let dirs: string[] = [];
  const children: ChildProcess[] = [];

  before(function () {
    if (!usingPostgres()) {
      // Skipped, not failed: leases shared by hosts on several machines need PostgreSQL (DATABASE_URL).
      this.skip();
    }
  });

  beforeEach(async () => {
    const fixture = await loadFixture(deployEscrowFixture);
    chain = await serveChain();
    api = await startTestApi(fixture.book);
    const deployments = fs.mkdtempSync(path.join(os.tmpdir(), "escrow-hosts-deployments-"));
    fs.writeFileSync(path.join(deployments, "hardhat.json"), JSON.stringify(fixture.book));
    dirs = [deployments, fs.mkdtempSync(path.join(os.tmpdir(), "escrow-hosts-data-"))];
  });

  afterEach(async () => {
    for (const child of children.splice(0)) await stopChild(child, "SIGTERM");
    await api?.close();
    await chain?.close();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  function startHostProcess(id: string, leaseMs = LEASE_MS, capacity = CAPACITY): ChildProcess {
    const child = fork(MAIN, [], {
      execArgv: ["-r", "ts-node/register/transpile-only"],
      env: {
        ...process.env,
        NETWORK: "hardhat",
        DEPLOYMENTS_DIR: dirs[0],
        DATA_DIR: dirs[1],
        DATABASE_URL: process.env.DATABASE_URL,
        DATABASE_SCHEMA: api.testDb.options.pgSchema,
        RPC_URL: chain.url,
        API_URL: api.url,
        HOSTED_AGENTS: "on",
        AGENT_HOST_ID: id,
        AGENT_HOST_CAPACITY: String(capacity),
        AGENT_LEASE_MS: String(leaseMs),
        SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
        LOG_LEVEL: "silent",
      },
      stdio: ["ignore", "ignore", "pipe", "ipc"],
    });
    child.stderr?.resume();
    children.push(child);
    return child;
  }

  function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const force = setTimeout(() => child.kill("SIGKILL"), 15_000);
      child.once("exit", () => {
        clearTimeout(force);
        resolve();
      });
      child.kill(signal);
    });
  }

  async function leases(): Promise<Map<string, string | null>> {
    const rows = await api.deps.db("hosted_agents").select("id", "lease_host", "lease_until_ms");
    const now = Date.now();
    return new Map(
      rows.map((r) => [r.id, r.lease_host && Number(r.lease_until_ms) > now ? (r.lease_host as string) : null]),
    );
  }

  /** Each agent's lease end (0 when never leased). */
  async function leaseEnds(): Promise<Map<string, number>> {
    const rows = await api.deps.db("hosted_agents").select("id", "lease_until_ms");
    return new Map(rows.map((r) => [r.id as string, Number(r.lease_until_ms ?? 0)]));
  }

  const perHost = (map: Map<string, string | null>) => {
    const counts: Record<string, number> = {};
    for (const host of map.values()) if (host) counts[host] = (counts[host] ?? 0) + 1;
    return counts;
  };

  it("each agent on exactly one host within capacity; a killed host's agents move to the other within a lease", async () => {
    const kek = api.deps.config.hostedAgents.keyEncryptionKey;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const wallet = Wallet.createRandom();
      const agent = await insertHostedAgent(api.deps.db, kek, {
        privateKey: wallet.privateKey,
        wallet: wallet.address,
        skills: [{ skill: "summary" }],
        createdAt: 100 + i,
      });
      ids.push(agent.id);
    }
    const hostA = startHostProcess("host-a");
    const hostB = startHostProcess("host-b");
    await waitFor(
      async () => [...(await leases()).values()].every((h) => h !== null),
      60_000,
      "every agent leased by one of the hosts",
      50,
    );
    // Both hosts alive: each agent on one host (a map has one host per agent), both under their capacity.
    await waitFor(async () => (await api.deps.db("agent_hosts").count({ n: "*" }))[0].n == 2, 30_000, "two hosts", 50);
    // Sampled after each round of renewals by the two real host processes (at their own pace), until every lease has
    // been carried two lease periods past where it stood.
    const start = await leaseEnds();
    let ends = start;
    let rounds = 0;
    while (ids.some((id) => ends.get(id)! < start.get(id)! + 2 * LEASE_MS)) {
      const counts = perHost(await leases());
      expect(Object.values(counts).reduce((x, y) => x + y, 0)).to.equal(4);
      for (const n of Object.values(counts)) expect(n).to.be.at.most(CAPACITY);
      const seen = ends;
      await waitFor(
        async () => {
          ends = await leaseEnds();
          return ids.every((id) => ends.get(id)! > seen.get(id)!);
        },
        2 * LEASE_MS,
        "every lease renewed",
        50,
      );
      rounds++;
    }
    expect(rounds, "renewal rounds sampled").to.be.at.least(3);
    const before = await leases();
    // Kill the host holding more agents: the other one has room to take some over (capacity 3 of 4 agents).
    const countA = ids.filter((id) => before.get(id) === "host-a").length;
    const [victim, victimId, survivorId] = countA >= 2 ? [hostA, "host-a", "host-b"] : [hostB, "host-b", "host-a"];
    const kept = ids.filter((id) => before.get(id) === survivorId);
    expect(kept.length).to.be.lessThan(CAPACITY);

    const killedAt = Date.now();
    await stopChild(victim, "SIGKILL");
    // The survivor runs as many as its capacity allows, its own agents included.
    await waitFor(
      async () => perHost(await leases())[survivorId] === CAPACITY,
      4 * LEASE_MS,
      `${survivorId} to take over ${victimId}'s agents`,
      50,
    );
    const tookMs = Date.now() - killedAt;
    const after = await leases();
    for (const id of kept) expect(after.get(id), "the survivor kept its own agents").to.equal(survivorId);
    expect([...after.values()].filter((h) => h === victimId)).to.deep.equal([]);
    expect([...after.values()].filter((h) => h === null)).to.have.length(4 - CAPACITY);
    // Within one lease period of the victim's last renewal, plus the survivor's tick (a third of a lease).
    expect(tookMs).to.be.at.most(LEASE_MS + LEASE_MS / 3 + 1000);
  });

  it("SIGTERM: a host exits 0 in time and releases its agents, which the other host runs before the lease could end", async () => {
    // A lease long enough that the other host can only have the agents this soon because they were released.
    const leaseMs = 15_000;
    const kek = api.deps.config.hostedAgents.keyEncryptionKey;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const wallet = Wallet.createRandom();
      const agent = await insertHostedAgent(api.deps.db, kek, {
        privateKey: wallet.privateKey,
        wallet: wallet.address,
        skills: [{ skill: "summary" }],
        createdAt: 100 + i,
      });
      ids.push(agent.id);
    }
    // Room for every agent on either host; the first host started takes them all.
    const first = startHostProcess("host-a", leaseMs, 4);
    await waitFor(
      async () => [...(await leases()).values()].every((h) => h === "host-a"),
      60_000,
      "host-a to lease every agent",
      50,
    );
    await waitFor(
      async () => (await api.deps.db("hosted_agents").whereIn("status", ["running"]).count({ n: "*" }))[0].n == 4,
      60_000,
      "every agent's worker running on host-a",
      50,
    );
    const second = startHostProcess("host-b", leaseMs, 4);
    await waitFor(async () => (await api.deps.db("agent_hosts").count({ n: "*" }))[0].n == 2, 30_000, "two hosts", 50);
    const leaseEndsBefore = await leaseEnds();

    const exited = new Promise<number | null>((resolve) => first.once("exit", (code) => resolve(code)));
    const signalledAt = Date.now();
    first.kill("SIGTERM");
    const code = await exited;
    const stoppedMs = Date.now() - signalledAt;
    expect(code, "exit code").to.equal(0);
    expect(stoppedMs).to.be.below(SHUTDOWN_TIMEOUT_MS);
    // Released, not left to run out: no lease names host-a, and host-a has left the hosts' table.
    const released = await leases();
    expect([...released.values()].filter((h) => h === "host-a")).to.deep.equal([]);
    expect(await api.deps.db("agent_hosts").where({ id: "host-a" }).first()).to.equal(undefined);
    // Every agent still desired running: a shutdown of the service is not its owner stopping it.
    const desired = await api.deps.db("hosted_agents").select("desired_state");
    expect(desired.map((r) => r.desired_state)).to.deep.equal(Array(4).fill("running"));

    // host-b leases every agent at its next tick, before the leases host-a held would have ended, then runs them.
    await waitFor(
      async () => [...(await leases()).values()].every((h) => h === "host-b"),
      leaseMs,
      "host-b to lease every agent",
      50,
    );
    const tookOverAt = Date.now();
    for (const id of ids) expect(tookOverAt, id).to.be.below(leaseEndsBefore.get(id)!);
    await waitFor(
      async () => (await api.deps.db("hosted_agents").where({ status: "running" }).count({ n: "*" }))[0].n == 4,
      60_000,
      "every agent's worker running on host-b",
      50,
    );
    expect(second.exitCode).to.equal(null);
  });
});
