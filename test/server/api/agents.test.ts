/**
 * Hosted agents' owner API over HTTP on a Hardhat chain: create (generated wallet, sealed key, skills, SLUG_TAKEN),
 * list and read (earnings, recent logs, another owner's 404), the state machine (AGENT_ID_REQUIRED, AGENT_RUNNING,
 * AGENT_ACTION_FAILED, AGENT_CAPACITY), delete, skills (SKILL_NOT_FOUND, SKILL_NEEDS_SECRETS, ALREADY_INSTALLED,
 * NOT_INSTALLED, config errors), logs (JSON and the SSE follow), the deploy credit (NO_DEPLOY_CREDIT, a fee verified
 * inline or before, SLUG_TAKEN spending nothing) and the key export (NOT_OWNER_SIGNATURE, NO_KEY, EXPORT_NOT_LOGGED).
 */
import { expect } from "chai";
import hre, { ethers } from "hardhat";
import { getAddress } from "ethers";
import { withMarket, type Market } from "../../helpers/market";
import { openEvents } from "../../helpers/sse";
import { ApiError, MarketApi, followAgentLogs, type AgentLogLine } from "../../../client/sdk/index";
import {
  ACTION,
  AGENTS,
  DEPLOY_FEE,
  act,
  addLiveHost,
  createAgent,
  expectError,
  payDeployFee,
  recordingLogger,
} from "../../helpers/hostedAgents";
import { SKILLS, findSkill } from "../../../server/domain/agents/skills/catalog";
import { openSecret, secretLabel } from "../../../server/domain/agents/secrets";
import { countKeyExports } from "../../../server/db/repositories/hostedAgents";
import { appendAgentLog as appendLog } from "../../../server/db/repositories/agentHosts";
import { findNonce } from "../../../server/db/repositories/authNonces";
import { buildSiweMessage, signInContext } from "../../../server/domain/accounts";
import { exportStatement } from "../../../server/domain/agents/keyExport";

const NO_FEE = { DEPLOY_FEE_REQUIRED: "false" };

/** A skill needing no secret whose empty config is valid, and one needing secrets (the catalog's own). */
const plainSkill = SKILLS.find((s) => s.requiredSecrets.length === 0 && accepts(() => s.parseConfig({})))!;
const secretSkill = SKILLS.find((s) => s.requiredSecrets.length > 0)!;
/** A skill whose empty config is refused: a config error names its field. */
const configuredSkill = SKILLS.find((s) => !accepts(() => s.parseConfig({})))!;

function accepts(fn: () => unknown): boolean {
  try {
    fn();
    return true;
  } catch {
    return false;
  }
}

/** A config `skill` accepts: found by trying the catalog's own validation on a few shapes. */
function validConfig(skill: typeof configuredSkill): Record<string, unknown> {
  const candidates = [{ url: "https://owner.example/agent", capabilities: ["translate"] }, { maxChars: 10 }, {}];
  const found = candidates.find((c) => accepts(() => skill.parseConfig(c)));
  expect(found, `a valid config for ${skill.id}`).to.not.equal(undefined);
  return found!;
}

async function row(m: Market, id: string) {
  return m.api.deps.db("hosted_agents").where({ id }).first();
}

async function credits(m: Market, key: string): Promise<number> {
  return (await m.api.request("GET", DEPLOY_FEE, { key })).json.data.credits;
}

describe("Hosted agents API", () => {
  before(() => {
    expect(plainSkill, "a catalog skill without secrets").to.not.equal(undefined);
    expect(secretSkill, "a catalog skill with secrets").to.not.equal(undefined);
    expect(configuredSkill, "a catalog skill with a required config field").to.not.equal(undefined);
  });

  it("creates an agent with its own wallet and sealed key, lists and reads it, and hides it from others", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      const strangerKey = await m.api.createKey(m.stranger.address);
      const logger = recordingLogger();
      m.api.deps.logger = logger;
      const created = await createAgent(m.api, key, {
        slug: "summer-1",
        name: "Summer",
        description: "summarises",
        capabilities: ["Extra", "extra", "zz-top"],
        minReward: "0005",
        skills: [{ skill: plainSkill.id }],
        verifier: { optIn: true, name: "Summer Judge" },
      });
      expect(created.id).to.match(/^agt_[0-9a-f]{24}$/);
      expect(created.wallet).to.match(/^0x[0-9a-f]{40}$/);
      expect(created).to.deep.include({
        slug: "summer-1",
        name: "Summer",
        description: "summarises",
        owner: m.worker.address.toLowerCase(),
        status: "stopped",
        desiredState: "stopped",
        minReward: "5",
        extraCapabilities: ["extra", "zz-top"],
        verifier: { optIn: true, name: "Summer Judge" },
        restarts: 0,
        generation: 0,
        lastError: null,
        earnings: { amount_raw: "0", paidTasks: 0 },
        recentLogs: [],
      });
      expect(created.capabilities).to.deep.equal([...new Set([...plainSkill.capabilities, "extra", "zz-top"])].sort());
      expect(created.skills.map((s: { skill: string }) => s.skill)).to.deep.equal([plainSkill.id]);

      // The key at rest is sealed (not the key), opens only under its label, to the agent's wallet.
      const stored = await row(m, created.id);
      expect(stored.encrypted_key).to.match(/^v1\./);
      const privateKey = openSecret(
        m.api.deps.config.hostedAgents.keyEncryptionKey,
        stored.encrypted_key,
        secretLabel.walletKey(created.id),
      );
      expect(stored.encrypted_key).to.not.contain(privateKey.slice(2));
      expect(new ethers.Wallet(privateKey).address.toLowerCase()).to.equal(created.wallet);
      expect(() =>
        openSecret(m.api.deps.config.hostedAgents.keyEncryptionKey, stored.encrypted_key, secretLabel.walletKey("x")),
      ).to.throw();
      expect(logger.lines.join("\n")).to.not.contain(privateKey.slice(2));
      expect(logger.lines.join("\n")).to.contain(created.id);

      const list = await m.api.request("GET", AGENTS, { key });
      expect(list.status, list.text).to.equal(200);
      expect(list.json.data.agents).to.deep.equal([created]);
      for (const ref of [created.id, "summer-1"]) {
        const one = await m.api.request("GET", `${AGENTS}/${ref}`, { key });
        expect(one.json.data, one.text).to.deep.equal(created);
        expectError(await m.api.request("GET", `${AGENTS}/${ref}`, { key: strangerKey }), 404, "NOT_FOUND");
      }
      expect((await m.api.request("GET", AGENTS, { key: strangerKey })).json.data.agents).to.deep.equal([]);
      expectError(await m.api.request("GET", AGENTS), 401, "UNAUTHORIZED");

      expectError(
        await m.api.request("POST", AGENTS, { key: strangerKey, body: { slug: "summer-1", name: "Copy" } }),
        409,
        "SLUG_TAKEN",
        "summer-1",
      );
      for (const slug of ["ab", "Upper", "-dash", "a".repeat(41), "under_score", "skills", "deploy-fee", "action"]) {
        const res = await m.api.request("POST", AGENTS, { key, body: { slug, name: "x" } });
        expectError(res, 400, "VALIDATION_ERROR", "body.slug");
      }
      expectError(
        await m.api.request("POST", AGENTS, { key, body: { slug: "no-name" } }),
        400,
        "VALIDATION_ERROR",
        "body.name",
      );
      expectError(
        await m.api.request("POST", AGENTS, { key, body: { slug: "judge", name: "J", verifier: { optIn: true } } }),
        400,
        "VALIDATION_ERROR",
        "body.verifier.name",
      );
      // A refused skill creates nothing.
      expectError(
        await m.api.request("POST", AGENTS, { key, body: { slug: "nope", name: "N", skills: [{ skill: "nope" }] } }),
        404,
        "SKILL_NOT_FOUND",
      );
      expectError(
        await m.api.request("POST", AGENTS, {
          key,
          body: { slug: "nope", name: "N", skills: [{ skill: secretSkill.id, config: validConfig(secretSkill) }] },
        }),
        400,
        "SKILL_NEEDS_SECRETS",
        secretSkill.requiredSecrets[0],
      );
      expect((await m.api.request("GET", AGENTS, { key })).json.data.agents).to.have.length(1);
    }, NO_FEE));

  it("shows earnings paid to the agent's wallet and its last 20 log lines; reads logs after an id", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      const agent = await createAgent(m.api, key, { slug: "earner" });
      const db = m.api.deps.db;
      const task = (taskId: number, payout: string | null, worker = agent.wallet) => ({
        task_id: taskId,
        poster: m.poster.address.toLowerCase(),
        worker,
        token: m.token.toLowerCase(),
        amount: "1000",
        task_hash: ethers.hexlify(ethers.randomBytes(32)),
        evidence_hash: ethers.ZeroHash,
        status: payout === null ? 1 : 4,
        category: "general",
        location_zone: "global",
        created_at: 1,
        deadline: 2,
        submission_attempts: 1,
        disputed_at: 0,
        verifier: ethers.ZeroAddress,
        failed_verdict_at: 0,
        escalated: false,
        is_open: false,
        open_submission_count: 0,
        fee_paid: payout === null ? null : "100",
        payout,
        refund: null,
        created_block: 1,
        created_tx: ethers.ZeroHash,
        updated_block: 1,
      });
      await db("tasks").insert([
        task(900001, "900"),
        task(900002, "18446744073709551616"),
        task(900003, null),
        task(900004, "5", m.stranger.address.toLowerCase()),
      ]);
      for (let i = 1; i <= 25; i++) {
        await appendLog(db, {
          agentId: agent.id,
          level: i % 2 ? "info" : "warn",
          message: `line ${i}`,
          atMs: i * 1000,
        });
      }
      const view = (await m.api.request("GET", `${AGENTS}/${agent.id}`, { key })).json.data;
      expect(view.earnings).to.deep.equal({ amount_raw: (18446744073709551616n + 900n).toString(), paidTasks: 2 });
      expect(view.recentLogs.map((l: { message: string }) => l.message)).to.deep.equal(
        Array.from({ length: 20 }, (_, i) => `line ${i + 6}`),
      );
      expect(view.recentLogs[0]).to.deep.include({ level: "warn", at: new Date(6000).toISOString() });

      const all = (await m.api.request("GET", `${AGENTS}/earner/logs?limit=500`, { key })).json.data.logs;
      expect(all).to.have.length(25);
      const after = await m.api.request("GET", `${AGENTS}/earner/logs?after=${all[20].id}&limit=2`, { key });
      expect(after.json.data.logs.map((l: { message: string }) => l.message)).to.deep.equal(["line 22", "line 23"]);
      const last = await m.api.request("GET", `${AGENTS}/earner/logs?limit=3`, { key });
      expect(last.json.data.logs.map((l: { message: string }) => l.message)).to.deep.equal([
        "line 23",
        "line 24",
        "line 25",
      ]);
      expectError(await m.api.request("GET", `${AGENTS}/earner/logs?limit=0`, { key }), 400, "VALIDATION_ERROR");
    }, NO_FEE));

  it("follows the log as Server-Sent Events until the client goes", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      const agent = await createAgent(m.api, key, { slug: "talker" });
      await appendLog(m.api.deps.db, { agentId: agent.id, level: "info", message: "before", atMs: 1 });
      const stream = await openEvents(m.api.url, { key, path: `${AGENTS}/${agent.slug}/logs` });
      try {
        expect(stream.status).to.equal(200);
        expect(String(stream.headers["content-type"])).to.match(/^text\/event-stream/);
        await appendLog(m.api.deps.db, { agentId: agent.id, level: "warn", message: "new one", atMs: 2 });
        await appendLog(m.api.deps.db, { agentId: agent.id, level: "info", message: "and another", atMs: 3 });
        const events = await stream.waitForEvents(2, 5000);
        expect(events.map((e) => [e.event, e.data.message, e.data.level])).to.deep.equal([
          ["log", "new one", "warn"],
          ["log", "and another", "info"],
        ]);
        expect(events[0].id).to.equal(String(events[0].data.id));
      } finally {
        stream.close();
      }
      // From an id: the earlier lines are replayed first.
      const replay = await openEvents(m.api.url, { key, path: `${AGENTS}/${agent.id}/logs`, query: "?after=0" });
      try {
        const events = await replay.waitForEvents(3, 5000);
        expect(events.map((e) => e.data.message)).to.deep.equal(["before", "new one", "and another"]);
      } finally {
        replay.close();
      }
      const strangerKey = await m.api.createKey(m.stranger.address);
      const refused = await openEvents(m.api.url, { key: strangerKey, path: `${AGENTS}/${agent.id}/logs` });
      expect(refused.status).to.equal(404);
    }, NO_FEE));

  it("is followed by the SDK's followAgentLogs: new lines in order, from after a line id, 404 for a stranger", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      const agent = await createAgent(m.api, key, { slug: "sdk-follow" });
      await appendLog(m.api.deps.db, { agentId: agent.id, level: "info", message: "seen before", atMs: 1 });
      const [before] = (await m.api.request("GET", `${AGENTS}/${agent.id}/logs`, { key })).json.data.logs;
      await appendLog(m.api.deps.db, { agentId: agent.id, level: "warn", message: "missed while away", atMs: 2 });
      const got: AgentLogLine[] = [];
      const follow = followAgentLogs(
        new MarketApi({ baseUrl: m.api.url, apiKey: key }),
        agent.slug!,
        (line) => {
          got.push(line);
        },
        { lastEventId: String(before.id) },
      );
      try {
        await appendLog(m.api.deps.db, { agentId: agent.id, level: "info", message: "live", atMs: 3 });
        for (let i = 0; i < 250 && got.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 20));
        expect(got.map((l) => [l.message, l.level])).to.deep.equal([
          ["missed while away", "warn"],
          ["live", "info"],
        ]);
        expect(follow.lastEventId).to.equal(String(got[1].id));
      } finally {
        await follow.close();
      }
      const stranger = new MarketApi({ baseUrl: m.api.url, apiKey: await m.api.createKey(m.stranger.address) });
      const refused = followAgentLogs(stranger, agent.id, () => undefined);
      const error = await refused.done.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(ApiError);
      expect((error as ApiError).code).to.equal("NOT_FOUND");
    }, NO_FEE));

  it("caps a key's concurrent log follows (429 RATE_LIMIT), counted apart from its event streams", () =>
    withMarket(
      async (m) => {
        const key = await m.api.createKey(m.worker.address);
        const agent = await createAgent(m.api, key, { slug: "followed" });
        const follow = () => openEvents(m.api.url, { key, path: `${AGENTS}/${agent.id}/logs` });
        const open = [await follow(), await follow()];
        try {
          expect(open.map((s) => s.status)).to.deep.equal([200, 200]);
          const third = await follow();
          expect(third.status).to.equal(429);
          expect(third.json.error).to.deep.include({ code: "RATE_LIMIT", details: { maxStreams: 2 } });
          // The key's event streams are counted apart.
          const events = await openEvents(m.api.url, { key });
          expect(events.status).to.equal(200);
          events.close();
          // A follow that ends gives its place back.
          open.shift()!.close();
          let again = await follow();
          for (let i = 0; i < 50 && again.status !== 200; i++) {
            await new Promise((resolve) => setTimeout(resolve, 20));
            again = await follow();
          }
          expect(again.status).to.equal(200);
          open.push(again);
        } finally {
          for (const s of open) s.close();
        }
      },
      { ...NO_FEE, EVENTS_MAX_STREAMS_PER_KEY: "2" },
    ));

  it("limits the agents one owner runs at once (AGENT_MAX_RUNNING_PER_OWNER, AGENT_LIMIT), paused ones included", () =>
    withMarket(
      async (m) => {
        await addLiveHost(m.api, "roomy-host", 10);
        const key = await m.api.createKey(m.worker.address);
        const mine = [];
        for (const slug of ["own-1", "own-2", "own-3"]) mine.push(await createAgent(m.api, key, { slug }));
        expect((await act(m.api, key, mine[0].id, "start")).status).to.equal(200);
        expect((await act(m.api, key, mine[1].id, "start")).status).to.equal(200);
        expect((await act(m.api, key, mine[1].id, "pause")).status).to.equal(200);
        const refused = await act(m.api, key, mine[2].id, "start");
        expectError(refused, 409, "AGENT_LIMIT", "at most 2 hosted agents");
        expect(refused.json.error.details).to.deep.equal({ running: 2, maxRunning: 2 });
        // Another owner still finds room on the hosts.
        const otherKey = await m.api.createKey(m.poster.address);
        const theirs = await createAgent(m.api, otherKey, { slug: "theirs-1" });
        expect((await act(m.api, otherKey, theirs.id, "start")).status).to.equal(200);
        // Stopping one of the owner's makes room for the next.
        expect((await act(m.api, key, mine[0].id, "stop")).status).to.equal(200);
        const started = await act(m.api, key, mine[2].id, "start");
        expect(started.status, started.text).to.equal(200);
      },
      { ...NO_FEE, AGENT_MAX_RUNNING_PER_OWNER: "2" },
    ));

  it("refuses a webhook skill whose endpoint is an IPv6 special-purpose address, in any spelling", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      const agent = await createAgent(m.api, key, { slug: "hooked" });
      const skills = `${AGENTS}/${agent.id}/skills`;
      const secrets = { signingSecret: "s".repeat(32) };
      for (const host of [
        "[::ffff:7f00:1]",
        "[::ffff:169.254.169.254]",
        "[64:ff9b::a9fe:a9fe]",
        "[2002:a00:1::]",
        "[::a00:1]",
      ]) {
        const res = await m.api.request("POST", skills, {
          key,
          body: { skill: "webhook", config: { url: `https://${host}/run`, capabilities: ["x"] }, secrets },
        });
        expectError(res, 400, "VALIDATION_ERROR", "is not a public address");
      }
      const ok = await m.api.request("POST", skills, {
        key,
        body: { skill: "webhook", config: { url: "https://[2606:4700::1111]/run", capabilities: ["x"] }, secrets },
      });
      expect(ok.status, ok.text).to.equal(200);
    }, NO_FEE));

  it("runs the state machine: start, pause, resume, restart, stop, delete, with each refusal's code", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      let wakes = 0;
      m.api.deps.agentHost = { wake: () => void wakes++ };
      const agent = await createAgent(m.api, key, { slug: "stately" });
      const other = await createAgent(m.api, key, { slug: "second" });

      expectError(await act(m.api, key, undefined, "start"), 400, "AGENT_ID_REQUIRED", "agentId");
      expectError(await act(m.api, key, "  ", "start"), 400, "AGENT_ID_REQUIRED");
      expectError(await act(m.api, key, agent.id, "fly"), 400, "VALIDATION_ERROR", "body.action");
      expectError(await act(m.api, key, "agt_000000000000000000000000", "start"), 404, "NOT_FOUND");
      for (const action of ["pause", "resume", "stop", "restart"]) {
        expectError(await act(m.api, key, agent.id, action), 400, "AGENT_ACTION_FAILED", action);
      }
      expect(wakes).to.equal(0);

      // No live host: no capacity. A host seen longer ago than a lease is not alive.
      expectError(await act(m.api, key, agent.id, "start"), 503, "AGENT_CAPACITY");
      await addLiveHost(m.api, "old-host", 5, m.api.clock.wallNowMs() - m.api.deps.config.hostedAgents.leaseMs - 1000);
      expectError(await act(m.api, key, agent.id, "start"), 503, "AGENT_CAPACITY");
      await addLiveHost(m.api, "host-a", 1);

      const started = await act(m.api, key, "stately", "start");
      expect(started.status, started.text).to.equal(200);
      expect(started.json.data).to.deep.include({ desiredState: "running", status: "starting" });
      expect(wakes).to.equal(1);
      expectError(await act(m.api, key, agent.id, "start"), 409, "AGENT_RUNNING");
      expectError(await act(m.api, key, agent.id, "resume"), 400, "AGENT_ACTION_FAILED");
      // The one slot is taken.
      expectError(await act(m.api, key, other.id, "start"), 503, "AGENT_CAPACITY", "1 of 1");

      const paused = await act(m.api, key, agent.id, "pause");
      expect(paused.json.data.desiredState, paused.text).to.equal("paused");
      expectError(await act(m.api, key, agent.id, "pause"), 400, "AGENT_ACTION_FAILED");
      expectError(await act(m.api, key, agent.id, "start"), 409, "AGENT_RUNNING");
      // Paused agents hold their slot.
      expectError(await act(m.api, key, other.id, "start"), 503, "AGENT_CAPACITY");
      const restarted = await act(m.api, key, agent.id, "restart");
      expect(restarted.json.data).to.deep.include({ desiredState: "paused", generation: 1 });
      expect((await act(m.api, key, agent.id, "resume")).json.data.desiredState).to.equal("running");
      expect((await act(m.api, key, agent.id, "restart")).json.data.generation).to.equal(2);

      expectError(await m.api.request("DELETE", `${AGENTS}/${agent.id}`, { key }), 409, "AGENT_RUNNING");
      expect((await act(m.api, key, agent.id, "stop")).json.data.desiredState).to.equal("stopped");
      expect((await act(m.api, key, other.id, "start")).status).to.equal(200);
      expect((await act(m.api, key, other.id, "stop")).status).to.equal(200);

      const strangerKey = await m.api.createKey(m.stranger.address);
      expectError(await act(m.api, strangerKey, agent.id, "start"), 404, "NOT_FOUND");
      expectError(await m.api.request("DELETE", `${AGENTS}/${agent.id}`, { key: strangerKey }), 404, "NOT_FOUND");

      const wakesBefore = wakes;
      const deleted = await m.api.request("DELETE", `${AGENTS}/stately`, { key });
      expect(deleted.json.data, deleted.text).to.deep.equal({ id: agent.id, deleted: true });
      expect(wakes).to.equal(wakesBefore + 1);
      const gone = await row(m, agent.id);
      expect(gone).to.deep.include({ status: "deleted", slug: null, former_slug: "stately", encrypted_key: null });
      expectError(await m.api.request("GET", `${AGENTS}/${agent.id}`, { key }), 404, "NOT_FOUND");
      expectError(await m.api.request("DELETE", `${AGENTS}/${agent.id}`, { key }), 404, "NOT_FOUND");
      expectError(await act(m.api, key, agent.id, "start"), 404, "NOT_FOUND");
      // The slug is free again.
      const again = await createAgent(m.api, key, { slug: "stately" });
      expect(again.id).to.not.equal(agent.id);
      const live = (await m.api.request("GET", AGENTS, { key })).json.data.agents.map((a: { id: string }) => a.id);
      expect(live).to.have.members([other.id, again.id]).and.have.length(2);
    }, NO_FEE));

  it("installs and uninstalls skills with their secrets sealed, bumping the generation", () =>
    withMarket(async (m) => {
      const key = await m.api.createKey(m.worker.address);
      const catalog = await m.api.request("GET", `${AGENTS}/skills`);
      expect(catalog.status, catalog.text).to.equal(200);
      expect(catalog.json.data.skills.map((s: { id: string }) => s.id)).to.deep.equal(SKILLS.map((s) => s.id));
      expect(catalog.json.data.skills.find((s: { id: string }) => s.id === secretSkill.id)).to.deep.include({
        requiredSecrets: secretSkill.requiredSecrets,
      });

      const agent = await createAgent(m.api, key, { slug: "skilled" });
      let wakes = 0;
      m.api.deps.agentHost = { wake: () => void wakes++ };
      const skills = `${AGENTS}/${agent.id}/skills`;
      expectError(
        await m.api.request("POST", skills, { key, body: { skill: "no-such-skill" } }),
        404,
        "SKILL_NOT_FOUND",
      );
      const config = validConfig(secretSkill);
      const needs = await m.api.request("POST", skills, { key, body: { skill: secretSkill.id, config } });
      expectError(needs, 400, "SKILL_NEEDS_SECRETS", secretSkill.requiredSecrets[0]);
      expect(needs.json.error.details.missing).to.deep.equal(secretSkill.requiredSecrets);
      const bad = await m.api.request("POST", `${AGENTS}/skilled/skills`, {
        key,
        body: { skill: configuredSkill.id, config: {}, secrets: secretsFor(configuredSkill) },
      });
      expectError(bad, 400, "VALIDATION_ERROR", "body.config");
      let reason = "";
      try {
        configuredSkill.parseConfig({});
      } catch (error) {
        reason = (error as Error).message;
      }
      expect(bad.json.error.message).to.contain(reason);
      expect(wakes).to.equal(0);

      const secrets = secretsFor(secretSkill);
      const installed = await m.api.request("POST", skills, { key, body: { skill: secretSkill.id, config, secrets } });
      expect(installed.status, installed.text).to.equal(200);
      expect(installed.json.data.generation).to.equal(1);
      expect(installed.json.data.skills).to.have.length(1);
      expect(installed.json.data.skills[0]).to.deep.include({ skill: secretSkill.id });
      expect(installed.json.data.capabilities).to.include.members(secretSkill.capabilities);
      expect(installed.text).to.not.contain(Object.values(secrets)[0]);
      expect(wakes).to.equal(1);
      const stored = await m.api.deps.db("hosted_agent_skills").where({ agent_id: agent.id }).first();
      expect(stored.encrypted_secrets).to.match(/^v1\./).and.not.contain(Object.values(secrets)[0]);
      const opened = openSecret(
        m.api.deps.config.hostedAgents.keyEncryptionKey,
        stored.encrypted_secrets,
        secretLabel.skillSecrets(agent.id, secretSkill.id),
      );
      expect(JSON.parse(opened)).to.deep.equal(secrets);
      const listed = await m.api.request("GET", AGENTS, { key });
      expect(listed.text).to.not.contain(Object.values(secrets)[0]);

      expectError(
        await m.api.request("POST", skills, { key, body: { skill: secretSkill.id, config, secrets } }),
        409,
        "ALREADY_INSTALLED",
      );
      expect((await row(m, agent.id)).generation).to.equal(1);

      const removed = await m.api.request("DELETE", `${skills}/${secretSkill.id}`, { key });
      expect(removed.json.data, removed.text).to.deep.equal({ id: agent.id, skill: secretSkill.id, uninstalled: true });
      expect((await row(m, agent.id)).generation).to.equal(2);
      expect(wakes).to.equal(2);
      expectError(await m.api.request("DELETE", `${skills}/${secretSkill.id}`, { key }), 404, "NOT_INSTALLED");
      expectError(await m.api.request("DELETE", `${skills}/${plainSkill.id}`, { key }), 404, "NOT_INSTALLED");
      expect(await m.api.deps.db("hosted_agent_skills").where({ agent_id: agent.id })).to.have.length(0);
    }, NO_FEE));

  it("creates and starts nothing where hosting is off (HOSTED_AGENTS=off)", () =>
    withMarket(
      async (m) => {
        const key = await m.api.createKey(m.worker.address);
        expectError(
          await m.api.request("POST", AGENTS, { key, body: { slug: "off-agent", name: "Off" } }),
          503,
          "AGENT_CAPACITY",
          "HOSTED_AGENTS=off",
        );
        expect(await m.api.deps.db("hosted_agents")).to.have.length(0);
      },
      { ...NO_FEE, HOSTED_AGENTS: "off" },
    ));

  describe("the deploy credit", () => {
    it("credits a paid fee only at the indexer's confirmation depth (INDEXER_CONFIRMATIONS)", () =>
      withMarket(
        async (m) => {
          const key = await m.api.createKey(m.worker.address);
          const txHash = await payDeployFee(m, m.worker, key);
          // Mined, but the indexer waits for 2 more blocks: neither a verification nor an inline deploy credits it.
          const early = await m.api.request("POST", `${DEPLOY_FEE}/verify`, { key, body: { txHash } });
          expectError(early, 409, "DEPLOY_FEE_NOT_FOUND", "0 of the 2 confirmations");
          expect(early.json.error.details).to.deep.equal({ confirmations: 0, required: 2 });
          expectError(
            await m.api.request("POST", AGENTS, { key, body: { slug: "early", name: "E", deployFeeTxHash: txHash } }),
            409,
            "DEPLOY_FEE_NOT_FOUND",
          );
          expect(await credits(m, key)).to.equal(0);
          await hre.network.provider.send("hardhat_mine", ["0x2"]);
          const verified = await m.api.request("POST", `${DEPLOY_FEE}/verify`, { key, body: { txHash } });
          expect(verified.status, verified.text).to.equal(200);
          expect(verified.json.data.credits).to.equal(1);
        },
        { INDEXER_CONFIRMATIONS: "2" },
      ));

    it("answers NO_DEPLOY_CREDIT without a credit, and spends one verified inline or before", () =>
      withMarket(async (m) => {
        const key = await m.api.createKey(m.worker.address);
        expectError(
          await m.api.request("POST", AGENTS, { key, body: { slug: "paid-1", name: "P" } }),
          402,
          "NO_DEPLOY_CREDIT",
        );
        // Inline: the fee is verified, then its credit spent.
        const first = await payDeployFee(m, m.worker, key);
        const inline = await createAgent(m.api, key, { slug: "paid-1", deployFeeTxHash: first });
        expect((await row(m, inline.id)).deploy_tx_hash).to.equal(first.toLowerCase());
        expect(await credits(m, key)).to.equal(0);
        // A spent payment cannot be used again.
        expectError(
          await m.api.request("POST", AGENTS, { key, body: { slug: "paid-2", name: "P", deployFeeTxHash: first } }),
          409,
          "DEPLOY_FEE_IN_USE",
        );
        // Verified before: DEPLOY_FEE_IN_USE from the inline check, but it is this wallet's unspent credit.
        const second = await payDeployFee(m, m.worker, key);
        const verified = await m.api.request("POST", `${DEPLOY_FEE}/verify`, { key, body: { txHash: second } });
        expect(verified.json.data.credits, verified.text).to.equal(1);
        const before = await createAgent(m.api, key, { slug: "paid-2", deployFeeTxHash: second });
        expect((await row(m, before.id)).deploy_tx_hash).to.equal(second.toLowerCase());
        expect(await credits(m, key)).to.equal(0);
        // Another wallet's fee: DEPLOY_FEE_NOT_PAID passes through.
        const strangerKey = await m.api.createKey(m.stranger.address);
        const theirs = await payDeployFee(m, m.stranger, strangerKey);
        const notPaid = await m.api.request("POST", AGENTS, {
          key,
          body: { slug: "paid-3", name: "P", deployFeeTxHash: theirs },
        });
        expectError(notPaid, 402, "DEPLOY_FEE_NOT_PAID");
        // The payment stays the stranger's: one unspent credit once the indexer has its AgentDeployed event (the
        // assertion used to race the indexer), and nothing of it went to the caller.
        await m.api.synced();
        expect(await credits(m, strangerKey)).to.equal(1);
        expect(await credits(m, key)).to.equal(0);
      }));

    it("never spends a credit on a taken slug", () =>
      withMarket(async (m) => {
        const key = await m.api.createKey(m.worker.address);
        const otherKey = await m.api.createKey(m.stranger.address);
        await createAgent(m.api, otherKey, {
          slug: "taken",
          deployFeeTxHash: await payDeployFee(m, m.stranger, otherKey),
        });
        const paid = await payDeployFee(m, m.worker, key);
        // Inline: verified (a credit now), then the slug refused: the credit stays.
        expectError(
          await m.api.request("POST", AGENTS, { key, body: { slug: "taken", name: "T", deployFeeTxHash: paid } }),
          409,
          "SLUG_TAKEN",
        );
        expect(await credits(m, key)).to.equal(1);
        expectError(
          await m.api.request("POST", AGENTS, { key, body: { slug: "taken", name: "T" } }),
          409,
          "SLUG_TAKEN",
        );
        expect(await credits(m, key)).to.equal(1);
        // The same payment then deploys another slug.
        await createAgent(m.api, key, { slug: "free", deployFeeTxHash: paid });
        expect(await credits(m, key)).to.equal(0);
      }));
  });

  describe("the key export", () => {
    it("answers the key, to its owner's fresh signature only, recording the export first", () =>
      withMarket(async (m) => {
        const key = await m.api.createKey(m.worker.address);
        const agent = await createAgent(m.api, key, { slug: "exportable" });
        const logger = recordingLogger();
        m.api.deps.logger = logger;
        const challengePath = `${AGENTS}/${agent.id}/export/challenge`;
        const exportPath = `${AGENTS}/exportable/export`;
        const challenge = async () => {
          const res = await m.api.request("POST", challengePath, { key });
          expect(res.status, res.text).to.equal(200);
          return res.json.data;
        };

        const first = await challenge();
        expect(first.message).to.contain(agent.id).and.contain(agent.wallet).and.contain(first.nonce);
        expect(first.message).to.contain(getAddress(m.worker.address));
        const signature = await m.worker.signMessage(first.message);
        const exported = await m.api.request("POST", exportPath, { key, body: { message: first.message, signature } });
        expect(exported.status, exported.text).to.equal(200);
        expect(exported.json.data.address).to.equal(agent.wallet);
        expect(new ethers.Wallet(exported.json.data.privateKey).address.toLowerCase()).to.equal(agent.wallet);
        const records = await m.api.deps.db("hosted_agent_key_exports").where({ agent_id: agent.id });
        expect(records).to.have.length(1);
        expect(records[0]).to.deep.include({ owner: m.worker.address.toLowerCase() });
        expect(records[0].ip).to.match(/127\.0\.0\.1/);
        const logged = logger.lines.join("\n");
        expect(logged).to.contain("exported").and.contain(agent.id);
        expect(logged).to.not.contain(exported.json.data.privateKey.slice(2));
        expect(exported.json.data.privateKey).to.not.equal((await row(m, agent.id)).encrypted_key);

        // One nonce, one export.
        expectError(
          await m.api.request("POST", exportPath, { key, body: { message: first.message, signature } }),
          400,
          "NONCE_INVALID",
        );
        // Signed by another wallet than the owner's.
        const second = await challenge();
        const strangers = await m.stranger.signMessage(second.message);
        expectError(
          await m.api.request("POST", exportPath, { key, body: { message: second.message, signature: strangers } }),
          403,
          "NOT_OWNER_SIGNATURE",
        );
        // Not a signature of the message at all.
        const garbage = `0x${"11".repeat(65)}`;
        expectError(
          await m.api.request("POST", exportPath, { key, body: { message: second.message, signature: garbage } }),
          400,
          "BAD_SIGNATURE",
        );
        // A sign-in message is not an export challenge.
        const signIn = (await m.api.request("POST", "/api/v1/auth/nonce", { body: { address: m.worker.address } })).json
          .data;
        expectError(
          await m.api.request("POST", exportPath, {
            key,
            body: { message: signIn.message, signature: await m.worker.signMessage(signIn.message) },
          }),
          400,
          "BAD_SIGNATURE",
          "export challenge",
        );
        // A line missing.
        const noNonce = second.message.replace(/\nNonce: [^\n]+/, "");
        expectError(
          await m.api.request("POST", exportPath, {
            key,
            body: { message: noNonce, signature: await m.worker.signMessage(noNonce) },
          }),
          400,
          "MISSING_FIELDS",
        );
        // A nonce issued for another wallet.
        const theirNonce = (
          await m.api.request("POST", "/api/v1/auth/nonce", { body: { address: m.stranger.address } })
        ).json.data.nonce;
        const context = signInContext(m.api.deps);
        const now = m.api.clock.wallNow();
        const mismatched = buildSiweMessage({
          domain: context.domain,
          address: getAddress(m.worker.address),
          statement: exportStatement(agent),
          uri: context.uri,
          version: "1",
          chainId: context.chainId,
          nonce: theirNonce,
          issuedAt: new Date(now * 1000).toISOString(),
          expirationTime: new Date((now + 300) * 1000).toISOString(),
        });
        expectError(
          await m.api.request("POST", exportPath, {
            key,
            body: { message: mismatched, signature: await m.worker.signMessage(mismatched) },
          }),
          400,
          "NONCE_MISMATCH",
        );
        // Another owner cannot even ask.
        const strangerKey = await m.api.createKey(m.stranger.address);
        expectError(await m.api.request("POST", challengePath, { key: strangerKey }), 404, "NOT_FOUND");
        expect(await countKeyExports(m.api.deps.db, agent.id)).to.equal(1);

        // The second challenge still works for its owner.
        const ok = await m.api.request("POST", exportPath, {
          key,
          body: { message: second.message, signature: await m.worker.signMessage(second.message) },
        });
        expect(ok.json.data.address, ok.text).to.equal(agent.wallet);
        expect(await countKeyExports(m.api.deps.db, agent.id)).to.equal(2);
      }, NO_FEE));

    it("binds each nonce to its purpose: an export challenge signed by the owner never signs in, nor the reverse", () =>
      withMarket(async (m) => {
        const key = await m.api.createKey(m.worker.address);
        const agent = await createAgent(m.api, key, { slug: "purposed" });
        const challenge = await m.api.request("POST", `${AGENTS}/${agent.id}/export/challenge`, { key });
        expect(challenge.status, challenge.text).to.equal(200);
        const { message, nonce } = challenge.json.data as { message: string; nonce: string };
        const verify = async (text: string) =>
          m.api.request("POST", "/api/v1/auth/verify", {
            body: { message: text, signature: await m.worker.signMessage(text) },
          });
        // As issued: the export statement is not the sign-in statement.
        expectError(await verify(message), 400, "BAD_SIGNATURE", "message.statement");
        // The same nonce under the sign-in statement, or none: the nonce is the export's.
        const signInStatement = message.replace(
          /\n\n[^\n]+\n\nURI:/,
          "\n\nSign in to the escrow task marketplace.\n\nURI:",
        );
        expect(signInStatement).to.contain("Sign in to the escrow task marketplace.");
        expectError(await verify(signInStatement), 400, "NONCE_INVALID", `key-export:${agent.id}`);
        const noStatement = message.replace(/\n\n[^\n]+\n\nURI:/, "\n\n\nURI:");
        expectError(await verify(noStatement), 400, "NONCE_INVALID", "not sign-in");
        // The export still works with its nonce (nothing was spent), and a sign-in nonce opens no export.
        const signIn = (await m.api.request("POST", "/api/v1/auth/nonce", { body: { address: m.worker.address } })).json
          .data;
        const context = signInContext(m.api.deps);
        const now = m.api.clock.wallNow();
        const forged = buildSiweMessage({
          domain: context.domain,
          address: getAddress(m.worker.address),
          statement: exportStatement(agent),
          uri: context.uri,
          version: "1",
          chainId: context.chainId,
          nonce: signIn.nonce,
          issuedAt: new Date(now * 1000).toISOString(),
          expirationTime: new Date((now + 300) * 1000).toISOString(),
        });
        const exportPath = `${AGENTS}/${agent.id}/export`;
        expectError(
          await m.api.request("POST", exportPath, {
            key,
            body: { message: forged, signature: await m.worker.signMessage(forged) },
          }),
          400,
          "NONCE_INVALID",
          "issued for sign-in",
        );
        const exported = await m.api.request("POST", exportPath, {
          key,
          body: { message, signature: await m.worker.signMessage(message) },
        });
        expect(exported.status, exported.text).to.equal(200);
        expect(nonce).to.be.a("string");
      }, NO_FEE));

    it("answers EXPORT_NOT_LOGGED when the record cannot be written (the nonce stays usable), NO_KEY once deleted", () =>
      withMarket(async (m) => {
        const key = await m.api.createKey(m.worker.address);
        const agent = await createAgent(m.api, key, { slug: "unlogged" });
        const { message, nonce } = (await m.api.request("POST", `${AGENTS}/${agent.id}/export/challenge`, { key })).json
          .data;
        const signature = await m.worker.signMessage(message);
        await m.api.deps.db.schema.dropTable("hosted_agent_key_exports");
        const refused = await m.api.request("POST", `${AGENTS}/${agent.id}/export`, {
          key,
          body: { message, signature },
        });
        expectError(refused, 503, "EXPORT_NOT_LOGGED");
        expect(refused.text).to.not.match(/privateKey/);
        expect((await findNonce(m.api.deps.db, nonce))?.usedAt).to.equal(null);

        const deleted = await m.api.request("DELETE", `${AGENTS}/${agent.id}`, { key });
        expect(deleted.status, deleted.text).to.equal(200);
        expectError(await m.api.request("POST", `${AGENTS}/${agent.id}/export/challenge`, { key }), 409, "NO_KEY");
        expectError(
          await m.api.request("POST", `${AGENTS}/${agent.id}/export`, { key, body: { message, signature } }),
          409,
          "NO_KEY",
        );
      }, NO_FEE));
  });

  it("documents every hosted-agent route in the OpenAPI document with its codes", () =>
    withMarket(async (m) => {
      const doc = (await m.api.request("GET", "/api/v1/openapi.json")).json;
      const paths = doc.paths ?? doc.data?.paths;
      expect(paths, "openapi paths").to.not.equal(undefined);
      for (const path of [AGENTS, ACTION, `${AGENTS}/{agent}`, `${AGENTS}/{agent}/export`, `${AGENTS}/skills`]) {
        expect(paths, path).to.have.property(path);
      }
      expect(JSON.stringify(paths[ACTION])).to.contain("AGENT_ID_REQUIRED").and.contain("DELEGATION_DISABLED");
      expect(findSkill(plainSkill.id)).to.equal(plainSkill);
    }, NO_FEE));
});

/** A value for each secret `skill` needs. */
function secretsFor(skill: { requiredSecrets: string[] }): Record<string, string> {
  return Object.fromEntries(skill.requiredSecrets.map((name, i) => [name, `s3cret-${name}-${i}-value`]));
}
