/**
 * The marketplace verifier on two settlement chains: one Verifier per chain over one database, with the same key,
 * each with its own provider, escrow, nonces and intents (docs/marketplace.md, "Marketplace verifier"). base's
 * `assign:0` and arc's `assign:0` are two intents on two escrows; a restart resumes each chain's on its own chain;
 * the API builds and starts one per chain; an agent's accept of an arc task over HTTP is assigned by arc's; the auto
 * verifier judges each chain's submitted tasks with that chain's.
 */
import { expect } from "chai";
import type { Provider } from "ethers";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { CATEGORY, DAY, STATUS, USDC, ZONE, deployEscrowFixture } from "../../helpers/fixtures";
import { arcFixture, type ArcFixture } from "../../helpers/arc";
import { createTestDb } from "../../helpers/db";
import { startTestApi } from "../../helpers/api";
import { verifierPrivateKey } from "../../helpers/keys";
import { assignKey, createMarketplaceVerifier, type MarketplaceVerifier } from "../../../server/verifier";
import { findIntent, insertIntent } from "../../../server/db/repositories/verifierIntents";
import { insertListing } from "../../../server/db/repositories/listings";
import { upsertExecutor } from "../../../server/db/repositories/executors";
import { agentPublicKey } from "../../../server/domain/briefs";
import { findSubmission } from "../../../server/db/repositories/submissions";
import { verifierOn } from "../../../server/domain/verifiers";
import { AutoVerifier } from "../../../server/domain/marketplace/autoVerifier";
import { canonicalResult } from "../../../server/domain/marketplace/deliver";
import type { ChainName } from "../../../server/escrow/records";
import type { Db } from "../../../server/db/knex";
import type { MockUSDC, TaskEscrow } from "../../../typechain-types";

type Fixture = Awaited<ReturnType<typeof deployEscrowFixture>>;

const POLL_MS = 20;
const verifierAddress = () => new ethers.Wallet(verifierPrivateKey()).address;

/** One chain of the test: its escrow, token, provider and poster. */
interface Side {
  name: ChainName;
  escrow: TaskEscrow;
  usdc: MockUSDC;
  provider: Provider;
  escrowAddress: string;
  poster: Fixture["poster"];
}

function sides(fx: Fixture, arc: ArcFixture): Record<ChainName, Side> {
  return {
    base: {
      name: "base",
      escrow: fx.escrow,
      usdc: fx.usdc,
      provider: ethers.provider,
      escrowAddress: fx.book.escrow.proxy,
      poster: fx.poster,
    },
    arc: {
      name: "arc",
      escrow: arc.escrow,
      usdc: arc.usdc,
      provider: arc.provider,
      escrowAddress: arc.book.escrow.proxy,
      poster: arc.poster,
    },
  };
}

function verifierFor(side: Side, db: Db): MarketplaceVerifier {
  return createMarketplaceVerifier({
    db,
    chainName: side.name,
    provider: side.provider,
    escrowAddress: side.escrowAddress,
    privateKey: verifierPrivateKey(),
    pollIntervalMs: POLL_MS,
  });
}

/** Funds one 100 USDC task on `side`; returns its on-chain id and hash. */
async function fund(side: Side, label: string): Promise<{ id: number; hash: string }> {
  const hash = ethers.keccak256(ethers.toUtf8Bytes(`${side.name} ${label} ${Date.now()} ${Math.random()}`));
  const id = Number(await side.escrow.nextTaskId());
  await (
    await side.escrow
      .connect(side.poster)
      .createTask(hash, await side.usdc.getAddress(), USDC(100), CATEGORY, ZONE, DAY)
  ).wait();
  return { id, hash };
}

/** Funds a task on each chain so that both have the same on-chain id (the point of these tests); returns that id. */
async function fundSameId(base: Side, arc: Side): Promise<{ id: number; base: string; arc: string }> {
  for (;;) {
    const [b, a] = [Number(await base.escrow.nextTaskId()), Number(await arc.escrow.nextTaskId())];
    if (b === a) break;
    await fund(b < a ? base : arc, "filler");
  }
  const onBase = await fund(base, "task");
  const onArc = await fund(arc, "task");
  expect(onArc.id).to.equal(onBase.id);
  return { id: onBase.id, base: onBase.hash, arc: onArc.hash };
}

/** Lists `side`'s task `id` (hash `taskHash`) in the database, as /a2a/tasks/index would after its funding. */
async function listOn(db: Db, side: Side, id: number, taskHash: string, mode: string, criteria: object | null) {
  await insertListing(db, {
    taskId: id,
    taskHash,
    chain: side.name,
    poster: side.poster.address.toLowerCase(),
    txHash: ethers.ZeroHash,
    privacy: "public",
    verificationMode: mode,
    verificationCriteria: criteria as Record<string, unknown> | null,
    verifierAddress: null,
    rootHash: null,
    wrappedKeys: null,
    targetExecutor: null,
    serviceId: null,
    serviceTerms: null,
    publicBrief: `a ${mode} task on ${side.name}`,
    custodyWrappedKey: null,
    token: (await side.usdc.getAddress()).toLowerCase(),
    amount: String(USDC(100)),
    deadline: null,
    listedAt: Math.floor(Date.now() / 1000),
    capabilities: [],
  });
}

const nonceOn = (side: Side) => side.provider.getTransactionCount(verifierAddress(), "latest");

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

describe("Marketplace verifier on two chains", function () {
  this.timeout(120_000);

  it("sends base's assign:N and arc's assign:N to their own escrows, each with its chain's nonce", async () => {
    const fx = await loadFixture(deployEscrowFixture);
    const arcFx = await arcFixture();
    const { base, arc } = sides(fx, arcFx);
    const testDb = await createTestDb();
    try {
      const onBase = verifierFor(base, testDb.db);
      const onArc = verifierFor(arc, testDb.db);
      testDb.onCleanup(() => onBase.stop());
      testDb.onCleanup(() => onArc.stop());
      await onBase.start();
      await onArc.start();
      const { id } = await fundSameId(base, arc);
      const [baseNonce, arcNonce] = [await nonceOn(base), await nonceOn(arc)];
      const arcWorker = arcFx.others[0].address;

      const [sentBase, sentArc] = await Promise.all([
        onBase.requestAssign(id, fx.worker.address),
        onArc.requestAssign(id, arcWorker),
      ]);

      expect(sentBase).to.include({ chain: "base", key: assignKey(id) });
      expect(sentArc).to.include({ chain: "arc", key: assignKey(id) });
      expect(sentArc.id).to.not.equal(sentBase.id);
      expect((await onBase.settled(assignKey(id))).status).to.equal("confirmed");
      expect((await onArc.settled(assignKey(id))).status).to.equal("confirmed");
      // Each transaction is on its own chain only, signed with that chain's next nonce.
      expect(await ethers.provider.getTransactionReceipt(sentBase.txHash!)).to.not.equal(null);
      expect(await ethers.provider.getTransactionReceipt(sentArc.txHash!)).to.equal(null);
      expect(await arcFx.provider.getTransactionReceipt(sentArc.txHash!)).to.not.equal(null);
      expect((await findIntent(testDb.db, "base", assignKey(id)))!.nonce).to.equal(baseNonce);
      expect((await findIntent(testDb.db, "arc", assignKey(id)))!.nonce).to.equal(arcNonce);
      expect(await nonceOn(base)).to.equal(baseNonce + 1);
      expect(await nonceOn(arc)).to.equal(arcNonce + 1);
      expect((await fx.escrow.getTask(id)).worker).to.equal(fx.worker.address);
      expect((await arcFx.escrow.getTask(id)).worker).to.equal(arcWorker);
      const rows = await testDb
        .db("verifier_intents")
        .where({ intent_key: assignKey(id) })
        .orderBy("chain");
      expect(rows.map((r) => r.chain)).to.deep.equal(["arc", "base"]);
      // Asked again, each returns its own intent and sends nothing.
      expect((await onArc.requestAssign(id, arcWorker)).id).to.equal(sentArc.id);
      expect(await nonceOn(arc)).to.equal(arcNonce + 1);
    } finally {
      await testDb.cleanup();
    }
  });

  it("resumes after a restart each chain's intents on its own chain, and never another chain's", async () => {
    const fx = await loadFixture(deployEscrowFixture);
    const arcFx = await arcFixture();
    const { base, arc } = sides(fx, arcFx);
    const testDb = await createTestDb();
    try {
      const { id } = await fundSameId(base, arc);
      const arcWorker = arcFx.others[1].address;
      const now = Math.floor(Date.now() / 1000);
      // What a process that died between recording the intents and signing them leaves behind.
      await insertIntent(testDb.db, {
        chain: "base",
        kind: "assign",
        taskId: id,
        key: assignKey(id),
        args: { worker: fx.worker.address.toLowerCase() },
        now,
      });
      await insertIntent(testDb.db, {
        chain: "arc",
        kind: "assign",
        taskId: id,
        key: assignKey(id),
        args: { worker: arcWorker.toLowerCase() },
        now,
      });
      const arcNonce = await nonceOn(arc);

      const onBase = verifierFor(base, testDb.reopen());
      testDb.onCleanup(() => onBase.stop());
      await onBase.start();
      expect((await onBase.settled(assignKey(id))).status).to.equal("confirmed");
      // More passes of base's loop: arc's intent stays as the crash left it.
      await new Promise((resolve) => setTimeout(resolve, POLL_MS * 10));
      expect((await findIntent(testDb.db, "arc", assignKey(id)))!.status).to.equal("pending");
      expect(await nonceOn(arc)).to.equal(arcNonce);
      expect((await arcFx.escrow.getTask(id)).status).to.equal(BigInt(STATUS.Funded));

      const onArc = verifierFor(arc, testDb.reopen());
      testDb.onCleanup(() => onArc.stop());
      await onArc.start();
      const done = await onArc.settled(assignKey(id));

      expect(done).to.include({ chain: "arc", status: "confirmed" });
      expect(await arcFx.provider.getTransactionReceipt(done.txHash!)).to.not.equal(null);
      expect((await arcFx.escrow.getTask(id)).worker).to.equal(arcWorker);
      expect((await fx.escrow.getTask(id)).worker).to.equal(fx.worker.address);
      expect(await nonceOn(arc)).to.equal(arcNonce + 1);
    } finally {
      await testDb.cleanup();
    }
  });

  it("re-broadcasts on arc a transaction arc's node lost while its verifier was down", async () => {
    const fx = await loadFixture(deployEscrowFixture);
    const arcFx = await arcFixture();
    const { base, arc } = sides(fx, arcFx);
    const testDb = await createTestDb();
    const arcNode = arcFx.runtime.network.provider;
    try {
      const { id } = await fundSameId(base, arc);
      const first = verifierFor(arc, testDb.db);
      await arcNode.send("evm_setAutomine", [false]);
      let sent;
      try {
        sent = await first.requestAssign(id, arcFx.worker.address);
        expect(sent.status).to.equal("sent");
        await first.stop();
        expect(await arcNode.send("hardhat_dropTransaction", [sent.txHash])).to.equal(true);
        const second = verifierFor(arc, testDb.reopen());
        testDb.onCleanup(() => second.stop());
        await second.start();
        await until(async () => (await arcFx.provider.getTransaction(sent!.txHash!)) !== null, "the re-broadcast");
        await arcNode.send("evm_mine", []);
        expect(await second.settled(assignKey(id))).to.include({ chain: "arc", status: "confirmed" });
      } finally {
        await arcNode.send("evm_setAutomine", [true]);
      }
      expect((await arcFx.escrow.getTask(id)).worker).to.equal(arcFx.worker.address);
      // base never saw it: its task of the same id is still open, its verifier's intents none.
      expect((await fx.escrow.getTask(id)).status).to.equal(BigInt(STATUS.Funded));
      expect(await findIntent(testDb.db, "base", assignKey(id))).to.equal(undefined);
    } finally {
      await testDb.cleanup();
    }
  });

  it("runs in the API on each configured chain, and the auto verifier judges each chain's tasks with its own", async () => {
    const fx = await loadFixture(deployEscrowFixture);
    const arcFx = await arcFixture();
    const { base, arc } = sides(fx, arcFx);
    const api = await startTestApi(
      fx.book,
      { VERIFIER_PRIVATE_KEY: verifierPrivateKey() },
      { arc: { book: arcFx.book, provider: arcFx.provider } },
    );
    try {
      expect([...api.deps.verifiers!.keys()].sort()).to.deep.equal(["arc", "base"]);
      expect(api.deps.verifier).to.equal(api.deps.verifiers!.get("base"));
      expect(verifierOn(api.deps, "arc")!.chain).to.equal("arc");
      expect(verifierOn(api.deps, "arc")!.address).to.equal(verifierAddress());

      // Task N on each chain in auto mode, assigned and submitted: base's deliverable fails the rules, arc's passes.
      const { id, ...hashes } = await fundSameId(base, arc);
      const results: Record<ChainName, string> = { base: "not yet", arc: "all done" };
      for (const side of [base, arc]) {
        const verifier = verifierOn(api.deps, side.name)!;
        const worker = side.name === "base" ? fx.worker : arcFx.worker;
        await verifier.requestAssign(id, worker.address);
        expect((await verifier.settled(assignKey(id))).status).to.equal("confirmed");
        const { canonical, evidenceHash } = canonicalResult({ result: results[side.name] });
        await listOn(api.deps.db, side, id, hashes[side.name], "auto", { contains_keywords: ["done"] });
        await api.deps.db("task_submissions").insert({
          chain: side.name,
          task_id: id,
          attempt: 1,
          agent: worker.address.toLowerCase(),
          result: canonical,
          evidence_hash: evidenceHash,
          verdict: null,
          verdict_by: null,
          verdict_reason: null,
          submitted_at: Math.floor(Date.now() / 1000),
          verdict_at: null,
        });
        await (await side.escrow.connect(worker).submitEvidence(id, evidenceHash)).wait();
      }
      await api.synced();

      const verdicts = await new AutoVerifier(api.deps).runOnce();

      expect(verdicts.map(({ chain, taskId, passed }) => ({ chain, taskId, passed }))).to.have.deep.members([
        { chain: "base", taskId: id, passed: false },
        { chain: "arc", taskId: id, passed: true },
      ]);
      for (const chain of ["base", "arc"] as const) {
        const intent = await verifierOn(api.deps, chain)!.settled(`verdict:${id}:1`);
        expect(intent).to.include({ chain, status: "confirmed" });
      }
      expect((await fx.escrow.getTask(id)).status).to.equal(BigInt(STATUS.Verified));
      expect((await arcFx.escrow.getTask(id)).status).to.equal(BigInt(STATUS.Completed));
      expect(await findSubmission(api.deps.db, id, 1, "base")).to.include({ verdict: "fail" });
      expect(await findSubmission(api.deps.db, id, 1, "arc")).to.include({ verdict: "pass" });
      // Judged once per chain: the next pass finds each chain's intent and asks nothing again.
      await api.synced();
      expect(await new AutoVerifier(api.deps).runOnce()).to.deep.equal([]);
    } finally {
      await api.close();
    }
  });

  it("assigns over HTTP an agent's accept of an arc task through arc's verifier, base's task of the same id untouched", async () => {
    const fx = await loadFixture(deployEscrowFixture);
    const arcFx = await arcFixture();
    const { base, arc } = sides(fx, arcFx);
    const api = await startTestApi(
      fx.book,
      { VERIFIER_PRIVATE_KEY: verifierPrivateKey() },
      { arc: { book: arcFx.book, provider: arcFx.provider } },
    );
    try {
      const { id, ...hashes } = await fundSameId(base, arc);
      await listOn(api.deps.db, base, id, hashes.base, "manual", null);
      await listOn(api.deps.db, arc, id, hashes.arc, "manual", null);
      const agent = ethers.Wallet.createRandom();
      const now = await api.deps.clock.chainNow();
      await upsertExecutor(api.deps.db, {
        address: agent.address.toLowerCase(),
        publicKey: agentPublicKey(agent.privateKey),
        capabilities: [],
        supportedChains: ["base", "arc"],
        minReward: "0",
        verifierOptIn: false,
        name: null,
        registeredAt: now,
        updatedAt: now,
        lastSeenAt: now,
      });
      const key = await api.createKey(agent.address);
      await api.synced();
      const arcNonce = await nonceOn(arc);
      const baseNonce = await nonceOn(base);

      const res = await api.request("POST", `/api/v1/a2a/tasks/${hashes.arc}/accept`, { key });

      expect(res.status, res.text).to.equal(200);
      const intent = await verifierOn(api.deps, "arc")!.settled(assignKey(id));
      expect(intent).to.include({ chain: "arc", status: "confirmed" });
      expect(await arcFx.provider.getTransactionReceipt(intent.txHash!)).to.not.equal(null);
      expect((await arcFx.escrow.getTask(id)).worker).to.equal(agent.address);
      expect(await nonceOn(arc)).to.equal(arcNonce + 1);
      // base's task with the same on-chain id: no intent, no transaction, still open.
      expect(await verifierOn(api.deps, "base")!.intent(assignKey(id))).to.equal(undefined);
      expect(await nonceOn(base)).to.equal(baseNonce);
      expect((await fx.escrow.getTask(id)).status).to.equal(BigInt(STATUS.Funded));
    } finally {
      await api.close();
    }
  });
});
