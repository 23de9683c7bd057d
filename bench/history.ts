/**
 * The funded history both benchmarks build: an escrow deployed through the deploy script, POSTERS posters minted and
 * approved, and a generator of createTasks batches (amounts, categories, zones and durations varied; every tenth task
 * judged by a verifier agent).
 */
import hre from "hardhat";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { deployAll } from "../scripts/deploy";
import type { ITaskEscrow } from "../typechain-types/contracts/TaskEscrow";

export const BATCH = 50;
export const POSTERS = 4;
export const AMOUNT = hre.ethers.parseUnits("10", 6);
export const DAY = 86_400;
export const CATEGORIES = ["general", "translation", "data-labeling", "code-review", "delivery"];
export const ZONES = ["global", "eu-west", "us-east", "ap-south"];

/**
 * Deploys the escrow and funds the posters for `tasks` tasks (plus headroom). `briefHash` names each task's brief;
 * task durations run from `minDays` to `minDays + 29` days. On `runtime`'s chain (default the in-process Hardhat
 * network; bench/indexer.ts builds a second chain's history on another runtime).
 */
export async function deployFundedPosters(
  options: {
    tasks: number;
    minDays: number;
    briefHash: (label: string) => string;
  },
  runtime: HardhatRuntimeEnvironment = hre,
) {
  const { ethers } = runtime;
  const signers = await ethers.getSigners();
  const posters = signers.slice(3, 3 + POSTERS);
  const verifierAgent = signers[3 + POSTERS];
  const { escrow, mockUsdc, book } = await deployAll({ write: false }, runtime);
  const usdc = mockUsdc!;
  const token = await usdc.getAddress();
  const escrowAddress = await escrow.getAddress();
  for (const poster of posters) {
    await usdc.mint(poster.address, AMOUNT * BigInt(options.tasks + 10_000));
    await usdc.connect(poster).approve(escrowAddress, ethers.MaxUint256);
  }

  let made_ = 0;
  /** The next BATCH tasks of the history. */
  const batch = (): ITaskEscrow.NewTaskStruct[] =>
    Array.from({ length: BATCH }, () => {
      const n = made_++;
      return {
        taskHash: options.briefHash(`task ${n}`),
        amount: AMOUNT + BigInt(n % 1000),
        category: CATEGORIES[n % CATEGORIES.length],
        locationZone: ZONES[n % ZONES.length],
        duration: DAY * (options.minDays + (n % 30)),
        verifierAgent: n % 10 === 0 ? verifierAgent.address : ethers.ZeroAddress,
      };
    });
  /** How many tasks the batches so far hold. */
  const made = () => made_;
  return { escrow, usdc, token, escrowAddress, book, posters, verifierAgent, batch, made };
}
