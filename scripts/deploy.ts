/**
 * Deploys the escrow and the agent deploy-fee factory behind UUPS proxies and writes the address book
 * `deployments/<network>.json`. Usable from `hardhat run scripts/deploy.ts` and as a library (`deployAll`).
 *
 * Local networks (hardhat, localhost) get a fresh MockUSDC and use the first signers for the roles. Elsewhere the
 * token and roles come from the environment: SETTLEMENT_TOKEN (required), ESCROW_ADMIN, TREASURY, VERIFIER_ADDRESS,
 * FEE_BPS (default 1000), DEPLOY_FEE (default 1000000 = 1 USDC).
 *
 * ADMIN_TIMELOCK_DELAY (seconds, any network) deploys an OpenZeppelin TimelockController with that minimum delay and
 * makes it the escrow's admin and the factory's owner: every admin call (fee, verifier, pause, upgrade...) is then
 * scheduled in public and runs only after the delay. Its proposers and executors are ADMIN_TIMELOCK_PROPOSERS
 * (comma-separated; default: ESCROW_ADMIN, else the deployer); it has no separate admin (it governs itself). The
 * address book's `admin` is then the timelock. docs/contracts.md, "Admin powers", says what this changes for posters.
 */
import fs from "node:fs";
import path from "node:path";
import hre from "hardhat";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import type { AgentFactory, MockUSDC, TaskEscrow, TimelockController } from "../typechain-types";
import { addressBookPath, readAddressBook, type AddressBook } from "../server/chain/addressBook";

export { addressBookPath, readAddressBook, type AddressBook };

export const LOCAL_NETWORKS = new Set(["hardhat", "localhost"]);
export const DEFAULT_FEE_BPS = 1000;
export const DEFAULT_DEPLOY_FEE = 1_000_000n;

export interface DeployOptions {
  /** Settlement token; a MockUSDC is deployed when omitted on a local network. */
  token?: string;
  admin?: string;
  treasury?: string;
  /** The marketplace verifier: the only address allowed to call marketplaceAssign. */
  verifier?: string;
  feeBps?: number;
  deployFee?: bigint;
  /**
   * Minimum delay, in seconds, of a TimelockController deployed as the escrow's admin and the factory's owner; none
   * when omitted (the admin is then the account `admin` names).
   */
  timelockDelay?: number;
  /** Proposers and executors of that timelock (default: `admin`, else the deployer). */
  timelockProposers?: string[];
  /** Write `deployments/<network>.json` (default true). */
  write?: boolean;
  /** Where that address book is written (default deployments/). */
  deploymentsDir?: string;
  /** The network name recorded in (and naming) the address book; defaults to the runtime's network. The devnet
   * serves the in-process `hardhat` network as `localhost`. */
  networkName?: string;
}

export interface Deployment {
  book: AddressBook;
  escrow: TaskEscrow;
  agentFactory: AgentFactory;
  /** Present when the deployment created its own MockUSDC. */
  mockUsdc?: MockUSDC;
  /** Present when `timelockDelay` made a TimelockController the admin. */
  timelock?: TimelockController;
}

function optionsFromEnv(network: string): DeployOptions {
  const env = process.env;
  const timelock = {
    timelockDelay: env.ADMIN_TIMELOCK_DELAY ? Number(env.ADMIN_TIMELOCK_DELAY) : undefined,
    timelockProposers: env.ADMIN_TIMELOCK_PROPOSERS
      ? env.ADMIN_TIMELOCK_PROPOSERS.split(",").map((a) => a.trim())
      : undefined,
  };
  if (LOCAL_NETWORKS.has(network)) return timelock;
  if (!env.SETTLEMENT_TOKEN) throw new Error(`SETTLEMENT_TOKEN must name the settlement token on ${network}`);
  return {
    token: env.SETTLEMENT_TOKEN,
    admin: env.ESCROW_ADMIN,
    treasury: env.TREASURY,
    verifier: env.VERIFIER_ADDRESS,
    feeBps: env.FEE_BPS ? Number(env.FEE_BPS) : undefined,
    deployFee: env.DEPLOY_FEE ? BigInt(env.DEPLOY_FEE) : undefined,
    ...timelock,
  };
}

/** Deploys everything with `options` (defaults from the environment) on the runtime's network. */
export async function deployAll(
  options: DeployOptions = optionsFromEnv(hre.network.name),
  runtime: HardhatRuntimeEnvironment = hre,
): Promise<Deployment> {
  const { ethers, upgrades, network } = runtime;
  const [deployer, defaultTreasury, defaultVerifier] = await ethers.getSigners();
  let admin = options.admin ?? deployer.address;
  let timelock: TimelockController | undefined;
  if (options.timelockDelay !== undefined) {
    if (!Number.isInteger(options.timelockDelay) || options.timelockDelay <= 0) {
      throw new Error(`ADMIN_TIMELOCK_DELAY must be a positive number of seconds, not ${options.timelockDelay}`);
    }
    const proposers = options.timelockProposers ?? [admin];
    timelock = (await (
      await ethers.getContractFactory("TimelockController")
    ).deploy(options.timelockDelay, proposers, proposers, ethers.ZeroAddress)) as unknown as TimelockController;
    await timelock.waitForDeployment();
    admin = await timelock.getAddress();
  }
  const treasury = options.treasury ?? defaultTreasury?.address ?? deployer.address;
  const verifier = options.verifier ?? defaultVerifier?.address ?? deployer.address;
  const feeBps = options.feeBps ?? DEFAULT_FEE_BPS;

  let mockUsdc: MockUSDC | undefined;
  let tokenAddress = options.token;
  if (!tokenAddress) {
    if (!LOCAL_NETWORKS.has(network.name)) throw new Error("a settlement token is required off local networks");
    mockUsdc = (await (await ethers.getContractFactory("MockUSDC")).deploy()) as unknown as MockUSDC;
    await mockUsdc.waitForDeployment();
    tokenAddress = await mockUsdc.getAddress();
  }
  const token = await ethers.getContractAt("MockUSDC", tokenAddress);
  const [symbol, decimals] = await Promise.all([token.symbol(), token.decimals()]);

  const escrow = (await upgrades.deployProxy(
    await ethers.getContractFactory("TaskEscrow"),
    [admin, treasury, verifier, feeBps, [tokenAddress]],
    { kind: "uups" },
  )) as unknown as TaskEscrow;
  await escrow.waitForDeployment();
  const escrowReceipt = await escrow.deploymentTransaction()!.wait();

  const agentFactory = (await upgrades.deployProxy(
    await ethers.getContractFactory("AgentFactory"),
    [admin, tokenAddress, treasury, options.deployFee ?? DEFAULT_DEPLOY_FEE],
    { kind: "uups" },
  )) as unknown as AgentFactory;
  await agentFactory.waitForDeployment();

  const escrowProxy = await escrow.getAddress();
  const factoryProxy = await agentFactory.getAddress();
  const networkName = options.networkName ?? network.name;
  const book: AddressBook = {
    chainId: Number((await ethers.provider.getNetwork()).chainId),
    network: networkName,
    escrow: { proxy: escrowProxy, implementation: await upgrades.erc1967.getImplementationAddress(escrowProxy) },
    agentFactory: {
      proxy: factoryProxy,
      implementation: await upgrades.erc1967.getImplementationAddress(factoryProxy),
    },
    token: { address: tokenAddress, symbol, decimals: Number(decimals) },
    admin,
    treasury,
    verifier,
    feeBps,
    startBlock: escrowReceipt!.blockNumber,
  };
  if (options.write ?? true) {
    const file = addressBookPath(networkName, options.deploymentsDir);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(book, null, 2) + "\n");
  }
  return { book, escrow, agentFactory, mockUsdc, timelock };
}

if (require.main === module) {
  deployAll()
    .then(({ book }) => {
      console.log(JSON.stringify(book, null, 2));
      console.log(`address book written to ${path.relative(process.cwd(), addressBookPath(book.network))}`);
    })
    .catch((error) => {
      console.error(error);
      process.exitCode = 1;
    });
}
