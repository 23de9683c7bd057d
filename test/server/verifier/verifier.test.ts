import { expect } from "chai";
import { ethers, network } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { CATEGORY, DAY, EVIDENCE_HASH, FEE_BPS, STATUS, USDC, ZONE, deployEscrowFixture } from "../../helpers/fixtures";
import { createTestDb, type TestDb } from "../../helpers/db";
import { startTestApi } from "../../helpers/api";
import { verifierPrivateKey } from "../../helpers/keys";
import {
  VerifierSendError,
  assignKey,
  classifyBroadcastError,
  createMarketplaceVerifier,
  revertReason,
  verdictKey,
  type MarketplaceVerifier,
} from "../../../server/verifier";
import { findIntent, insertIntent, listIntentsByTask } from "../../../server/db/repositories/verifierIntents";
import type { Db } from "../../../server/db/knex";

type Fixture = Awaited<ReturnType<typeof deployEscrowFixture>>;

const POLL_MS = 20;
const provider = ethers.provider;

function newVerifier(fx: Fixture, db: Db): MarketplaceVerifier {
  return createMarketplaceVerifier({
    db,
    provider,
    escrowAddress: fx.book.escrow.proxy,
    privateKey: verifierPrivateKey(),
    pollIntervalMs: POLL_MS,
  });
}

/** A fresh database and a started verifier over the escrow fixture; everything is stopped afterwards. */
async function withVerifier(
  fn: (ctx: { fx: Fixture; testDb: TestDb; verifier: MarketplaceVerifier }) => Promise<void>,
): Promise<void> {
  const fx = await loadFixture(deployEscrowFixture);
  const testDb = await createTestDb();
  const verifier = newVerifier(fx, testDb.db);
  testDb.onCleanup(() => verifier.stop());
  try {
    await verifier.start();
    await fn({ fx, testDb, verifier });
  } finally {
    await testDb.cleanup();
  }
}

/** Funds `count` tasks of 100 USDC judged by the marketplace verifier; returns their ids. */
async function fundTasks(fx: Fixture, count = 1): Promise<number[]> {
  const ids: number[] = [];
  const token = await fx.usdc.getAddress();
  for (let i = 0; i < count; i++) {
    const hash = ethers.keccak256(ethers.toUtf8Bytes(`verifier test task ${i} ${Date.now()} ${Math.random()}`));
    const id = Number(await fx.escrow.nextTaskId());
    await fx.escrow.connect(fx.poster).createTask(hash, token, USDC(100), CATEGORY, ZONE, DAY);
    ids.push(id);
  }
  return ids;
}

/** The verifier's mined transaction count. */
const verifierNonce = () => provider.getTransactionCount(new ethers.Wallet(verifierPrivateKey()).address, "latest");

async function until(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function assignedEvents(fx: Fixture, taskId: number) {
  return fx.escrow.queryFilter(fx.escrow.filters.WorkerAssigned(taskId));
}

/** Runs `fn` with automine off, and always turns it back on. */
async function withoutAutomine(fn: () => Promise<void>): Promise<void> {
  await network.provider.send("evm_setAutomine", [false]);
  try {
    await fn();
  } finally {
    await network.provider.send("evm_setAutomine", [true]);
  }
}

describe("Marketplace verifier", () => {
  describe("#requestAssign", () => {
    it("sends marketplaceAssign at once and confirms it: getTask shows the worker", () =>
      withVerifier(async ({ fx, testDb, verifier }) => {
        const [taskId] = await fundTasks(fx);
        const nonceBefore = await verifierNonce();

        const sent = await verifier.requestAssign(taskId, fx.worker.address);

        expect(sent.key).to.equal(assignKey(taskId));
        expect(sent.kind).to.equal("assign");
        expect(sent.taskId).to.equal(taskId);
        expect(["sent", "confirmed"]).to.include(sent.status);
        expect(sent.txHash).to.match(/^0x[0-9a-f]{64}$/);
        const done = await verifier.settled(sent.key, 10_000);
        expect(done.status).to.equal("confirmed");
        expect(done.txHash).to.equal(sent.txHash);
        expect(done.error).to.equal(null);
        const task = await fx.escrow.getTask(taskId);
        expect(task.worker).to.equal(fx.worker.address);
        expect(task.status).to.equal(BigInt(STATUS.Assigned));
        const receipt = await provider.getTransactionReceipt(sent.txHash!);
        expect(receipt!.from).to.equal(fx.verifier.address);
        const row = await findIntent(testDb.db, "base", sent.key);
        expect(row!.nonce).to.equal(nonceBefore);
        expect(row!.rawTx).to.match(/^0x02/); // EIP-1559
        expect(ethers.Transaction.from(row!.rawTx!).hash).to.equal(sent.txHash);
        expect(row!.args).to.deep.equal({ worker: fx.worker.address.toLowerCase() });
        expect(await verifierNonce()).to.equal(nonceBefore + 1);
      }));

    it("is the verifier's address: the escrow's verifier", () =>
      withVerifier(async ({ fx, verifier }) => {
        expect(verifier.address).to.equal(fx.verifier.address);
        expect(await fx.escrow.verifier()).to.equal(verifier.address);
      }));

    it("sends one transaction when asked twice, in a row or at once", () =>
      withVerifier(async ({ fx, testDb, verifier }) => {
        const [first, second] = await fundTasks(fx, 2);
        const nonceBefore = await verifierNonce();

        const a = await verifier.requestAssign(first, fx.worker.address);
        const b = await verifier.requestAssign(first, fx.worker.address);
        const [c, d] = await Promise.all([
          verifier.requestAssign(second, fx.worker.address),
          verifier.requestAssign(second, fx.worker.address),
        ]);
        await verifier.settled(assignKey(first));
        await verifier.settled(assignKey(second));
        // Asked again once confirmed: the confirmed intent, nothing sent.
        const e = await verifier.requestAssign(first, fx.worker.address);

        expect(b.id).to.equal(a.id);
        expect(b.txHash).to.equal(a.txHash);
        expect(d.id).to.equal(c.id);
        expect(d.txHash).to.equal(c.txHash);
        expect(e).to.deep.include({ id: a.id, status: "confirmed", txHash: a.txHash });
        expect(await verifierNonce()).to.equal(nonceBefore + 2);
        expect(await assignedEvents(fx, first)).to.have.length(1);
        expect(await assignedEvents(fx, second)).to.have.length(1);
        expect(await listIntentsByTask(testDb.db, "base", first)).to.have.length(1);
        expect(await listIntentsByTask(testDb.db, "base", second)).to.have.length(1);
      }));

    it("throws VerifierSendError with the escrow's error and keeps no intent when the call would revert", () =>
      withVerifier(async ({ fx, testDb, verifier }) => {
        const [taskId] = await fundTasks(fx);
        const nonceBefore = await verifierNonce();

        let caught: unknown;
        try {
          await verifier.requestAssign(taskId, fx.poster.address);
        } catch (error) {
          caught = error;
        }

        expect(caught).to.be.instanceOf(VerifierSendError);
        expect((caught as VerifierSendError).reason).to.equal("SelfAssignment");
        expect((caught as Error).message).to.contain("SelfAssignment()");
        expect(await verifier.intent(assignKey(taskId))).to.equal(undefined);
        expect(await listIntentsByTask(testDb.db, "base", taskId)).to.deep.equal([]);
        expect(await verifierNonce()).to.equal(nonceBefore);
        // The key is free again: a valid request goes through.
        await verifier.requestAssign(taskId, fx.worker.address);
        expect((await verifier.settled(assignKey(taskId))).status).to.equal("confirmed");
      }));

    it("throws VerifierSendError and keeps no intent when the node refuses the signed transaction (no gas money)", () =>
      withVerifier(async ({ fx, testDb, verifier }) => {
        const [taskId] = await fundTasks(fx);
        const nonceBefore = await verifierNonce();
        const balance = await provider.getBalance(fx.verifier.address);
        await network.provider.send("hardhat_setBalance", [fx.verifier.address, "0x0"]);
        let caught: unknown;
        try {
          await verifier.requestAssign(taskId, fx.worker.address);
        } catch (error) {
          caught = error;
        } finally {
          await network.provider.send("hardhat_setBalance", [fx.verifier.address, ethers.toQuantity(balance)]);
        }

        expect(caught).to.be.instanceOf(VerifierSendError);
        expect((caught as Error).message).to.contain("cannot pay the gas");
        expect(await listIntentsByTask(testDb.db, "base", taskId)).to.deep.equal([]);
        expect(await verifierNonce()).to.equal(nonceBefore);
        expect((await fx.escrow.getTask(taskId)).status).to.equal(BigInt(STATUS.Funded));
      }));

    it("gives several intents in a row consecutive nonces, and serializes concurrent requests", () =>
      withVerifier(async ({ fx, testDb, verifier }) => {
        const ids = await fundTasks(fx, 5);
        const nonceBefore = await verifierNonce();

        await verifier.requestAssign(ids[0], fx.worker.address);
        await verifier.requestAssign(ids[1], fx.worker.address);
        await Promise.all(ids.slice(2).map((id) => verifier.requestAssign(id, fx.worker.address)));
        for (const id of ids) expect((await verifier.settled(assignKey(id))).status).to.equal("confirmed");

        const nonces = [];
        for (const id of ids) nonces.push((await findIntent(testDb.db, "base", assignKey(id)))!.nonce);
        expect(nonces.slice(0, 2)).to.deep.equal([nonceBefore, nonceBefore + 1]);
        expect([...nonces].sort((x, y) => x! - y!)).to.deep.equal([0, 1, 2, 3, 4].map((i) => nonceBefore + i));
        expect(await verifierNonce()).to.equal(nonceBefore + 5);
        for (const id of ids) expect((await fx.escrow.getTask(id)).worker).to.equal(fx.worker.address);
      }));
  });

  describe("#requestVerdict", () => {
    async function submitted(fx: Fixture, verifier: MarketplaceVerifier): Promise<number> {
      const [taskId] = await fundTasks(fx);
      await verifier.requestAssign(taskId, fx.worker.address);
      await verifier.settled(assignKey(taskId));
      await fx.escrow.connect(fx.worker).submitEvidence(taskId, EVIDENCE_HASH);
      return taskId;
    }

    it("passes the work: the task is Completed, the worker gets the amount minus the fee, the treasury the fee", () =>
      withVerifier(async ({ fx, testDb, verifier }) => {
        const taskId = await submitted(fx, verifier);
        const workerBefore = await fx.usdc.balanceOf(fx.worker.address);
        const treasuryBefore = await fx.usdc.balanceOf(fx.treasury.address);

        const sent = await verifier.requestVerdict(taskId, 1, true);
        const done = await verifier.settled(verdictKey(taskId, 1));

        expect(sent).to.deep.include({ kind: "verdict", key: verdictKey(taskId, 1), taskId });
        expect(done.status).to.equal("confirmed");
        const fee = (USDC(100) * BigInt(FEE_BPS)) / 10_000n;
        expect(fee).to.equal(USDC(10));
        expect((await fx.escrow.getTask(taskId)).status).to.equal(BigInt(STATUS.Completed));
        expect((await fx.usdc.balanceOf(fx.worker.address)) - workerBefore).to.equal(USDC(100) - fee);
        expect((await fx.usdc.balanceOf(fx.treasury.address)) - treasuryBefore).to.equal(fee);
        expect((await findIntent(testDb.db, "base", done.key))!.args).to.deep.equal({ attempt: 1, passed: true });
      }));

    it("fails the work: the task is Verified with one attempt and nothing is paid", () =>
      withVerifier(async ({ fx, verifier }) => {
        const taskId = await submitted(fx, verifier);
        const workerBefore = await fx.usdc.balanceOf(fx.worker.address);

        await verifier.requestVerdict(taskId, 1, false);
        const done = await verifier.settled(verdictKey(taskId, 1));

        expect(done.status).to.equal("confirmed");
        const task = await fx.escrow.getTask(taskId);
        expect(task.status).to.equal(BigInt(STATUS.Verified));
        expect(task.submissionAttempts).to.equal(1n);
        expect(await fx.usdc.balanceOf(fx.worker.address)).to.equal(workerBefore);
        // A verdict for the same attempt again: the same intent, no second transaction.
        const again = await verifier.requestVerdict(taskId, 1, false);
        expect(again).to.deep.include({ id: done.id, status: "confirmed", txHash: done.txHash });
      }));

    it("refuses a verdict on work that is not submitted, with the escrow's InvalidStatus", () =>
      withVerifier(async ({ fx, verifier }) => {
        const [taskId] = await fundTasks(fx);
        const error = await verifier.requestVerdict(taskId, 1, true).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).to.be.instanceOf(VerifierSendError);
        expect((error as VerifierSendError).reason).to.equal("InvalidStatus");
        expect((error as Error).message).to.contain(`InvalidStatus(${STATUS.Funded}, ${STATUS.Submitted})`);
        expect(await verifier.intent(verdictKey(taskId, 1))).to.equal(undefined);
      }));
  });

  describe("crashes and restarts", () => {
    it("re-broadcasts the stored transaction when the node lost it while the verifier was down: mined exactly once", () =>
      withVerifier(async ({ fx, testDb, verifier: first }) => {
        const [taskId] = await fundTasks(fx);
        const nonceBefore = await verifierNonce();
        await withoutAutomine(async () => {
          const sent = await first.requestAssign(taskId, fx.worker.address);
          expect(sent.status).to.equal("sent");
          const txHash = sent.txHash!;
          expect(await provider.getTransaction(txHash)).to.not.equal(null); // in the node's pool, not mined
          expect(await provider.getTransactionReceipt(txHash)).to.equal(null);

          // Killed: the process is gone (nothing of it runs any more). A new one starts over the same database.
          await first.stop();
          const second = newVerifier(fx, testDb.reopen());
          testDb.onCleanup(() => second.stop());
          // The node lost the transaction, and the chain moved on without it.
          expect(await network.provider.send("hardhat_dropTransaction", [txHash])).to.equal(true);
          expect(await provider.getTransaction(txHash)).to.equal(null);
          await network.provider.send("evm_mine", []);
          expect(await verifierNonce()).to.equal(nonceBefore);

          await second.start();
          await until(async () => (await provider.getTransaction(txHash)) !== null);
          await network.provider.send("evm_mine", []);
          const done = await second.settled(assignKey(taskId));

          expect(done).to.deep.include({ id: sent.id, status: "confirmed", txHash });
          // More blocks, more passes of the loop: nothing else is sent.
          for (let i = 0; i < 3; i++) {
            await network.provider.send("evm_mine", []);
            await new Promise((resolve) => setTimeout(resolve, POLL_MS * 3));
          }
          expect(await verifierNonce()).to.equal(nonceBefore + 1);
          expect(await assignedEvents(fx, taskId)).to.have.length(1);
          expect((await fx.escrow.getTask(taskId)).worker).to.equal(fx.worker.address);
          const row = await findIntent(testDb.db, "base", assignKey(taskId));
          expect(row!.attempts).to.equal(2); // the first broadcast and the restart's
          expect(row!.nonce).to.equal(nonceBefore);
        });
      }));

    it("confirms a transaction mined while the verifier was down, without sending it again", () =>
      withVerifier(async ({ fx, testDb, verifier: first }) => {
        const [taskId] = await fundTasks(fx);
        const nonceBefore = await verifierNonce();
        await withoutAutomine(async () => {
          const sent = await first.requestAssign(taskId, fx.worker.address);
          expect(sent.status).to.equal("sent");
          await first.stop();
          await network.provider.send("evm_mine", []);
          expect((await provider.getTransactionReceipt(sent.txHash!))!.status).to.equal(1);

          const second = newVerifier(fx, testDb.reopen());
          testDb.onCleanup(() => second.stop());
          expect((await second.intent(assignKey(taskId)))!.status).to.equal("sent");
          await second.start();
          const done = await second.settled(assignKey(taskId));

          expect(done).to.deep.include({ status: "confirmed", txHash: sent.txHash });
          expect(await verifierNonce()).to.equal(nonceBefore + 1);
          expect(await assignedEvents(fx, taskId)).to.have.length(1);
          expect((await findIntent(testDb.db, "base", assignKey(taskId)))!.attempts).to.equal(1);
        });
      }));

    it("never reuses the nonce of a stored transaction the node lost: the next intent takes the one after it", () =>
      withVerifier(async ({ fx, testDb, verifier }) => {
        const [lost, next] = await fundTasks(fx, 2);
        const nonceBefore = await verifierNonce();
        await withoutAutomine(async () => {
          await verifier.stop(); // no re-broadcast before the second request
          const a = await verifier.requestAssign(lost, fx.worker.address);
          await network.provider.send("hardhat_dropTransaction", [a.txHash]);
          // The node's pending nonce is back to nonceBefore; the database remembers nonceBefore is taken.
          expect(await provider.getTransactionCount(fx.verifier.address, "pending")).to.equal(nonceBefore);
          const b = await verifier.requestAssign(next, fx.worker.address);

          expect((await findIntent(testDb.db, "base", a.key))!.nonce).to.equal(nonceBefore);
          expect((await findIntent(testDb.db, "base", b.key))!.nonce).to.equal(nonceBefore + 1);
          await verifier.start();
          await until(async () => (await provider.getTransaction(a.txHash!)) !== null);
          await network.provider.send("evm_mine", []);
        });
        expect((await verifier.settled(assignKey(lost))).status).to.equal("confirmed");
        expect((await verifier.settled(assignKey(next))).status).to.equal("confirmed");
        expect(await verifierNonce()).to.equal(nonceBefore + 2);
        expect((await fx.escrow.getTask(lost)).worker).to.equal(fx.worker.address);
        expect((await fx.escrow.getTask(next)).worker).to.equal(fx.worker.address);
      }));

    it("sends an intent a crash left before it was signed", () =>
      withVerifier(async ({ fx, testDb, verifier: first }) => {
        const [taskId] = await fundTasks(fx);
        await first.stop();
        // What a process that died between recording the intent and signing it leaves behind.
        await insertIntent(testDb.db, {
          chain: "base",
          kind: "assign",
          taskId,
          key: assignKey(taskId),
          args: { worker: fx.worker.address.toLowerCase() },
          now: Math.floor(Date.now() / 1000),
        });

        const second = newVerifier(fx, testDb.reopen());
        testDb.onCleanup(() => second.stop());
        await second.start();
        const done = await second.settled(assignKey(taskId));

        expect(done.status).to.equal("confirmed");
        expect((await fx.escrow.getTask(taskId)).worker).to.equal(fx.worker.address);
      }));

    it("fails, rather than deletes, an intent a crash left whose call would now revert", () =>
      withVerifier(async ({ fx, testDb, verifier: first }) => {
        const [taskId] = await fundTasks(fx);
        await first.stop();
        await insertIntent(testDb.db, {
          chain: "base",
          kind: "assign",
          taskId,
          key: assignKey(taskId),
          args: { worker: fx.poster.address.toLowerCase() },
          now: Math.floor(Date.now() / 1000),
        });

        const second = newVerifier(fx, testDb.reopen());
        testDb.onCleanup(() => second.stop());
        await second.start();
        const done = await second.settled(assignKey(taskId));

        expect(done).to.deep.include({ status: "failed", txHash: null, error: "would revert: SelfAssignment()" });
        expect((await fx.escrow.getTask(taskId)).status).to.equal(BigInt(STATUS.Funded));
      }));

    it("fails an intent whose transaction reverted on-chain, and tries again on the next request", () =>
      withVerifier(async ({ fx, verifier }) => {
        const [taskId] = await fundTasks(fx);
        await withoutAutomine(async () => {
          const sent = await verifier.requestAssign(taskId, fx.worker.address);
          expect(sent.status).to.equal("sent");
          // The escrow is paused before the assignment is mined: it is mined after the pause and reverts.
          const fees = await provider.getFeeData();
          await fx.escrow.connect(fx.admin).pause({
            maxPriorityFeePerGas: fees.maxPriorityFeePerGas! * 10n,
            maxFeePerGas: fees.maxFeePerGas! * 10n,
          });
          await network.provider.send("evm_mine", []);
          expect((await provider.getTransactionReceipt(sent.txHash!))!.status).to.equal(0);
        });
        const failed = await verifier.settled(assignKey(taskId));
        expect(failed).to.deep.include({ status: "failed", error: "reverted" });

        // Still paused: the retry is refused up front and the intent stays failed.
        const refused = await verifier.requestAssign(taskId, fx.worker.address).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(refused).to.be.instanceOf(VerifierSendError);
        expect((refused as VerifierSendError).reason).to.equal("EnforcedPause");
        expect(await verifier.intent(assignKey(taskId))).to.deep.include({ id: failed.id, status: "failed" });

        await fx.escrow.connect(fx.admin).unpause();
        const retried = await verifier.requestAssign(taskId, fx.worker.address);
        expect(retried.id).to.equal(failed.id);
        expect(retried.txHash).to.not.equal(failed.txHash);
        expect((await verifier.settled(assignKey(taskId))).status).to.equal("confirmed");
        expect((await fx.escrow.getTask(taskId)).worker).to.equal(fx.worker.address);
      }));
  });

  describe("error reading", () => {
    it("classifies the node's answers to a broadcast", () => {
      const hardhat = (message: string) => Object.assign(new Error(message), { code: -32000, data: null });
      expect(classifyBroadcastError(hardhat("Known transaction: 0xabc"))).to.equal("known");
      expect(classifyBroadcastError(hardhat("already known"))).to.equal("known");
      expect(
        classifyBroadcastError(hardhat("Transaction nonce too low. Expected nonce to be at least 1 but got 0.")),
      ).to.equal("nonce-used");
      expect(
        classifyBroadcastError(Object.assign(new Error("nonce has already been used"), { code: "NONCE_EXPIRED" })),
      ).to.equal("nonce-used");
      expect(classifyBroadcastError(hardhat("Sender doesn't have enough funds to send tx."))).to.equal("underfunded");
      expect(classifyBroadcastError(Object.assign(new Error("x"), { code: "INSUFFICIENT_FUNDS" }))).to.equal(
        "underfunded",
      );
      expect(classifyBroadcastError(hardhat("replacement transaction underpriced"))).to.equal("underpriced");
      expect(classifyBroadcastError(hardhat("invalid chain id for signer"))).to.equal("rejected");
      expect(classifyBroadcastError(hardhat("intrinsic gas too low"))).to.equal("rejected");
      expect(classifyBroadcastError(Object.assign(new Error("fetch failed"), { code: "NETWORK_ERROR" }))).to.equal(
        "retryable",
      );
      expect(classifyBroadcastError(new Error("something nobody has seen before"))).to.equal("retryable");
    });

    it("decodes the escrow's custom error from a JSON-RPC revert, and tells a revert from a network failure", async () => {
      const fx = await loadFixture(deployEscrowFixture);
      const { escrow, poster, verifier } = fx;
      const [taskId] = await fundTasks(fx);
      const data = escrow.interface.encodeFunctionData("marketplaceAssign", [taskId, poster.address]);
      const error = await provider.estimateGas({ from: verifier.address, to: await escrow.getAddress(), data }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(revertReason(error)).to.deep.equal({ name: "SelfAssignment", text: "SelfAssignment()" });
      // The shape of ethers' JsonRpcProvider: CALL_EXCEPTION with the revert data in info.error.data.
      const selector = escrow.interface.getError("InvalidStatus")!.selector;
      const revertData = selector + ethers.AbiCoder.defaultAbiCoder().encode(["uint8", "uint8"], [1, 0]).slice(2);
      const jsonRpc = Object.assign(new Error("execution reverted"), {
        code: "CALL_EXCEPTION",
        data: null,
        info: { error: { code: 3, message: "execution reverted", data: revertData } },
      });
      expect(revertReason(jsonRpc)).to.deep.equal({ name: "InvalidStatus", text: "InvalidStatus(1, 0)" });
      expect(revertReason(Object.assign(new Error("fetch failed"), { code: "NETWORK_ERROR" }))).to.equal(undefined);
    });
  });

  describe("wiring", () => {
    it("runs in the API when VERIFIER_PRIVATE_KEY is set, and not otherwise", async () => {
      const fx = await loadFixture(deployEscrowFixture);
      const { book, verifier: signer, escrow, worker } = fx;
      const without = await startTestApi(book);
      try {
        expect(without.deps.verifier).to.equal(undefined);
      } finally {
        await without.close();
      }
      const api = await startTestApi(book, { VERIFIER_PRIVATE_KEY: verifierPrivateKey() });
      try {
        const verifier = api.deps.verifier!;
        expect(verifier.address).to.equal(signer.address);
        const [taskId] = await fundTasks(fx);
        await verifier.requestAssign(taskId, worker.address);
        expect((await verifier.settled(assignKey(taskId))).status).to.equal("confirmed");
        expect((await escrow.getTask(taskId)).worker).to.equal(worker.address);
      } finally {
        await api.close();
      }
    });
  });
});
