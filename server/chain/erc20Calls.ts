/** Calldata of the settlement token (ERC-20) that posting needs: the approval of the escrow, the allowance read. */
import { Interface } from "ethers";

const erc20 = new Interface([
  "function approve(address spender, uint256 amount) returns (bool)",
  "function allowance(address owner, address spender) view returns (uint256)",
]);
const ALLOWANCE_SELECTOR = erc20.getFunction("allowance")!.selector;
const LOWERCASE_ADDRESS = /^0x[0-9a-f]{40}$/;
const PLAIN_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT256_WORD = /^0x[0-9a-fA-F]{64}$/;

/**
 * `approve(spender, amount)`: sets the spender's allowance to exactly `amount` (not an increase).
 *
 * @example encodeApprove(escrowProxy, 5_000_000n)
 */
export const encodeApprove = (spender: string, amount: bigint): string =>
  erc20.encodeFunctionData("approve", [spender, amount]);

/**
 * `allowance(owner, spender)`, laid out by hand for a lowercase owner (the authenticated wallet) and a plain-hex
 * spender; ethers' encoder otherwise (it checks a mixed-case address's checksum and refuses a malformed one).
 * The read runs on every task build whose poster has no allowance kept for the head (server/chain/allowances.ts).
 *
 * @example encodeAllowance("0x7099...79c8", escrowProxy)
 */
export function encodeAllowance(owner: string, spender: string): string {
  if (LOWERCASE_ADDRESS.test(owner) && PLAIN_ADDRESS.test(spender)) {
    return `${ALLOWANCE_SELECTOR}${owner.slice(2).padStart(64, "0")}${spender.slice(2).toLowerCase().padStart(64, "0")}`;
  }
  return erc20.encodeFunctionData("allowance", [owner, spender]);
}

/** The uint256 an `allowance` call returned; throws on anything else (an address that is not a token). */
export function decodeAllowance(result: string): bigint {
  if (!UINT256_WORD.test(result)) throw new Error(`allowance: not one uint256 word: ${result.slice(0, 80)}`);
  return BigInt(result);
}
