/**
 * The settlement chain a request names and that chain's gateway. `base` and `arc` are the chains the service knows
 * (an unknown name is refused by the schemas: INVALID_CHAIN); CHAINS says which of them this deployment serves, and
 * a served chain posts only once its address book names a deployment.
 */
import type { ChainGateway } from "../chain/gateway";
import type { Clock } from "../chain/clock";
import type { ChainName } from "../escrow/records";
import { fail } from "../errors";
import type { Deps } from "./deps";

/**
 * The gateway of `name` (the posting chain, POSTING_CHAIN, when undefined). A chain this deployment does not serve,
 * or serves without a deployment, answers 503 CHAIN_NOT_CONFIGURED naming the chain.
 */
export function chainGateway(deps: Deps, name?: ChainName): ChainGateway {
  const chain = name ?? deps.config.api.postingChain;
  const gateway = gatewayOf(deps, chain);
  if (!gateway) {
    const served = deps.config.chains.map((c) => c.name);
    fail(
      "CHAIN_NOT_CONFIGURED",
      served.includes(chain)
        ? `no escrow is configured on chain ${chain}: posting there is unavailable`
        : `this service does not settle on chain ${chain} (it serves ${served.join(", ")})`,
      { details: { chain } },
    );
  }
  return gateway;
}

/** The gateways of every configured chain that has a deployment, the posting chain first. */
export function chainGateways(deps: Deps): ChainGateway[] {
  return deps.config.chains.flatMap((c) => {
    const gateway = gatewayOf(deps, c.name);
    return gateway ? [gateway] : [];
  });
}

/**
 * The clock of `chain`: the service's clock on the posting chain, that chain's own block time on another (the wall
 * clock stands in when its node cannot be read; the posting chain's clock for a chain without a deployment).
 */
export function chainClock(deps: Pick<Deps, "clock" | "clocks" | "config">, chain: ChainName): Clock {
  if (chain === deps.config.api.postingChain) return deps.clock;
  return deps.clocks?.get(chain) ?? deps.clock;
}

/**
 * The gateway of `chain` when this deployment serves it and has its deployment, else undefined (the posting chain's
 * is `deps.chain`, the others' in `deps.chains`).
 */
export function gatewayOf(deps: Pick<Deps, "chain" | "chains" | "config">, chain: ChainName): ChainGateway | undefined {
  if (!deps.config.chains.some((c) => c.name === chain)) return undefined;
  return chain === deps.config.api.postingChain ? deps.chain : deps.chains?.get(chain);
}
