/** The agent deploy-fee factory on the chain: its terms, the calls that pay the fee, and the payments a receipt proves. */
import { Contract, Interface, type Log, type Provider, type TransactionReceipt } from "ethers";
import { encodeApprove } from "./erc20Calls";

const FACTORY_ABI = [
  "function deployFee() view returns (uint256)",
  "function usdc() view returns (address)",
  "function treasury() view returns (address)",
  "function deployAgent(uint256 usdcAmount) returns (uint256)",
  "event AgentDeployed(address indexed user, uint256 usdcAmount, uint256 nonce, uint256 timestamp)",
];
const factoryInterface = new Interface(FACTORY_ABI);

export interface FactoryTerms {
  fee: bigint;
  token: string;
  treasury: string;
}

export async function readFactoryTerms(provider: Provider, factory: string): Promise<FactoryTerms> {
  const contract = new Contract(factory, FACTORY_ABI, provider);
  const [fee, token, treasury] = await Promise.all([contract.deployFee(), contract.usdc(), contract.treasury()]);
  return { fee: BigInt(fee), token: String(token).toLowerCase(), treasury: String(treasury).toLowerCase() };
}

/** `approve(factory, fee)` on the token: exactly the fee. */
export const encodeApproveFee = (factory: string, fee: bigint): string => encodeApprove(factory, fee);

/** `deployAgent(0)`: pays the fee (funding the agent is not supported). */
export const encodeDeployAgent = (): string => factoryInterface.encodeFunctionData("deployAgent", [0]);

export interface AgentDeployed {
  logIndex: number;
  payer: string;
  amount: bigint;
  nonce: bigint;
}

/** A log's AgentDeployed payment, if it is one (the caller checks the log comes from the configured factory). */
export function decodeAgentDeployed(log: Pick<Log, "topics" | "data" | "index">): AgentDeployed | undefined {
  let parsed;
  try {
    parsed = factoryInterface.parseLog({ topics: [...log.topics], data: log.data });
  } catch {
    return undefined;
  }
  if (parsed?.name !== "AgentDeployed") return undefined;
  return {
    logIndex: log.index,
    payer: String(parsed.args.user).toLowerCase(),
    amount: BigInt(parsed.args.usdcAmount),
    nonce: BigInt(parsed.args.nonce),
  };
}

/** The AgentDeployed events `receipt` holds from `factory` (others' events are ignored). */
export function agentDeployedEvents(receipt: TransactionReceipt, factory: string): AgentDeployed[] {
  return receipt.logs
    .filter((log) => log.address.toLowerCase() === factory.toLowerCase())
    .map(decodeAgentDeployed)
    .filter((e): e is AgentDeployed => e !== undefined);
}
