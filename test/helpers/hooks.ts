/**
 * Fixtures for the outcome-hook suite (test/contracts/TaskEscrow.hooks.test.ts). Each builds on a shared fixture of
 * ./fixtures and then wires a WorkerReputation (reporting to this escrow) and a MockTaskRegistry into the escrow, so a
 * test sees the reports of the transitions it makes. `hostileHookFixture` deploys instead the two RevertingHook modes.
 */
import { ethers } from "hardhat";
import {
  assignedTaskFixture,
  deployEscrowFixture,
  disputedTaskFixture,
  escalatedTaskFixture,
  failedVerdictFixture,
  fundedTaskFixture,
  submittedTaskFixture,
} from "./fixtures";

/** RevertingHook modes, as numbered in contracts/mocks/RevertingHook.sol. */
export const HOOK_MODE = { Revert: 0, BurnGas: 1 } as const;

type EscrowFixture = Awaited<ReturnType<typeof deployEscrowFixture>>;

/** Deploys a WorkerReputation bound to the escrow and a MockTaskRegistry, and sets both on the escrow. */
async function withHooks<T extends EscrowFixture>(base: T) {
  const reputation = await (await ethers.getContractFactory("WorkerReputation")).deploy(await base.escrow.getAddress());
  const registry = await (await ethers.getContractFactory("MockTaskRegistry")).deploy();
  await base.escrow.connect(base.admin).setReputationContract(await reputation.getAddress());
  await base.escrow.connect(base.admin).setTaskRegistry(await registry.getAddress());
  return { ...base, reputation, registry };
}

/** Escrow with both hooks set and no task yet. */
export async function hookedEscrowFixture() {
  return withHooks(await deployEscrowFixture());
}

/** Task 1 Funded (100 USDC, one day), hooks set. */
export async function hookedFundedFixture() {
  return withHooks(await fundedTaskFixture());
}

/** Task 1 Assigned to `worker`, hooks set. */
export async function hookedAssignedFixture() {
  return withHooks(await assignedTaskFixture());
}

/** Task 1 Submitted once, hooks set. */
export async function hookedSubmittedFixture() {
  return withHooks(await submittedTaskFixture());
}

/** Task 1 Verified (one failed verdict), hooks set. */
export async function hookedFailedVerdictFixture() {
  return withHooks(await failedVerdictFixture());
}

/** Task 1 Disputed by the poster before the deadline, hooks set. */
export async function hookedDisputedFixture() {
  return withHooks(await disputedTaskFixture());
}

/** Task 1 escalated (submitted, unjudged, timeout claimed), hooks set. */
export async function hookedEscalatedFixture() {
  return withHooks(await escalatedTaskFixture());
}

/** Task 1 Submitted, no hook set, plus one RevertingHook that reverts and one that burns all its gas. */
export async function hostileHookFixture() {
  const base = await submittedTaskFixture();
  const factory = await ethers.getContractFactory("RevertingHook");
  const revertingHook = await factory.deploy(HOOK_MODE.Revert);
  const gasBurningHook = await factory.deploy(HOOK_MODE.BurnGas);
  return { ...base, revertingHook, gasBurningHook };
}
