/**
 * An API serving two settlement chains (startTestApi with arc) with task 1 funded and listed on each by the same poster
 * wallet: base's 25 USDC task listed through POST /a2a/tasks/index (the posting chain), arc's 7 USDC task (capability
 * `arc-only`) listed through the repository with its listing events, as the domain writes them (listing on a named
 * chain through the API is the posting work's). For tests of reads that must keep the two tasks 1 apart.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { CATEGORY, DAY, USDC, ZONE, deployEscrowFixture } from "./fixtures";
import { arcFixture, type ArcFixture } from "./arc";
import { startTestApi, type TestApi } from "./api";
import { ENV, INDEX } from "./market";
import { insertListing, type ListingRecord } from "../../server/db/repositories/listings";
import { insertMarketEvents } from "../../server/db/repositories/marketEvents";
import { listingEvents } from "../../server/domain/events/log";

export const BASE_CHAIN_ID = 31337;

type Base = Awaited<ReturnType<typeof deployEscrowFixture>>;

export interface TwoChains {
  base: Base;
  arc: ArcFixture;
  api: TestApi;
  posterKey: string;
  workerKey: string;
  /** Task 1 of base: 25 USDC. */
  baseHash: string;
  /** Task 1 of arc: 7 USDC. */
  arcHash: string;
}

/** Funds task 1 on both chains as the same poster wallet and lists both. */
export async function twoChains(): Promise<TwoChains> {
  const base = await loadFixture(deployEscrowFixture);
  const arc = await arcFixture();
  const api = await startTestApi(base.book, ENV, { arc });
  try {
    const posterKey = await api.createKey(base.poster.address);
    const workerKey = await api.createKey(base.worker.address);
    const baseHash = ethers.sha256(ethers.toUtf8Bytes(`base brief ${Math.random()}`));
    const arcHash = ethers.sha256(ethers.toUtf8Bytes(`arc brief ${Math.random()}`));
    const baseToken = await base.usdc.getAddress();
    const funded = await (
      await base.escrow.connect(base.poster).createTask(baseHash, baseToken, USDC(25), CATEGORY, ZONE, 30 * DAY)
    ).wait();
    const listed = await api.request("POST", INDEX, {
      key: posterKey,
      body: { txHash: funded!.hash, taskHash: baseHash, privacy: "public" },
    });
    expect(listed.status, listed.text).to.equal(200);
    expect(listed.json.data.onChainTaskId).to.equal(1);

    const arcListed = await listOnArc({ arc, api }, { amount: USDC(7), capabilities: ["arc-only"], taskHash: arcHash });
    expect(arcListed.taskId).to.equal(1);
    await api.synced();
    return { base, arc, api, posterKey, workerKey, baseHash, arcHash };
  } catch (error) {
    await api.close();
    throw error;
  }
}

/** Runs `fn` on a fresh two-chain market and closes its API afterwards. */
export async function withTwoChains(fn: (t: TwoChains) => Promise<void>) {
  const t = await twoChains();
  try {
    await fn(t);
  } finally {
    await t.api.close();
  }
}

/** The terms of a task funded and listed on arc by listOnArc. */
export interface ArcTerms {
  taskHash?: string;
  amount?: bigint;
  capabilities?: string[];
  targetExecutor?: string;
  /** The task's verifier agent: funded with createTaskWithVerifier and listed in mode `agent`. */
  verifierAgent?: string;
}

/**
 * Funds a task on arc as arc's poster and lists it on arc through the repository, with the listing events the domain
 * writes when it lists (task.listed, then task.open or task.offered). Waits for both indexers.
 */
export async function listOnArc(
  t: Pick<TwoChains, "arc" | "api">,
  terms: ArcTerms = {},
): Promise<{ taskId: number; taskHash: string }> {
  const { arc, api } = t;
  const taskHash = (terms.taskHash ?? ethers.sha256(ethers.toUtf8Bytes(`arc brief ${Math.random()}`))).toLowerCase();
  const amount = terms.amount ?? USDC(5);
  const token = (await arc.usdc.getAddress()).toLowerCase();
  const escrow = arc.escrow.connect(arc.poster);
  const tx = terms.verifierAgent
    ? await escrow.createTaskWithVerifier(taskHash, token, amount, CATEGORY, ZONE, 30 * DAY, terms.verifierAgent)
    : await escrow.createTask(taskHash, token, amount, CATEGORY, ZONE, 30 * DAY);
  const funded = await tx.wait();
  const taskId = Number(await arc.escrow.nextTaskId()) - 1;
  const listing: ListingRecord = {
    taskId,
    taskHash,
    chain: "arc",
    poster: arc.poster.address.toLowerCase(),
    txHash: funded!.hash,
    privacy: "public",
    verificationMode: terms.verifierAgent ? "agent" : "manual",
    verificationCriteria: null,
    verifierAddress: terms.verifierAgent?.toLowerCase() ?? null,
    rootHash: null,
    wrappedKeys: null,
    targetExecutor: terms.targetExecutor?.toLowerCase() ?? null,
    serviceId: null,
    serviceTerms: null,
    publicBrief: null,
    custodyWrappedKey: null,
    token,
    amount: amount.toString(),
    deadline: null,
    listedAt: await api.deps.clock.chainNow(),
    capabilities: terms.capabilities ?? [],
  };
  await api.deps.db.transaction(async (trx) => {
    await insertListing(trx, listing);
    await insertMarketEvents(trx, listingEvents(listing, Date.now()));
  });
  await api.synced();
  return { taskId, taskHash };
}
