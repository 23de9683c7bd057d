/**
 * The marketplace's chain rules over REST: an agent registered (POST /api/v1/a2a/executors) without the task's chain
 * in supportedChains is refused bid, accept and the poster's assign (409 CHAIN_UNSUPPORTED); a task pinned to such an
 * agent is refused listing (409 TARGET_CHAIN_UNSUPPORTED); a verifier agent that does not settle there is refused at
 * build and at listing (409 VERIFIER_CHAIN_UNSUPPORTED). The service here settles on `base` (the posting chain).
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { CATEGORY, DAY, USDC, ZONE } from "../../../helpers/fixtures";
import { type ApiResponse } from "../../../helpers/api";
import { startMarket, type Market } from "../../../helpers/market";
import { agentPublicKey } from "../../../../server/domain/briefs";

const accept = (hash: string) => `/api/v1/a2a/tasks/${hash}/accept`;
const bid = (hash: string) => `/api/v1/a2a/tasks/${hash}/bid`;
const assign = (hash: string) => `/api/v1/tasks/${hash}/assign`;
const INDEX = "/api/v1/a2a/tasks/index";

function expectError(res: ApiResponse, status: number, code: string) {
  expect(res.status, res.text).to.equal(status);
  expect(res.json.success).to.equal(false);
  expect(res.json.error.code, res.text).to.equal(code);
}

/** A new wallet registered over REST with `supportedChains`, with its API key. */
async function registerAgent(market: Market, supportedChains: string[]) {
  const wallet = ethers.Wallet.createRandom();
  const key = await market.api.createKey(wallet.address);
  const res = await market.post("/api/v1/a2a/executors", key, {
    publicKey: agentPublicKey(wallet.privateKey),
    supportedChains,
  });
  expect(res.status, res.text).to.equal(200);
  expect(res.json.data.supportedChains).to.deep.equal(supportedChains);
  return { address: wallet.address.toLowerCase(), key };
}

describe("API marketplace: the chain rules (supportedChains)", function () {
  let market: Market;
  beforeEach(async () => {
    market = await startMarket();
  });
  afterEach(async () => {
    await market.api.close();
  });

  it("refuses bid and accept by an agent that does not settle on the task's chain (CHAIN_UNSUPPORTED); one that does is served", async () => {
    const { taskHash } = await market.list();
    const arcOnly = await registerAgent(market, ["arc"]);
    const onBase = await registerAgent(market, ["base"]);
    const bidRefused = await market.post(bid(taskHash), arcOnly.key, {});
    expectError(bidRefused, 409, "CHAIN_UNSUPPORTED");
    expect(bidRefused.json.error.message).to.include("settles on base");
    expectError(await market.post(accept(taskHash), arcOnly.key), 409, "CHAIN_UNSUPPORTED");
    // The refused bid left no applicant behind.
    const applicants = await market.api.request("GET", `/api/v1/a2a/tasks/${taskHash}/applicants`, {
      key: market.posterKey,
    });
    expect(applicants.status, applicants.text).to.equal(200);
    expect(JSON.stringify(applicants.json.data)).to.not.include(arcOnly.address);

    const bade = await market.post(bid(taskHash), onBase.key, {});
    expect(bade.status, bade.text).to.equal(200);
    const accepted = await market.post(accept(taskHash), onBase.key);
    expect(accepted.status, accepted.text).to.equal(200);
  });

  it("refuses the poster's assign to a registered agent that does not settle on the task's chain; an unregistered wallet may be assigned", async () => {
    const { taskHash } = await market.list();
    const arcOnly = await registerAgent(market, ["arc"]);
    expectError(
      await market.post(assign(taskHash), market.posterKey, { worker: arcOnly.address }),
      409,
      "CHAIN_UNSUPPORTED",
    );
    const both = await registerAgent(market, ["arc", "base"]);
    const built = await market.post(assign(taskHash), market.posterKey, { worker: both.address });
    expect(built.status, built.text).to.equal(200);
    const stranger = ethers.Wallet.createRandom().address;
    const open = await market.post(assign(taskHash), market.posterKey, { worker: stranger });
    expect(open.status, open.text).to.equal(200);
  });

  it("refuses to list a task pinned to an agent that does not settle on its chain (TARGET_CHAIN_UNSUPPORTED)", async () => {
    const arcOnly = await registerAgent(market, ["arc"]);
    const { taskHash } = await market.list({}, { unlisted: true });
    const txHash = await lastFundingTx(market);
    const refused = await market.post(INDEX, market.posterKey, {
      txHash,
      taskHash,
      privacy: "public",
      targetExecutor: arcOnly.address,
    });
    expectError(refused, 409, "TARGET_CHAIN_UNSUPPORTED");
    expect(refused.json.error.details).to.deep.equal({ chain: "base", supportedChains: ["arc"] });
    // Nothing was listed: the same task pinned to an agent on base lists.
    const onBase = await registerAgent(market, ["base"]);
    const listed = await market.post(INDEX, market.posterKey, {
      txHash,
      taskHash,
      privacy: "public",
      targetExecutor: onBase.address,
    });
    expect(listed.status, listed.text).to.equal(200);
  });

  it("refuses a verifier agent that does not settle on the chain, at build and at listing (VERIFIER_CHAIN_UNSUPPORTED)", async () => {
    const verifier = await registerAgent(market, ["arc"]);
    const taskHash = ethers.sha256(ethers.toUtf8Bytes(`verified by an arc-only agent ${Math.random()}`));
    const build = await market.post("/api/v1/tasks", market.posterKey, {
      taskHash,
      amount: "5000000",
      locationZone: "global",
      duration: String(3 * DAY),
      verificationMode: "agent",
      verifierAddress: verifier.address,
      wrappedKeys: { [verifier.address]: "0xabcdef" },
    });
    expectError(build, 409, "VERIFIER_CHAIN_UNSUPPORTED");

    // Funded directly on the escrow, the task is refused listing for the same reason.
    const escrow = market.escrow.connect(market.poster);
    const tx = await escrow.createTaskWithVerifier(
      taskHash,
      market.token,
      USDC(5),
      CATEGORY,
      ZONE,
      3 * DAY,
      verifier.address,
    );
    await tx.wait();
    const listed = await market.post(INDEX, market.posterKey, {
      txHash: tx.hash,
      taskHash,
      privacy: "public",
      verificationMode: "agent",
    });
    expectError(listed, 409, "VERIFIER_CHAIN_UNSUPPORTED");
  });
});

/** The hash of the newest escrow transaction that funded a task (the poster's createTask). */
async function lastFundingTx(market: Market): Promise<string> {
  const escrow = market.escrow;
  const events = await escrow.queryFilter(escrow.filters.TaskCreated());
  return events[events.length - 1].transactionHash;
}
