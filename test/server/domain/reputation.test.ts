import { expect } from "chai";
import { ethers } from "hardhat";
import type { ContractTransactionResponse } from "ethers";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { CATEGORY, DAY, HOUR, USDC, ZONE, deployEscrowFixture } from "../../helpers/fixtures";
import { startTestApi, type ApiResponse, type TestApi } from "../../helpers/api";
import { secp256k1 } from "@noble/curves/secp256k1";
import { agentPublicKey } from "../../../server/domain/briefs";
import {
  HALF_LIFE_SECONDS,
  decayWeight,
  posterReputation,
  reputationScore,
  reputationScores,
  toScore,
} from "../../../server/domain/reputation";
import { upsertTasks } from "../../../server/db/repositories/tasks";
import { insertNewEvents } from "../../../server/db/repositories/escrowEvents";
import { taskRecord } from "../../helpers/taskRecord";
import { TASK_STATUS, ZERO_ADDRESS, type StoredEvent, type TaskRecord } from "../../../server/escrow/records";

const REPUTATION = "/api/v1/reputation";
const LEADERBOARD = `${REPUTATION}/leaderboard`;
const ENV = { RATE_IP_PER_WINDOW: "100000", RATE_WALLET_FAMILY_PER_MINUTE: "100000" };
const EVIDENCE = ethers.id("evidence");

/** The block time of a mined transaction. */
async function minedAt(tx: Promise<ContractTransactionResponse>): Promise<number> {
  const receipt = (await (await tx).wait())!;
  return (await ethers.provider.getBlock(receipt.blockNumber))!.timestamp;
}

const latestTime = async () => (await ethers.provider.getBlock("latest"))!.timestamp;

/**
 * Escrow histories covering every outcome, all judged by the fixture's signers:
 * - late: assigned and never delivered (a lapse: counts for nobody), and a failed verdict not cured after the appeal
 *   window (-0.5, timeout -1)
 * - lapser: a dispute that lapsed 14 days without a ruling, refunded by timeout (counts for nobody)
 * - patient: delivered, never judged, escalated, released after 14 days (completed)
 * then, minutes of chain time later:
 * - worker: one pass, and a failed verdict then a pass (completed 2, failed 1: 1.5)
 * - loser: two passes and a dispute ruled for the poster (completed 2, dispute lost 1: 1)
 * - single: one pass (1)
 * - winner: a dispute ruled for the worker (completed 1: 1; the poster lost a dispute)
 * Every task is posted by `poster`. Returns each wallet's outcome times, by weight.
 */
async function historyFixture() {
  const f = await deployEscrowFixture();
  const { escrow, usdc, poster, verifier, admin, worker, others } = f;
  const [loser, late, single, winner, lapser, patient] = others;
  const token = await usdc.getAddress();
  let nextId = 0;
  const create = async (duration = DAY) => {
    nextId += 1;
    await (
      await escrow.connect(poster).createTask(ethers.id(`brief ${nextId}`), token, USDC(10), CATEGORY, ZONE, duration)
    ).wait();
    return nextId;
  };
  const assigned = async (who: { address: string }, duration = DAY) => {
    const id = await create(duration);
    await (await escrow.connect(verifier).marketplaceAssign(id, who.address)).wait();
    return id;
  };
  const submit = async (who: typeof worker, id: number) =>
    (await escrow.connect(who).submitEvidence(id, EVIDENCE)).wait();
  const verdict = (id: number, passed: boolean) => minedAt(escrow.connect(verifier).completeVerification(id, passed));
  const outcomes: Record<string, { weight: number; at: number }[]> = {};
  const record = (who: { address: string }, weight: number, at: number) =>
    (outcomes[who.address.toLowerCase()] ??= []).push({ weight, at });

  // Histories that need time to pass.
  const never = await assigned(late, HOUR);
  const uncured = await assigned(late, HOUR);
  await submit(late, uncured);
  record(late, -0.5, await verdict(uncured, false));
  const lapsed = await assigned(lapser, HOUR);
  await submit(lapser, lapsed);
  await (await escrow.connect(poster).raiseDispute(lapsed)).wait();
  const escalated = await assigned(patient, HOUR);
  await submit(patient, escalated);
  await time.increase(HOUR);
  // An assignment that lapsed undelivered rates nobody (the escrow's hook and the server follow one rule).
  await minedAt(escrow.connect(poster).claimTimeout(never));
  await (await escrow.connect(poster).claimTimeout(escalated)).wait();
  await time.increase(3 * DAY);
  record(late, -1, await minedAt(escrow.connect(poster).claimTimeout(uncured)));
  await time.increase(14 * DAY);
  await (await escrow.connect(poster).claimTimeout(lapsed)).wait(); // refund of a lapsed dispute: nobody's outcome
  record(patient, 1, await minedAt(escrow.connect(patient).releaseUnjudgedWork(escalated)));

  // Quick histories.
  const pass = async (who: typeof worker) => {
    const id = await assigned(who);
    await submit(who, id);
    record(who, 1, await verdict(id, true));
  };
  await pass(worker);
  const retried = await assigned(worker);
  await submit(worker, retried);
  record(worker, -0.5, await verdict(retried, false));
  await submit(worker, retried);
  record(worker, 1, await verdict(retried, true));
  await pass(loser);
  await pass(loser);
  const lost = await assigned(loser);
  await submit(loser, lost);
  await (await escrow.connect(poster).raiseDispute(lost)).wait();
  record(loser, -1, await minedAt(escrow.connect(admin).resolveDispute(lost, false)));
  await pass(single);
  const won = await assigned(winner);
  await submit(winner, won);
  await (await escrow.connect(winner).raiseDispute(won)).wait();
  const wonAt = await minedAt(escrow.connect(admin).resolveDispute(won, true));
  record(winner, 1, wonAt);
  return { ...f, loser, late, single, winner, lapser, patient, outcomes, wonAt };
}

type History = Awaited<ReturnType<typeof historyFixture>>;

async function withHistory(fn: (ctx: History & { api: TestApi }) => Promise<void>) {
  const history = await loadFixture(historyFixture);
  const api = await startTestApi(history.book, ENV);
  try {
    await api.synced();
    await fn({ ...history, api });
  } finally {
    await api.close();
  }
}

/** The score the formula gives for `events` at `now`, computed independently of the engine. */
function expectedScore(events: readonly { weight: number; at: number }[], now: number): number {
  const sum = events.reduce((s, e) => s + e.weight * Math.pow(0.5, Math.max(0, now - e.at) / (90 * 86_400)), 0);
  return Math.round(Math.max(0, sum) * 1000) / 1000;
}

async function reputation(api: TestApi, address: string) {
  const res = await api.request("GET", `${REPUTATION}/${address}`);
  expect(res.status, res.text).to.equal(200);
  return res.json.data;
}

function expectError(res: ApiResponse, status: number, code: string) {
  expect(res.status, res.text).to.equal(status);
  expect(res.json.success).to.equal(false);
  expect(res.json.error.code, res.text).to.equal(code);
}

describe("Reputation", () => {
  describe("GET /api/v1/reputation/{address}", () => {
    it("scores every kind of on-chain outcome with its weight", () =>
      withHistory(async ({ api, worker, loser, late, single, winner, lapser, patient, poster, outcomes, wonAt }) => {
        const now = await latestTime();
        const last = (who: { address: string }) => Math.max(...outcomes[who.address.toLowerCase()].map((o) => o.at));
        const base = { halfLifeDays: 90, computedAt: now };
        const noPoster = { score: 0, paidOut: 0, disputesLost: 0, lastActivityAt: null };

        expect(await reputation(api, worker.address)).to.deep.equal({
          ...base,
          address: worker.address.toLowerCase(),
          score: 1.5,
          completed: 2,
          failedVerdicts: 1,
          disputesLost: 0,
          timeouts: 0,
          lastActivityAt: last(worker),
          asPoster: noPoster,
        });
        expect(await reputation(api, loser.address)).to.deep.include({
          score: 1,
          completed: 2,
          failedVerdicts: 0,
          disputesLost: 1,
          timeouts: 0,
          lastActivityAt: last(loser),
        });
        expect(await reputation(api, single.address)).to.deep.include({ score: 1, completed: 1, disputesLost: 0 });
        expect(await reputation(api, winner.address)).to.deep.include({ score: 1, completed: 1, disputesLost: 0 });
        // One timeout (the failed verdict not cured; the undelivered assignment counts for nobody) and the failed
        // verdict: clamped at 0.
        expect(await reputation(api, late.address)).to.deep.include({
          score: 0,
          completed: 0,
          failedVerdicts: 1,
          disputesLost: 0,
          timeouts: 1,
          lastActivityAt: last(late),
        });
        // A dispute refunded after 14 days without a ruling judged nobody.
        expect(await reputation(api, lapser.address)).to.deep.include({
          score: 0,
          completed: 0,
          failedVerdicts: 0,
          disputesLost: 0,
          timeouts: 0,
          lastActivityAt: null,
        });
        // Escalated work released to the worker is completed work.
        const released = await reputation(api, patient.address);
        expect(released).to.deep.include({ completed: 1, timeouts: 0 });
        expect(released.score).to.equal(expectedScore(outcomes[patient.address.toLowerCase()], now));

        // The poster: 7 tasks paid out, one dispute ruled for the worker.
        const asPoster = (await reputation(api, poster.address)).asPoster;
        expect(asPoster).to.deep.equal({ score: 6, paidOut: 7, disputesLost: 1, lastActivityAt: wonAt });

        // Every wallet: exactly the formula.
        for (const [address, events] of Object.entries(outcomes)) {
          expect((await reputation(api, address)).score, address).to.equal(expectedScore(events, now));
        }
      }));

    it("answers zeros for a wallet without outcomes, and BAD_ADDRESS for a malformed address", () =>
      withHistory(async ({ api, stranger }) => {
        const checksummed = ethers.getAddress(stranger.address);
        const data = await reputation(api, checksummed);
        expect(data).to.deep.equal({
          address: stranger.address.toLowerCase(),
          score: 0,
          completed: 0,
          failedVerdicts: 0,
          disputesLost: 0,
          timeouts: 0,
          lastActivityAt: null,
          asPoster: { score: 0, paidOut: 0, disputesLost: 0, lastActivityAt: null },
          halfLifeDays: 90,
          computedAt: await latestTime(),
        });
        for (const bad of ["0x123", "xyz", `${stranger.address}00`, stranger.address.slice(2), `0x${"g".repeat(40)}`]) {
          expectError(await api.request("GET", `${REPUTATION}/${bad}`), 400, "BAD_ADDRESS");
        }
      }));

    it("halves every weight after 90 days of chain time", () =>
      withHistory(async ({ api, worker, loser, outcomes }) => {
        expect(HALF_LIFE_SECONDS).to.equal(90 * 86_400);
        const before = await reputation(api, worker.address);
        await time.increase(90 * DAY);
        const now = await latestTime();
        const after = await reputation(api, worker.address);
        expect(after.computedAt).to.equal(now);
        expect(after.computedAt - before.computedAt).to.equal(90 * DAY);
        expect(after.score).to.equal(0.75);
        expect(after.score).to.equal(expectedScore(outcomes[worker.address.toLowerCase()], now));
        // Counts do not decay.
        expect(after).to.deep.include({ completed: 2, failedVerdicts: 1 });
        expect((await reputation(api, loser.address)).score).to.equal(0.5);
        expect((await reputation(api, worker.address)).asPoster.score).to.equal(0);

        await time.increase(90 * DAY);
        expect((await reputation(api, worker.address)).score).to.equal(0.375);
        expect(decayWeight(HALF_LIFE_SECONDS)).to.equal(0.5);
        expect(decayWeight(-5)).to.equal(1);
        expect(toScore(-2)).to.equal(0);
        expect(toScore(1.23449)).to.equal(1.234);
      }));

    it("is what reputationScore, reputationScores and the executors' reputation report", () =>
      withHistory(async ({ api, worker, loser, late, stranger }) => {
        const now = await api.deps.clock.chainNow();
        const { db } = api.deps;
        expect(await reputationScore(db, worker.address, now)).to.equal(1.5);
        expect(await reputationScore(db, ethers.getAddress(loser.address), now)).to.equal(1);
        const scores = await reputationScores(db, [worker.address, late.address, stranger.address], now);
        expect([...scores.entries()]).to.deep.equal([
          [worker.address.toLowerCase(), 1.5],
          [late.address.toLowerCase(), 0],
          [stranger.address.toLowerCase(), 0],
        ]);
        expect((await reputationScores(db, [], now)).size).to.equal(0);

        // Executors' reputation is the same score, and the listing orders by it.
        for (const signer of [stranger, loser, worker]) {
          const key = await api.createKey(signer.address);
          const publicKey = agentPublicKey(secp256k1.utils.randomPrivateKey());
          const res = await api.request("POST", "/api/v1/a2a/executors", { key, body: { publicKey } });
          expect(res.status, res.text).to.equal(200);
        }
        const list = await api.request("GET", "/api/v1/a2a/executors");
        expect(
          list.json.data.executors.map((e: { address: string; reputation: number }) => [e.address, e.reputation]),
        ).to.deep.equal([
          [worker.address.toLowerCase(), 1.5],
          [loser.address.toLowerCase(), 1],
          [stranger.address.toLowerCase(), 0],
        ]);
        const me = await api.request("GET", "/api/v1/a2a/executors/me", { key: await api.createKey(worker.address) });
        expect(me.json.data.reputation).to.equal(1.5);
      }));
  });

  describe("GET /api/v1/reputation/leaderboard", () => {
    it("ranks workers above 0 by score, then completed work, then address", () =>
      withHistory(async ({ api, worker, loser, single, winner, patient }) => {
        const res = await api.request("GET", LEADERBOARD);
        expect(res.status, res.text).to.equal(200);
        const tied = [single, winner, patient].map((s) => s.address.toLowerCase()).sort();
        expect(res.json.data.leaderboard).to.deep.equal([
          { rank: 1, address: worker.address.toLowerCase(), score: 1.5, completed: 2 },
          { rank: 2, address: loser.address.toLowerCase(), score: 1, completed: 2 },
          ...tied.map((address, i) => ({ rank: 3 + i, address, score: 1, completed: 1 })),
        ]);
        expect(res.json.data.halfLifeDays).to.equal(90);

        // Decay keeps the order here and halves the scores.
        await time.increase(90 * DAY);
        const later = await api.request("GET", LEADERBOARD);
        expect(later.json.data.leaderboard.map((e: { score: number }) => e.score)).to.deep.equal([
          0.75, 0.5, 0.5, 0.5, 0.5,
        ]);
        expect(later.json.data.leaderboard[0].address).to.equal(worker.address.toLowerCase());
      }));

    it("holds the top 50, computed in one statement over many workers", () =>
      withApiOnly(async (api) => {
        const db = api.deps.db;
        const now = await api.deps.clock.chainNow();
        const tasks: TaskRecord[] = [];
        const events: StoredEvent[] = [];
        // Worker i (1..60) completed i tasks, 1 hour ago; worker 61 has only a timeout.
        let id = 1_000_000;
        const wallet = (i: number) => `0x${i.toString(16).padStart(40, "a")}`;
        for (let i = 1; i <= 61; i++) {
          for (let j = 0; j < (i === 61 ? 1 : i); j++) {
            id += 1;
            tasks.push(syntheticTask(id, wallet(i)));
            events.push(syntheticEvent(id, i === 61 ? "DeadlineExpired" : "TaskCompleted", now - HOUR, events.length));
          }
        }
        await upsertTasks(db, "base", tasks);
        await insertNewEvents(db, "base", events);
        const res = await api.request("GET", LEADERBOARD);
        const board = res.json.data.leaderboard;
        expect(board).to.have.length(50);
        expect(board[0]).to.deep.equal({
          rank: 1,
          address: wallet(60),
          score: toScore(60 * decayWeight(HOUR)),
          completed: 60,
        });
        expect(board[49]).to.deep.include({ rank: 50, address: wallet(11), completed: 11 });
        expect(board.map((e: { address: string }) => e.address)).to.not.include(wallet(61));
        expect((await reputation(api, wallet(61))).timeouts).to.equal(1);

        // One SELECT per read, whatever the number of wallets.
        const queries: string[] = [];
        const onQuery = (q: { sql: string }) => queries.push(q.sql);
        db.on("query", onQuery);
        try {
          await api.request("GET", LEADERBOARD);
          await reputationScores(
            db,
            Array.from({ length: 61 }, (_, i) => wallet(i + 1)),
            now,
          );
        } finally {
          db.off("query", onQuery);
        }
        expect(queries.filter((q) => /escrow_events/.test(q))).to.have.length(2);
      }));
  });

  describe("minReputation of the open tasks", () => {
    it("filters by the poster's decayed score as a poster", () =>
      withHistory(async ({ api, poster, stranger, escrow, usdc }) => {
        const token = await usdc.getAddress();
        const listed: number[] = [];
        for (const signer of [poster, stranger]) {
          const key = await api.createKey(signer.address);
          const taskHash = ethers.sha256(ethers.toUtf8Bytes(`open task of ${signer.address}`));
          const tx = await escrow.connect(signer).createTask(taskHash, token, USDC(5), CATEGORY, ZONE, DAY);
          await tx.wait();
          const res = await api.request("POST", "/api/v1/a2a/tasks/index", {
            key,
            body: { txHash: tx.hash, taskHash },
          });
          expect(res.status, res.text).to.equal(200);
          listed.push(res.json.data.onChainTaskId);
        }
        await api.synced();
        const [posterTask, strangerTask] = listed;
        const open = async (q: string) =>
          (await api.request("GET", `/api/v1/a2a/tasks${q}`)).json.data.tasks.map(
            (t: { meta: { onChainTaskId: number } }) => t.meta.onChainTaskId,
          );
        expect(await posterReputation(api.deps.db, poster.address, await api.deps.clock.chainNow())).to.equal(6);
        expect(await open("")).to.deep.equal([strangerTask, posterTask]);
        expect(await open("?minReputation=6")).to.deep.equal([posterTask]);
        expect(await open("?minReputation=7")).to.deep.equal([]);
        // 90 days later the poster's score is 3.
        await time.increase(90 * DAY);
        expect(await posterReputation(api.deps.db, poster.address, await api.deps.clock.chainNow())).to.equal(3);
      }));
  });
});

async function withApiOnly(fn: (api: TestApi) => Promise<void>) {
  const { book } = await loadFixture(deployEscrowFixture);
  const api = await startTestApi(book, ENV);
  try {
    await api.synced();
    await fn(api);
  } finally {
    await api.close();
  }
}

function syntheticTask(taskId: number, worker: string): TaskRecord {
  return taskRecord(taskId, {
    worker,
    token: ZERO_ADDRESS,
    amount: "1",
    taskHash: ethers.id(`synthetic ${taskId}`),
    status: TASK_STATUS.Completed,
    category: CATEGORY,
    locationZone: ZONE,
    createdAt: 1,
    deadline: 2,
    submissionAttempts: 1,
    createdBlock: 10_000_000,
    updatedBlock: 10_000_000,
  });
}

function syntheticEvent(taskId: number, eventName: string, at: number, n: number): StoredEvent {
  return {
    blockNumber: 10_000_000 + n,
    logIndex: 0,
    blockHash: ethers.id(`block ${n}`),
    txHash: ethers.id(`event tx ${n}`),
    txIndex: 0,
    blockTimestamp: at,
    eventName,
    taskId,
    args: { taskId: String(taskId) },
  };
}
