/**
 * The marketplace verifier of a settlement chain: each chain's escrow is settled by its own verifier instance (its
 * own signer nonce and intents), so every caller asks for the task's chain's.
 */
import type { ChainName } from "../escrow/records";
import type { MarketplaceVerifier } from "../verifier/types";
import type { Deps } from "./deps";

/** The marketplace verifier that settles on `chain`, or undefined when none runs there. */
export function verifierOn(deps: Deps, chain: ChainName): MarketplaceVerifier | undefined {
  return deps.verifiers?.get(chain) ?? (chain === deps.config.api.postingChain ? deps.verifier : undefined);
}
