/**
 * Posting on a named chain over real HTTP: an API settling on base (the posting chain) and arc builds a task, a batch
 * and their approvals for the chain the body names, with that chain's escrow, token and chain id; the funding receipt
 * is read on the chain named and the listing belongs to it. Unknown chains are INVALID_CHAIN, chains this service
 * does not serve CHAIN_NOT_CONFIGURED, a token of the other chain TOKEN_NOT_SETTLEMENT, and a task hash is unique
 * across both chains (TASK_HASH_IN_USE). MCP's build_task and index_task are the same operations.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { DAY, deployEscrowFixture } from "../../helpers/fixtures";
import { ARC_CHAIN_ID, arcFixture, type ArcFixture } from "../../helpers/arc";
import { startTestApi, type ApiResponse, type TestApi } from "../../helpers/api";
import { findListingByHash } from "../../../server/db/repositories/listings";
import { agentPublicKey } from "../../../server/domain/briefs";

type BaseFixture = Awaited<ReturnType<typeof deployEscrowFixture>>;

const BUILD = "/api/v1/tasks";
const BATCH = "/api/v1/tasks/batch";
const INDEX = "/api/v1/a2a/tasks/index";
const INDEX_BATCH = "/api/v1/a2a/tasks/index-batch";

let counter = 0;
const newHash = (label: string) => ethers.sha256(ethers.toUtf8Bytes(`${label} ${++counter} ${Math.random()}`));

const terms = (taskHash: string, overrides: Record<string, unknown> = {}) => ({
  taskHash,
  amount: "5000000",
  locationZone: "global",
  duration: String(DAY),
  ...overrides,
});

function expectError(res: ApiResponse, status: number, code: string) {
  expect(res.json?.success, res.text).to.equal(false);
  expect(res.json.error.code, res.json.error.message).to.equal(code);
  expect(res.status).to.equal(status);
}

/** Sends an unsigned transaction from `signer` (connected to the chain it is for); returns the mined hash. */
async function send(signer: HardhatEthersSigner, tx: { to: string; data: string; from: string; gas?: string }) {
  expect(tx.from).to.equal(signer.address.toLowerCase());
  const sent = await signer.sendTransaction({
    to: tx.to,
    data: tx.data,
    gasLimit: tx.gas === undefined ? undefined : BigInt(tx.gas),
  });
  const receipt = await sent.wait();
  expect(receipt?.status).to.equal(1);
  return sent.hash;
}

interface Ctx {
  base: BaseFixture;
  arc: ArcFixture;
  api: TestApi;
  key: string;
}

async function withTwoChains(fn: (ctx: Ctx) => Promise<void>) {
  const base = await loadFixture(deployEscrowFixture);
  const arc = await arcFixture();
  const api = await startTestApi(base.book, {}, { arc });
  try {
    await api.synced();
    const key = await api.createKey(base.poster.address);
    await fn({ base, arc, api, key });
  } finally {
    await api.close();
  }
}

describe("API: posting on a named chain (base or arc)", function () {
  this.timeout(60_000);

  it("builds on arc for arc's escrow, token and chain id; the task funds on arc and lists with chain arc", () =>
    withTwoChains(async ({ base, arc, api, key }) => {
      // An allowance short of the reward on arc only: the approval answered is arc's token's.
      await (await arc.usdc.connect(arc.poster).approve(arc.book.escrow.proxy, 1n)).wait();
      const taskHash = newHash("arc single");
      const built = await api.request("POST", BUILD, {
        key,
        body: { ...terms(taskHash), chain: "arc", token: arc.book.token.address },
      });
      expect(built.status, built.text).to.equal(200);
      const { unsignedTx, approveTx, chain, chainId } = built.json.data;
      expect({ chain, chainId }).to.deep.equal({ chain: "arc", chainId: ARC_CHAIN_ID });
      expect(unsignedTx.to).to.equal(arc.book.escrow.proxy);
      expect(unsignedTx.to).to.not.equal(base.book.escrow.proxy);
      expect(approveTx.to).to.equal(arc.book.token.address);
      const approve = arc.usdc.interface.parseTransaction({ data: approveTx.data })!;
      expect([approve.args[0], approve.args[1]]).to.deep.equal([arc.book.escrow.proxy, 5_000_000n]);

      const arcBefore = await arc.usdc.balanceOf(arc.poster.address);
      const baseBefore = await base.usdc.balanceOf(base.poster.address);
      await send(arc.poster, approveTx);
      const txHash = await send(arc.poster, unsignedTx);
      expect(await arc.usdc.balanceOf(arc.poster.address)).to.equal(arcBefore - 5_000_000n);
      expect(await base.usdc.balanceOf(base.poster.address)).to.equal(baseBefore);
      expect((await arc.escrow.getTask(1)).taskHash).to.equal(taskHash);

      // The same transaction named on base is not found there: the receipt is read on the chain named.
      const wrongChain = await api.request("POST", INDEX, { key, body: { txHash, taskHash, privacy: "public" } });
      expectError(wrongChain, 404, "RECEIPT_NOT_FOUND");
      expect(wrongChain.json.error.message).to.include("chain base");

      const listed = await api.request("POST", INDEX, {
        key,
        body: { txHash, taskHash, privacy: "public", chain: "arc" },
      });
      expect(listed.status, listed.text).to.equal(200);
      expect(listed.json.data).to.deep.include({ taskHash, onChainTaskId: 1, indexed: true });
      const listing = await findListingByHash(api.deps.db, taskHash);
      expect(listing).to.deep.include({ chain: "arc", taskId: 1, token: arc.book.token.address.toLowerCase() });
      // Indexing again on arc is idempotent (the listing is found by its chain and id).
      const again = await api.request("POST", INDEX, {
        key,
        body: { txHash, taskHash, privacy: "public", chain: "arc" },
      });
      expect(again.status, again.text).to.equal(200);
    }));

  it("lists base's task 1 and arc's task 1 side by side: on-chain ids are per chain", () =>
    withTwoChains(async ({ base, arc, api, key }) => {
      const listed: string[] = [];
      for (const [chain, signer] of [
        ["base", base.poster],
        ["arc", arc.poster],
      ] as const) {
        const taskHash = newHash(`task one on ${chain}`);
        const built = await api.request("POST", BUILD, { key, body: { ...terms(taskHash), chain } });
        expect(built.status, built.text).to.equal(200);
        const txHash = await send(signer, built.json.data.unsignedTx);
        const res = await api.request("POST", INDEX, { key, body: { txHash, taskHash, privacy: "public", chain } });
        expect(res.status, res.text).to.equal(200);
        expect(res.json.data.onChainTaskId).to.equal(1);
        listed.push(taskHash);
      }
      expect((await findListingByHash(api.deps.db, listed[0]))?.chain).to.equal("base");
      expect((await findListingByHash(api.deps.db, listed[1]))?.chain).to.equal("arc");
    }));

  it("builds and lists a batch on arc (createTasks on arc's escrow, index-batch with chain arc)", () =>
    withTwoChains(async ({ base, arc, api, key }) => {
      const hashes = [newHash("arc batch a"), newHash("arc batch b")];
      const built = await api.request("POST", BATCH, {
        key,
        body: { token: arc.book.token.address, chain: "arc", tasks: hashes.map((h) => terms(h)) },
      });
      expect(built.status, built.text).to.equal(200);
      expect(built.json.data).to.deep.include({ chain: "arc", chainId: ARC_CHAIN_ID, taskHashes: hashes });
      expect(built.json.data.unsignedTx.to).to.equal(arc.book.escrow.proxy);
      const baseBefore = await base.usdc.balanceOf(base.poster.address);
      const txHash = await send(arc.poster, built.json.data.unsignedTx);
      expect(await base.usdc.balanceOf(base.poster.address)).to.equal(baseBefore);

      const res = await api.request("POST", INDEX_BATCH, {
        key,
        body: { txHash, chain: "arc", tasks: hashes.map((taskHash) => ({ taskHash, privacy: "public" })) },
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.json.data.results.map((r: { onChainTaskId: number }) => r.onChainTaskId)).to.deep.equal([1, 2]);
      for (const h of hashes) expect((await findListingByHash(api.deps.db, h))?.chain).to.equal("arc");

      // A user operation's hash: the funding transaction is looked up among the named chain's indexed tasks.
      const more = [newHash("arc user op")];
      const userOpBuilt = await api.request("POST", BATCH, {
        key,
        body: { token: arc.book.token.address, chain: "arc", tasks: more.map((h) => terms(h)) },
      });
      await send(arc.poster, userOpBuilt.json.data.unsignedTx);
      await api.synced();
      const userOp = {
        txHash: newHash("user operation"),
        isUserOp: true,
        tasks: [{ taskHash: more[0], privacy: "public" }],
      };
      expectError(await api.request("POST", INDEX_BATCH, { key, body: userOp }), 404, "RECEIPT_NOT_FOUND");
      const viaUserOp = await api.request("POST", INDEX_BATCH, { key, body: { ...userOp, chain: "arc" } });
      expect(viaUserOp.status, viaUserOp.text).to.equal(200);
      expect(viaUserOp.json.data.results).to.deep.equal([{ taskHash: more[0], onChainTaskId: 3, indexed: true }]);

      // A batch naming base's token on arc is refused, naming arc.
      const wrongToken = await api.request("POST", BATCH, {
        key,
        body: { token: base.book.token.address, chain: "arc", tasks: [terms(newHash("wrong token"))] },
      });
      expectError(wrongToken, 400, "TOKEN_NOT_SETTLEMENT");
      expect(wrongToken.json.error.message).to.include("chain arc");
    }));

  it("refuses a hash funded on base when built on arc, and one listed on arc when built on base (TASK_HASH_IN_USE)", () =>
    withTwoChains(async ({ base, arc, api, key }) => {
      const onBase = newHash("funded on base");
      const built = await api.request("POST", BUILD, { key, body: terms(onBase) });
      expect(built.status, built.text).to.equal(200);
      expect(built.json.data.chain).to.equal("base");
      await send(base.poster, built.json.data.unsignedTx);
      await api.synced();
      const again = await api.request("POST", BUILD, { key, body: { ...terms(onBase), chain: "arc" } });
      expectError(again, 409, "TASK_HASH_IN_USE");
      expect(again.json.error.message).to.include("task 1 on base");

      const onArc = newHash("listed on arc");
      const arcBuilt = await api.request("POST", BUILD, { key, body: { ...terms(onArc), chain: "arc" } });
      const txHash = await send(arc.poster, arcBuilt.json.data.unsignedTx);
      const listed = await api.request("POST", INDEX, {
        key,
        body: { txHash, taskHash: onArc, privacy: "public", chain: "arc" },
      });
      expect(listed.status, listed.text).to.equal(200);
      const batch = await api.request("POST", BATCH, {
        key,
        body: { token: base.book.token.address, tasks: [terms(newHash("free")), terms(onArc)] },
      });
      expectError(batch, 400, "INVALID_TASKS");
      expect(batch.json.error.details.errors).to.deep.equal([
        {
          index: 1,
          code: "TASK_HASH_IN_USE",
          message: `task 2: taskHash ${onArc} is already on the market (task 1 on arc): upload a new brief`,
        },
      ]);
    }));

  it("refuses an unknown chain (INVALID_CHAIN), the other chain's token (TOKEN_NOT_SETTLEMENT) and a verifier agent not on arc", () =>
    withTwoChains(async ({ base, api, key }) => {
      const unknown = await api.request("POST", BUILD, { key, body: { ...terms(newHash("x")), chain: "polygon" } });
      expectError(unknown, 400, "INVALID_CHAIN");
      const unknownIndex = await api.request("POST", INDEX, {
        key,
        body: { txHash: newHash("tx"), taskHash: newHash("y"), chain: "solana" },
      });
      expectError(unknownIndex, 400, "INVALID_CHAIN");

      const wrongToken = await api.request("POST", BUILD, {
        key,
        body: { ...terms(newHash("base token on arc")), chain: "arc", token: base.book.token.address },
      });
      expectError(wrongToken, 400, "TOKEN_NOT_SETTLEMENT");
      expect(wrongToken.json.error.message).to.include("chain arc");

      // A verifier agent registered for base only may judge a base task, not an arc one.
      const verifier = ethers.Wallet.createRandom();
      const verifierKey = await api.createKey(verifier.address);
      const registered = await api.request("POST", "/api/v1/a2a/executors", {
        key: verifierKey,
        body: { publicKey: agentPublicKey(verifier.privateKey), supportedChains: ["base"] },
      });
      expect(registered.status, registered.text).to.equal(200);
      const verified = (chain: string) =>
        api.request("POST", BUILD, {
          key,
          body: {
            ...terms(newHash(`verified on ${chain}`)),
            chain,
            verificationMode: "agent",
            verifierAddress: verifier.address,
            wrappedKeys: { [verifier.address.toLowerCase()]: "0xabcdef" },
          },
        });
      const onArc = await verified("arc");
      expectError(onArc, 409, "VERIFIER_CHAIN_UNSUPPORTED");
      expect(onArc.json.error.details).to.deep.include({ chain: "arc" });
      const onBase = await verified("base");
      expect(onBase.status, onBase.text).to.equal(200);
    }));

  it("settlement: each chain is postable while its escrow allows its token; disallowed on arc, only arc stops", () =>
    withTwoChains(async ({ arc, api }) => {
      const postable = async () =>
        (await api.request("GET", "/api/v1/health/settlement")).json.data.chains.map(
          (c: { chain: string; postable: boolean }) => [c.chain, c.postable],
        );
      expect(await postable()).to.deep.equal([
        ["base", true],
        ["arc", true],
      ]);
      await (await arc.escrow.connect(arc.admin).disallowToken(arc.book.token.address)).wait();
      await api.synced();
      expect(await postable()).to.deep.equal([
        ["base", true],
        ["arc", false],
      ]);
    }));

  it("answers CHAIN_NOT_CONFIGURED (503) for arc when the service settles on base only", async () => {
    const base = await loadFixture(deployEscrowFixture);
    const api = await startTestApi(base.book);
    try {
      const key = await api.createKey(base.poster.address);
      const build = await api.request("POST", BUILD, { key, body: { ...terms(newHash("arc off")), chain: "arc" } });
      expectError(build, 503, "CHAIN_NOT_CONFIGURED");
      expect(build.json.error.message).to.include("chain arc");
      const batch = await api.request("POST", BATCH, {
        key,
        body: { token: base.book.token.address, chain: "arc", tasks: [terms(newHash("arc off batch"))] },
      });
      expectError(batch, 503, "CHAIN_NOT_CONFIGURED");
      const index = await api.request("POST", INDEX, {
        key,
        body: { txHash: newHash("tx"), taskHash: newHash("t"), chain: "arc" },
      });
      expectError(index, 503, "CHAIN_NOT_CONFIGURED");
      // Naming the posting chain works as naming none.
      const onBase = await api.request("POST", BUILD, { key, body: { ...terms(newHash("base on")), chain: "base" } });
      expect(onBase.status, onBase.text).to.equal(200);
      expect(onBase.json.data.unsignedTx.to).to.equal(base.book.escrow.proxy);
    } finally {
      await api.close();
    }
  });

  it("MCP: build_task and index_task take chain and post on arc", () =>
    withTwoChains(async ({ arc, api, key }) => {
      const client = new Client({ name: "posting-on-arc", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
          requestInit: { headers: { "X-API-Key": key } },
        }),
      );
      try {
        const { tools } = await client.listTools();
        for (const name of ["build_task", "index_task"]) {
          const found = tools.find((t) => t.name === name)!;
          expect((found.inputSchema as { properties: object }).properties, name).to.have.property("chain");
          expect(found.description, name).to.match(/\bchain\b/);
        }
        const taskHash = newHash("mcp on arc");
        const built = (await client.callTool({ name: "build_task", arguments: { ...terms(taskHash), chain: "arc" } }))
          .structuredContent as { unsignedTx: { to: string; data: string; from: string }; chainId: number };
        expect(built.chainId).to.equal(ARC_CHAIN_ID);
        expect(built.unsignedTx.to).to.equal(arc.book.escrow.proxy);
        const txHash = await send(arc.poster, built.unsignedTx);
        const indexed = await client.callTool({
          name: "index_task",
          arguments: { txHash, taskHash, privacy: "public", chain: "arc" },
        });
        expect(indexed.isError, JSON.stringify(indexed)).to.not.equal(true);
        expect((await findListingByHash(api.deps.db, taskHash))?.chain).to.equal("arc");
        const refused = await client.callTool({
          name: "build_task",
          arguments: { ...terms(newHash("m")), chain: "x" },
        });
        expect(refused.isError).to.equal(true);
        expect((refused.structuredContent as { error: { code: string } }).error.code).to.equal("INVALID_CHAIN");
      } finally {
        await client.close();
      }
    }));
});
