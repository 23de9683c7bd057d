/**
 * The SDK's posting flow as its users run it: a real API over HTTP, the in-process Hardhat chain served over JSON-RPC
 * HTTP, a plain ethers JsonRpcProvider + Wallet (a fresh wallet, so every balance it ends with is its own). One
 * private task, a public batch, invalid rows, a crash between send and index resumed (paid once), a crash between
 * signing and broadcasting resumed, an unconfirmed transaction resumed, and postings back to back (managed nonces).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { ethers } from "hardhat";
import { Contract, type Wallet } from "ethers";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture, USDC, STATUS } from "../../helpers/fixtures";
import { startTestApi, type TestApi } from "../../helpers/api";
import { freshWallet, minedNonce, serveChain, type ServedChain } from "../../helpers/rpc";
import {
  agentPublicKey,
  decryptBrief,
  FileJournal,
  MarketApi,
  MemoryJournal,
  openBrief,
  postTask,
  postTasks,
  type TaskDraft,
} from "../../../client/sdk/index";
import { expectCode } from "../../helpers/marketErrors";

const ERC20 = [
  "function balanceOf(address) view returns (uint256)",
  "function allowance(address,address) view returns (uint256)",
];

describe("SDK posting flow (real API, JSON-RPC over HTTP, plain JsonRpcProvider + Wallet)", () => {
  let chain: ServedChain;
  let api: TestApi;
  let fixture: Awaited<ReturnType<typeof deployEscrowFixture>>;
  let poster: Wallet;
  let market: MarketApi;
  let token: Contract;
  let journalDir: string;

  beforeEach(async () => {
    fixture = await loadFixture(deployEscrowFixture);
    chain = await serveChain();
    api = await startTestApi(fixture.book);
    poster = await freshWallet(chain.provider);
    await (await fixture.usdc.mint(poster.address, USDC(1_000))).wait();
    market = new MarketApi({ baseUrl: api.url, apiKey: await api.createKey(poster.address) });
    token = new Contract(await fixture.usdc.getAddress(), ERC20, chain.provider);
    journalDir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-journal-"));
  });

  afterEach(async () => {
    await api.close();
    await chain.close();
    fs.rmSync(journalDir, { recursive: true, force: true });
  });

  const balance = async () => (await token.balanceOf(poster.address)) as bigint;
  const createdFor = async (taskHash: string) =>
    (await fixture.escrow.queryFilter(fixture.escrow.filters.TaskCreated())).filter(
      (e) => e.args.taskHash === taskHash,
    );

  /** A registered agent with a public key, able to read private briefs wrapped to it. */
  async function registerAgent(capabilities: string[]) {
    const agent = ethers.Wallet.createRandom();
    const agentApi = new MarketApi({ baseUrl: api.url, apiKey: await api.createKey(agent.address) });
    await agentApi.registerExecutor({ publicKey: agentPublicKey(agent.privateKey), capabilities });
    return { agent, agentApi };
  }

  it("posts a private task in one call: encrypted to the executors, exactly the reward approved and paid, listed", async () => {
    const { agent } = await registerAgent(["translate"]);
    const before = await balance();
    const brief = "Translate the attached contract into French.";
    const posted = await postTask(
      { brief, amount: USDC(25), requiredCapabilities: ["translate"], locationZone: "eu" },
      { api: market, signer: poster },
    );
    expect(posted.privacy).to.equal("private");
    expect(posted.task.a2aMeta?.privacy).to.equal("private");
    expect(posted.task.a2aMeta?.taskHash).to.equal(posted.taskHash);
    expect(posted.task.status).to.equal(STATUS.Funded);
    expect(posted.task.poster).to.equal(poster.address.toLowerCase());
    expect(posted.task.locationZone).to.equal("eu");
    expect(await balance()).to.equal(before - USDC(25));
    expect(await token.allowance(poster.address, fixture.book.escrow.proxy), "approved exactly the reward").to.equal(
      0n,
    );
    // The uploaded blob is the ciphertext whose SHA-256 is the task hash; the poster's key and the agent's wrap open it.
    const blob = await market.blob(posted.taskHash);
    expect(ethers.sha256(blob)).to.equal(posted.taskHash);
    expect(decryptBrief(blob, Buffer.from(posted.briefKey!, "hex")).toString()).to.equal(brief);
    const row = await api.testDb.db("listings").where({ task_hash: posted.taskHash }).first();
    const wrapped = JSON.parse(row.wrapped_keys ?? "{}")[agent.address.toLowerCase()];
    expect(openBrief(blob, wrapped, agent.privateKey).toString()).to.equal(brief);
  });

  it("posts a public batch in one funding transaction, every task listed, the sum paid once", async () => {
    const before = await balance();
    const drafts: TaskDraft[] = [1, 2, 3].map((n) => ({
      brief: `Summarise report number ${n}.`,
      privacy: "public",
      amount: USDC(n),
      verificationMode: "auto",
      verificationCriteria: { min_length: 10 },
    }));
    const posted = await postTasks(drafts, { api: market, signer: poster });
    expect(posted).to.have.length(3);
    expect(new Set(posted.map((p) => p.txHash)).size, "one funding transaction").to.equal(1);
    expect(posted.map((p) => p.task.a2aMeta?.publicBrief)).to.deep.equal(drafts.map((d) => d.brief));
    expect(posted.map((p) => p.task.amount)).to.deep.equal(["1000000", "2000000", "3000000"]);
    expect(await balance()).to.equal(before - USDC(6));
    const receipt = await chain.provider.getTransactionReceipt(posted[0].txHash);
    expect(receipt!.to!.toLowerCase()).to.equal(fixture.book.escrow.proxy.toLowerCase());
  });

  it("sends no approve when the build answers approveTx null because the allowance already covers the reward", async () => {
    const escrow = fixture.book.escrow.proxy;
    const approver = new Contract(
      await token.getAddress(),
      ["function approve(address,uint256) returns (bool)"],
      poster,
    );
    await (await approver.approve(escrow, USDC(4))).wait();
    const built: unknown[] = [];
    const buildTask = market.buildTask;
    market.buildTask = async (body) => {
      const answer = await buildTask(body);
      built.push(answer.approveTx);
      return answer;
    };
    const nonce = await minedNonce(chain.provider, poster.address);
    const before = await balance();
    const posted = await postTask(
      { brief: "Public: list the open questions.", privacy: "public", amount: USDC(4) },
      { api: market, signer: poster },
    );
    expect(built, "the service's answer").to.deep.equal([null]);
    expect(await minedNonce(chain.provider, poster.address), "only the funding transaction").to.equal(nonce + 1);
    expect(await createdFor(posted.taskHash)).to.have.length(1);
    expect(await balance()).to.equal(before - USDC(4));
    expect(await token.allowance(poster.address, escrow)).to.equal(0n);
  });

  it("reads the allowance itself when a build answers approveTx null, and approves exactly the reward if it falls short", async () => {
    const buildTask = market.buildTask;
    market.buildTask = async (body) => ({ ...(await buildTask(body)), approveTx: null });
    const nonce = await minedNonce(chain.provider, poster.address);
    const before = await balance();
    const posted = await postTask(
      { brief: "Public: check the invoice totals.", privacy: "public", amount: USDC(6) },
      { api: market, signer: poster },
    );
    expect(await minedNonce(chain.provider, poster.address), "approve + createTask").to.equal(nonce + 2);
    expect(await createdFor(posted.taskHash)).to.have.length(1);
    expect(await balance()).to.equal(before - USDC(6));
    expect(await token.allowance(poster.address, fixture.book.escrow.proxy)).to.equal(0n);
  });

  it("refuses a build's approveTx that is not exactly approve(escrow, reward or batch sum) on the token, sending nothing", async () => {
    const escrow = fixture.book.escrow.proxy;
    const tokenAddress = await token.getAddress();
    const erc20 = new ethers.Interface(["function approve(address,uint256) returns (bool)"]);
    const stranger = ethers.Wallet.createRandom().address;
    const buildTask = market.buildTask;
    const buildTaskBatch = market.buildTaskBatch;
    const nonce = await minedNonce(chain.provider, poster.address);
    const before = await balance();
    const tampered = [
      { to: tokenAddress, data: erc20.encodeFunctionData("approve", [escrow, USDC(2) + 1n]) }, // more than the reward
      { to: tokenAddress, data: erc20.encodeFunctionData("approve", [stranger, USDC(2)]) }, // another spender
      { to: stranger, data: erc20.encodeFunctionData("approve", [escrow, USDC(2)]) }, // not the token
    ];
    for (const [n, approve] of tampered.entries()) {
      market.buildTask = async (body) => {
        const answer = await buildTask(body);
        return { ...answer, approveTx: { ...answer.approveTx!, ...approve } };
      };
      await expectCode(
        postTask(
          { brief: `Public: tampered approve ${n}.`, privacy: "public", amount: USDC(2) },
          { api: market, signer: poster },
        ),
        "TX_MISMATCH",
      );
    }
    // A batch's approval is for the sum of its rewards, not one of them.
    market.buildTaskBatch = async (body) => {
      const answer = await buildTaskBatch(body);
      return {
        ...answer,
        approveTx: { ...answer.approveTx!, data: erc20.encodeFunctionData("approve", [escrow, USDC(1)]) },
      };
    };
    await expectCode(
      postTasks(
        [1, 2].map((n) => ({ brief: `Public: batch row ${n}.`, privacy: "public" as const, amount: USDC(1) })),
        { api: market, signer: poster },
      ),
      "TX_MISMATCH",
    );
    expect(await minedNonce(chain.provider, poster.address), "nothing signed").to.equal(nonce);
    expect(await balance()).to.equal(before);
  });

  it("refuses invalid rows before uploading or paying anything (INVALID_ROWS lists each with its index)", async () => {
    const before = await balance();
    const error = await expectCode(
      postTasks(
        [
          { brief: "fine", privacy: "public", amount: USDC(1) },
          { brief: "", privacy: "public", amount: USDC(1) },
          { brief: "too short", privacy: "public", amount: "1.5", duration: 60 },
          { brief: "auto without rules", privacy: "public", amount: USDC(1), verificationMode: "auto" },
        ],
        { api: market, signer: poster },
      ),
      "INVALID_ROWS",
    );
    const errors = error.details!.errors as { index: number; code: string }[];
    expect(errors.map((e) => [e.index, e.code])).to.deep.equal([
      [1, "EMPTY_DATA"],
      [2, "INVALID_AMOUNT"],
      [2, "INVALID_DURATION"],
      [3, "AUTO_CRITERIA_REQUIRED"],
    ]);
    expect(await balance()).to.equal(before);
    expect(await api.testDb.db("blobs").count({ n: "*" }).first()).to.deep.include({ n: 0 });
  });

  it("a crash between send and index raises TX_MAYBE_SENT; resuming with the journal lists the task, paid once", async () => {
    await registerAgent(["summarise"]);
    const journal = new FileJournal(journalDir);
    const draft: TaskDraft = {
      brief: "Private: summarise the board minutes.",
      amount: USDC(40),
      requiredCapabilities: ["summarise"],
    };
    const before = await balance();
    const crash = await expectCode(
      postTask(draft, {
        api: market,
        signer: poster,
        journal,
        onStage: (stage) => {
          if (stage === "create-sent") throw new Error("process killed");
        },
      }),
      "TX_MAYBE_SENT",
    );
    const txHash = crash.details!.txHash as string;
    expect(crash.details!.stage).to.equal("create-sent");
    expect((await chain.provider.getTransactionReceipt(txHash))!.status).to.equal(1);
    const saved = fs.readdirSync(journalDir);
    expect(saved).to.have.length(1);
    expect(fs.statSync(path.join(journalDir, saved[0])).mode & 0o777).to.equal(0o600);

    // A new process: a new journal object over the same directory, the same drafts.
    const posted = await postTask(draft, { api: market, signer: poster, journal: new FileJournal(journalDir) });
    expect(posted.txHash).to.equal(txHash);
    expect(posted.task.a2aMeta?.taskHash).to.equal(posted.taskHash);
    expect(await createdFor(posted.taskHash)).to.have.length(1);
    expect(await balance()).to.equal(before - USDC(40));
    // Calling again answers the same posting: still paid once.
    const again = await postTask(draft, { api: market, signer: poster, journal: new FileJournal(journalDir) });
    expect(again.taskHash).to.equal(posted.taskHash);
    expect(await balance()).to.equal(before - USDC(40));
  });

  it("a crash after signing but before broadcasting resumes by broadcasting the same bytes (same hash, paid once)", async () => {
    const journal = new FileJournal(journalDir);
    const draft: TaskDraft = { brief: "Public: name three escrow risks.", privacy: "public", amount: USDC(7) };
    const before = await balance();
    const crash = await expectCode(
      postTask(draft, {
        api: market,
        signer: poster,
        journal,
        onStage: (stage) => {
          if (stage === "create-signed") throw new Error("killed before broadcast");
        },
      }),
      "TX_MAYBE_SENT",
    );
    const txHash = crash.details!.txHash as string;
    expect(await chain.provider.getTransaction(txHash), "never broadcast").to.equal(null);
    const posted = await postTask(draft, { api: market, signer: poster, journal });
    expect(posted.txHash).to.equal(txHash);
    expect(await createdFor(posted.taskHash)).to.have.length(1);
    expect(await balance()).to.equal(before - USDC(7));
  });

  it("UNCONFIRMED when no receipt arrives in time; resuming after the block is mined finishes without paying twice", async () => {
    const journal = new MemoryJournal();
    const draft: TaskDraft = { brief: "Public: proofread this page.", privacy: "public", amount: USDC(3) };
    const before = await balance();
    await ethers.provider.send("evm_setAutomine", [false]);
    try {
      const error = await expectCode(
        postTask(draft, { api: market, signer: poster, journal, confirmTimeoutMs: 1500 }),
        "UNCONFIRMED",
      );
      expect(error.details!.txHash).to.match(/^0x[0-9a-f]{64}$/);
    } finally {
      await ethers.provider.send("evm_setAutomine", [true]);
    }
    await ethers.provider.send("evm_mine", []);
    const posted = await postTask(draft, { api: market, signer: poster, journal });
    expect(await createdFor(posted.taskHash)).to.have.length(1);
    expect(await balance()).to.equal(before - USDC(3));
  });

  it("posts back to back on the automining chain without nonce clashes, also after a send outside the SDK", async () => {
    const first = await postTask(
      { brief: "Public one.", privacy: "public", amount: USDC(1) },
      { api: market, signer: poster },
    );
    // The same wallet sends something itself: the SDK's count is stale, the node refuses it, the SDK counts again.
    await (await poster.sendTransaction({ to: ethers.Wallet.createRandom().address, value: 1n })).wait();
    const second = await postTask(
      { brief: "Public two.", privacy: "public", amount: USDC(2) },
      { api: market, signer: poster },
    );
    expect(second.onChainTaskId).to.equal(first.onChainTaskId + 1);
    expect(await minedNonce(chain.provider, poster.address)).to.equal(5);
  });
});
