import { expect } from "chai";
import SwaggerParser from "@apidevtools/swagger-parser";
import { ethers } from "hardhat";
import { time } from "@nomicfoundation/hardhat-network-helpers";
import { CATEGORY, DAY, EVIDENCE_HASH, USDC, ZONE } from "../../../helpers/fixtures";
import { type ApiResponse } from "../../../helpers/api";
import { CUSTODY_KEY, startMarket, type VerifierKind } from "../../../helpers/market";
import { findExecutor } from "../../../../server/db/repositories/executors";
import { acquireAcceptLock, findAcceptLock } from "../../../../server/db/repositories/acceptLocks";
import { findAssignment, insertAssignment } from "../../../../server/db/repositories/assignments";
import { claimOffer, findOpenOffer } from "../../../../server/db/repositories/offers";
import { acceptTask } from "../../../../server/domain/marketplace/accept";
import { findAgentKey } from "../../../../server/db/repositories/agentKeys";
import {
  agentPublicKey,
  decryptBrief,
  encryptBrief,
  unwrapBriefKey,
  wrapBriefKey,
} from "../../../../server/domain/briefs";
import { assertAssignmentSettled, loadTaskContext } from "../../../../server/domain/marketplace/taskContext";
import { assignKey } from "../../../../server/verifier/types";
import { AppError } from "../../../../server/errors";

const accept = (hash: string) => `/api/v1/a2a/tasks/${hash}/accept`;
const bid = (hash: string) => `/api/v1/a2a/tasks/${hash}/bid`;
const applicants = (hash: string) => `/api/v1/a2a/tasks/${hash}/applicants`;
const assign = (hash: string) => `/api/v1/tasks/${hash}/assign`;
const cancel = (hash: string) => `/api/v1/a2a/tasks/${hash}/cancel`;

const setup = startMarket;
const wall = () => Math.floor(Date.now() / 1000);

type Ctx = Awaited<ReturnType<typeof setup>>;

const withApi =
  (fn: (ctx: Ctx) => Promise<void>, env: Record<string, string> = {}, kind: VerifierKind = "real") =>
  async () => {
    const ctx = await setup(env, kind);
    try {
      await fn(ctx);
    } finally {
      await ctx.api.close();
    }
  };

function expectError(res: ApiResponse, status: number, code: string) {
  expect(res.status, res.text).to.equal(status);
  expect(res.json.success).to.equal(false);
  expect(res.json.error.code, res.text).to.equal(code);
}

/** Two registered agents, and a private task whose encrypted brief is uploaded and whose key is wrapped to both. */
async function listPrivateBrief({ list, newAgent, post, posterKey }: Ctx, text: string) {
  const agent = await newAgent();
  const other = await newAgent();
  const { blob, key: briefKey } = encryptBrief(Buffer.from(text));
  const upload = await post("/api/v1/storage/upload", posterKey, { data: blob.toString("base64") });
  expect(upload.status, upload.text).to.equal(201);
  const wrappedKeys = {
    [agent.address]: wrapBriefKey(briefKey, agent.publicKey),
    [other.address]: wrapBriefKey(briefKey, other.publicKey),
  };
  const { taskHash } = await list(
    { privacy: "private", rootHash: upload.json.data.rootHash, wrappedKeys },
    { taskHash: upload.json.data.rootHash },
  );
  return { agent, other, blob, upload, wrappedKeys, taskHash };
}

describe("API marketplace: bid, applicants, accept, assign, cancel", () => {
  describe("POST /api/v1/a2a/tasks/{hash}/accept", () => {
    it(
      "assigns a public task through the marketplace verifier and answers without key material",
      withApi(async ({ api, marketVerifier, escrow, list, newAgent, post }) => {
        const agent = await newAgent();
        const { taskHash, taskId } = await list();
        const res = await post(accept(taskHash), agent.key);
        expect(res.status, res.text).to.equal(200);
        expect(res.json.data).to.have.keys(["taskHash", "onChainTaskId", "state", "txHash"]);
        expect(res.json.data).to.include({ taskHash, onChainTaskId: taskId });
        expect(["assigning", "assigned"]).to.include(res.json.data.state);
        expect(res.json.data.txHash).to.match(/^0x[0-9a-f]{64}$/);

        const settled = await marketVerifier.settled(assignKey(taskId));
        expect(settled).to.include({ status: "confirmed", txHash: res.json.data.txHash });
        await api.synced();
        const onChain = await escrow.getTask(taskId);
        expect(onChain.worker.toLowerCase()).to.equal(agent.address);
        expect((await loadTaskContext(api.deps, taskHash)).status).to.equal("assigned");
        expect(await findAcceptLock(api.deps.db, taskId, "base")).to.equal(undefined);

        // A retried accept of the winner answers the same; any other agent gets NOT_OPEN.
        const again = await post(accept(taskHash), agent.key);
        expect(again.status, again.text).to.equal(200);
        expect(again.json.data).to.include({ state: "assigned", txHash: res.json.data.txHash });
        expectError(await post(accept(taskHash), (await newAgent()).key), 409, "NOT_OPEN");
      }),
    );

    it(
      "refuses a caller that is not a registered agent (NOT_REGISTERED) or has no public key (NO_PUBKEY)",
      withApi(async ({ api, list, register, post }) => {
        const { taskHash } = await list();
        const stranger = ethers.Wallet.createRandom();
        expectError(await post(accept(taskHash), await api.createKey(stranger.address)), 403, "NOT_REGISTERED");
        const keyless = ethers.Wallet.createRandom();
        await register(keyless.address, { publicKey: "" });
        expectError(await post(accept(taskHash), await api.createKey(keyless.address)), 400, "NO_PUBKEY");
      }),
    );

    it(
      "refuses the poster (SELF_ACCEPT) and the task's verifier agent (IS_VERIFIER)",
      withApi(async ({ api, poster, verifierAgent, list, register, post, posterKey }) => {
        await register(poster.address);
        await register(verifierAgent.address);
        const { taskHash } = await list({ verificationMode: "agent" }, { verifier: verifierAgent.address });
        expectError(await post(accept(taskHash), posterKey), 403, "SELF_ACCEPT");
        expectError(await post(accept(taskHash), await api.createKey(verifierAgent.address)), 403, "IS_VERIFIER");
      }),
    );

    it(
      "takes the task hash: a numeric id answers TASK_ID_DEPRECATED, other text VALIDATION_ERROR, an unlisted hash NOT_FOUND",
      withApi(async ({ list, newAgent, post }) => {
        const agent = await newAgent();
        const { taskId } = await list();
        expectError(await post(accept(String(taskId)), agent.key), 400, "TASK_ID_DEPRECATED");
        expectError(await post(accept("0x1234"), agent.key), 400, "VALIDATION_ERROR");
        const unlisted = await list({}, { unlisted: true });
        expectError(await post(accept(unlisted.taskHash), agent.key), 404, "NOT_FOUND");
        const res = await post(accept(`0x${"0".repeat(64)}`), agent.key);
        expectError(res, 400, "EMPTY_HASH");
      }),
    );

    it(
      "refuses a cancelled task (TASK_CANCELLED) and one past its deadline (TASK_EXPIRED)",
      withApi(async ({ api, escrow, poster, list, newAgent, post }) => {
        const agent = await newAgent();
        const cancelled = await list();
        await (await escrow.connect(poster).cancelTask(cancelled.taskId)).wait();
        await api.synced();
        expectError(await post(accept(cancelled.taskHash), agent.key), 409, "TASK_CANCELLED");

        const lapsing = await list({}, { duration: 3600 });
        await time.increase(3600);
        await api.synced();
        expectError(await post(accept(lapsing.taskHash), agent.key), 409, "TASK_EXPIRED");
      }),
    );

    it(
      "answers ASSIGNED_ELSEWHERE once the poster assigned the task on-chain, and gives the poster's worker its key",
      withApi(async ({ api, poster, list, newAgent, post, posterKey, send }) => {
        const chosen = await newAgent();
        const other = await newAgent();
        const { key: briefKey } = encryptBrief(Buffer.from("private brief"));
        const { taskHash, taskId } = await list({
          privacy: "private",
          wrappedKeys: { [chosen.address]: wrapBriefKey(briefKey, chosen.publicKey) },
        });
        // Building the transaction changes nothing: the listing stays open until it is mined.
        const built = await post(assign(taskHash), posterKey, { worker: chosen.address });
        expect((await loadTaskContext(api.deps, taskHash)).status).to.equal("open");
        await send(poster, built);

        expectError(await post(accept(taskHash), other.key), 409, "ASSIGNED_ELSEWHERE");
        const own = await post(accept(taskHash), chosen.key);
        expect(own.status, own.text).to.equal(200);
        expect(own.json.data).to.include({ state: "assigned", txHash: null });
        expect(unwrapBriefKey(own.json.data.wrappedKey, chosen.privateKey).equals(briefKey)).to.equal(true);
        expect(await findAssignment(api.deps.db, taskId, "base")).to.include({ agent: chosen.address, via: "poster" });
        expectError(await post(accept(taskHash), other.key), 409, "ASSIGNED_ELSEWHERE");
      }),
    );

    it(
      "refuses an agent the task is not reserved for (NOT_TARGET_EXECUTOR)",
      withApi(async ({ list, newAgent, post }) => {
        const target = await newAgent();
        const other = await newAgent();
        const { taskHash } = await list({ targetExecutor: target.address });
        expectError(await post(accept(taskHash), other.key), 403, "NOT_TARGET_EXECUTOR");
        expect((await post(accept(taskHash), target.key)).status).to.equal(200);
      }),
    );

    it(
      "refuses a reward below the agent's minimum (BELOW_MIN_REWARD) and a chain it does not settle on (CHAIN_UNSUPPORTED)",
      withApi(async ({ list, newAgent, post }) => {
        const { taskHash } = await list({}, { amount: USDC(25) });
        const picky = await newAgent({ minReward: USDC(25).toString() + "1" });
        expectError(await post(accept(taskHash), picky.key), 403, "BELOW_MIN_REWARD");
        const arcOnly = await newAgent({ supportedChains: ["arc"] });
        expectError(await post(accept(taskHash), arcOnly.key), 409, "CHAIN_UNSUPPORTED");
        const exact = await newAgent({ minReward: USDC(25).toString(), supportedChains: ["base"] });
        expect((await post(accept(taskHash), exact.key)).status).to.equal(200);
      }),
    );

    it(
      "refuses while another agent is accepting (ACCEPT_LOCKED) and after its lock expired lets the next one in",
      withApi(async ({ api, list, newAgent, post }) => {
        const agent = await newAgent();
        const { taskHash, taskId } = await list();
        await api.deps
          .db("accept_locks")
          .insert({ task_id: taskId, agent: "0x" + "11".repeat(20), expires_at: wall() + 30 });
        expectError(await post(accept(taskHash), agent.key), 409, "ACCEPT_LOCKED");
        await api.deps
          .db("accept_locks")
          .where({ task_id: taskId })
          .update({ expires_at: wall() - 1 });
        expect((await post(accept(taskHash), agent.key)).status).to.equal(200);
        expect(await findAcceptLock(api.deps.db, taskId, "base")).to.equal(undefined);
      }),
    );

    it(
      "lets exactly one of twenty concurrent agents win, refuses the others with a code, and leaves no lock",
      withApi(async ({ api, marketVerifier, escrow, list, newAgent, post }) => {
        const agents = await Promise.all(Array.from({ length: 20 }, () => newAgent()));
        const { taskHash, taskId } = await list();
        const answers = await Promise.all(agents.map((a) => post(accept(taskHash), a.key)));

        const winners = answers.flatMap((res, i) => (res.status === 200 ? [agents[i]] : []));
        expect(winners, answers.map((a) => a.text).join("\n")).to.have.length(1);
        for (const res of answers.filter((r) => r.status !== 200)) {
          expect(res.status, res.text).to.equal(409);
          expect(["ACCEPT_LOCKED", "NOT_OPEN"]).to.include(res.json.error.code);
        }
        expect(await findAcceptLock(api.deps.db, taskId, "base")).to.equal(undefined);
        expect(await findAssignment(api.deps.db, taskId, "base")).to.include({
          agent: winners[0].address,
          via: "accept",
        });

        expect((await marketVerifier.settled(assignKey(taskId))).status).to.equal("confirmed");
        await api.synced();
        expect((await escrow.getTask(taskId)).worker.toLowerCase()).to.equal(winners[0].address);
        const loser = agents.find((a) => a !== winners[0])!;
        expectError(await post(accept(taskHash), loser.key), 409, "NOT_OPEN");
      }),
    );

    it(
      "answers 503 SETTLEMENT_FAILED and keeps nothing when marketplaceAssign cannot be sent; the task can be accepted again",
      withApi(async ({ api, admin, escrow, list, newAgent, post }) => {
        const first = await newAgent();
        const second = await newAgent();
        const { key: briefKey } = encryptBrief(Buffer.from("brief"));
        const { taskHash, taskId } = await list({
          privacy: "private",
          wrappedKeys: { [first.address]: wrapBriefKey(briefKey, first.publicKey) },
        });
        // Paused, the escrow refuses marketplaceAssign: the real verifier cannot send it.
        await (await escrow.connect(admin).pause()).wait();
        const refused = await post(accept(taskHash), first.key);
        expectError(refused, 503, "SETTLEMENT_FAILED");
        expect(refused.json.error.reason).to.equal("EnforcedPause");
        expect(await findAssignment(api.deps.db, taskId, "base")).to.equal(undefined);
        expect(await findAgentKey(api.deps.db, taskId, first.address, "base")).to.equal(undefined);
        expect(await findAcceptLock(api.deps.db, taskId, "base")).to.equal(undefined);
        expect(await api.deps.verifier!.intent(assignKey(taskId))).to.equal(undefined);
        expect((await loadTaskContext(api.deps, taskHash)).status).to.equal("open");
        expect(Number((await escrow.getTask(taskId)).status)).to.equal(0);

        await (await escrow.connect(admin).unpause()).wait();
        const res = await post(accept(taskHash), first.key);
        expect(res.status, res.text).to.equal(200);
        expect(await findAgentKey(api.deps.db, taskId, first.address, "base")).to.include({ source: "poster" });
        expectError(await post(accept(taskHash), second.key), 409, "NOT_OPEN");
        expect((await api.deps.verifier!.settled(assignKey(taskId))).status).to.equal("confirmed");
      }),
    );

    it(
      "answers 503 SETTLEMENT_FAILED when the verifier refuses the send or none is configured, and keeps nothing",
      withApi(
        async ({ api, fake, escrow, list, newAgent, post }) => {
          const agent = await newAgent();
          const { taskHash, taskId } = await list();
          fake.mode = "refuse";
          expectError(await post(accept(taskHash), agent.key), 503, "SETTLEMENT_FAILED");
          api.deps.verifier = undefined;
          expectError(await post(accept(taskHash), agent.key), 503, "SETTLEMENT_FAILED");
          api.deps.verifier = fake;
          expect(await findAssignment(api.deps.db, taskId, "base")).to.equal(undefined);
          expect(await findAcceptLock(api.deps.db, taskId, "base")).to.equal(undefined);
          expect((await loadTaskContext(api.deps, taskHash)).status).to.equal("open");

          fake.mode = "send";
          const res = await post(accept(taskHash), agent.key);
          expect(res.status, res.text).to.equal(200);
          expect(fake.calls.map((c) => c.args)).to.deep.equal([
            [taskId, agent.address],
            [taskId, agent.address],
          ]);
          expect((await fake.settled(assignKey(taskId))).status).to.equal("confirmed");
          expect((await escrow.getTask(taskId)).worker.toLowerCase()).to.equal(agent.address);
        },
        {},
        "fake",
      ),
    );

    it(
      "keeps a task open again when the assignment's transaction failed or the accept died before sending it",
      withApi(
        async ({ api, fake, list, newAgent, post }) => {
          const first = await newAgent();
          const second = await newAgent();
          const { taskHash, taskId } = await list();
          fake.mode = "hold";
          expect((await post(accept(taskHash), first.key)).json.data.state).to.equal("assigning");
          expectError(await post(accept(taskHash), second.key), 409, "NOT_OPEN");
          // Public reads agree: the task is being assigned, and no longer offered to other agents.
          expect((await api.request("GET", `/api/v1/tasks/${taskHash}`)).json.data.a2aState.status).to.equal(
            "assigning",
          );
          const offered = (await api.request("GET", "/api/v1/a2a/tasks")).json.data.tasks;
          expect(offered.map((t: { meta: { taskHash: string } }) => t.meta.taskHash)).to.not.include(taskHash);
          fake.failHeld(assignKey(taskId));
          expect((await api.request("GET", `/api/v1/tasks/${taskHash}`)).json.data.a2aState.status).to.equal("open");
          expect((await loadTaskContext(api.deps, taskHash)).status).to.equal("open");
          fake.mode = "send";
          const res = await post(accept(taskHash), second.key);
          expect(res.status, res.text).to.equal(200);
          expect(await findAssignment(api.deps.db, taskId, "base")).to.include({
            agent: second.address,
            via: "accept",
          });

          // An assignment row without an intent, older than the accept lock: its accept died before sending.
          const other = await list();
          await api.deps.db("task_assignments").insert({
            task_id: other.taskId,
            agent: first.address,
            via: "accept",
            intent_id: null,
            accepted_at: wall() - 3600,
          });
          expect((await loadTaskContext(api.deps, other.taskHash)).status).to.equal("open");
          expect((await post(accept(other.taskHash), second.key)).status).to.equal(200);
        },
        {},
        "fake",
      ),
    );

    it(
      "answers ASSIGNMENT_PENDING to the worker until its assignment is on-chain (the deliver side's check)",
      withApi(
        async ({ api, fake, list, newAgent, post, posterKey }) => {
          const agent = await newAgent();
          const { taskHash, taskId } = await list();
          fake.mode = "hold";
          const res = await post(accept(taskHash), agent.key);
          expect(res.json.data).to.include({ state: "assigning", txHash: null });
          const pending = await loadTaskContext(api.deps, taskHash);
          expect(pending.status).to.equal("assigning");
          let thrown: unknown;
          try {
            assertAssignmentSettled(pending, agent.address);
          } catch (error) {
            thrown = error;
          }
          expect(thrown).to.be.instanceOf(AppError);
          expect((thrown as AppError).code).to.equal("ASSIGNMENT_PENDING");
          expect((thrown as AppError).status).to.equal(503);
          expectError(await post(cancel(taskHash), posterKey), 503, "ASSIGNMENT_PENDING");
          expectError(await post(assign(taskHash), posterKey, { worker: agent.address }), 409, "INVALID_STATE");

          expect((await fake.release(assignKey(taskId))).status).to.equal("confirmed");
          await api.synced();
          const settled = await loadTaskContext(api.deps, taskHash);
          expect(settled.status).to.equal("assigned");
          expect(() => assertAssignmentSettled(settled, agent.address)).not.to.throw();
          expectError(await post(cancel(taskHash), posterKey), 409, "INVALID_STATUS");
        },
        {},
        "fake",
      ),
    );
  });

  describe("race-freedom of the accept lock, the assignment and the offer window", () => {
    it(
      "lets one of twenty in-process accepts that all pass the open check together win",
      withApi(async ({ api, marketVerifier, list, newAgent }) => {
        const agents = await Promise.all(Array.from({ length: 20 }, () => newAgent()));
        const { taskHash, taskId } = await list();
        const outcomes = await Promise.allSettled(agents.map((a) => acceptTask(api.deps, a.address, taskHash)));
        const won = outcomes.filter((o) => o.status === "fulfilled");
        expect(won).to.have.length(1);
        for (const o of outcomes) {
          if (o.status === "rejected") {
            expect(o.reason).to.be.instanceOf(AppError);
            expect(["ACCEPT_LOCKED", "NOT_OPEN"]).to.include((o.reason as AppError).code);
          }
        }
        expect(await findAcceptLock(api.deps.db, taskId, "base")).to.equal(undefined);
        expect((await marketVerifier.settled(assignKey(taskId))).status).to.equal("confirmed");
      }),
    );

    it(
      "gives a lock, an assignment row and an offer window to exactly one of many concurrent writers",
      withApi(async ({ api }) => {
        const { db } = api.deps;
        const agents = Array.from({ length: 20 }, (_, i) => `0x${String(i + 1).padStart(40, "0")}`);
        const now = wall();
        const locks = await Promise.all(
          agents.map((agent) => acquireAcceptLock(db, { chain: "base", taskId: 7, agent, now, ttlSeconds: 30 })),
        );
        expect(locks.filter(Boolean)).to.have.length(1);
        // Expired: the next taker gets it, once.
        const later = await Promise.all(
          agents.map((agent) =>
            acquireAcceptLock(db, { chain: "base", taskId: 7, agent, now: now + 30, ttlSeconds: 30 }),
          ),
        );
        expect(later.filter(Boolean)).to.have.length(1);

        const inserted = await Promise.all(
          agents.map((agent) =>
            insertAssignment(db, { chain: "base", taskId: 7, agent, via: "accept", intentId: null, acceptedAt: now }),
          ),
        );
        expect(inserted.filter(Boolean)).to.have.length(1);

        // Scores 1..20 bid at once: whatever the order, the best score holds the window.
        await Promise.all(
          agents.map((agent, i) =>
            claimOffer(db, { chain: "base", taskId: 7, agent, score: String(i + 1), now, windowSeconds: 120 }),
          ),
        );
        expect(await findOpenOffer(db, 7, now, "base")).to.include({ agent: agents[19], score: "20" });
        expect(
          await claimOffer(db, { chain: "base", taskId: 7, agent: agents[0], score: "19.5", now, windowSeconds: 120 }),
        ).to.equal(undefined);
        expect(
          await claimOffer(db, { chain: "base", taskId: 7, agent: agents[0], score: "20.25", now, windowSeconds: 120 }),
        ).to.include({
          agent: agents[0],
        });

        // Task 7 of arc is another task: its lock, assignment and offer window are its own.
        const arcAgent = `0x${"a".repeat(40)}`;
        expect(
          await acquireAcceptLock(db, { chain: "arc", taskId: 7, agent: arcAgent, now, ttlSeconds: 30 }),
        ).to.include({
          chain: "arc",
          agent: arcAgent,
        });
        expect(
          await insertAssignment(db, {
            chain: "arc",
            taskId: 7,
            agent: arcAgent,
            via: "accept",
            intentId: null,
            acceptedAt: now,
          }),
        ).to.equal(true);
        expect(
          await claimOffer(db, { chain: "arc", taskId: 7, agent: arcAgent, score: "1", now, windowSeconds: 120 }),
        ).to.include({
          chain: "arc",
          agent: arcAgent,
        });
        expect(await findOpenOffer(db, 7, now, "base")).to.include({ agent: agents[0], score: "20.25" });
        expect(await findAssignment(db, 7, "arc")).to.include({ agent: arcAgent });
        expect((await findAssignment(db, 7, "base"))!.agent).to.not.equal(arcAgent);
      }),
    );
  });

  describe("brief keys", () => {
    it(
      "gives an agent the key the poster wrapped to it, and only its own; the agent decrypts the brief",
      withApi(async (ctx) => {
        const { api, post } = ctx;
        const { agent, other, upload, wrappedKeys, taskHash } = await listPrivateBrief(
          ctx,
          "translate the attached text",
        );
        const res = await post(accept(taskHash), agent.key);
        expect(res.status, res.text).to.equal(200);
        expect(res.json.data.wrappedKey).to.equal(wrappedKeys[agent.address]);
        const downloaded = await fetch(`${api.url}/api/v1/storage/blobs/${upload.json.data.rootHash}`);
        const opened = unwrapBriefKey(res.json.data.wrappedKey, agent.privateKey);
        expect(decryptBrief(Buffer.from(await downloaded.arrayBuffer()), opened).toString()).to.equal(
          "translate the attached text",
        );
        expect(() => unwrapBriefKey(res.json.data.wrappedKey, other.privateKey)).to.throw();
      }),
    );

    it(
      "GET /a2a/tasks/{hash}/brief: the worker reads its own key again (after a restart); nobody else gets one",
      withApi(async (ctx) => {
        const { api, list, post, posterKey } = ctx;
        const { agent, other, blob, wrappedKeys, taskHash } = await listPrivateBrief(
          ctx,
          "redo after a failed verdict",
        );
        const brief = (key: string) => api.request("GET", `/api/v1/a2a/tasks/${taskHash}/brief`, { key });
        // Before anyone accepts: even an agent the poster wrapped to is not the worker yet.
        expectError(await brief(agent.key), 403, "NOT_TASK_PARTICIPANT");
        expect((await post(accept(taskHash), agent.key)).status).to.equal(200);

        const res = await brief(agent.key);
        expect(res.status, res.text).to.equal(200);
        expect(res.json.data).to.deep.equal({
          taskHash,
          privacy: "private",
          blobBase64: blob.toString("base64"),
          wrappedKey: wrappedKeys[agent.address],
        });
        const opened = unwrapBriefKey(res.json.data.wrappedKey, agent.privateKey);
        expect(decryptBrief(Buffer.from(res.json.data.blobBase64, "base64"), opened).toString()).to.equal(
          "redo after a failed verdict",
        );
        expectError(await brief(other.key), 403, "NOT_TASK_PARTICIPANT");
        expectError(await brief(posterKey), 403, "NOT_TASK_PARTICIPANT");
        expectError(
          await brief(await api.createKey(ethers.Wallet.createRandom().address)),
          403,
          "NOT_TASK_PARTICIPANT",
        );
        expectError(await api.request("GET", `/api/v1/a2a/tasks/${taskHash}/brief`), 401, "UNAUTHORIZED");
        // Not even a private brief's absence from the store is told to others.
        const unstored = await list({
          privacy: "private",
          wrappedKeys: { [other.address]: wrappedKeys[other.address] },
        });
        const absent = await api.request("GET", `/api/v1/a2a/tasks/${unstored.taskHash}/brief`, { key: other.key });
        expectError(absent, 403, "NOT_TASK_PARTICIPANT");

        // A public task's brief is anyone's (with a key), without key material.
        const plain = await post("/api/v1/storage/upload", posterKey, {
          data: Buffer.from("Say hello.").toString("base64"),
        });
        const { taskHash: publicHash } = await list(
          { privacy: "public", rootHash: plain.json.data.rootHash, publicBrief: "Say hello." },
          { taskHash: plain.json.data.rootHash },
        );
        const open = await api.request("GET", `/api/v1/a2a/tasks/${publicHash}/brief`, { key: other.key });
        expect(open.status, open.text).to.equal(200);
        expect(open.json.data).to.not.have.property("wrappedKey");
        expect(Buffer.from(open.json.data.blobBase64, "base64").toString()).to.equal("Say hello.");
      }),
    );

    it(
      "re-wraps the custody copy for an agent the poster did not wrap to",
      withApi(
        async ({ api, list, newAgent, post }) => {
          const agent = await newAgent();
          const { blob, key: briefKey } = encryptBrief(Buffer.from("custody brief"));
          const { taskHash, taskId } = await list({
            privacy: "private",
            custodyWrappedKey: wrapBriefKey(briefKey, agentPublicKey(CUSTODY_KEY)),
          });
          const res = await post(accept(taskHash), agent.key);
          expect(res.status, res.text).to.equal(200);
          const opened = unwrapBriefKey(res.json.data.wrappedKey, agent.privateKey);
          expect(decryptBrief(blob, opened).toString()).to.equal("custody brief");
          expect(await findAgentKey(api.deps.db, taskId, agent.address, "base")).to.include({
            source: "custody",
            wrappedKey: res.json.data.wrappedKey,
          });
        },
        { CUSTODY_PRIVATE_KEY: CUSTODY_KEY },
      ),
    );

    it(
      "answers NEEDS_WRAP when neither a poster's key nor a usable custody copy exists, and keeps the task open",
      withApi(async ({ api, list, newAgent, post }) => {
        const agent = await newAgent();
        const { key: briefKey } = encryptBrief(Buffer.from("brief"));
        const bare = await list({ privacy: "private" });
        expectError(await post(accept(bare.taskHash), agent.key), 403, "NEEDS_WRAP");
        // A custody copy, but this service has no custody key.
        const custody = await list({
          privacy: "private",
          custodyWrappedKey: wrapBriefKey(briefKey, agentPublicKey(CUSTODY_KEY)),
        });
        expectError(await post(accept(custody.taskHash), agent.key), 403, "NEEDS_WRAP");
        expect(await findAssignment(api.deps.db, bare.taskId, "base")).to.equal(undefined);
        expect(await findAcceptLock(api.deps.db, bare.taskId, "base")).to.equal(undefined);
      }),
    );

    it(
      "answers REWRAP_FAILED when the custody copy does not open",
      withApi(
        async ({ api, list, newAgent, post }) => {
          const agent = await newAgent();
          const { key: briefKey } = encryptBrief(Buffer.from("brief"));
          const good = wrapBriefKey(briefKey, agentPublicKey(CUSTODY_KEY));
          const corrupted = good.slice(0, -4) + (good.endsWith("0000") ? "ffff" : "0000");
          const { taskHash, taskId } = await list({ privacy: "private", custodyWrappedKey: corrupted });
          expectError(await post(accept(taskHash), agent.key), 503, "REWRAP_FAILED");
          expect(await findAssignment(api.deps.db, taskId, "base")).to.equal(undefined);
          expect(await findAcceptLock(api.deps.db, taskId, "base")).to.equal(undefined);
        },
        { CUSTODY_PRIVATE_KEY: CUSTODY_KEY },
      ),
    );
  });

  describe("bids and the offer window", () => {
    it(
      "records bids with the agent's score, refuses a second one, and shows them to the poster only",
      withApi(async ({ api, poster, verifierAgent, list, newAgent, post, posterKey, register }) => {
        const first = await newAgent({ capabilities: ["translation"], lastSeenAt: 1 });
        const second = await newAgent();
        await register(poster.address);
        await register(verifierAgent.address);
        const { taskHash, taskId } = await list({ verificationMode: "agent" }, { verifier: verifierAgent.address });

        const res = await post(bid(taskHash), first.key, { message: "fast and careful" });
        expect(res.status, res.text).to.equal(200);
        expect(res.json.data).to.include({ taskHash, onChainTaskId: taskId, agent: first.address, score: 0 });
        expect(res.json.data.offer.agent).to.equal(first.address);
        // A marketplace operation marks the agent seen (running).
        expect((await findExecutor(api.deps.db, first.address))!.lastSeenAt).to.be.greaterThan(1);
        expect((await post(bid(taskHash), second.key, {})).status).to.equal(200);

        expectError(await post(bid(taskHash), first.key, {}), 409, "ALREADY_APPLIED");
        expectError(await post(bid(taskHash), posterKey, {}), 403, "SELF_BID");
        expectError(await post(bid(taskHash), await api.createKey(verifierAgent.address), {}), 403, "IS_VERIFIER");
        expectError(
          await post(bid(taskHash), await api.createKey(ethers.Wallet.createRandom().address), {}),
          403,
          "NOT_REGISTERED",
        );
        expectError(await post(bid(taskHash), first.key, { note: "x" }), 400, "VALIDATION_ERROR");

        expectError(await api.request("GET", applicants(taskHash), { key: first.key }), 403, "NOT_POSTER");
        const list1 = await api.request("GET", applicants(taskHash), { key: posterKey });
        expect(list1.status, list1.text).to.equal(200);
        expect(list1.json.data.total).to.equal(2);
        expect(list1.json.data.offer.agent).to.equal(first.address);
        type Row = { agent: string };
        const rows: Row[] = list1.json.data.applicants;
        const a = rows.find((r) => r.agent === first.address);
        const b = rows.find((r) => r.agent === second.address);
        expect(a).to.deep.include({
          agent: first.address,
          publicKey: first.publicKey,
          capabilities: ["translation"],
          message: "fast and careful",
          scoreAtBid: 0,
          reputation: 0,
          offerHolder: true,
        });
        expect(b).to.include({ agent: second.address, message: null, offerHolder: false });
        const page = await api.request("GET", `${applicants(taskHash)}?limit=1&offset=1`, { key: posterKey });
        expect(page.json.data.applicants.map((r: Row) => r.agent)).to.deep.equal([rows[1].agent]);
        expect(page.json.data.total).to.equal(2);
      }),
    );

    it(
      "refuses a bid on a task that is not open (NOT_OPEN)",
      withApi(async ({ escrow, poster, api, list, newAgent, post }) => {
        const agent = await newAgent();
        const { taskHash, taskId } = await list();
        await (await escrow.connect(poster).cancelTask(taskId)).wait();
        await api.synced();
        expectError(await post(bid(taskHash), agent.key, {}), 409, "NOT_OPEN");
      }),
    );

    it(
      "gives the best-scored bidder an exclusive window: OFFER_HELD for others, NOT_OFFER_HOLDER for lower bidders",
      withApi(async ({ api, escrow, token, poster, verifier, worker, list, newAgent, register, post, posterKey }) => {
        // `worker` completes a task on-chain first, so its score is above a new agent's.
        await (await escrow.connect(poster).createTask(EVIDENCE_HASH, token, USDC(5), CATEGORY, ZONE, DAY)).wait();
        const doneId = Number(await escrow.nextTaskId()) - 1;
        await (await escrow.connect(verifier).marketplaceAssign(doneId, worker.address)).wait();
        await (await escrow.connect(worker).submitEvidence(doneId, EVIDENCE_HASH)).wait();
        await (await escrow.connect(verifier).completeVerification(doneId, true)).wait();
        await register(worker.address);
        const workerKey = await api.createKey(worker.address);

        const low = await newAgent();
        const outsider = await newAgent();
        const { taskHash, taskId } = await list();
        expect((await post(bid(taskHash), low.key, {})).json.data.offer.agent).to.equal(low.address);
        const high = await post(bid(taskHash), workerKey, {});
        expect(high.json.data.score).to.be.greaterThan(0);
        expect(high.json.data.offer.agent).to.equal(worker.address.toLowerCase());
        // A later, lower bid does not take the window back.
        const late = await newAgent();
        expect((await post(bid(taskHash), late.key, {})).json.data.offer.agent).to.equal(worker.address.toLowerCase());

        expectError(await post(accept(taskHash), outsider.key), 409, "OFFER_HELD");
        expectError(await post(accept(taskHash), low.key), 409, "NOT_OFFER_HOLDER");
        const listed = await api.request("GET", applicants(taskHash), { key: posterKey });
        expect(listed.json.data.applicants.find((x: { offerHolder: boolean }) => x.offerHolder).agent).to.equal(
          worker.address.toLowerCase(),
        );

        // The window ends: anyone may accept.
        await api.deps
          .db("task_offers")
          .where({ task_id: taskId })
          .update({ expires_at: wall() - 1 });
        const res = await post(accept(taskHash), low.key);
        expect(res.status, res.text).to.equal(200);
      }),
    );

    it(
      "lets the window holder accept during its window, and a window of OFFER_WINDOW_SECONDS ends by itself",
      withApi(
        async ({ api, list, newAgent, post }) => {
          const holder = await newAgent();
          const other = await newAgent();
          const first = await list();
          await post(bid(first.taskHash), holder.key, {});
          expect((await post(accept(first.taskHash), holder.key)).status).to.equal(200);

          const second = await list();
          await post(bid(second.taskHash), holder.key, {});
          expectError(await post(accept(second.taskHash), other.key), 409, "OFFER_HELD");
          api.clock.advanceWall(3);
          expect((await post(accept(second.taskHash), other.key)).status).to.equal(200);
        },
        { OFFER_WINDOW_SECONDS: "2" },
      ),
    );

    it(
      "opens no window for a bidder that could not accept (another agent's targeted task)",
      withApi(async ({ list, newAgent, post }) => {
        const target = await newAgent();
        const other = await newAgent();
        const { taskHash } = await list({ targetExecutor: target.address });
        expect((await post(bid(taskHash), other.key, {})).json.data.offer).to.equal(null);
        expect((await post(accept(taskHash), target.key)).status).to.equal(200);
      }),
    );
  });

  describe("the poster's assign and cancel", () => {
    it(
      "builds assignWorker for the poster only, for an open task",
      withApi(async ({ escrow, poster, verifierAgent, list, newAgent, post, posterKey, send, book }) => {
        const agent = await newAgent();
        const { taskHash, taskId } = await list();
        expectError(await post(assign(taskHash), agent.key, { worker: agent.address }), 403, "NOT_POSTER");
        expectError(await post(assign(taskHash), posterKey, { worker: poster.address }), 400, "VALIDATION_ERROR");
        expectError(await post(assign(taskHash), posterKey, { worker: "0x12" }), 400, "VALIDATION_ERROR");
        expectError(
          await post(assign(String(taskId)), posterKey, { worker: agent.address }),
          400,
          "TASK_ID_DEPRECATED",
        );

        const built = await post(assign(taskHash), posterKey, { worker: agent.address });
        expect(built.status, built.text).to.equal(200);
        expect(built.json.data).to.include({ taskHash, onChainTaskId: taskId, chain: "base", chainId: book.chainId });
        expect(built.json.data.unsignedTx).to.include({
          to: book.escrow.proxy,
          from: poster.address.toLowerCase(),
          value: "0",
        });
        const call = escrow.interface.parseTransaction({ data: built.json.data.unsignedTx.data })!;
        expect(call.name).to.equal("assignWorker");
        expect(call.args.map(String)).to.deep.equal([String(taskId), ethers.getAddress(agent.address)]);
        await send(poster, built);
        expect((await escrow.getTask(taskId)).worker.toLowerCase()).to.equal(agent.address);
        expectError(await post(assign(taskHash), posterKey, { worker: agent.address }), 409, "NOT_OPEN");

        // The task's verifier agent can never be its worker.
        const judged = await list({ verificationMode: "agent" }, { verifier: verifierAgent.address });
        expectError(
          await post(assign(judged.taskHash), posterKey, { worker: verifierAgent.address }),
          400,
          "VALIDATION_ERROR",
        );
      }),
    );

    it(
      "builds cancelTask for the poster of a funded task; afterwards accepts answer TASK_CANCELLED and cancel INVALID_STATUS",
      withApi(async ({ escrow, poster, list, newAgent, post, posterKey, send, usdc }) => {
        const agent = await newAgent();
        const { taskHash, taskId } = await list({}, { amount: USDC(40) });
        expectError(await post(cancel(taskHash), agent.key), 403, "NOT_POSTER");
        const built = await post(cancel(taskHash), posterKey);
        expect(built.status, built.text).to.equal(200);
        const call = escrow.interface.parseTransaction({ data: built.json.data.unsignedTx.data })!;
        expect(call.name).to.equal("cancelTask");
        expect(call.args.map(String)).to.deep.equal([String(taskId)]);
        const before = await usdc.balanceOf(poster.address);
        await send(poster, built);
        expect((await usdc.balanceOf(poster.address)) - before).to.equal(USDC(40));
        expectError(await post(accept(taskHash), agent.key), 409, "TASK_CANCELLED");
        expectError(await post(cancel(taskHash), posterKey), 409, "INVALID_STATUS");
      }),
    );

    it(
      "refuses cancel and assign while the escrow is paused (ESCROW_PAUSED)",
      withApi(async ({ api, admin, escrow, list, newAgent, post, posterKey }) => {
        const agent = await newAgent();
        const { taskHash } = await list();
        await (await escrow.connect(admin).pause()).wait();
        await api.synced();
        expectError(await post(cancel(taskHash), posterKey), 409, "ESCROW_PAUSED");
        expectError(await post(assign(taskHash), posterKey, { worker: agent.address }), 409, "ESCROW_PAUSED");
      }),
    );
  });

  it(
    "describes the routes, their parameters and their codes in a valid OpenAPI document",
    withApi(async ({ api }) => {
      const res = await api.request("GET", "/api/v1/openapi.json");
      expect(res.status).to.equal(200);
      const paths = res.json.paths;
      expect(paths["/api/v1/a2a/tasks/{hash}/bid"]).to.have.property("post");
      expect(paths["/api/v1/a2a/tasks/{hash}/applicants"]).to.have.property("get");
      expect(paths["/api/v1/tasks/{hash}/assign"]).to.have.property("post");
      expect(paths["/api/v1/a2a/tasks/{hash}/cancel"]).to.have.property("post");
      const acceptDoc = JSON.stringify(paths["/api/v1/a2a/tasks/{hash}/accept"].post);
      for (const code of ["TASK_ID_DEPRECATED", "OFFER_HELD", "ACCEPT_LOCKED", "NEEDS_WRAP", "SETTLEMENT_FAILED"]) {
        expect(acceptDoc).to.contain(code);
      }
      await SwaggerParser.validate(structuredClone(res.json));
    }),
  );
});
