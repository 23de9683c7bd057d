/** Calldata and reads of the settlement token (ERC-20) that posting needs: the approval of the escrow, the allowance. */
import { Contract, Interface, type Provider } from "ethers";

const erc20 = new Interface([
  "function approve(address spender, uint256 amount) returns (bool)",
  "function allowance(address owner, address spender) view returns (uint256)",
]);

/**
 * `approve(spender, amount)`: sets the spender's allowance to exactly `amount` (not an increase).
 *
 * @example encodeApprove(escrowProxy, 5_000_000n)
 */
export const encodeApprove = (spender: string, amount: bigint): string =>
  erc20.encodeFunctionData("approve", [spender, amount]);

/** What `owner` lets `spender` move of `token`. */
export async function readAllowance(provider: Provider, token: string, owner: string, spender: string) {
  return BigInt(await new Contract(token, erc20, provider).allowance(owner, spender));
}
