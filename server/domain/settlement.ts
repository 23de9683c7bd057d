/**
 * The settlement record: which chain posts, its escrow and token, and whether it takes batches. The local devnet
 * stands in for the configured posting chain (POSTING_CHAIN, default base).
 */
import type { Settlement } from "./schemas/settlement";
import { isTokenAllowed } from "../db/repositories/allowedTokens";
import type { Deps } from "./deps";
import { agentPublicKey } from "./briefs";

/**
 * The public key of the service's custody key (CUSTODY_PRIVATE_KEY), which posters may wrap a private brief's key to
 * (docs/api.md, "Private briefs"); null when the service holds none.
 */
function custodyPublicKey(deps: Deps): string | null {
  const key = deps.config.marketplace.custodyPrivateKey;
  return key ? agentPublicKey(key) : null;
}

export async function readSettlement(deps: Deps): Promise<Settlement> {
  const { api } = deps.config;
  const chain = deps.chain;
  if (!chain) {
    return {
      postingChain: api.postingChain,
      chains: [
        {
          chain: api.postingChain,
          chainId: null,
          tier: api.settlementTier,
          escrowAddress: null,
          token: null,
          relayChain: null,
          gasSymbol: api.gasSymbol,
          postable: false,
          batchCreate: { supported: false, maxBatch: 0 },
        },
      ],
      settlementTier: api.settlementTier,
      custodyPublicKey: custodyPublicKey(deps),
    };
  }
  const { book } = chain;
  const maxBatch = await chain.maxBatch();
  const postable = await isTokenAllowed(deps.db, chain.name, book.token.address);
  return {
    postingChain: api.postingChain,
    chains: [
      {
        chain: api.postingChain,
        chainId: book.chainId,
        tier: api.settlementTier,
        escrowAddress: book.escrow.proxy,
        token: { kind: "erc20", address: book.token.address, symbol: book.token.symbol, decimals: book.token.decimals },
        relayChain: null,
        gasSymbol: api.gasSymbol,
        postable,
        batchCreate: { supported: maxBatch !== null, maxBatch: maxBatch ?? 0 },
      },
    ],
    settlementTier: api.settlementTier,
    custodyPublicKey: custodyPublicKey(deps),
  };
}
