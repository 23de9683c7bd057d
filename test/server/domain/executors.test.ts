import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { secp256k1 } from "@noble/curves/secp256k1";
import { deployEscrowFixture } from "../../helpers/fixtures";
import { startTestApi, type ApiResponse, type TestApi } from "../../helpers/api";
import { agentPublicKey } from "../../../server/domain/briefs";
import { RUNNING_WINDOW_SECONDS, markExecutorSeen } from "../../../server/domain/executors";
import { upsertExecutor } from "../../../server/db/repositories/executors";
import { insertHostedAgent } from "../../../server/db/repositories/hostedAgents";

const EXECUTORS = "/api/v1/a2a/executors";
const ME = `${EXECUTORS}/me`;
const HEARTBEAT = `${EXECUTORS}/heartbeat`;

/** Limits raised: these tests make many requests from one address. */
const ENV = { RATE_IP_PER_WINDOW: "100000" };

type Fixture = Awaited<ReturnType<typeof deployEscrowFixture>>;

async function withApi(fn: (ctx: Fixture & { api: TestApi }) => Promise<void>) {
  const fixture = await loadFixture(deployEscrowFixture);
  const api = await startTestApi(fixture.book, ENV);
  try {
    await fn({ ...fixture, api });
  } finally {
    await api.close();
  }
}

/** A fresh agent key pair's public key (130 hex). */
const freshPublicKey = () => agentPublicKey(secp256k1.utils.randomPrivateKey());

function expectError(res: ApiResponse, status: number, code: string, field?: string) {
  expect(res.status, res.text).to.equal(status);
  expect(res.json.success).to.equal(false);
  expect(res.json.error.code, res.text).to.equal(code);
  if (field) expect(res.json.error.message, res.text).to.contain(field);
}

async function register(api: TestApi, key: string, body: Record<string, unknown>) {
  const res = await api.request("POST", EXECUTORS, { key, body });
  expect(res.status, res.text).to.equal(200);
  return res.json.data;
}

async function listed(api: TestApi, query = ""): Promise<ApiResponse> {
  const res = await api.request("GET", `${EXECUTORS}${query}`);
  expect(res.status, res.text).to.equal(200);
  return res;
}

const addresses = (res: ApiResponse) => res.json.data.executors.map((e: { address: string }) => e.address);

describe("Executors API", () => {
  describe("POST /api/v1/a2a/executors", () => {
    it("registers the key's wallet, normalising capabilities, chains and the minimum reward", () =>
      withApi(async ({ api, worker }) => {
        const key = await api.createKey(worker.address);
        const publicKey = freshPublicKey();
        const data = await register(api, key, {
          publicKey: publicKey.toUpperCase(),
          capabilities: [" Python ", "python", "RUST", "translation"],
          supportedChains: ["arc", "base", "arc"],
          minReward: "0007000000",
          verifier: { optIn: true, name: "  Careful Checker  " },
        });
        const now = (await ethers.provider.getBlock("latest"))!.timestamp;
        expect(data).to.deep.equal({
          address: worker.address.toLowerCase(),
          publicKey,
          capabilities: ["python", "rust", "translation"],
          supportedChains: ["arc", "base"],
          minReward: "7000000",
          verifier: { optIn: true, name: "Careful Checker" },
          reputation: 0,
          registeredAt: data.registeredAt,
          updatedAt: data.registeredAt,
          lastSeenAt: data.registeredAt,
          running: true,
          created: true,
        });
        // Times are chain time.
        expect(data.registeredAt).to.be.within(now - 2, now);

        const me = await api.request("GET", ME, { key });
        expect(me.status, me.text).to.equal(200);
        const { created: _created, ...record } = data;
        expect(me.json.data).to.deep.equal(record);
      }));

    it("fills defaults: no capabilities, the posting chain, minReward 0, not a verifier", () =>
      withApi(async ({ api, worker }) => {
        const key = await api.createKey(worker.address);
        const data = await register(api, key, { publicKey: freshPublicKey() });
        expect(data.capabilities).to.deep.equal([]);
        expect(data.supportedChains).to.deep.equal(["base"]);
        expect(data.minReward).to.equal("0");
        expect(data.verifier).to.deep.equal({ optIn: false, name: null });
      }));

    it("replaces the record on update and keeps its registration time", () =>
      withApi(async ({ api, worker }) => {
        const key = await api.createKey(worker.address);
        const first = await register(api, key, {
          publicKey: freshPublicKey(),
          capabilities: ["python", "sql"],
          supportedChains: ["base"],
          minReward: "5",
          verifier: { optIn: true, name: "First" },
        });
        await time.increase(100);
        const publicKey = freshPublicKey();
        const second = await register(api, key, { publicKey, capabilities: ["go"], supportedChains: ["arc"] });
        expect(second.created).to.equal(false);
        expect(second.registeredAt).to.equal(first.registeredAt);
        expect(second.updatedAt).to.be.at.least(first.updatedAt + 100);
        expect(second.lastSeenAt).to.equal(second.updatedAt);
        expect(second.publicKey).to.equal(publicKey);
        expect(second.capabilities).to.deep.equal(["go"]);
        expect(second.supportedChains).to.deep.equal(["arc"]);
        expect(second.minReward).to.equal("0");
        expect(second.verifier).to.deep.equal({ optIn: false, name: null });
        // The old capabilities are gone from the filters too.
        expect(addresses(await listed(api, "?capabilities=python"))).to.deep.equal([]);
        expect(addresses(await listed(api, "?capabilities=go"))).to.deep.equal([worker.address.toLowerCase()]);
        expect((await listed(api)).json.data.total).to.equal(1);
      }));

    it("answers NO_PUBKEY without a public key (absent, null or empty)", () =>
      withApi(async ({ api, worker }) => {
        const key = await api.createKey(worker.address);
        for (const body of [{}, { publicKey: null }, { publicKey: "" }, { capabilities: ["python"] }]) {
          expectError(await api.request("POST", EXECUTORS, { key, body }), 400, "NO_PUBKEY", "publicKey");
        }
        expectError(await api.request("GET", ME, { key }), 404, "NOT_REGISTERED");
      }));

    it("answers VALIDATION_ERROR naming publicKey when it is malformed or off the curve", () =>
      withApi(async ({ api, worker }) => {
        const key = await api.createKey(worker.address);
        const good = freshPublicKey();
        const point = secp256k1.ProjectivePoint.fromHex(good);
        const compressed = Buffer.from(point.toRawBytes(true)).toString("hex");
        // Same x, y + 1: not on the curve.
        const y = (point.toAffine().y + 1n) % secp256k1.CURVE.Fp.ORDER;
        const offCurve = `${good.slice(0, 66)}${y.toString(16).padStart(64, "0")}`;
        const cases: unknown[] = [
          `0x${good}`,
          good.slice(0, 128),
          `${good}00`,
          compressed,
          `05${good.slice(2)}`,
          `${good.slice(0, 128)}zz`,
          offCurve,
          `04${"0".repeat(128)}`,
          12345,
          [good],
        ];
        for (const publicKey of cases) {
          const res = await api.request("POST", EXECUTORS, { key, body: { publicKey } });
          expectError(res, 400, "VALIDATION_ERROR", "body.publicKey");
        }
        const res = await api.request("POST", EXECUTORS, { key, body: { publicKey: offCurve } });
        expect(res.json.error.message).to.contain("curve");
        expectError(await api.request("GET", ME, { key }), 404, "NOT_REGISTERED");
      }));

    it("checks capabilities: strings of 1..64 characters without commas, at most 50", () =>
      withApi(async ({ api, worker }) => {
        const key = await api.createKey(worker.address);
        const publicKey = freshPublicKey();
        const bad: [unknown, string][] = [
          ["python", "body.capabilities"],
          [["  "], "body.capabilities[0]"],
          [["ok", ""], "body.capabilities[1]"],
          [["a".repeat(65)], "body.capabilities[0]"],
          [["a,b"], "body.capabilities[0]"],
          [["tab\there"], "body.capabilities[0]"],
          [[7], "body.capabilities[0]"],
          [Array.from({ length: 51 }, (_, i) => `cap-${i}`), "body.capabilities"],
        ];
        for (const [capabilities, field] of bad) {
          const res = await api.request("POST", EXECUTORS, { key, body: { publicKey, capabilities } });
          expectError(res, 400, "VALIDATION_ERROR", field);
        }
        const fifty = Array.from({ length: 50 }, (_, i) => `cap-${String(i).padStart(2, "0")}`);
        const data = await register(api, key, { publicKey, capabilities: [...fifty].reverse() });
        expect(data.capabilities).to.deep.equal(fifty);
        const longest = await register(api, key, { publicKey, capabilities: ["b".repeat(64)] });
        expect(longest.capabilities).to.deep.equal(["b".repeat(64)]);
      }));

    it("answers INVALID_CHAIN for an unknown chain and VALIDATION_ERROR for an empty or malformed list", () =>
      withApi(async ({ api, worker }) => {
        const key = await api.createKey(worker.address);
        const publicKey = freshPublicKey();
        for (const supportedChains of [["solana"], ["base", "BASE"], ["ethereum"]]) {
          const res = await api.request("POST", EXECUTORS, { key, body: { publicKey, supportedChains } });
          expectError(res, 400, "INVALID_CHAIN", "body.supportedChains");
        }
        for (const supportedChains of [[], "base", [1]]) {
          const res = await api.request("POST", EXECUTORS, { key, body: { publicKey, supportedChains } });
          expectError(res, 400, "VALIDATION_ERROR", "body.supportedChains");
        }
      }));

    it("checks minReward: a decimal string of the token's smallest unit, 0 allowed", () =>
      withApi(async ({ api, worker }) => {
        const key = await api.createKey(worker.address);
        const publicKey = freshPublicKey();
        const tooBig = ((1n << 256n) + 0n).toString();
        for (const minReward of ["-1", "1.5", "1e6", " 5", "", "0x10", 5, tooBig, null]) {
          const res = await api.request("POST", EXECUTORS, { key, body: { publicKey, minReward } });
          expectError(res, 400, "VALIDATION_ERROR", "body.minReward");
        }
        const max = ((1n << 256n) - 1n).toString();
        expect((await register(api, key, { publicKey, minReward: max })).minReward).to.equal(max);
        expect((await register(api, key, { publicKey, minReward: "0" })).minReward).to.equal("0");
      }));

    it("requires a verifier name (1..64 characters) when opting in, and refuses unknown fields", () =>
      withApi(async ({ api, worker }) => {
        const key = await api.createKey(worker.address);
        const publicKey = freshPublicKey();
        const bad: [unknown, string][] = [
          [{ optIn: true }, "body.verifier.name"],
          [{ optIn: true, name: "   " }, "body.verifier.name"],
          [{ optIn: true, name: "n".repeat(65) }, "body.verifier.name"],
          [{ optIn: true, name: "line\nbreak" }, "body.verifier.name"],
          [{ name: "No flag" }, "body.verifier.optIn"],
          [{ optIn: "yes", name: "x" }, "body.verifier.optIn"],
          [{ optIn: false, nickname: "x" }, "body.verifier"],
          [true, "body.verifier"],
        ];
        for (const [verifier, field] of bad) {
          const res = await api.request("POST", EXECUTORS, { key, body: { publicKey, verifier } });
          expectError(res, 400, "VALIDATION_ERROR", field);
        }
        const unknown = await api.request("POST", EXECUTORS, { key, body: { publicKey, chains: ["base"] } });
        expectError(unknown, 400, "VALIDATION_ERROR", "chains");
        const named = await register(api, key, { publicKey, verifier: { optIn: true, name: "n".repeat(64) } });
        expect(named.verifier).to.deep.equal({ optIn: true, name: "n".repeat(64) });
        // A name without opting in is kept but shown nowhere publicly.
        const quiet = await register(api, key, { publicKey, verifier: { optIn: false, name: "Later" } });
        expect(quiet.verifier).to.deep.equal({ optIn: false, name: "Later" });
      }));

    it("requires an API key", () =>
      withApi(async ({ api }) => {
        expectError(
          await api.request("POST", EXECUTORS, { body: { publicKey: freshPublicKey() } }),
          401,
          "UNAUTHORIZED",
        );
        expectError(await api.request("GET", ME), 401, "UNAUTHORIZED");
        expectError(await api.request("POST", HEARTBEAT), 401, "UNAUTHORIZED");
        expect((await listed(api)).json.data.executors).to.deep.equal([]);
      }));
  });

  describe("GET /api/v1/a2a/executors", () => {
    /** Four agents: two verifiers (one with a name), different capabilities and chains. */
    async function population(api: TestApi, f: Fixture) {
      const [a, b, c, d] = [f.worker, f.verifierAgent, f.stranger, f.others[0]];
      const keys = await Promise.all([a, b, c, d].map((s) => api.createKey(s.address)));
      const records = [
        await register(api, keys[0], {
          publicKey: freshPublicKey(),
          capabilities: ["python", "translation"],
          supportedChains: ["base"],
        }),
        await register(api, keys[1], {
          publicKey: freshPublicKey(),
          capabilities: ["review", "python"],
          supportedChains: ["base", "arc"],
          verifier: { optIn: true, name: "Reviewer B" },
        }),
        await register(api, keys[2], {
          publicKey: freshPublicKey(),
          capabilities: ["translation"],
          supportedChains: ["arc"],
          verifier: { optIn: true, name: "Reviewer C" },
        }),
        await register(api, keys[3], {
          publicKey: freshPublicKey(),
          supportedChains: ["arc"],
          verifier: { optIn: false, name: "Not a verifier" },
        }),
      ];
      const byAddress = [...records].sort((x, y) => (x.address < y.address ? -1 : 1));
      return { records, byAddress, keys };
    }

    it("lists every executor publicly with the spec's fields, ordered by reputation then address", () =>
      withApi(async (f) => {
        const { api } = f;
        const { records, byAddress } = await population(api, f);
        const res = await listed(api);
        expect(res.json.data.total).to.equal(4);
        // Nobody has worked yet: every score is 0, so the order is the address order.
        expect(addresses(res)).to.deep.equal(byAddress.map((r) => r.address));
        const first = res.json.data.executors.find((e: { address: string }) => e.address === records[0].address);
        expect(first).to.deep.equal({
          address: records[0].address,
          publicKey: records[0].publicKey,
          capabilities: ["python", "translation"],
          reputation: 0,
          supportedChains: ["base"],
        });
        for (const e of res.json.data.executors) expect(e).to.not.have.property("name");
      }));

    it("filters by capabilities: executors declaring all of them, case-insensitive, blanks ignored", () =>
      withApi(async (f) => {
        const { api } = f;
        const { records } = await population(api, f);
        const [a, b, c] = records.map((r) => r.address);
        const sorted = (xs: string[]) => [...xs].sort();
        expect(addresses(await listed(api, "?capabilities=python"))).to.deep.equal(sorted([a, b]));
        expect(addresses(await listed(api, "?capabilities=Python,%20TRANSLATION"))).to.deep.equal([a]);
        expect(addresses(await listed(api, "?capabilities=translation"))).to.deep.equal(sorted([a, c]));
        expect(addresses(await listed(api, "?capabilities=python,review,"))).to.deep.equal([b]);
        expect(addresses(await listed(api, "?capabilities=python,cooking"))).to.deep.equal([]);
        expect((await listed(api, "?capabilities=")).json.data.total).to.equal(4);
        expect((await listed(api, "?capabilities=python")).json.data.total).to.equal(2);
        const tooLong = await api.request("GET", `${EXECUTORS}?capabilities=${"x".repeat(65)}`);
        expectError(tooLong, 400, "VALIDATION_ERROR", "query.capabilities");
      }));

    it("filters by chain, and answers INVALID_CHAIN for an unknown one", () =>
      withApi(async (f) => {
        const { api } = f;
        const { records } = await population(api, f);
        const [a, b, c, d] = records.map((r) => r.address);
        const sorted = (xs: string[]) => [...xs].sort();
        expect(addresses(await listed(api, "?chain=base"))).to.deep.equal(sorted([a, b]));
        expect(addresses(await listed(api, "?chain=arc"))).to.deep.equal(sorted([b, c, d]));
        expect(addresses(await listed(api, "?chain=arc&capabilities=translation"))).to.deep.equal([c]);
        for (const chain of ["solana", "BASE", "", "base,arc"]) {
          expectError(await api.request("GET", `${EXECUTORS}?chain=${chain}`), 400, "INVALID_CHAIN", "query.chain");
        }
      }));

    /** Makes `address` a hosted agent's wallet, with the host's status and the owner's verifier choice. */
    async function hosted(
      api: TestApi,
      address: string,
      status: string,
      verifier: { optIn: boolean; name: string | null },
    ) {
      const id = `agt_${address.slice(2, 26)}`;
      await insertHostedAgent(api.deps.db, {
        id,
        slug: `h-${address.slice(2, 10)}`,
        owner: "0x000000000000000000000000000000000000dead",
        name: "hosted",
        description: null,
        capabilities: [],
        chains: ["base"],
        minReward: "0",
        wallet: address,
        encryptedKey: "v1.x.y.z",
        verifierOptIn: verifier.optIn,
        verifierName: verifier.name,
        deployTxHash: null,
        deployLogIndex: null,
        createdAt: 1,
      });
      await api.deps.db("hosted_agents").where({ id }).update({ status, desired_state: "running" });
      return id;
    }

    it("with role=verifier lists only hosted, running agents whose owner opted in, with the owner's name", () =>
      withApi(async (f) => {
        const { api } = f;
        const { records } = await population(api, f);
        const [a, b, c, d] = records;
        // b: hosted, running, opted in by its owner. c: opted in by its own registration only (not hosted).
        // d: hosted and opted in, but crashed. a: hosted and running, not opted in.
        await hosted(api, b.address, "running", { optIn: true, name: "Hosted B" });
        const dId = await hosted(api, d.address, "crashed", { optIn: true, name: "Hosted D" });
        await hosted(api, a.address, "running", { optIn: false, name: "Quiet A" });
        const res = await listed(api, "?role=verifier");
        expect(res.json.data.total).to.equal(1);
        expect(res.json.data.executors).to.deep.equal([{ ...pub(b), name: "Hosted B" }]);
        expect(addresses(await listed(api, "?role=verifier&chain=base"))).to.deep.equal([b.address]);
        expect(addresses(await listed(api, "?role=verifier&capabilities=translation"))).to.deep.equal([]);
        expect(addresses(await listed(api, "?role=verifier&capabilities=review"))).to.deep.equal([b.address]);
        expect(c.verifier.optIn).to.equal(true);

        // The host reports d running: it is listed, by its owner's name; deleted, it goes.
        await api.deps.db("hosted_agents").where({ id: dId }).update({ status: "running" });
        const both = await listed(api, "?role=verifier");
        expect(both.json.data.executors).to.deep.equal(
          [
            { ...pub(b), name: "Hosted B" },
            { ...pub(d), name: "Hosted D" },
          ].sort((x, y) => (x.address < y.address ? -1 : 1)),
        );
        await api.deps.db("hosted_agents").where({ id: dId }).update({ status: "deleted", deleted_at: 2 });
        expect(addresses(await listed(api, "?role=verifier"))).to.deep.equal([b.address]);
        // Without the role filter nobody has a name.
        for (const e of (await listed(api)).json.data.executors) expect(e).to.not.have.property("name");
        for (const role of ["worker", "VERIFIER", ""]) {
          expectError(await api.request("GET", `${EXECUTORS}?role=${role}`), 400, "VALIDATION_ERROR", "query.role");
        }
      }));

    it("keeps a self-registered executor running for 10 minutes of chain time since last seen (its heartbeat)", () =>
      withApi(async (f) => {
        const { api } = f;
        const key = await api.createKey(f.verifierAgent.address);
        const other = await api.createKey(f.stranger.address);
        const record = await register(api, key, {
          publicKey: freshPublicKey(),
          verifier: { optIn: true, name: "Night Owl" },
        });
        const me = record.address;
        const running = async () => (await api.request("GET", ME, { key })).json.data.running;
        expect(RUNNING_WINDOW_SECONDS).to.equal(600);
        // Opted in by itself, not hosted: never a listed verifier.
        expect(addresses(await listed(api, "?role=verifier"))).to.deep.equal([]);

        // Seen exactly 600 s ago: still running.
        await time.increaseTo(record.lastSeenAt + RUNNING_WINDOW_SECONDS);
        expect(await running()).to.equal(true);

        // 601 s: not running; still listed without the role filter.
        await time.increase(1);
        expect(await running()).to.equal(false);
        expect(addresses(await listed(api))).to.deep.equal([me]);

        // A heartbeat brings it back, at the chain's time.
        const beat = await api.request("POST", HEARTBEAT, { key });
        expect(beat.status, beat.text).to.equal(200);
        const now = (await ethers.provider.getBlock("latest"))!.timestamp;
        expect(beat.json.data).to.deep.equal({ address: me, lastSeenAt: now, running: true });
        expect(await running()).to.equal(true);

        // Marketplace operations mark the agent as seen too.
        await time.increase(RUNNING_WINDOW_SECONDS + 1);
        expect(await running()).to.equal(false);
        await markExecutorSeen(api.deps.db, me, await api.deps.clock.chainNow());
        expect(await running()).to.equal(true);

        // Heartbeat of a wallet that never registered.
        expectError(await api.request("POST", HEARTBEAT, { key: other }), 404, "NOT_REGISTERED");
        await markExecutorSeen(api.deps.db, f.stranger.address, now);
        expect((await listed(api)).json.data.total).to.equal(1);
      }));

    it("pages with limit (default 100, max 200) and offset", () =>
      withApi(async ({ api }) => {
        const db = api.deps.db;
        const now = await api.deps.clock.chainNow();
        const all: string[] = [];
        await db.transaction(async (trx) => {
          for (let i = 0; i < 205; i++) {
            const address = `0x${(i + 1).toString(16).padStart(40, "0")}`;
            all.push(address);
            await upsertExecutor(trx, {
              address,
              publicKey: freshPublicKey(),
              capabilities: i % 2 === 0 ? ["even"] : [],
              supportedChains: ["base"],
              minReward: "0",
              verifierOptIn: false,
              name: null,
              registeredAt: now,
              updatedAt: now,
              lastSeenAt: now,
            });
          }
        });
        const page = await listed(api);
        expect(page.json.data.total).to.equal(205);
        expect(addresses(page)).to.deep.equal(all.slice(0, 100));
        expect(addresses(await listed(api, "?limit=200"))).to.deep.equal(all.slice(0, 200));
        expect(addresses(await listed(api, "?limit=10&offset=200"))).to.deep.equal(all.slice(200));
        expect(addresses(await listed(api, "?offset=205"))).to.deep.equal([]);
        const evens = await listed(api, "?capabilities=even&limit=5&offset=1");
        expect(evens.json.data.total).to.equal(103);
        expect(addresses(evens)).to.deep.equal([all[2], all[4], all[6], all[8], all[10]]);
        for (const q of ["?limit=201", "?limit=0", "?offset=-1", "?limit=1.5", "?offset=x"]) {
          expectError(await api.request("GET", `${EXECUTORS}${q}`), 400, "VALIDATION_ERROR");
        }
      }));
  });
});

function pub(r: { address: string; publicKey: string; capabilities: string[]; supportedChains: string[] }) {
  return {
    address: r.address,
    publicKey: r.publicKey,
    capabilities: r.capabilities,
    reputation: 0,
    supportedChains: r.supportedChains,
  };
}
