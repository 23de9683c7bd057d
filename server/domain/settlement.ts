/**
 * The settlement record: which chain posts by default, and for every configured chain its escrow and token and
 * whether it takes batches. The local devnet stands in for the configured chains (POSTING_CHAIN, default base).
 */
import type { Settlement } from "./schemas/settlement";
import { isTokenAllowed } from "../db/repositories/allowedTokens";
import type { Deps } from "./deps";
import type { ChainConfig } from "../config";
import { agentPublicKey } from "./briefs";
import { chainGateways } from "./chainGateways";
import type { ChainGateway } from "../chain/gateway";

/**
 * The public key of the service's custody key (CUSTODY_PRIVATE_KEY), which posters may wrap a private brief's key to
 * (docs/api.md, "Private briefs"); null when the service holds none.
 */
function custodyPublicKey(deps: Deps): string | null {
  const key = deps.config.marketplace.custodyPrivateKey;
  return key ? agentPublicKey(key) : null;
}

/**
 * One entry per configured chain (CHAINS), the posting chain first, each with its own escrow, token, `postable` and
 * `batchCreate` read from that chain; a chain without a deployment is listed as not postable.
 */
export async function readSettlement(deps: Deps): Promise<Settlement> {
  const { api } = deps.config;
  const gateways = chainGateways(deps);
  const chains = await Promise.all(
    deps.config.chains.map((c) =>
      chainEntry(
        deps,
        c,
        gateways.find((g) => g.name === c.name),
      ),
    ),
  );
  return {
    postingChain: api.postingChain,
    chains,
    settlementTier: api.settlementTier,
    custodyPublicKey: custodyPublicKey(deps),
  };
}

/**
 * A chain's entry: postable only where a build can be funded, that is a deployment (the gateway posting uses) whose
 * escrow allows the settlement token (as indexed from that chain's TokenAllowed/TokenDisallowed events).
 */
async function chainEntry(
  deps: Deps,
  config: ChainConfig,
  chain: ChainGateway | undefined,
): Promise<Settlement["chains"][number]> {
  if (!chain) {
    return {
      chain: config.name,
      chainId: null,
      tier: config.tier,
      escrowAddress: null,
      token: null,
      relayChain: null,
      gasSymbol: config.gasSymbol,
      postable: false,
      batchCreate: { supported: false, maxBatch: 0 },
    };
  }
  const { book } = chain;
  const maxBatch = await chain.maxBatch();
  const postable = await isTokenAllowed(deps.db, config.name, book.token.address);
  return {
    chain: config.name,
    chainId: book.chainId,
    tier: config.tier,
    escrowAddress: book.escrow.proxy,
    token: { kind: "erc20", address: book.token.address, symbol: book.token.symbol, decimals: book.token.decimals },
    relayChain: null,
    gasSymbol: config.gasSymbol,
    postable,
    batchCreate: { supported: maxBatch !== null, maxBatch: maxBatch ?? 0 },
  };
}
