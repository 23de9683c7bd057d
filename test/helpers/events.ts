/** Reading what a transaction did: the escrow's events in order, and the time of its block. */
import { ethers } from "hardhat";
import type { ContractTransactionResponse } from "ethers";
import type { TaskEscrow } from "../../typechain-types";

/** Names of the escrow's events in `tx`, in emission order. */
export async function escrowEventNames(escrow: TaskEscrow, tx: ContractTransactionResponse): Promise<string[]> {
  const receipt = await tx.wait();
  const escrowAddress = (await escrow.getAddress()).toLowerCase();
  return receipt!.logs
    .filter((log) => log.address.toLowerCase() === escrowAddress)
    .map((log) => escrow.interface.parseLog(log)!.name);
}

/** Block time of the block that mined `tx`. */
export async function blockTimeOf(tx: ContractTransactionResponse): Promise<bigint> {
  const receipt = await tx.wait();
  const block = await ethers.provider.getBlock(receipt!.blockNumber);
  return BigInt(block!.timestamp);
}
