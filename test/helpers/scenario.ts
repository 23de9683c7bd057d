/**
 * A seeded random driver of escrow operations: mostly valid moves by the right callers, some invalid ones (which
 * revert and change nothing), time jumps and pauses. Used to produce realistic event histories for the indexer.
 */
import { ethers } from "hardhat";
import { time } from "@nomicfoundation/hardhat-network-helpers";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import type { MockUSDC, TaskEscrow } from "../../typechain-types";
import { DAY, HOUR, OPEN_SALT, USDC, commitOpen } from "./fixtures";

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface ScenarioActors {
  escrow: TaskEscrow;
  usdc: MockUSDC;
  admin: HardhatEthersSigner;
  verifier: HardhatEthersSigner;
  posters: HardhatEthersSigner[];
  workers: HardhatEthersSigner[];
  verifierAgent: HardhatEthersSigner;
}

/** Runs `steps` random operations; returns how many succeeded. */
export async function runRandomScenario(actors: ScenarioActors, seed: number, steps: number): Promise<number> {
  const { escrow, usdc, admin, verifier, posters, workers, verifierAgent } = actors;
  const rand = mulberry32(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)];
  const token = await usdc.getAddress();
  const hash = () => ethers.hexlify(ethers.randomBytes(32));
  const amount = () => USDC(1 + Math.floor(rand() * 500));
  const duration = () => HOUR + Math.floor(rand() * 5 * DAY);
  let ok = 0;
  // Open-submission commitments pay a bond: every worker holds and approved some USDC.
  for (const worker of workers) {
    await (await usdc.mint(worker.address, USDC(100_000))).wait();
    await (await usdc.connect(worker).approve(await escrow.getAddress(), ethers.MaxUint256)).wait();
  }
  /** The evidence each worker committed to each open task, for its reveal. */
  const committed = new Map<string, string>();

  const attempt = async (send: () => Promise<{ wait(): Promise<unknown> }>) => {
    try {
      await (await send()).wait();
      ok++;
    } catch {
      // A revert is a valid outcome: it must leave the index unchanged.
    }
  };

  for (let i = 0; i < steps; i++) {
    const next = Number(await escrow.nextTaskId());
    const id = next > 1 ? 1 + Math.floor(rand() * (next - 1)) : 1;
    const task = next > 1 ? await escrow.getTask(id) : undefined;
    const posterOf = () => posters.find((p) => p.address === task?.poster) ?? pick(posters);
    const workerOf = () => workers.find((w) => w.address === task?.worker) ?? pick(workers);
    const roll = rand();
    if (roll < 0.16 || !task) {
      const p = pick(posters);
      await attempt(() =>
        escrow.connect(p).createTask(hash(), token, amount(), "general", pick(["global", "eu"]), duration()),
      );
    } else if (roll < 0.2) {
      const p = pick(posters);
      await attempt(() =>
        escrow
          .connect(p)
          .createTaskWithVerifier(hash(), token, amount(), "general", "global", duration(), verifierAgent.address),
      );
    } else if (roll < 0.24) {
      const p = pick(posters);
      const tasks = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => ({
        taskHash: hash(),
        amount: amount(),
        category: "general",
        locationZone: "global",
        duration: duration(),
        verifierAgent: rand() < 0.3 ? verifierAgent.address : ethers.ZeroAddress,
      }));
      await attempt(() => escrow.connect(p).createTasks(token, tasks));
    } else if (roll < 0.27) {
      const p = pick(posters);
      await attempt(() => escrow.connect(p).createTaskOpen(hash(), token, amount(), "general", "global", duration()));
    } else if (roll < 0.37) {
      await attempt(() => escrow.connect(verifier).marketplaceAssign(id, pick(workers).address));
    } else if (roll < 0.4) {
      await attempt(() => escrow.connect(posterOf()).assignWorker(id, pick(workers).address));
    } else if (roll < 0.52) {
      await attempt(() => escrow.connect(workerOf()).submitEvidence(id, hash()));
    } else if (roll < 0.62) {
      const judge = (await escrow.taskVerifier(id)) === verifierAgent.address ? verifierAgent : verifier;
      await attempt(() => escrow.connect(judge).completeVerification(id, rand() < 0.6));
    } else if (roll < 0.66) {
      await attempt(() => escrow.connect(posterOf()).cancelTask(id));
    } else if (roll < 0.71) {
      await attempt(() => escrow.connect(posterOf()).claimTimeout(id));
    } else if (roll < 0.75) {
      await attempt(() => escrow.connect(rand() < 0.5 ? posterOf() : workerOf()).raiseDispute(id));
    } else if (roll < 0.78) {
      await attempt(() => escrow.connect(admin).resolveDispute(id, rand() < 0.5));
    } else if (roll < 0.8) {
      await attempt(() => escrow.connect(workerOf()).releaseUnjudgedWork(id));
    } else if (roll < 0.82) {
      const w = pick(workers);
      const evidence = hash();
      committed.set(`${id}:${w.address}`, evidence);
      await attempt(() => commitOpen(escrow, w, BigInt(id), evidence));
    } else if (roll < 0.84) {
      const w = pick(workers);
      const evidence = committed.get(`${id}:${w.address}`) ?? hash();
      await attempt(() => escrow.connect(w).revealOpen(id, evidence, OPEN_SALT));
    } else if (roll < 0.86) {
      await attempt(() => escrow.connect(posterOf()).selectWinner(id, pick(workers).address));
    } else if (roll < 0.87) {
      await attempt(() =>
        rand() < 0.5
          ? escrow.connect(posterOf()).reclaimOpen(id)
          : escrow.connect(pick(workers)).releaseOpenDefault(id),
      );
    } else if (roll < 0.89) {
      await attempt(() => (rand() < 0.5 ? escrow.connect(admin).pause() : escrow.connect(admin).unpause()));
    } else if (roll < 0.9) {
      await attempt(() => escrow.connect(admin).setFeeBps(Math.floor(rand() * 3000)));
    } else {
      await time.increase(Math.floor(rand() * 4 * DAY) + 60);
    }
  }
  if (await escrow.paused()) await (await escrow.connect(admin).unpause()).wait();
  return ok;
}
