/**
 * The production topology (docs/operations.md, "Topology") as real processes on PostgreSQL and Redis: two API
 * processes (`server/main.ts` with RUN_INDEXER=false, RUN_AGENT_HOST=false, the first one holding the verifier key),
 * two standalone indexers (`server/indexer/main.ts`: one writes, one waits for the lock) and two agent hosts
 * (`server/hosting/main.ts`, sharing hosted agents through leases) against a Hardhat chain served over HTTP. Load on
 * both API processes (tasks funded on the chain and listed through either process, reads, a poster's event stream
 * open on each, a webhook), then the faults: `kill -9` of the writing indexer (the second takes over), of an agent
 * host running agents (the other takes them within the lease) and of one API process (its stream resumes on the
 * other with Last-Event-ID). Afterwards every funded task is indexed exactly once, the escrow's logs are stored once
 * each, the resumed stream holds every event the surviving stream holds, in order, the webhook received every event
 * once (the dispatchers of both processes share one queue), every hosted agent is leased by one host, and a rate
 * limit held across both processes (Redis counters). The figures (requests, answers by code, times to take over,
 * cross-process event latency with Redis wake-ups and a one-minute poll) are printed and kept in docs/operations.md,
 * "The topology under faults".
 *
 * Skipped unless DATABASE_URL and REDIS_URL are set (CI's PostgreSQL/Redis pass runs it).
 */
import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { CATEGORY, DAY, USDC, ZONE, deployEscrowFixture } from "../helpers/fixtures";
import { freePort } from "../helpers/api";
import { serveChain } from "../helpers/rpc";
import { openEvents, type SseEvent, type SseStream } from "../helpers/sse";
import { scrape } from "../helpers/prometheus";
import { verifierPrivateKey } from "../helpers/keys";
import { childEnv } from "../helpers/childEnv";
import { createDb } from "../../server/db/knex";
import { migrateLatest } from "../../server/db/migrations";
import { insertApiKey } from "../../server/db/repositories/apiKeys";
import { insertHostedAgent } from "../helpers/hostedAgentRows";
import { loadConfig } from "../../server/config";
import { Wallet } from "ethers";
import { getCheckpoint } from "../../server/db/repositories/checkpoints";
import { newApiKey } from "../../server/domain/credentials";
import { agentPublicKey } from "../../server/domain/briefs";
import { upsertExecutor } from "../../server/db/repositories/executors";
import { CHECKPOINT_NAME } from "../../server/indexer/sync";

const ROOT = path.join(__dirname, "..", "..");
/** Tasks funded and listed before the faults, and after each of them. */
const ROUND = 8;
/** Posting requests with a bad key allowed per window, across all API processes together. */
const FAILED_AUTH_BUDGET = 6;
/** Tasks accepted through the API process holding the verifier key: each an assignment the verifier signs. */
const ACCEPTS = 3;
/** Hosted agents, and the agent hosts' lease: a dead host's agents move to the other within it. */
const AGENTS = 4;
const LEASE_MS = 3000;

interface Outcome {
  status?: number;
  error?: string;
  body?: string;
}

function request(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = http.request(url, { method, headers: { ...headers, connection: "close" }, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode, body: text }));
      res.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    });
    req.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end(body);
  });
}

interface Child {
  name: string;
  child: ChildProcess;
  lines: string[];
  exited: Promise<NodeJS.Signals | number | null>;
}

function start(name: string, script: string, env: NodeJS.ProcessEnv, live: Set<ChildProcess>): Child {
  const child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", script], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  live.add(child);
  const lines: string[] = [];
  let partial = "";
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop()!;
    lines.push(...parts);
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once("exit", (code, signal) => {
      live.delete(child);
      resolve(signal ?? code);
    }),
  );
  return { name, child, lines, exited };
}

async function waitFor(what: () => string, timeoutMs: number, condition: () => Promise<boolean> | boolean) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

describe("production topology: two APIs, two indexers, two agent hosts, PostgreSQL and Redis, kill -9", () => {
  before(function () {
    if (!process.env.DATABASE_URL || !process.env.REDIS_URL) {
      console.log("    (skipped: the topology test needs DATABASE_URL and REDIS_URL, as CI's PostgreSQL pass sets)");
      this.skip();
    }
  });

  it("indexes every task once, resumes streams and webhooks, hands over the indexer and the agents, holds limits", async function () {
    this.timeout(900_000);
    const fx = await loadFixture(deployEscrowFixture);
    const chain = await serveChain();
    const temp = fs.mkdtempSync(path.join(os.tmpdir(), "topology-"));
    const deploymentsDir = path.join(temp, "deployments");
    fs.mkdirSync(deploymentsDir);
    fs.writeFileSync(path.join(deploymentsDir, "hardhat.json"), JSON.stringify({ ...fx.book, network: "hardhat" }));
    const schema = `t_${crypto.randomBytes(6).toString("hex")}`;
    const db = createDb({ databaseUrl: process.env.DATABASE_URL, pgSchema: schema });
    const live = new Set<ChildProcess>();
    const streams: SseStream[] = [];
    const servers: http.Server[] = [];
    try {
      await migrateLatest(db);
      const { key: posterKey, keyHash, prefix } = newApiKey();
      await insertApiKey(db, { address: fx.poster.address.toLowerCase(), keyHash, prefix, label: "t", createdAt: 1 });

      const env = (extra: Record<string, string>): NodeJS.ProcessEnv => ({
        ...childEnv(),
        NETWORK: "hardhat",
        RPC_URL: chain.url,
        DEPLOYMENTS_DIR: deploymentsDir,
        DATA_DIR: temp,
        DATABASE_URL: process.env.DATABASE_URL,
        DATABASE_SCHEMA: schema,
        REDIS_URL: process.env.REDIS_URL,
        RATE_LIMIT_PREFIX: `topology:${schema}:`,
        INDEXER_POLL_MS: "50",
        LOG_LEVEL: "info",
        LOG_REQUESTS: "off",
        ...extra,
      });
      const indexers = [0, 1].map((i) => start(`indexer${i}`, "server/indexer/main.ts", env({}), live));
      const apiEnv = {
        RUN_INDEXER: "false",
        RUN_AGENT_HOST: "false",
        // A minute-long poll: events cross processes through the Redis wake-ups, or not in time.
        EVENTS_POLL_MS: "60000",
        VERIFIER_POLL_MS: "50",
        RATE_IP_PER_WINDOW: "100000",
        RATE_WALLET_FAMILY_PER_MINUTE: "100000",
        RATE_IP_POSTING_PER_MINUTE: "100000",
        RATE_FAILED_AUTH_PER_WINDOW: String(FAILED_AUTH_BUDGET),
        // The limit is checked from an address of its own (X-Forwarded-For), so it does not stop the load's posting.
        TRUST_PROXY: "true",
        WEBHOOK_ALLOW_PRIVATE: "true",
        WEBHOOK_RETRY_BASE_MS: "200",
        // /metrics on the API's port: each process counts the refusals it answered.
        METRICS: "on",
      };
      const ports = [await freePort(), await freePort()];
      const apis = ports.map((port, i) =>
        start(
          `api${i}`,
          "server/main.ts",
          env({
            ...apiEnv,
            API_PORT: String(port),
            ...(i === 0 ? { VERIFIER_PRIVATE_KEY: verifierPrivateKey() } : {}),
          }),
          live,
        ),
      );
      const urls = ports.map((port) => `http://127.0.0.1:${port}`);
      // Two agent hosts, each with room for every agent, speaking to the API process that stays up.
      const kek = loadConfig({ NETWORK: "hardhat" }).hostedAgents.keyEncryptionKey;
      const agentIds: string[] = [];
      for (let i = 0; i < AGENTS; i++) {
        const wallet = Wallet.createRandom();
        const agent = await insertHostedAgent(db, kek, {
          privateKey: wallet.privateKey,
          wallet: wallet.address,
          skills: [{ skill: "summary" }],
          // Above every reward here: the agents run (and move between hosts) without taking the tasks the test's
          // workers accept through the verifier.
          minReward: String(USDC(1_000_000)),
          createdAt: 100 + i,
        });
        agentIds.push(agent.id);
      }
      const hostEnv = (id: string) =>
        env({
          API_URL: urls[1],
          AGENT_HOST_ID: id,
          AGENT_HOST_CAPACITY: String(AGENTS),
          AGENT_LEASE_MS: String(LEASE_MS),
        });
      const hosts = ["host-a", "host-b"].map((id) => ({
        id,
        ...start(id, "server/hosting/main.ts", hostEnv(id), live),
      }));
      const leases = async (): Promise<Map<string, string | null>> => {
        const now = Date.now();
        const leased = await db("hosted_agents").select("id", "lease_host", "lease_until_ms");
        return new Map(
          leased.map((r) => [r.id, r.lease_host && Number(r.lease_until_ms) > now ? (r.lease_host as string) : null]),
        );
      };
      for (const [i, url] of urls.entries()) {
        await waitFor(
          () => `api${i} to be ready:\n${apis[i].lines.slice(-10).join("\n")}`,
          // Six processes start at once through ts-node: minutes on a loaded 2-core machine.
          480_000,
          async () => {
            if (apis[i].child.exitCode !== null) throw new Error(`api${i} exited:\n${apis[i].lines.join("\n")}`);
            return (await request(`${url}/health/ready`, "GET", {})).status === 200;
          },
        );
      }
      // Which indexer writes: the one that took the lock (both log "indexer started"; the other then waits for it).
      const holdsLock = (x: Child) => x.lines.some((l) => l.includes('"msg":"indexer holds the writer lock"'));
      await waitFor(
        () => "an indexer to take the writer lock",
        30_000,
        () => indexers.some(holdsLock),
      );
      const writer = indexers.find(holdsLock)!;
      const standby = indexers.find((x) => x !== writer)!;
      expect(holdsLock(standby), "one writer at a time").to.equal(false);

      // A webhook receiver (always 200), registered through the first API process: each request's event id.
      const received: string[] = [];
      const receiver = http.createServer((req, res) => {
        received.push(String(req.headers["x-market-event-id"]));
        req.resume();
        res.end();
      });
      servers.push(receiver);
      await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
      const receiverPort = (receiver.address() as { port: number }).port;
      const hook = await request(
        `${urls[0]}/api/v1/webhooks`,
        "POST",
        { "content-type": "application/json", "x-api-key": posterKey },
        JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/hook` }),
      );
      expect(hook.status, hook.body).to.equal(201);

      const answers = new Map<string, number>();
      const count = (outcome: Outcome) => {
        const key = outcome.status ? String(outcome.status) : outcome.error!;
        answers.set(key, (answers.get(key) ?? 0) + 1);
      };
      for (const url of urls) {
        const stream = await openEvents(url, { key: posterKey });
        expect(stream.status).to.equal(200);
        streams.push(stream);
      }

      // A round of load: tasks funded on the chain, each listed through one API process in turn, reads on both.
      const token = await fx.usdc.getAddress();
      const taskIds: number[] = [];
      const listedHashes: { taskId: number; taskHash: string }[] = [];
      const latencies: number[] = [];
      const round = async (through: string[], label: string) => {
        for (let i = 0; i < ROUND; i++) {
          const taskHash = ethers.sha256(ethers.toUtf8Bytes(`topology ${label} ${i} ${Math.random()}`));
          const tx = await fx.escrow.connect(fx.poster).createTask(taskHash, token, USDC(5), CATEGORY, ZONE, DAY);
          await tx.wait();
          taskIds.push(Number(await fx.escrow.nextTaskId()) - 1);
          listedHashes.push({ taskId: taskIds.at(-1)!, taskHash });
          const url = through[i % through.length];
          const [listed, ...reads] = await Promise.all([
            request(
              `${url}/api/v1/a2a/tasks/index`,
              "POST",
              { "content-type": "application/json", "x-api-key": posterKey },
              JSON.stringify({ txHash: tx.hash, taskHash, privacy: "public" }),
            ),
            ...through.map((u) => request(`${u}/api/v1/stats`, "GET", {})),
            ...through.map((u) => request(`${u}/api/v1/a2a/tasks`, "GET", {})),
            ...through.map((u) => request(`${u}/api/v1/a2a/tasks/posted`, "GET", { "x-api-key": posterKey })),
          ]);
          const listedAt = Date.now();
          for (const outcome of [listed, ...reads]) count(outcome);
          expect(listed.status, listed.body).to.equal(200);
          for (const read of reads) expect(read.status, read.body).to.equal(200);
          // The listing's task.listed on a stream of the other API process: the cross-process latency.
          const other = streams.find((s, k) => urls[k] !== url && !closed.has(s));
          if (other) {
            await other.waitFor((e) => e.event === "task.listed" && e.data.taskHash === taskHash, 10_000);
            latencies.push(Date.now() - listedAt);
          }
        }
      };
      const closed = new Set<SseStream>();

      await round(urls, "before");

      // A rate limit across both processes: posting requests with a bad key, alternating between them.
      const refusals: Outcome[] = [];
      for (let i = 0; i < FAILED_AUTH_BUDGET * 2; i++) {
        const outcome = await request(
          `${urls[i % 2]}/api/v1/a2a/tasks/index`,
          "POST",
          { "content-type": "application/json", "x-api-key": `sk_${"0".repeat(64)}`, "x-forwarded-for": "203.0.113.7" },
          JSON.stringify({}),
        );
        count(outcome);
        refusals.push(outcome);
      }
      expect(refusals.filter((o) => o.status === 401)).to.have.length(FAILED_AUTH_BUDGET);
      expect(refusals.filter((o) => o.status === 429)).to.have.length(FAILED_AUTH_BUDGET);
      expect(refusals.slice(FAILED_AUTH_BUDGET).every((o) => o.status === 429)).to.equal(true);
      // Each process answered half of them; together they refused FAILED_AUTH_BUDGET, as their metrics say.
      const refusedBy = await Promise.all(
        urls.map(async (url) =>
          (await scrape(`${url}/metrics`)).value("market_rate_limit_refusals_total", { family: "failed_auth" }),
        ),
      );
      expect(
        refusedBy.reduce((a, b) => a + b, 0),
        `refusals by process: ${refusedBy}`,
      ).to.equal(FAILED_AUTH_BUDGET);
      expect(refusedBy.every((n) => n > 0)).to.equal(true);

      // The verifier: workers accept listed tasks through the first API process (the one with the verifier key); each
      // accept answered 200 is one assignment the verifier signed, mined, and recorded as one confirmed intent.
      const workers = await Promise.all(
        Array.from({ length: ACCEPTS }, async () => {
          const wallet = Wallet.createRandom();
          await upsertExecutor(db, {
            address: wallet.address.toLowerCase(),
            publicKey: agentPublicKey(wallet.privateKey),
            capabilities: [],
            supportedChains: ["arc", "base"],
            minReward: "0",
            verifierOptIn: false,
            name: null,
            registeredAt: 1,
            updatedAt: 1,
            lastSeenAt: 1,
          });
          const { key, keyHash, prefix } = newApiKey();
          await insertApiKey(db, { address: wallet.address.toLowerCase(), keyHash, prefix, label: "t", createdAt: 1 });
          return { address: wallet.address.toLowerCase(), key };
        }),
      );
      const accepted = listedHashes.slice(0, ACCEPTS);
      for (const [i, worker] of workers.entries()) {
        const outcome = await request(`${urls[0]}/api/v1/a2a/tasks/${accepted[i].taskHash}/accept`, "POST", {
          "x-api-key": worker.key,
        });
        count(outcome);
        expect(outcome.status, outcome.body).to.equal(200);
      }
      // An accept answers once the intent is sent ("assigning"); the verifier's next pass sees it mined.
      const confirmed = async () =>
        (await db("verifier_intents").where({ status: "confirmed" }).count({ n: "*" }))[0].n;
      await waitFor(
        () => `the verifier to confirm ${ACCEPTS} assignments:\n${apis[0].lines.slice(-10).join("\n")}`,
        30_000,
        async () => Number(await confirmed()) === ACCEPTS,
      );
      for (const [i, worker] of workers.entries()) {
        expect((await fx.escrow.getTask(accepted[i].taskId)).worker.toLowerCase()).to.equal(worker.address);
        const assigned = await fx.escrow.queryFilter(fx.escrow.filters.WorkerAssigned(accepted[i].taskId));
        expect(assigned, `task ${accepted[i].taskId} assigned once`).to.have.length(1);
      }
      const intents = await db("verifier_intents").select("status");
      expect(intents.map((r) => r.status)).to.deep.equal(Array(ACCEPTS).fill("confirmed"));

      // kill -9 of the writing indexer: the standby takes the lock and indexes the next block.
      writer.child.kill("SIGKILL");
      const killedAt = Date.now();
      expect(await writer.exited).to.equal("SIGKILL");
      const hash = ethers.sha256(ethers.toUtf8Bytes(`topology takeover ${Math.random()}`));
      await (await fx.escrow.connect(fx.poster).createTask(hash, token, USDC(5), CATEGORY, ZONE, DAY)).wait();
      taskIds.push(Number(await fx.escrow.nextTaskId()) - 1);
      const takeoverBlock = await chain.provider.getBlockNumber();
      await waitFor(
        () => `the standby indexer to take over:\n${standby.lines.slice(-10).join("\n")}`,
        60_000,
        async () => ((await getCheckpoint(db, "base", CHECKPOINT_NAME))?.blockNumber ?? -1) >= takeoverBlock,
      );
      const takeoverMs = Date.now() - killedAt;
      expect(holdsLock(standby), "the standby took the lock").to.equal(true);

      await round(urls, "after-indexer");

      // Every hosted agent on exactly one host (a lease names one); kill -9 of the host running any: they move.
      await waitFor(
        () => "every agent leased by a host",
        60_000,
        async () => [...(await leases()).values()].every((h) => h !== null),
      );
      const leasedBefore = await leases();
      const victim = hosts.find((h) => [...leasedBefore.values()].includes(h.id))!;
      const other = hosts.find((h) => h !== victim)!;
      victim.child.kill("SIGKILL");
      const hostKilledAt = Date.now();
      expect(await victim.exited).to.equal("SIGKILL");
      await waitFor(
        () => `${other.id} to take over ${victim.id}'s agents:\n${other.lines.slice(-10).join("\n")}`,
        4 * LEASE_MS,
        async () => [...(await leases()).values()].every((h) => h === other.id),
      );
      const agentTakeoverMs = Date.now() - hostKilledAt;
      // Within one lease of the victim's last renewal, plus the survivor's tick (a third of a lease) and a margin.
      expect(agentTakeoverMs).to.be.at.most(LEASE_MS + LEASE_MS / 3 + 1000);
      expect([...(await leases()).keys()].sort()).to.deep.equal([...agentIds].sort());

      // kill -9 of the first API process: its stream breaks; the client resumes on the other with Last-Event-ID.
      const [lost, survivor] = streams;
      const lastSeen = lost.events.at(-1)!.id;
      apis[0].child.kill("SIGKILL");
      expect(await apis[0].exited).to.equal("SIGKILL");
      closed.add(lost);
      const resumed = await openEvents(urls[1], { key: posterKey, lastEventId: lastSeen });
      expect(resumed.status).to.equal(200);
      streams.push(resumed);
      const afterKill = await request(`${urls[0]}/api/v1/stats`, "GET", {});
      count(afterKill);
      expect(afterKill.error).to.equal("ECONNREFUSED");

      await round([urls[1]], "after-api");

      // Every funded task indexed exactly once, every escrow log stored once.
      const head = await chain.provider.getBlockNumber();
      await waitFor(
        () => `the index to reach block ${head}`,
        30_000,
        async () => ((await getCheckpoint(db, "base", CHECKPOINT_NAME))?.blockNumber ?? -1) >= head,
      );
      const rows = await db("tasks").whereIn("task_id", taskIds).select("task_id");
      expect(rows.map((r) => Number(r.task_id)).sort((a, b) => a - b)).to.deep.equal(
        [...taskIds].sort((a, b) => a - b),
      );
      const duplicates = await db("escrow_events")
        .select("tx_hash", "log_index")
        .count({ n: "*" })
        .groupBy("tx_hash", "log_index")
        .having(db.raw("count(*) > 1"));
      expect(duplicates).to.deep.equal([]);
      const logs = await chain.provider.getLogs({ address: fx.book.escrow.proxy, fromBlock: fx.book.startBlock });
      expect(Number((await db("escrow_events").count({ n: "*" }))[0].n)).to.equal(logs.length);

      // Streams: the surviving one saw every event of the poster once, in order; the broken one plus its resumption
      // on the other process saw exactly the same.
      const ids = (events: SseEvent[]) => events.map((e) => e.id);
      const listedCount = (events: SseEvent[]) => events.filter((e) => e.event === "task.listed").length;
      await waitFor(
        () => `the streams to see ${taskIds.length - 1} listings`,
        15_000,
        () => listedCount(survivor.events) === taskIds.length - 1,
      );
      const expected = ids(survivor.events);
      await waitFor(
        () => "the resumed stream to catch up",
        15_000,
        () => lost.events.length + resumed.events.length >= expected.length,
      );
      expect([...ids(lost.events), ...ids(resumed.events)]).to.deep.equal(expected);
      expect(new Set(expected).size).to.equal(expected.length);

      // Webhooks: every event reached the receiver, none twice (the dispatchers of both processes share the queue).
      await waitFor(
        () => `the webhook to receive ${expected.length} events (has ${new Set(received).size})`,
        30_000,
        () => expected.every((id) => received.includes(id)),
      );
      const twice = received.filter((id, i) => received.indexOf(id) !== i);
      expect(twice, "events delivered more than once").to.deep.equal([]);

      const figures = {
        webhookDeliveries: received.length,
        requests: [...answers.values()].reduce((a, b) => a + b, 0),
        answersByCode: Object.fromEntries([...answers].sort()),
        tasks: taskIds.length,
        verifierAssignments: ACCEPTS,
        escrowLogs: logs.length,
        streamEvents: expected.length,
        indexerTakeoverMs: takeoverMs,
        agentTakeoverMs,
        crossProcessEventMs: { median: median(latencies), max: Math.max(...latencies), samples: latencies.length },
      };
      console.log(`    topology figures: ${JSON.stringify(figures)}`);
    } finally {
      for (const stream of streams) stream.close();
      for (const server of servers) server.close();
      for (const child of live) child.kill("SIGKILL");
      await db.raw("drop schema if exists ?? cascade", [schema]);
      await db.destroy();
      await chain.close();
      fs.rmSync(temp, { recursive: true, force: true });
    }
  });
});
