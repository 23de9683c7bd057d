/**
 * The agent host's repository (server/db/repositories/agentHosts.ts) on a fresh database (SQLite, or PostgreSQL
 * with DATABASE_URL): claims are atomic (of hosts racing on two connection pools exactly one wins), a live lease is
 * not claimable and an expired one is, renewals and reports need the lease, stopped agents and agents without a key
 * are not claimable, the log keeps its latest lines.
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import { createTestDb, type TestDb } from "../../helpers/db";
import { hostedAgentRow, insertHostedAgent } from "../../helpers/hostedAgentRows";
import {
  appendAgentLog,
  claimAgentLease,
  heartbeatHost,
  listClaimableAgents,
  releaseAgentLease,
  renewAgentLeases,
  reportAgentStatus,
} from "../../../server/db/repositories/agentHosts";

const KEK = Buffer.alloc(32, 7);

describe("agent hosts repository: leases, reports, log", () => {
  let testDb: TestDb;

  beforeEach(async () => {
    testDb = await createTestDb();
  });

  afterEach(async () => {
    await testDb.cleanup();
  });

  async function agent(desiredState: "running" | "paused" | "stopped" = "running", createdAt = 100) {
    const wallet = Wallet.createRandom();
    return insertHostedAgent(testDb.db, KEK, {
      privateKey: wallet.privateKey,
      wallet: wallet.address,
      desiredState,
      createdAt,
    });
  }

  it("claims atomically: of two hosts racing on separate pools exactly one holds each agent", async () => {
    const other = testDb.reopen();
    const ids = [];
    for (let i = 0; i < 10; i++) ids.push((await agent()).id);
    const now = Date.now();
    const results = await Promise.all(
      ids.flatMap((id) => [
        claimAgentLease(testDb.db, { agentId: id, host: "a", nowMs: now, untilMs: now + 5000 }),
        claimAgentLease(other, { agentId: id, host: "b", nowMs: now, untilMs: now + 5000 }),
      ]),
    );
    for (let i = 0; i < ids.length; i++) {
      const [a, b] = [results[2 * i], results[2 * i + 1]];
      expect(a !== b, `agent ${i}: exactly one claim`).to.equal(true);
      expect((await hostedAgentRow(testDb.db, ids[i])).leaseHost).to.equal(a ? "a" : "b");
    }
  });

  it("lists claimable agents oldest first: no live lease, desired running or paused, with a key", async () => {
    const young = await agent("running", 300);
    const old = await agent("paused", 100);
    const stopped = await agent("stopped", 50);
    const erased = await agent("running", 60);
    await testDb.db("hosted_agents").where({ id: erased.id }).update({ encrypted_key: null });
    const now = 1_000_000;
    expect((await listClaimableAgents(testDb.db, now, 10)).map((a) => a.id)).to.deep.equal([old.id, young.id]);
    expect(
      await claimAgentLease(testDb.db, { agentId: stopped.id, host: "a", nowMs: now, untilMs: now + 10 }),
    ).to.equal(false);

    expect(await claimAgentLease(testDb.db, { agentId: old.id, host: "a", nowMs: now, untilMs: now + 1000 })).to.equal(
      true,
    );
    expect((await listClaimableAgents(testDb.db, now + 500, 10)).map((a) => a.id)).to.deep.equal([young.id]);
    // Live: another host cannot take it; its own host can (idempotent).
    expect(
      await claimAgentLease(testDb.db, { agentId: old.id, host: "b", nowMs: now + 500, untilMs: now + 2000 }),
    ).to.equal(false);
    expect(
      await claimAgentLease(testDb.db, { agentId: old.id, host: "a", nowMs: now + 500, untilMs: now + 2000 }),
    ).to.equal(true);
    // Expired: claimable by another host.
    expect((await listClaimableAgents(testDb.db, now + 2001, 10)).map((a) => a.id)).to.deep.equal([old.id, young.id]);
    expect(
      await claimAgentLease(testDb.db, { agentId: old.id, host: "b", nowMs: now + 2001, untilMs: now + 4000 }),
    ).to.equal(true);
    // The former host's renewal, report and release change nothing now.
    await renewAgentLeases(testDb.db, "a", [old.id], now + 9999);
    expect(
      await reportAgentStatus(testDb.db, { agentId: old.id, host: "a", status: "crashed", nowSeconds: 1 }),
    ).to.equal(false);
    await releaseAgentLease(testDb.db, "a", old.id);
    const row = await hostedAgentRow(testDb.db, old.id);
    expect(row).to.include({ leaseHost: "b", leaseUntilMs: now + 4000, status: "starting", restarts: 0 });
    expect(
      await reportAgentStatus(testDb.db, {
        agentId: old.id,
        host: "b",
        status: "crashed",
        lastError: "boom",
        restarted: true,
        nowSeconds: 1,
      }),
    ).to.equal(true);
    expect(await hostedAgentRow(testDb.db, old.id)).to.include({ status: "crashed", lastError: "boom", restarts: 1 });
  });

  it("heartbeats upsert the host's row; the log keeps its latest lines", async () => {
    await heartbeatHost(testDb.db, { id: "h", capacity: 3, nowMs: 10 });
    await heartbeatHost(testDb.db, { id: "h", capacity: 4, nowMs: 20 });
    const hosts = await testDb.db("agent_hosts").select();
    expect(hosts.map((h) => [h.id, Number(h.capacity), Number(h.seen_at_ms)])).to.deep.equal([["h", 4, 20]]);

    const { id } = await agent();
    for (let i = 0; i < 12; i++) {
      await appendAgentLog(testDb.db, { agentId: id, level: "info", message: `line ${i}`, atMs: i }, 5);
    }
    const lines = await testDb.db("hosted_agent_logs").where({ agent_id: id }).orderBy("id");
    expect(lines.map((l) => l.message)).to.deep.equal(["line 7", "line 8", "line 9", "line 10", "line 11"]);
  });
});
