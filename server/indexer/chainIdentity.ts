/**
 * The database remembers the chain it was built from (chain id, escrow proxy, hash of the deployment block) and
 * refuses to index another: a restarted devnet has new block hashes, and mixing its data with the old would lie.
 */
import type { Knex } from "knex";
import type { ChainReader } from "../chain/escrowLogs";
import type { ChainName } from "../escrow/records";
import { withRetry, type RetryOptions } from "../chain/rpcErrors";
import { getChainIdentity, recordChainIdentity, type ChainIdentity } from "../db/repositories/chainIdentity";

export class ChainIdentityMismatchError extends Error {
  override name = "ChainIdentityMismatchError";
  constructor(
    message: string,
    readonly stored: ChainIdentity | undefined,
    readonly current: Partial<ChainIdentity>,
  ) {
    super(message);
  }
}

export interface ExpectedDeployment {
  /** The settlement chain whose rows these are (the database keeps one identity per chain). */
  chainName: ChainName;
  network: string;
  escrowAddress: string;
  startBlock: number;
  /** How to reset this database, for the error message (for example "delete data/localhost.sqlite"). */
  resetHint: string;
}

export async function ensureChainIdentity(
  db: Knex,
  chain: ChainReader,
  expected: ExpectedDeployment,
  retry: RetryOptions = {},
) {
  // A node that blips at startup must not stop the indexer: these reads are retried like every other.
  const [chainId, block] = await Promise.all([
    withRetry(() => chain.chainId(), retry),
    withRetry(() => chain.block(expected.startBlock), retry),
  ]);
  const current = {
    chainId,
    escrowAddress: expected.escrowAddress.toLowerCase(),
    deploymentBlock: expected.startBlock,
    deploymentBlockHash: block?.hash ?? "",
    network: expected.network,
  };
  if (!block) {
    throw new ChainIdentityMismatchError(
      `the node has no block ${expected.startBlock}, where the escrow of network ${expected.network} was deployed: ` +
        `the address book does not belong to this chain (was the devnet restarted? run npm run devnet again)`,
      undefined,
      current,
    );
  }
  const stored = await getChainIdentity(db, expected.chainName);
  if (!stored) {
    await recordChainIdentity(db, expected.chainName, current);
    return current;
  }
  const same =
    stored.chainId === current.chainId &&
    stored.escrowAddress === current.escrowAddress &&
    stored.deploymentBlock === current.deploymentBlock &&
    stored.deploymentBlockHash === current.deploymentBlockHash;
  if (!same) {
    throw new ChainIdentityMismatchError(
      `this database was built from chain ${stored.chainId}, escrow ${stored.escrowAddress}, deployment block ` +
        `${stored.deploymentBlock} (${stored.deploymentBlockHash}), but the node now reports chain ${current.chainId}, ` +
        `escrow ${current.escrowAddress}, block ${current.deploymentBlock} (${current.deploymentBlockHash}). ` +
        `A restarted devnet is a new chain. Refusing to mix two chains' data: ${expected.resetHint}, then start again.`,
      stored,
      current,
    );
  }
  return stored;
}
