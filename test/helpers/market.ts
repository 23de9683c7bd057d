/**
 * A marketplace over the in-process chain for tests: the API (with the real marketplace verifier, or the fake one of
 * fakeVerifier.ts), a poster with an API key, agents registered with keys, and tasks funded and listed as the poster.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { CATEGORY, DAY, USDC, ZONE, deployEscrowFixture } from "./fixtures";
import { startTestApi, type ApiResponse } from "./api";
import { FakeVerifier } from "./fakeVerifier";
import { verifierPrivateKey } from "./keys";
import { upsertExecutor, type ExecutorRecord } from "../../server/db/repositories/executors";
import { agentPublicKey } from "../../server/domain/briefs";

export const INDEX = "/api/v1/a2a/tasks/index";

/** Limits raised: these tests make many requests from one address. */
export const ENV = {
  RATE_IP_PER_WINDOW: "100000",
  RATE_WALLET_FAMILY_PER_MINUTE: "100000",
  RATE_IP_POSTING_PER_MINUTE: "100000",
};

/** The service's custody key in these tests (a fixed test value, never used anywhere real). */
export const CUSTODY_KEY = `0x${"c0".repeat(31)}01`;

export interface Agent {
  address: string;
  privateKey: string;
  publicKey: string;
  key: string;
}

export interface ListOptions {
  amount?: bigint;
  duration?: number;
  verifier?: string;
  /** Fund the task, do not list it. */
  unlisted?: boolean;
}

/**
 * `real`: the marketplace verifier of server/verifier signs with the escrow's verifier key (VERIFIER_PRIVATE_KEY);
 * `fake`: test/helpers/fakeVerifier.ts, for tests that steer the verifier (refused sends, unconfirmed assignments).
 */
export type VerifierKind = "real" | "fake";

export async function startMarket(env: Record<string, string> = {}, kind: VerifierKind = "real") {
  const fx = await loadFixture(deployEscrowFixture);
  const api = await startTestApi(fx.book, {
    ...ENV,
    ...(kind === "real" ? { VERIFIER_PRIVATE_KEY: verifierPrivateKey() } : {}),
    ...env,
  });
  const fake = new FakeVerifier(fx.escrow, fx.verifier, fx.verifier.address);
  if (kind === "fake") api.deps.verifier = fake;
  const verifier = api.deps.verifier!;
  expect(verifier.address.toLowerCase()).to.equal(fx.verifier.address.toLowerCase());
  const token = await fx.usdc.getAddress();
  const posterKey = await api.createKey(fx.poster.address);
  let briefs = 0;

  async function register(address: string, overrides: Partial<ExecutorRecord> = {}) {
    // Executors are seen in chain time, as the service stamps them (an earlier test may have moved the chain ahead).
    // A fixture's snapshot may be minutes old in wall time, and the next block jumps to the wall clock: mine one
    // first, so "now" is the time of the blocks that follow rather than of the snapshot.
    await ethers.provider.send("evm_mine", []);
    const now = await api.deps.clock.chainNow();
    await upsertExecutor(api.deps.db, {
      address: address.toLowerCase(),
      publicKey: agentPublicKey(ethers.Wallet.createRandom().privateKey),
      capabilities: [],
      supportedChains: ["arc", "base"],
      minReward: "0",
      verifierOptIn: false,
      name: null,
      registeredAt: now,
      updatedAt: now,
      lastSeenAt: now,
      ...overrides,
    });
  }

  /** A new wallet registered as an agent, with an API key. */
  async function newAgent(overrides: Partial<ExecutorRecord> = {}): Promise<Agent> {
    const wallet = ethers.Wallet.createRandom();
    const publicKey = agentPublicKey(wallet.privateKey);
    await register(wallet.address, { publicKey, ...overrides });
    return {
      address: wallet.address.toLowerCase(),
      privateKey: wallet.privateKey,
      publicKey,
      key: await api.createKey(wallet.address),
    };
  }

  /** Funds a task as the poster and lists it with `terms`; waits for the indexer. */
  async function list(terms: Record<string, unknown> = {}, options: ListOptions & { taskHash?: string } = {}) {
    const taskHash = options.taskHash ?? ethers.sha256(ethers.toUtf8Bytes(`brief ${++briefs} ${Math.random()}`));
    const amount = options.amount ?? USDC(25);
    const duration = options.duration ?? DAY;
    const escrow = fx.escrow.connect(fx.poster);
    const tx = options.verifier
      ? await escrow.createTaskWithVerifier(taskHash, token, amount, CATEGORY, ZONE, duration, options.verifier)
      : await escrow.createTask(taskHash, token, amount, CATEGORY, ZONE, duration);
    await tx.wait();
    const taskId = Number(await fx.escrow.nextTaskId()) - 1;
    if (!options.unlisted) {
      const res = await api.request("POST", INDEX, {
        key: posterKey,
        body: { txHash: tx.hash, taskHash, privacy: "public", ...terms },
      });
      expect(res.status, res.text).to.equal(200);
    }
    await api.synced();
    return { taskHash, taskId };
  }

  const post = (path: string, key: string, body?: unknown) => api.request("POST", path, { key, body });

  /** Sends an unsigned transaction of the API from `signer`. */
  async function send(signer: typeof fx.poster, res: ApiResponse) {
    expect(res.status, res.text).to.equal(200);
    const { to, data, from } = res.json.data.unsignedTx;
    expect(from).to.equal(signer.address.toLowerCase());
    await (await signer.sendTransaction({ to, data })).wait();
    await api.synced();
  }

  return { ...fx, api, fake, marketVerifier: verifier, token, posterKey, register, newAgent, list, post, send };
}

export type Market = Awaited<ReturnType<typeof startMarket>>;

/** Runs `fn` on a fresh market (env overrides configuration) and closes its API afterwards. */
export async function withMarket(fn: (m: Market) => Promise<void>, env: Record<string, string> = {}): Promise<void> {
  const market = await startMarket(env);
  try {
    await fn(market);
  } finally {
    await market.api.close();
  }
}
