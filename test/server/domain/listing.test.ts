import { expect } from "chai";
import { ethers } from "hardhat";
import type { Signer } from "ethers";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import SwaggerParser from "@apidevtools/swagger-parser";
import { CATEGORY, DAY, HOUR, USDC, ZONE, deployEscrowFixture } from "../../helpers/fixtures";
import { startTestApi, type ApiResponse, type TestApi } from "../../helpers/api";
import { posterReputation } from "../../../server/domain/reputation";
import { readFundingReceipt } from "../../../server/chain/receipts";
import type { ChainGateway } from "../../../server/chain/gateway";

const INDEX = "/api/v1/a2a/tasks/index";
const INDEX_BATCH = "/api/v1/a2a/tasks/index-batch";
const OPEN = "/api/v1/a2a/tasks";
const POSTED = "/api/v1/a2a/tasks/posted";

/** Limits raised: these tests make many requests from one address. */
const ENV = {
  RATE_IP_PER_WINDOW: "100000",
  RATE_WALLET_FAMILY_PER_MINUTE: "100000",
  RATE_IP_POSTING_PER_MINUTE: "100000",
};

const briefHash = (text: string) => ethers.sha256(ethers.toUtf8Bytes(text));
const WRAPPED = `0x04${"ab".repeat(96)}`;
const CUSTODY = `0x04${"cd".repeat(96)}`;

interface FundOptions {
  amount?: bigint;
  duration?: number;
  verifier?: string;
}

async function setup(env: Record<string, string> = {}) {
  const fx = await loadFixture(deployEscrowFixture);
  const api = await startTestApi(fx.book, { ...ENV, ...env });
  const token = await fx.usdc.getAddress();
  const { escrow } = fx;

  const createdIds = (logs: readonly { topics: readonly string[]; data: string }[]) =>
    logs
      .map((l) => {
        try {
          return escrow.interface.parseLog({ topics: [...l.topics], data: l.data });
        } catch {
          return null;
        }
      })
      .filter((e) => e?.name === "TaskCreated")
      .map((e) => Number(e!.args.taskId));

  /** Funds one task with createTask (or createTaskWithVerifier); returns the transaction and task id. */
  async function fund(signer: Signer, taskHash: string, options: FundOptions = {}) {
    const amount = options.amount ?? USDC(25);
    const duration = options.duration ?? DAY;
    const tx = options.verifier
      ? await escrow
          .connect(signer)
          .createTaskWithVerifier(taskHash, token, amount, CATEGORY, ZONE, duration, options.verifier)
      : await escrow.connect(signer).createTask(taskHash, token, amount, CATEGORY, ZONE, duration);
    const receipt = (await tx.wait())!;
    return { txHash: tx.hash, taskId: createdIds(receipt.logs)[0] };
  }

  /** Funds several tasks in one createTasks transaction. */
  async function fundBatch(signer: Signer, tasks: { taskHash: string; verifier?: string; duration?: number }[]) {
    const tx = await escrow.connect(signer).createTasks(
      token,
      tasks.map((t) => ({
        taskHash: t.taskHash,
        amount: USDC(10),
        category: CATEGORY,
        locationZone: ZONE,
        duration: t.duration ?? DAY,
        verifierAgent: t.verifier ?? ethers.ZeroAddress,
      })),
    );
    const receipt = (await tx.wait())!;
    return { txHash: tx.hash, taskIds: createdIds(receipt.logs) };
  }

  /** Funds and lists a task with `terms`; returns its id. */
  async function fundAndIndex(
    signer: Signer,
    key: string,
    text: string,
    terms: Record<string, unknown> = {},
    options: FundOptions = {},
  ) {
    const taskHash = briefHash(text);
    const { txHash, taskId } = await fund(signer, taskHash, options);
    const res = await api.request("POST", INDEX, { key, body: { txHash, taskHash, ...terms } });
    expect(res.status, res.text).to.equal(200);
    return { taskId, taskHash, txHash };
  }

  return { ...fx, api, token, fund, fundBatch, fundAndIndex };
}

type Ctx = Awaited<ReturnType<typeof setup>>;

const withApi =
  (fn: (ctx: Ctx) => Promise<void>, env: Record<string, string> = {}) =>
  async () => {
    const ctx = await setup(env);
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

async function openIds(api: TestApi, query = ""): Promise<number[]> {
  const res = await api.request("GET", `${OPEN}${query}`);
  expect(res.status, res.text).to.equal(200);
  return res.json.data.tasks.map((t: { meta: { onChainTaskId: number } }) => t.meta.onChainTaskId);
}

describe("API listings: index, index-batch, open tasks, one task, posted tasks", () => {
  describe("POST /api/v1/a2a/tasks/index", () => {
    it(
      "lists a funded task and reads it back through every read route",
      withApi(async ({ api, poster, worker, fundAndIndex, token, book }) => {
        const key = await api.createKey(poster.address);
        const criteria = { min_length: 10, contains_keywords: ["done"] };
        const { taskId, taskHash, txHash } = await fundAndIndex(poster, key, "brief one", {
          verificationMode: "auto",
          verificationCriteria: criteria,
          requiredCapabilities: ["Translation", "python"],
          rootHash: "ab".repeat(32),
          wrappedKeys: { [worker.address]: WRAPPED },
          custodyWrappedKey: CUSTODY,
        });
        expect(taskId).to.equal(1);

        // The answer of the index call itself.
        const again = await api.request("POST", INDEX, {
          key,
          body: {
            txHash,
            taskHash,
            verificationMode: "auto",
            verificationCriteria: criteria,
            requiredCapabilities: ["python", "translation"],
            rootHash: `0x${"AB".repeat(32)}`,
            wrappedKeys: { [worker.address.toLowerCase()]: WRAPPED },
            custodyWrappedKey: CUSTODY,
          },
        });
        expect(again.status, again.text).to.equal(200);
        expect(again.json.data).to.deep.equal({ taskHash, onChainTaskId: 1, indexed: true });

        await api.synced();
        const open = await api.request("GET", OPEN);
        expect(open.status).to.equal(200);
        expect(open.json.data.total).to.equal(1);
        const [listed] = open.json.data.tasks;
        expect(listed.state).to.deep.equal({ status: "open", onChainStatus: 0 });
        expect(listed.meta).to.deep.include({
          taskHash,
          onChainTaskId: 1,
          chain: "base",
          chainId: book.chainId,
          token: token.toLowerCase(),
          amount: USDC(25).toString(),
          verificationMode: "auto",
          verifierAddress: null,
          privacy: "private",
          rootHash: `0x${"ab".repeat(32)}`,
          targetExecutor: null,
          serviceId: null,
        });
        expect(listed.meta.verificationCriteria).to.deep.equal(criteria);
        expect(listed.meta.requiredCapabilities).to.deep.equal(["python", "translation"]);
        expect(listed.meta).to.not.have.property("publicBrief");
        expect(listed.meta).to.not.have.property("posterAvatar");
        const onChainTask = await (await ethers.getContractAt("TaskEscrow", book.escrow.proxy)).getTask(1);
        expect(listed.meta.deadline).to.equal(Number(onChainTask.deadline));
        expect(listed.meta.effectiveDeadline).to.equal(Number(onChainTask.deadline));

        const byId = await api.request("GET", "/api/v1/tasks/1");
        expect(byId.status, byId.text).to.equal(200);
        expect(byId.json.data).to.deep.include({
          taskId: 1,
          poster: poster.address.toLowerCase(),
          worker: ethers.ZeroAddress,
          taskHash,
          status: 0,
          category: CATEGORY,
          locationZone: ZONE,
          submissionAttempts: 0,
          escalated: false,
          verifier: ethers.ZeroAddress,
          payout: null,
          fee: null,
        });
        expect(byId.json.data.a2aMeta).to.deep.equal(listed.meta);
        expect(byId.json.data.a2aState).to.deep.equal(listed.state);
        const byHash = await api.request("GET", `/api/v1/tasks/${taskHash.toUpperCase().replace("0X", "0x")}`);
        expect(byHash.status).to.equal(200);
        expect(byHash.json.data).to.deep.equal(byId.json.data);

        const posted = await api.request("GET", POSTED, { key });
        expect(posted.status).to.equal(200);
        expect(posted.json.data.total).to.equal(1);
        expect(posted.json.data.tasks[0].meta).to.deep.equal(listed.meta);
        expect(posted.json.data.tasks[0].onChain).to.deep.include({ taskId: 1, status: 0, taskHash });

        for (const res of [open, byId, byHash, posted, again]) {
          expect(res.text).to.not.include("ab".repeat(96)); // the wrapped key
          expect(res.text).to.not.include("cd".repeat(96)); // the custody key
          expect(res.text).to.not.match(/wrappedKeys|custody/i);
        }
      }),
    );

    it(
      "requires an API key",
      withApi(async ({ api, poster, fund }) => {
        const taskHash = briefHash("no key");
        const { txHash } = await fund(poster, taskHash);
        expectError(await api.request("POST", INDEX, { body: { txHash, taskHash } }), 401, "UNAUTHORIZED");
      }),
    );

    it(
      "answers RECEIPT_NOT_FOUND for a transaction hash with no receipt",
      withApi(async ({ api, poster }) => {
        const key = await api.createKey(poster.address);
        const res = await api.request("POST", INDEX, {
          key,
          body: { txHash: ethers.hexlify(ethers.randomBytes(32)), taskHash: briefHash("x") },
        });
        expectError(res, 404, "RECEIPT_NOT_FOUND");
      }),
    );

    it(
      "answers TX_REVERTED for a mined transaction that reverted",
      withApi(async ({ api, poster, escrow }) => {
        const key = await api.createKey(poster.address);
        const before = await ethers.provider.getBlockNumber();
        let txHash: string;
        try {
          // A manual gas limit skips estimation, so the reverting call is mined.
          const tx = await escrow.connect(poster).cancelTask(999, { gasLimit: 300_000 });
          txHash = tx.hash;
          await tx.wait().catch(() => undefined);
        } catch {
          txHash = (await ethers.provider.getBlock(before + 1))!.transactions[0];
        }
        const receipt = await ethers.provider.getTransactionReceipt(txHash);
        expect(receipt!.status).to.equal(0);
        expectError(
          await api.request("POST", INDEX, { key, body: { txHash, taskHash: briefHash("x") } }),
          409,
          "TX_REVERTED",
        );
      }),
    );

    it(
      "answers NO_TASK_CREATED for a transaction that funded nothing",
      withApi(async ({ api, poster, usdc, book }) => {
        const key = await api.createKey(poster.address);
        const tx = await usdc.connect(poster).approve(book.escrow.proxy, USDC(1));
        await tx.wait();
        expectError(
          await api.request("POST", INDEX, { key, body: { txHash: tx.hash, taskHash: briefHash("x") } }),
          409,
          "NO_TASK_CREATED",
        );
      }),
    );

    it(
      "answers MULTIPLE_TASK_CREATED for a batch funding transaction",
      withApi(async ({ api, poster, fundBatch }) => {
        const key = await api.createKey(poster.address);
        const [a, b] = [briefHash("batch a"), briefHash("batch b")];
        const { txHash } = await fundBatch(poster, [{ taskHash: a }, { taskHash: b }]);
        const res = await api.request("POST", INDEX, { key, body: { txHash, taskHash: a } });
        expectError(res, 409, "MULTIPLE_TASK_CREATED");
        expect(res.json.error.message).to.include("index-batch");
      }),
    );

    it(
      "answers HASH_MISMATCH when the body's taskHash is not the funded one",
      withApi(async ({ api, poster, fund }) => {
        const key = await api.createKey(poster.address);
        const { txHash } = await fund(poster, briefHash("real brief"));
        expectError(
          await api.request("POST", INDEX, { key, body: { txHash, taskHash: briefHash("other brief") } }),
          409,
          "HASH_MISMATCH",
        );
      }),
    );

    it(
      "answers NOT_TASK_AGENT when the key's wallet did not fund the task",
      withApi(async ({ api, poster, stranger, fund }) => {
        const key = await api.createKey(stranger.address);
        const taskHash = briefHash("poster's brief");
        const { txHash } = await fund(poster, taskHash);
        expectError(await api.request("POST", INDEX, { key, body: { txHash, taskHash } }), 403, "NOT_TASK_AGENT");
      }),
    );

    it(
      "answers TOKEN_NOT_SETTLEMENT for a task funded in another allowed token",
      withApi(async ({ api, admin, poster, escrow, book }) => {
        const key = await api.createKey(poster.address);
        const other = await (await ethers.getContractFactory("MockUSDC")).deploy();
        await escrow.connect(admin).allowToken(await other.getAddress());
        await other.mint(poster.address, USDC(100));
        await other.connect(poster).approve(book.escrow.proxy, USDC(100));
        const taskHash = briefHash("paid in another token");
        const tx = await escrow
          .connect(poster)
          .createTask(taskHash, await other.getAddress(), USDC(5), CATEGORY, ZONE, DAY);
        await tx.wait();
        expectError(
          await api.request("POST", INDEX, { key, body: { txHash: tx.hash, taskHash } }),
          409,
          "TOKEN_NOT_SETTLEMENT",
        );
      }),
    );

    it(
      "applies the privacy rules and SERVICE_NO_TARGET",
      withApi(async ({ api, poster, worker, fund }) => {
        const key = await api.createKey(poster.address);
        const taskHash = briefHash("privacy rules");
        const { txHash } = await fund(poster, taskHash);
        const post = (terms: Record<string, unknown>) =>
          api.request("POST", INDEX, { key, body: { txHash, taskHash, ...terms } });

        expectError(
          await post({ privacy: "public", wrappedKeys: { [worker.address]: WRAPPED } }),
          400,
          "PUBLIC_TASK_HAS_KEYS",
        );
        expectError(await post({ privacy: "public", custodyWrappedKey: CUSTODY }), 400, "PUBLIC_TASK_HAS_CUSTODY");
        expectError(await post({ publicBrief: "Translate this." }), 400, "BRIEF_ON_PRIVATE_TASK");
        expectError(await post({ privacy: "private", publicBrief: "Translate this." }), 400, "BRIEF_ON_PRIVATE_TASK");
        expectError(await post({ serviceId: 3 }), 400, "SERVICE_NO_TARGET");
        expectError(await post({ privacy: "public", publicBrief: "x".repeat(4001) }), 400, "VALIDATION_ERROR");
        expectError(await post({ privacy: "secret" }), 400, "VALIDATION_ERROR");
        expectError(await post({ verificationMode: "oracle" }), 400, "VERIFICATION_MODE_UNSUPPORTED");
        expectError(await post({ verificationMode: "auto" }), 400, "AUTO_CRITERIA_REQUIRED");
        expectError(await post({ requiredCapabilities: ["a,b"] }), 400, "VALIDATION_ERROR");
        expectError(await post({ privacy: "public", publicBrief: "nul \u0000 inside" }), 400, "VALIDATION_ERROR");
        expectError(await post({ serviceId: 2 ** 40, targetExecutor: worker.address }), 400, "VALIDATION_ERROR");

        // A rental of a service that does not exist (services: test/server/domain/services.test.ts).
        expectError(await post({ serviceId: 3, targetExecutor: worker.address }), 409, "SERVICE_NOT_ACTIVE");

        // Nothing was listed by the refused calls; a valid public listing with a 4000-character brief passes.
        const ok = await post({
          privacy: "public",
          publicBrief: "é".repeat(4000),
          targetExecutor: worker.address,
        });
        expect(ok.status, ok.text).to.equal(200);
      }),
    );

    it(
      "checks the verification terms against the escrow's verifier",
      withApi(async ({ api, poster, verifierAgent, stranger, worker, fund }) => {
        const key = await api.createKey(poster.address);
        const withVerifier = briefHash("judged by an agent");
        const { txHash: vtx } = await fund(poster, withVerifier, { verifier: verifierAgent.address });
        const plain = briefHash("judged by the marketplace");
        const { txHash: ptx } = await fund(poster, plain);
        const post = (txHash: string, taskHash: string, terms: Record<string, unknown>) =>
          api.request("POST", INDEX, { key, body: { txHash, taskHash, ...terms } });

        expectError(await post(vtx, withVerifier, {}), 409, "VERIFIER_MODE_MISMATCH");
        expectError(await post(vtx, withVerifier, { verificationMode: "manual" }), 409, "VERIFIER_MODE_MISMATCH");
        expectError(
          await post(vtx, withVerifier, { verificationMode: "agent", verifierAddress: stranger.address }),
          409,
          "VERIFIER_MISMATCH",
        );
        expectError(
          await post(ptx, plain, { verificationMode: "agent", verifierAddress: verifierAgent.address }),
          409,
          "VERIFIER_MISMATCH",
        );
        expectError(await post(ptx, plain, { verificationMode: "agent" }), 409, "NO_VERIFIER");
        expectError(
          await post(vtx, withVerifier, { verificationMode: "agent", wrappedKeys: { [worker.address]: WRAPPED } }),
          400,
          "VERIFIER_NOT_WRAPPED",
        );

        // Mode agent with the on-chain verifier, named or not.
        const ok = await post(vtx, withVerifier, {
          verificationMode: "agent",
          verifierAddress: verifierAgent.address,
          wrappedKeys: { [worker.address]: WRAPPED, [verifierAgent.address]: WRAPPED },
        });
        expect(ok.status, ok.text).to.equal(200);
        await api.synced();
        const read = await api.request("GET", `/api/v1/tasks/${withVerifier}`);
        expect(read.json.data.verifier).to.equal(verifierAgent.address.toLowerCase());
        expect(read.json.data.a2aMeta).to.deep.include({
          verificationMode: "agent",
          verifierAddress: verifierAgent.address.toLowerCase(),
        });
      }),
    );

    it(
      "is idempotent for the same terms and keeps the first-indexed terms and privacy",
      withApi(async ({ api, poster, fund }) => {
        const key = await api.createKey(poster.address);
        const taskHash = briefHash("immutable terms");
        const { txHash } = await fund(poster, taskHash);
        const post = (terms: Record<string, unknown>) =>
          api.request("POST", INDEX, { key, body: { txHash, taskHash, ...terms } });
        const first = { requiredCapabilities: ["rust"], rootHash: "cd".repeat(32) };
        expect((await post(first)).status).to.equal(200);
        expect((await post({ ...first, privacy: "private", verificationMode: "manual" })).status).to.equal(200);

        const privacy = await post({ ...first, privacy: "public" });
        expectError(privacy, 409, "PRIVACY_IMMUTABLE");
        const caps = await post({ ...first, requiredCapabilities: ["rust", "go"] });
        expectError(caps, 409, "TERMS_IMMUTABLE");
        expect(caps.json.error.details.fields).to.deep.equal(["requiredCapabilities"]);
        expectError(await post({ requiredCapabilities: ["rust"] }), 409, "TERMS_IMMUTABLE");
        expectError(
          await post({ ...first, verificationMode: "auto", verificationCriteria: { min_length: 5 } }),
          409,
          "TERMS_IMMUTABLE",
        );

        // Still one listing with the first terms.
        const posted = await api.request("GET", POSTED, { key });
        expect(posted.json.data.total).to.equal(1);
        expect(posted.json.data.tasks[0].meta).to.deep.include({
          rootHash: `0x${"cd".repeat(32)}`,
          privacy: "private",
        });
        expect(posted.json.data.tasks[0].meta.requiredCapabilities).to.deep.equal(["rust"]);
      }),
    );

    it(
      "answers HASH_NOT_THIS_TASK when the hash is listed for another on-chain task",
      withApi(async ({ api, poster, fund }) => {
        const key = await api.createKey(poster.address);
        const taskHash = briefHash("funded twice");
        const first = await fund(poster, taskHash);
        const second = await fund(poster, taskHash);
        expect((await api.request("POST", INDEX, { key, body: { txHash: first.txHash, taskHash } })).status).to.equal(
          200,
        );
        const res = await api.request("POST", INDEX, { key, body: { txHash: second.txHash, taskHash } });
        expectError(res, 409, "HASH_NOT_THIS_TASK");
        expect(res.json.error.message).to.include(`task ${first.taskId}`);

        // By hash, the single read answers the listed task; an unlisted reused hash answers the newest task.
        const reused = briefHash("reused, never listed");
        await fund(poster, reused);
        const newest = await fund(poster, reused);
        await api.synced();
        expect((await api.request("GET", `/api/v1/tasks/${taskHash}`)).json.data.taskId).to.equal(first.taskId);
        expect((await api.request("GET", `/api/v1/tasks/${reused}`)).json.data.taskId).to.equal(newest.taskId);
      }),
    );

    it(
      "lists before the indexer has caught up, and the reads follow once it has",
      withApi(async ({ api, poster, fund }) => {
        const key = await api.createKey(poster.address);
        await api.synced();
        await api.indexer.stop();
        const taskHash = briefHash("indexer lags");
        const { txHash, taskId } = await fund(poster, taskHash);
        const res = await api.request("POST", INDEX, { key, body: { txHash, taskHash } });
        expect(res.status, res.text).to.equal(200);

        const posted = await api.request("GET", POSTED, { key });
        expect(posted.json.data.total).to.equal(1);
        const [entry] = posted.json.data.tasks;
        expect(entry.onChain).to.equal(null);
        expect(entry.state).to.deep.equal({ status: "open", onChainStatus: 0 });
        expect(entry.meta).to.deep.include({
          onChainTaskId: taskId,
          amount: USDC(25).toString(),
          effectiveDeadline: null,
        });
        // Not indexed yet: the single read answers 404 and the open list (from the projection) does not show it.
        expectError(await api.request("GET", `/api/v1/tasks/${taskId}`), 404, "NOT_FOUND");
        expect(await openIds(api)).to.deep.equal([]);
      }),
    );

    it(
      "answers CHAIN_NOT_CONFIGURED and ON_CHAIN_CHECK_FAILED when the chain cannot be read",
      withApi(async ({ api, poster, fund }) => {
        const key = await api.createKey(poster.address);
        const taskHash = briefHash("chain trouble");
        const { txHash } = await fund(poster, taskHash);
        const chain = api.deps.chain!;
        try {
          api.deps.chain = {
            ...chain,
            receipt: () => Promise.reject(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })),
          } as ChainGateway;
          expectError(
            await api.request("POST", INDEX, { key, body: { txHash, taskHash } }),
            503,
            "ON_CHAIN_CHECK_FAILED",
          );
          api.deps.chain = undefined;
          expectError(
            await api.request("POST", INDEX, { key, body: { txHash, taskHash } }),
            503,
            "CHAIN_NOT_CONFIGURED",
          );
        } finally {
          api.deps.chain = chain;
        }
        expect((await api.request("POST", INDEX, { key, body: { txHash, taskHash } })).status).to.equal(200);
      }),
    );

    it(
      "takes one listings token per item from the wallet's bucket",
      withApi(
        async ({ api, poster, fundBatch }) => {
          const key = await api.createKey(poster.address);
          const hashes = [1, 2, 3, 4].map((i) => briefHash(`bucket ${i}`));
          const { txHash } = await fundBatch(
            poster,
            hashes.map((taskHash) => ({ taskHash })),
          );
          const tasks = hashes.map((taskHash) => ({ taskHash }));
          const tooMany = await api.request("POST", INDEX_BATCH, { key, body: { txHash, tasks } });
          expectError(tooMany, 429, "RATE_LIMIT");
          expect(tooMany.json.error.message).to.include("task listings");
          const three = await api.request("POST", INDEX_BATCH, { key, body: { txHash, tasks: tasks.slice(0, 3) } });
          expect(three.status, three.text).to.equal(200);
          expectError(
            await api.request("POST", INDEX, { key, body: { txHash, taskHash: hashes[3] } }),
            429,
            "RATE_LIMIT",
          );
        },
        { RATE_WALLET_FAMILY_PER_MINUTE: "3" },
      ),
    );

    it(
      "does not describe another task with a listing after a reorg gave its id to a different task",
      withApi(async ({ api, poster, fundAndIndex }) => {
        const key = await api.createKey(poster.address);
        const { taskId } = await fundAndIndex(poster, key, "before the reorg");
        await api.synced();
        await api.indexer.stop();
        // Stand-in for a reorg: the projection now holds another task under the same id.
        await api.deps
          .db("tasks")
          .where({ task_id: taskId })
          .update({ task_hash: briefHash("after the reorg") });
        const read = await api.request("GET", `/api/v1/tasks/${taskId}`);
        expect(read.status).to.equal(200);
        expect(read.json.data.a2aMeta).to.equal(null);
        expect(read.json.data).to.not.have.property("resultData");
        expect((await api.request("GET", OPEN)).json.data.tasks).to.deep.equal([]);
        const posted = await api.request("GET", POSTED, { key });
        expect(posted.json.data.tasks[0].onChain).to.equal(null);
      }),
    );
  });

  describe("readFundingReceipt", () => {
    it(
      "counts only the events of the given escrow",
      withApi(async ({ poster, fund, fundBatch, book, verifierAgent }) => {
        const { txHash } = await fundBatch(poster, [
          { taskHash: briefHash("r1"), verifier: verifierAgent.address },
          { taskHash: briefHash("r2") },
        ]);
        const receipt = (await ethers.provider.getTransactionReceipt(txHash))!;
        const funding = readFundingReceipt(receipt, book.escrow.proxy.toUpperCase().replace("0X", "0x"));
        expect(funding.succeeded).to.equal(true);
        expect(funding.created.map((t) => [t.taskHash, t.verifier])).to.deep.equal([
          [briefHash("r1"), verifierAgent.address.toLowerCase()],
          [briefHash("r2"), ethers.ZeroAddress],
        ]);
        expect(funding.created.every((t) => t.poster === poster.address.toLowerCase())).to.equal(true);
        expect(readFundingReceipt(receipt, book.token.address).created).to.deep.equal([]);
        const single = await fund(poster, briefHash("r3"));
        const other = (await ethers.provider.getTransactionReceipt(single.txHash))!;
        expect(readFundingReceipt(other, ethers.Wallet.createRandom().address).created).to.deep.equal([]);
      }),
    );
  });

  describe("POST /api/v1/a2a/tasks/index-batch", () => {
    it(
      "lists the named tasks of one transaction, in input order, and leaves the others alone",
      withApi(async ({ api, poster, fundBatch }) => {
        const key = await api.createKey(poster.address);
        const [a, b, c] = [briefHash("a"), briefHash("b"), briefHash("c")];
        const { txHash, taskIds } = await fundBatch(poster, [{ taskHash: a }, { taskHash: b }, { taskHash: c }]);
        const missing = briefHash("never funded");
        const res = await api.request("POST", INDEX_BATCH, {
          key,
          body: {
            txHash,
            tasks: [
              { taskHash: c, requiredCapabilities: ["go"] },
              { taskHash: missing },
              { taskHash: a, publicBrief: "not on a private task" },
            ],
          },
        });
        expect(res.status, res.text).to.equal(200);
        expect(res.json.data.results).to.have.length(3);
        expect(res.json.data.results[0]).to.deep.equal({ taskHash: c, onChainTaskId: taskIds[2], indexed: true });
        expect(res.json.data.results[1].taskHash).to.equal(missing);
        expect(res.json.data.results[1].error.code).to.equal("NOT_IN_RECEIPT");
        expect(res.json.data.results[2].error.code).to.equal("BRIEF_ON_PRIVATE_TASK");

        // The refused item can be sent again, fixed; re-listing c is idempotent.
        const again = await api.request("POST", INDEX_BATCH, {
          key,
          body: {
            txHash,
            tasks: [
              { taskHash: a, privacy: "public", publicBrief: "Summarise." },
              { taskHash: c, requiredCapabilities: ["go"] },
            ],
          },
        });
        expect(again.json.data.results).to.deep.equal([
          { taskHash: a, onChainTaskId: taskIds[0], indexed: true },
          { taskHash: c, onChainTaskId: taskIds[2], indexed: true },
        ]);

        await api.synced();
        const unlisted = await api.request("GET", `/api/v1/tasks/${taskIds[1]}`);
        expect(unlisted.status).to.equal(200);
        expect(unlisted.json.data.a2aMeta).to.equal(null);
        expect(unlisted.json.data.a2aState).to.equal(null);
        expect((await openIds(api)).sort()).to.deep.equal([taskIds[0], taskIds[2]].sort());
        const publicOne = await api.request("GET", `/api/v1/tasks/${a}`);
        expect(publicOne.json.data.a2aMeta).to.deep.include({ privacy: "public", publicBrief: "Summarise." });
      }),
    );

    it(
      "checks each item like single indexing",
      withApi(async ({ api, poster, stranger, verifierAgent, fundBatch }) => {
        const key = await api.createKey(poster.address);
        const [a, b] = [briefHash("item a"), briefHash("item b")];
        const { txHash } = await fundBatch(poster, [{ taskHash: a, verifier: verifierAgent.address }, { taskHash: b }]);
        const res = await api.request("POST", INDEX_BATCH, {
          key,
          body: { txHash, tasks: [{ taskHash: a }, { taskHash: b, verificationMode: "agent" }] },
        });
        expect(res.json.data.results.map((r: { error: { code: string } }) => r.error.code)).to.deep.equal([
          "VERIFIER_MODE_MISMATCH",
          "NO_VERIFIER",
        ]);
        const byStranger = await api.request("POST", INDEX_BATCH, {
          key: await api.createKey(stranger.address),
          body: { txHash, tasks: [{ taskHash: b }] },
        });
        expect(byStranger.status).to.equal(200);
        expect(byStranger.json.data.results[0].error.code).to.equal("NOT_TASK_AGENT");
        const ok = await api.request("POST", INDEX_BATCH, {
          key,
          body: { txHash, tasks: [{ taskHash: a, verificationMode: "agent" }, { taskHash: b }] },
        });
        expect(ok.json.data.results.every((r: { indexed?: boolean }) => r.indexed === true)).to.equal(true);
      }),
    );

    it(
      "answers the whole-request failures of the receipt",
      withApi(async ({ api, poster, usdc, book, escrow }) => {
        const key = await api.createKey(poster.address);
        const tasks = [{ taskHash: briefHash("x") }];
        expectError(
          await api.request("POST", INDEX_BATCH, {
            key,
            body: { txHash: ethers.hexlify(ethers.randomBytes(32)), tasks },
          }),
          404,
          "RECEIPT_NOT_FOUND",
        );
        const approve = await usdc.connect(poster).approve(book.escrow.proxy, USDC(1));
        await approve.wait();
        expectError(
          await api.request("POST", INDEX_BATCH, { key, body: { txHash: approve.hash, tasks } }),
          409,
          "NO_TASK_CREATED",
        );
        const before = await ethers.provider.getBlockNumber();
        let reverted: string;
        try {
          const tx = await escrow.connect(poster).cancelTask(77, { gasLimit: 300_000 });
          reverted = tx.hash;
          await tx.wait().catch(() => undefined);
        } catch {
          reverted = (await ethers.provider.getBlock(before + 1))!.transactions[0];
        }
        expectError(
          await api.request("POST", INDEX_BATCH, { key, body: { txHash: reverted, tasks } }),
          409,
          "TX_REVERTED",
        );
      }),
    );

    it(
      "validates the batch: 1..50 tasks, one per taskHash",
      withApi(async ({ api, poster }) => {
        const key = await api.createKey(poster.address);
        const txHash = ethers.hexlify(ethers.randomBytes(32));
        expectError(
          await api.request("POST", INDEX_BATCH, { key, body: { txHash, tasks: [] } }),
          400,
          "VALIDATION_ERROR",
        );
        const many = Array.from({ length: 51 }, (_, i) => ({ taskHash: briefHash(`t${i}`) }));
        expectError(
          await api.request("POST", INDEX_BATCH, { key, body: { txHash, tasks: many } }),
          400,
          "BATCH_TOO_LARGE",
        );
        const dup = await api.request("POST", INDEX_BATCH, {
          key,
          body: { txHash, tasks: [{ taskHash: briefHash("d") }, { taskHash: briefHash("d") }] },
        });
        expectError(dup, 400, "VALIDATION_ERROR");
        expect(dup.json.error.message).to.include("tasks[1].taskHash");
      }),
    );

    it(
      "finds the transaction of a user operation by the listed task hashes",
      withApi(async ({ api, poster, fundBatch, fund }) => {
        const key = await api.createKey(poster.address);
        const [a, b] = [briefHash("op a"), briefHash("op b")];
        const { taskIds } = await fundBatch(poster, [{ taskHash: a }, { taskHash: b }]);
        const elsewhere = briefHash("op elsewhere");
        await fund(poster, elsewhere);
        const userOpHash = ethers.hexlify(ethers.randomBytes(32));

        // Before the indexer has them, and for hashes not funded together: RECEIPT_NOT_FOUND.
        await api.synced();
        expectError(
          await api.request("POST", INDEX_BATCH, {
            key,
            body: { txHash: userOpHash, isUserOp: true, tasks: [{ taskHash: a }, { taskHash: elsewhere }] },
          }),
          404,
          "RECEIPT_NOT_FOUND",
        );
        expectError(
          await api.request("POST", INDEX_BATCH, {
            key,
            body: { txHash: userOpHash, isUserOp: true, tasks: [{ taskHash: briefHash("never") }] },
          }),
          404,
          "RECEIPT_NOT_FOUND",
        );

        const res = await api.request("POST", INDEX_BATCH, {
          key,
          body: { txHash: userOpHash, isUserOp: true, tasks: [{ taskHash: b }, { taskHash: a }] },
        });
        expect(res.status, res.text).to.equal(200);
        expect(res.json.data.results).to.deep.equal([
          { taskHash: b, onChainTaskId: taskIds[1], indexed: true },
          { taskHash: a, onChainTaskId: taskIds[0], indexed: true },
        ]);
      }),
    );
  });

  describe("GET /api/v1/a2a/tasks", () => {
    it(
      "shows only listed open tasks, filtered by capabilities",
      withApi(async ({ api, poster, fund, fundAndIndex }) => {
        const key = await api.createKey(poster.address);
        const none = (await fundAndIndex(poster, key, "no caps")).taskId;
        const py = (await fundAndIndex(poster, key, "python", { requiredCapabilities: ["python"] })).taskId;
        const both = (await fundAndIndex(poster, key, "both", { requiredCapabilities: ["python", "rust"] })).taskId;
        await fund(poster, briefHash("funded, never listed"));
        await api.synced();

        expect(await openIds(api)).to.deep.equal([both, py, none]);
        expect(await openIds(api, "?capabilities=python")).to.deep.equal([py, none]);
        expect(await openIds(api, "?capabilities=Rust,%20python")).to.deep.equal([both, py, none]);
        expect(await openIds(api, "?capabilities=rust")).to.deep.equal([none]);
        expect(await openIds(api, "?capabilities=")).to.deep.equal([none]);
        const filtered = await api.request("GET", `${OPEN}?capabilities=python`);
        expect(filtered.json.data.total).to.equal(2);
      }),
    );

    it(
      "pages with limit and offset, newest first",
      withApi(async ({ api, poster, fundAndIndex }) => {
        const key = await api.createKey(poster.address);
        const ids = [];
        for (let i = 0; i < 5; i++) ids.push((await fundAndIndex(poster, key, `page ${i}`)).taskId);
        await api.synced();
        const newest = [...ids].reverse();
        expect(await openIds(api, "?limit=2")).to.deep.equal(newest.slice(0, 2));
        expect(await openIds(api, "?limit=2&offset=2")).to.deep.equal(newest.slice(2, 4));
        expect(await openIds(api, "?limit=2&offset=4")).to.deep.equal(newest.slice(4));
        expect(await openIds(api, "?offset=5")).to.deep.equal([]);
        expect(await openIds(api, `?offset=${Number.MAX_SAFE_INTEGER}`)).to.deep.equal([]);
        expectError(await api.request("GET", `${OPEN}?offset=1e20`), 400, "VALIDATION_ERROR");
        const page = await api.request("GET", `${OPEN}?limit=2&offset=4`);
        expect(page.json.data.total).to.equal(5);
        expect(await openIds(api, "?limit=200")).to.have.length(5);
        expectError(await api.request("GET", `${OPEN}?limit=201`), 400, "VALIDATION_ERROR");
        expectError(await api.request("GET", `${OPEN}?limit=0`), 400, "VALIDATION_ERROR");
        expectError(await api.request("GET", `${OPEN}?offset=-1`), 400, "VALIDATION_ERROR");
        expectError(await api.request("GET", `${OPEN}?minReputation=1.5`), 400, "VALIDATION_ERROR");
      }),
    );

    it(
      "drops cancelled, assigned and expired tasks, which keep their state in the posted list",
      withApi(async ({ api, poster, worker, verifier, escrow, fundAndIndex }) => {
        const key = await api.createKey(poster.address);
        const short = (await fundAndIndex(poster, key, "short", {}, { duration: HOUR })).taskId;
        const cancelled = (await fundAndIndex(poster, key, "cancelled")).taskId;
        const assigned = (await fundAndIndex(poster, key, "assigned")).taskId;
        const open = (await fundAndIndex(poster, key, "stays open")).taskId;
        await api.synced();
        expect(await openIds(api)).to.deep.equal([open, assigned, cancelled, short]);

        await escrow.connect(poster).cancelTask(cancelled);
        await escrow.connect(verifier).marketplaceAssign(assigned, worker.address);
        await time.increase(HOUR + 1);
        await api.synced();
        expect(await openIds(api)).to.deep.equal([open]);

        const posted = await api.request("GET", POSTED, { key });
        const states = Object.fromEntries(
          posted.json.data.tasks.map((t: { meta: { onChainTaskId: number }; state: unknown }) => [
            t.meta.onChainTaskId,
            t.state,
          ]),
        );
        expect(states[short]).to.deep.equal({ status: "expired", onChainStatus: 0 });
        expect(states[cancelled]).to.deep.equal({ status: "cancelled", onChainStatus: 5 });
        expect(states[assigned]).to.deep.equal({ status: "assigned", onChainStatus: 1 });
        expect(states[open]).to.deep.equal({ status: "open", onChainStatus: 0 });

        // Past its deadline an assigned task can no longer be delivered: expired, though still Assigned on-chain.
        await time.increase(DAY);
        const later = await api.request("GET", `/api/v1/tasks/${assigned}`);
        expect(later.json.data.a2aState).to.deep.equal({ status: "expired", onChainStatus: 1 });
        expect(await openIds(api)).to.deep.equal([]);
      }),
    );

    it(
      "filters by minReputation: a poster's completed tasks, for now",
      withApi(async ({ api, poster, stranger, worker, verifier, escrow, fundAndIndex }) => {
        const { deps } = api;
        const posterKey = await api.createKey(poster.address);
        const strangerKey = await api.createKey(stranger.address);
        const done = (await fundAndIndex(poster, posterKey, "completed one")).taskId;
        await escrow.connect(verifier).marketplaceAssign(done, worker.address);
        await escrow.connect(worker).submitEvidence(done, ethers.keccak256(ethers.toUtf8Bytes("result")));
        await escrow.connect(verifier).completeVerification(done, true);
        const posterOpen = (await fundAndIndex(poster, posterKey, "poster open")).taskId;
        const strangerOpen = (await fundAndIndex(stranger, strangerKey, "stranger open")).taskId;
        await api.synced();

        expect(await posterReputation(deps.db, poster.address, await deps.clock.chainNow())).to.equal(1);
        expect(await posterReputation(deps.db, stranger.address, await deps.clock.chainNow())).to.equal(0);
        expect(await openIds(api, "?minReputation=0")).to.deep.equal([strangerOpen, posterOpen]);
        expect(await openIds(api, "?minReputation=1")).to.deep.equal([posterOpen]);
        expect(await openIds(api, "?minReputation=2")).to.deep.equal([]);
        const res = await api.request("GET", `${OPEN}?minReputation=1`);
        expect(res.json.data.total).to.equal(1);
      }),
    );
  });

  describe("GET /api/v1/tasks/:id", () => {
    it(
      "answers INVALID_TASK_ID for anything but a positive integer or a 0x task hash",
      withApi(async ({ api }) => {
        for (const id of [
          "abc",
          "0",
          "-1",
          "1.5",
          "01",
          "0x1234",
          `0x${"0".repeat(64)}`,
          `${"9".repeat(20)}`,
          `0x${"g".repeat(64)}`,
        ]) {
          expectError(await api.request("GET", `/api/v1/tasks/${id}`), 400, "INVALID_TASK_ID");
        }
      }),
    );

    it(
      "answers NOT_FOUND for a task that is not indexed",
      withApi(async ({ api }) => {
        expectError(await api.request("GET", "/api/v1/tasks/999"), 404, "NOT_FOUND");
        expectError(await api.request("GET", `/api/v1/tasks/${briefHash("nothing")}`), 404, "NOT_FOUND");
      }),
    );

    it(
      "shows resultData only to the poster, the worker and the verifier agent of a private task, and to anyone on a public one",
      withApi(async ({ api, poster, worker, stranger, verifier, verifierAgent, escrow, fundAndIndex }) => {
        const posterKey = await api.createKey(poster.address);
        const priv = (await fundAndIndex(poster, posterKey, "private result")).taskId;
        const judged = (
          await fundAndIndex(
            poster,
            posterKey,
            "private result, judged by an agent",
            {
              verificationMode: "agent",
              verifierAddress: verifierAgent.address,
              wrappedKeys: { [worker.address]: WRAPPED, [verifierAgent.address]: WRAPPED },
            },
            { verifier: verifierAgent.address },
          )
        ).taskId;
        const pub = (
          await fundAndIndex(poster, posterKey, "public result", { privacy: "public", publicBrief: "Public." })
        ).taskId;
        await escrow.connect(verifier).marketplaceAssign(priv, worker.address);
        await api.synced();
        const read = (id: number, key?: string) => api.request("GET", `/api/v1/tasks/${id}`, { key });

        expect((await read(priv)).json.data).to.not.have.property("resultData");
        expect((await read(priv, await api.createKey(stranger.address))).json.data).to.not.have.property("resultData");
        const asPoster = await read(priv, posterKey);
        expect(asPoster.json.data).to.have.property("resultData", null);
        const asWorker = await read(priv, await api.createKey(worker.address));
        expect(asWorker.json.data).to.have.property("resultData", null);
        expect(asWorker.json.data.a2aState).to.deep.equal({ status: "assigned", onChainStatus: 1 });
        expect((await read(pub)).json.data).to.have.property("resultData", null);
        expectError(await read(priv, `sk_${"0".repeat(64)}`), 401, "UNAUTHORIZED");
        // The verifier agent of a private task sees what it judges; not the result of a task it does not judge.
        const agentKey = await api.createKey(verifierAgent.address);
        expect((await read(judged, agentKey)).json.data).to.have.property("resultData", null);
        expect((await read(priv, agentKey)).json.data).to.not.have.property("resultData");
        expect((await read(judged)).json.data).to.not.have.property("resultData");
      }),
    );

    it(
      "reports the effective deadline the escrow computes after a pause, as soon as the indexer has the pause",
      withApi(async ({ api, poster, admin, escrow, fundAndIndex }) => {
        const key = await api.createKey(poster.address);
        const { taskId, taskHash } = await fundAndIndex(poster, key, "paused");
        await api.synced();
        const before = (await api.request("GET", `/api/v1/tasks/${taskId}`)).json.data;
        expect(before.effectiveDeadline).to.equal(before.deadline);
        await escrow.connect(admin).pause();
        await time.increase(600);
        await escrow.connect(admin).unpause();
        await api.synced();
        // Within a second of the first read: reads keep pause periods per indexer checkpoint, not for a fixed time.
        const res = await api.request("GET", `/api/v1/tasks/${taskId}`);
        const onChain = Number(await escrow.effectiveDeadline(taskId));
        expect(onChain).to.be.greaterThan(res.json.data.deadline);
        expect(res.json.data.effectiveDeadline).to.equal(onChain);
        expect(res.json.data.a2aMeta.effectiveDeadline).to.equal(onChain);
        expect((await api.request("GET", `/api/v1/tasks/${taskHash}`)).json.data.effectiveDeadline).to.equal(onChain);
      }),
    );
  });

  describe("GET /api/v1/a2a/tasks/posted", () => {
    it(
      "lists the caller's listed tasks only, newest first, with limit and offset",
      withApi(async ({ api, poster, stranger, fund, fundAndIndex }) => {
        const key = await api.createKey(poster.address);
        const strangerKey = await api.createKey(stranger.address);
        const ids = [];
        for (let i = 0; i < 3; i++) ids.push((await fundAndIndex(poster, key, `mine ${i}`)).taskId);
        await fundAndIndex(stranger, strangerKey, "theirs");
        await fund(poster, briefHash("mine, never listed"));
        await api.synced();

        const all = await api.request("GET", POSTED, { key });
        expect(all.json.data.total).to.equal(3);
        expect(all.json.data.tasks.map((t: { meta: { onChainTaskId: number } }) => t.meta.onChainTaskId)).to.deep.equal(
          [...ids].reverse(),
        );
        const page = await api.request("GET", `${POSTED}?limit=1&offset=1`, { key });
        expect(page.json.data.total).to.equal(3);
        expect(
          page.json.data.tasks.map((t: { meta: { onChainTaskId: number } }) => t.meta.onChainTaskId),
        ).to.deep.equal([ids[1]]);
        expect(page.json.data.tasks[0].onChain).to.deep.include({
          taskId: ids[1],
          poster: poster.address.toLowerCase(),
        });
        expectError(await api.request("GET", POSTED), 401, "UNAUTHORIZED");
        expectError(await api.request("GET", `${POSTED}?limit=201`, { key }), 400, "VALIDATION_ERROR");
      }),
    );
  });

  it(
    "describes the listing routes in a valid OpenAPI document",
    withApi(async ({ api }) => {
      const res = await api.request("GET", "/api/v1/openapi.json");
      expect(res.status).to.equal(200);
      for (const path of [
        "/api/v1/a2a/tasks/index",
        "/api/v1/a2a/tasks/index-batch",
        "/api/v1/a2a/tasks",
        "/api/v1/a2a/tasks/posted",
        "/api/v1/tasks/{id}",
      ]) {
        expect(res.json.paths).to.have.property(path);
      }
      await SwaggerParser.validate(structuredClone(res.json));
    }),
  );
});
