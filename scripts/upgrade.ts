/**
 * Upgrades a UUPS proxy of the marketplace (the escrow or the agent deploy-fee factory) to a new implementation.
 * Usable from `hardhat run scripts/upgrade.ts` and as a library (`upgradeContract`).
 *
 * The upgrade is refused before any transaction is sent when the OpenZeppelin plugin finds the new implementation
 * unsafe or its storage layout incompatible with the implementation the proxy runs now. After the upgrade the
 * address book's `implementation` field of the upgraded contract is rewritten when a network name is given.
 *
 * The plugin compares against the storage layout recorded in `.openzeppelin/<network>.json` when the proxy was
 * deployed (scripts/deploy.ts); for a proxy deployed elsewhere, run `upgrades.forceImport` first.
 *
 * Script environment:
 *   CONTRACT            TaskEscrow | AgentFactory (which proxy of the address book to upgrade)
 *   NEW_IMPLEMENTATION  name of the new implementation contract, e.g. TaskEscrowV2
 *   NETWORK             address book to read and update, deployments/<NETWORK>.json (default: the --network name)
 *
 *   CONTRACT=TaskEscrow NEW_IMPLEMENTATION=TaskEscrowV2 npx hardhat run scripts/upgrade.ts --network localhost
 */
import fs from "node:fs";
import hre from "hardhat";
import type { Signer } from "ethers";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { addressBookPath, readAddressBook, type AddressBook } from "./deploy";

/** The address-book entries that hold an upgradeable proxy, by the name of the contract deployed behind them. */
export const UPGRADEABLE_CONTRACTS = { TaskEscrow: "escrow", AgentFactory: "agentFactory" } as const;
export type UpgradeableContract = keyof typeof UPGRADEABLE_CONTRACTS;
type BookEntry = (typeof UPGRADEABLE_CONTRACTS)[UpgradeableContract];

export interface UpgradeOptions {
  /** Address of the proxy to upgrade. */
  proxy: string;
  /** Name of the new implementation contract (an artifact of this project). */
  newContractName: string;
  /** Address book to update (`deployments/<network>.json`); nothing is written when omitted. */
  network?: string;
  /** Path of the address book, overriding the one derived from `network` (tests write to a temporary file). */
  addressBookFile?: string;
  /** A function of the new implementation to call in the upgrade transaction (upgradeToAndCall data). */
  call?: { fn: string; args?: unknown[] };
  /** The signer authorised to upgrade (escrow admin or factory owner); the first signer when omitted. */
  signer?: Signer;
  /**
   * The contract now behind the proxy, to register the deployment with the upgrades plugin when this machine's
   * manifest does not know it (a proxy deployed elsewhere). Defaults from the address book entry, else TaskEscrow.
   */
  currentContractName?: string;
}

export interface UpgradeResult {
  proxy: string;
  previousImplementation: string;
  implementation: string;
  /** Hash of the upgrade transaction. */
  transactionHash?: string;
  /** The address book file that was updated, if any. */
  addressBookFile?: string;
}

/** The entry of `book` whose proxy is `proxy`, or an error naming the file. */
function findEntry(book: AddressBook, proxy: string, file: string): BookEntry {
  for (const entry of Object.values(UPGRADEABLE_CONTRACTS)) {
    if (book[entry].proxy.toLowerCase() === proxy.toLowerCase()) return entry;
  }
  throw new Error(`proxy ${proxy} is neither the escrow nor the agent factory of the address book ${file}`);
}

/**
 * Validates `newContractName` against the implementation behind `proxy`, upgrades the proxy to it and, when a network
 * name (or an address book file) is given, records the new implementation in the address book.
 */
export async function upgradeContract(
  options: UpgradeOptions,
  runtime: HardhatRuntimeEnvironment = hre,
): Promise<UpgradeResult> {
  const { ethers, upgrades } = runtime;
  const { proxy, newContractName } = options;
  const signer = options.signer ?? (await ethers.getSigners())[0];

  // Check the address book first, so that a wrong book fails before anything is sent.
  const file = options.addressBookFile ?? (options.network ? addressBookPath(options.network) : undefined);
  let book: AddressBook | undefined;
  let entry: BookEntry | undefined;
  if (file) {
    book = options.addressBookFile
      ? (JSON.parse(fs.readFileSync(options.addressBookFile, "utf8")) as AddressBook)
      : readAddressBook(options.network!);
    const chainId = Number((await ethers.provider.getNetwork()).chainId);
    if (book.chainId !== chainId) {
      throw new Error(`address book ${file} is for chain ${book.chainId}, the connected chain is ${chainId}`);
    }
    entry = findEntry(book, proxy, file);
  }

  const factory = await ethers.getContractFactory(newContractName, signer);
  const previousImplementation = await upgrades.erc1967.getImplementationAddress(proxy);

  // A proxy deployed from another machine is unknown to this manifest: register the running implementation first.
  try {
    await upgrades.validateUpgrade(proxy, factory, { kind: "uups" });
  } catch (error) {
    if (!/is not registered/.test((error as Error).message)) throw error;
    const current = options.currentContractName ?? (entry === "agentFactory" ? "AgentFactory" : "TaskEscrow");
    await upgrades.forceImport(proxy, await ethers.getContractFactory(current, signer), { kind: "uups" });
  }
  // Validate: upgrade safety of the new code and storage compatibility with the running implementation.
  await upgrades.validateUpgrade(proxy, factory, { kind: "uups" });

  const upgraded = await upgrades.upgradeProxy(proxy, factory, { kind: "uups", call: options.call });
  const transaction = (upgraded as unknown as { deployTransaction?: { hash: string; wait(): Promise<unknown> } })
    .deployTransaction;
  await transaction?.wait();
  const implementation = await upgrades.erc1967.getImplementationAddress(proxy);

  if (file && book && entry) {
    book[entry].implementation = implementation;
    fs.writeFileSync(file, JSON.stringify(book, null, 2) + "\n");
  }
  return { proxy, previousImplementation, implementation, transactionHash: transaction?.hash, addressBookFile: file };
}

async function main(): Promise<void> {
  const env = process.env;
  const contract = env.CONTRACT as UpgradeableContract | undefined;
  if (!contract || !(contract in UPGRADEABLE_CONTRACTS)) {
    throw new Error(`CONTRACT must be one of ${Object.keys(UPGRADEABLE_CONTRACTS).join(", ")}`);
  }
  const newContractName = env.NEW_IMPLEMENTATION;
  if (!newContractName) throw new Error("NEW_IMPLEMENTATION must name the new implementation contract");
  const network = env.NETWORK ?? hre.network.name;
  const book = readAddressBook(network);

  const result = await upgradeContract({
    proxy: book[UPGRADEABLE_CONTRACTS[contract]].proxy,
    newContractName,
    network,
  });
  console.log(JSON.stringify({ contract, newContractName, ...result }, null, 2));
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
