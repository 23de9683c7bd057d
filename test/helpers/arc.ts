/**
 * The tests' second settlement chain, `arc`: a second in-process Hardhat chain (chain id 31338, the devnet's) with
 * its own escrow, agent factory and MockUSDC, deployed by the same script as base's. The Hardhat accounts are the
 * same wallets on both chains, as the devnet's demo wallets are.
 *
 * `arcFixture()` works as `loadFixture` does on base: the first call deploys and snapshots, every later call reverts
 * the arc chain to that snapshot, so each test starts from the same arc state.
 */
import { ethers } from "hardhat";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import { deployAll } from "../../scripts/deploy";
import { secondChainRuntime } from "../../scripts/secondChain";
import type { AddressBook } from "../../server/chain/addressBook";
import type { MockUSDC, TaskEscrow } from "../../typechain-types";
import { FEE_BPS, fundAccounts } from "./fixtures";
import { serveChain, type ServedChain } from "./rpc";

export const ARC_CHAIN_ID = 31338;

export interface ArcFixture {
  runtime: HardhatRuntimeEnvironment;
  /** arc's in-process provider (an ethers provider of the Hardhat runtime; serve it over HTTP with serveChain). */
  provider: HardhatRuntimeEnvironment["ethers"]["provider"];
  book: AddressBook;
  escrow: TaskEscrow;
  usdc: MockUSDC;
  admin: HardhatEthersSigner;
  verifier: HardhatEthersSigner;
  poster: HardhatEthersSigner;
  worker: HardhatEthersSigner;
  verifierAgent: HardhatEthersSigner;
  stranger: HardhatEthersSigner;
  others: HardhatEthersSigner[];
}

let runtime: HardhatRuntimeEnvironment | undefined;
let deployed: { fixture: ArcFixture; snapshot: string } | undefined;

/** The arc runtime, made once per test process. */
export function arcRuntime(): HardhatRuntimeEnvironment {
  runtime ??= secondChainRuntime(ARC_CHAIN_ID);
  return runtime;
}

/**
 * arc deployed as base's deployEscrowFixture deploys (same roles, fee, balances and approvals), reverted per call,
 * with its clock at least at base's.
 */
export async function arcFixture(): Promise<ArcFixture> {
  const fixture = await deployedArc();
  await catchUpWithBase(fixture.provider);
  return fixture;
}

/**
 * Each in-process chain keeps its own clock, and a file run earlier in this process may have moved base's ahead of
 * arc's. The open listing's deadline filter and the reputation's ages take the posting chain's (base's) clock as now,
 * so arc starts at base's time: an arc task is neither expired nor aged by whatever ran before.
 */
async function catchUpWithBase(provider: ArcFixture["provider"]): Promise<void> {
  const baseNow = (await ethers.provider.getBlock("latest"))!.timestamp;
  if ((await provider.getBlock("latest"))!.timestamp < baseNow) {
    await provider.send("evm_setNextBlockTimestamp", [baseNow]);
    await provider.send("evm_mine", []);
  }
}

async function deployedArc(): Promise<ArcFixture> {
  const arc = arcRuntime();
  if (deployed) {
    await arc.network.provider.send("evm_revert", [deployed.snapshot]);
    deployed.snapshot = await arc.network.provider.send("evm_snapshot", []);
    return deployed.fixture;
  }
  const [admin, treasury, verifier, poster, worker, verifierAgent, stranger, ...others] = await arc.ethers.getSigners();
  // The deployer's nonce moved first, so arc's contracts have other addresses than base's: a test that reads or
  // builds on the wrong chain's deployment then fails instead of passing by coincidence.
  for (let i = 0; i < 3; i++) await (await admin.sendTransaction({ to: admin.address, value: 0 })).wait();
  const { escrow, mockUsdc, book } = await deployAll(
    { admin: admin.address, treasury: treasury.address, verifier: verifier.address, feeBps: FEE_BPS, write: false },
    arc,
  );
  const usdc = mockUsdc!;
  await fundAccounts(usdc, await escrow.getAddress(), [poster, worker, stranger, ...others.slice(0, 6)]);
  const fixture: ArcFixture = {
    runtime: arc,
    provider: arc.ethers.provider,
    book,
    escrow,
    usdc,
    admin,
    verifier,
    poster,
    worker,
    verifierAgent,
    stranger,
    others,
  };
  deployed = { fixture, snapshot: await arc.network.provider.send("evm_snapshot", []) };
  return fixture;
}

/** arc served over JSON-RPC HTTP on 127.0.0.1 (as the devnet serves it on DEVNET_ARC_PORT), with a plain provider. */
export function serveArcChain(): Promise<ServedChain> {
  return serveChain(arcRuntime().network.provider);
}
