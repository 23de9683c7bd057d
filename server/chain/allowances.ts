/**
 * Posters' allowances to the escrow, read once per poster per chain head. An allowance only changes in a block (an
 * `approve` or a `permit` of the poster, an escrow `transferFrom` that funds a task), so the allowance read at block N
 * is exact for as long as N is the head. Each call reads the head's number fresh (freshShared: never a number read
 * before the call began), and answers the allowance kept for that number, or reads it at exactly that block. A block
 * that lowers the allowance is therefore seen by the first call that sees the block as the head, as an uncached read
 * would; what is saved is the `eth_call` of every further build of the same poster within the block.
 *
 * A reorganisation that replaces the head with another block of the same number keeps the first block's allowances
 * until the next block (keyed by number, not hash: reading the head's hash costs a whole block header per read).
 */
import type { Provider } from "ethers";
import { decodeAllowance, encodeAllowance } from "./erc20Calls";
import { freshShared } from "../freshShared";
import { blockNumberReader, rawRpcOf } from "./head";

/**
 * Least time between two head reads' starts: bounds the head reads to 500 a second (a build waits up to this much
 * longer) when the node answers faster than that, as an in-process chain does.
 */
const HEAD_READ_SPACING_MS = 2;

/** Posters kept per block: a block with more distinct posters building in it reads the extra ones again. */
const MAX_POSTERS_PER_BLOCK = 10_000;

export interface AllowanceSource {
  /** The head's block number, read after the call began. */
  head(): Promise<number>;
  /** `allowance(owner, spender)` of the token at block `block`. */
  readAt(owner: string, block: number): Promise<bigint>;
}

/** Reads from `provider`: raw JSON-RPC when it takes it (no ethers contract, no perform cache). */
export function providerAllowanceSource(provider: Provider, token: string, spender: string): AllowanceSource {
  const rpc = rawRpcOf(provider);
  return {
    head: freshShared(blockNumberReader(provider), { minIntervalMs: HEAD_READ_SPACING_MS }),
    async readAt(owner, block) {
      const tx = { to: token, data: encodeAllowance(owner, spender) };
      const result = rpc
        ? await rpc.send("eth_call", [tx, `0x${block.toString(16)}`])
        : await provider.call({ ...tx, blockTag: block });
      return decodeAllowance(String(result));
    },
  };
}

/**
 * `owner`'s allowance at the current head, kept per head block (see the header). Concurrent calls for the same owner
 * and block share one read; a failed read is not kept.
 *
 * @example const allowanceOf = allowancesPerBlock(providerAllowanceSource(provider, usdc, escrow));
 */
export function allowancesPerBlock(source: AllowanceSource): (owner: string) => Promise<bigint> {
  let block = -1;
  let kept = new Map<string, Promise<bigint>>();
  return async (owner) => {
    const head = await source.head();
    if (head !== block) {
      block = head;
      kept = new Map();
    }
    const key = owner.toLowerCase();
    let allowance = kept.get(key);
    if (allowance === undefined) {
      if (kept.size >= MAX_POSTERS_PER_BLOCK) kept.clear();
      const entries = kept;
      allowance = source.readAt(key, head);
      entries.set(key, allowance);
      allowance.catch(() => {
        if (entries.get(key) === allowance) entries.delete(key);
      });
    }
    return allowance;
  };
}
