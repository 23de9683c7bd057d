/**
 * The settlement chains of a request: which one it names (the posting chain when none) and that chain's gateway.
 * `base` and `arc` are the chains the service knows; CHAINS says which of them this deployment serves.
 */
import type { ChainGateway } from "../chain/gateway";
import type { ChainName } from "../escrow/records";
import { fail } from "../errors";
import type { Deps } from "./deps";

/** The chain a request names, or the posting chain (POSTING_CHAIN) when it names none. */
export function requestedChain(deps: Deps, chain: ChainName | undefined): ChainName {
  return chain ?? deps.config.api.postingChain;
}

/** Whether `name` is one of this deployment's chains (CHAINS). */
export function isConfiguredChain(deps: Deps, name: ChainName): boolean {
  return deps.config.chains.some((c) => c.name === name);
}

/**
 * The gateway of `name` (the posting chain when undefined). A chain the service knows but does not serve, or one
 * whose address book is missing, answers 503 CHAIN_NOT_CONFIGURED. The posting chain's is read from `deps.chain`.
 */
export function chainGateway(deps: Deps, name?: ChainName): ChainGateway {
  const chain = requestedChain(deps, name);
  const gateway = chain === deps.config.api.postingChain ? deps.chain : deps.chains.get(chain);
  if (!gateway) {
    fail(
      "CHAIN_NOT_CONFIGURED",
      isConfiguredChain(deps, chain)
        ? `no escrow is configured on chain ${chain}: posting there is unavailable`
        : `this service does not settle on chain ${chain} (it serves ${deps.config.chains.map((c) => c.name).join(", ")})`,
    );
  }
  return gateway;
}

/** The gateways of every configured chain that has a deployment, the posting chain first. */
export function chainGateways(deps: Deps): ChainGateway[] {
  return deps.config.chains.flatMap((c) => {
    const gateway = c.name === deps.config.api.postingChain ? deps.chain : deps.chains.get(c.name);
    return gateway ? [gateway] : [];
  });
}
