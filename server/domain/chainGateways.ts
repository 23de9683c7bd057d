/**
 * The gateway of a named settlement chain: the one lookup every operation that answers or reads on a chain uses.
 * `base` and `arc` are the chains the service knows (the schema refuses others); CHAINS says which it serves.
 */
import type { ChainGateway } from "../chain/gateway";
import type { ChainName } from "../escrow/records";
import { fail } from "../errors";
import type { Deps } from "./deps";

/**
 * The gateway of `name` (the posting chain when undefined). A chain the service knows but does not serve, or one
 * whose address book is missing, answers 503 CHAIN_NOT_CONFIGURED naming the chain.
 */
export function chainGateway(deps: Deps, name?: ChainName): ChainGateway {
  const chain = name ?? deps.config.api.postingChain;
  const gateway =
    chain === deps.config.api.postingChain ? (deps.chain ?? deps.chains.get(chain)) : deps.chains.get(chain);
  if (gateway) return gateway;
  const served = deps.config.chains.map((c) => c.name);
  return fail(
    "CHAIN_NOT_CONFIGURED",
    served.includes(chain)
      ? `no escrow is configured on chain ${chain}`
      : `this service does not settle on chain ${chain} (it serves ${served.join(", ")})`,
  );
}
