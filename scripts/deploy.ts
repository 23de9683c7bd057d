/**
 * Deploys the escrow and the agent deploy-fee factory behind UUPS proxies and writes the address book
 * `deployments/<network>.json`. Usable from `hardhat run scripts/deploy.ts` and as a library (`deployAll`).
 *
 * Local networks (hardhat, localhost) get a fresh MockUSDC and use the first signers for the roles. Elsewhere the
 * token and roles come from the environment: SETTLEMENT_TOKEN (required), ESCROW_ADMIN, TREASURY, VERIFIER_ADDRESS,
 * FEE_BPS (default 1000), DEPLOY_FEE (default 1000000 = 1 USDC).
 */
import fs from "node:fs";
import path from "node:path";
import hre from "hardhat";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import type { AgentFactory, MockUSDC, TaskEscrow } from "../typechain-types";
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
  /** Write `deployments/<network>.json` (default true). */
  write?: boolean;
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
}

function optionsFromEnv(network: string): DeployOptions {
  const env = process.env;
  if (LOCAL_NETWORKS.has(network)) return {};
  if (!env.SETTLEMENT_TOKEN) throw new Error(`SETTLEMENT_TOKEN must name the settlement token on ${network}`);
  return {
    token: env.SETTLEMENT_TOKEN,
    admin: env.ESCROW_ADMIN,
    treasury: env.TREASURY,
    verifier: env.VERIFIER_ADDRESS,
    feeBps: env.FEE_BPS ? Number(env.FEE_BPS) : undefined,
    deployFee: env.DEPLOY_FEE ? BigInt(env.DEPLOY_FEE) : undefined,
  };
}

/** Deploys everything with `options` (defaults from the environment) on the runtime's network. */
export async function deployAll(
  options: DeployOptions = optionsFromEnv(hre.network.name),
  runtime: HardhatRuntimeEnvironment = hre,
): Promise<Deployment> {
  const { ethers, upgrades, network } = runtime;
  const [deployer, defaultTreasury, defaultVerifier] = await ethers.getSigners();
  const admin = options.admin ?? deployer.address;
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
    fs.mkdirSync(path.dirname(addressBookPath(networkName)), { recursive: true });
    fs.writeFileSync(addressBookPath(networkName), JSON.stringify(book, null, 2) + "\n");
  }
  return { book, escrow, agentFactory, mockUsdc };
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
