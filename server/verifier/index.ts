/**
 * The marketplace verifier's factory. The composition root (server/main.ts) creates one per configured chain with a
 * deployment when VERIFIER_PRIVATE_KEY is set (the same key on every chain), starts them with the server and stops
 * them on close.
 *
 * @example
 *   const verifier = createMarketplaceVerifier({ db, chain: deps.chains.get("arc")!, privateKey: key });
 *   await verifier.start();
 *   await verifier.requestAssign(7, worker);           // sent now; confirmed by the loop
 *   const done = await verifier.settled(assignKey(7)); // { status: "confirmed", txHash, ... }
 */
import type { Knex } from "knex";
import type { Provider } from "ethers";
import type { Logger } from "../logger";
import type { ChainGateway } from "../chain/gateway";
import type { ChainName } from "../escrow/records";
import { Verifier } from "./verifier";
import type { MarketplaceVerifier } from "./types";

export * from "./types";
export { classifyBroadcastError, revertReason, type BroadcastFailure, type RevertReason } from "../chain/rpcErrors";

export interface CreateVerifierOptions {
  db: Knex;
  /** The chain the escrow lives on: its name, provider and address book (or pass chainName, provider and escrowAddress). */
  chain?: Pick<ChainGateway, "name" | "book" | "provider">;
  /** The settlement chain's name when `chain` is not given (default: base). */
  chainName?: ChainName;
  provider?: Provider;
  escrowAddress?: string;
  /** The platform verifier's key, 0x + 64 hex. */
  privateKey: string;
  logger?: Logger;
  /** Receipt polling interval of the loop (default 200 ms). */
  pollIntervalMs?: number;
}

export function createMarketplaceVerifier(options: CreateVerifierOptions): MarketplaceVerifier {
  const provider = options.provider ?? options.chain?.provider;
  const escrowAddress = options.escrowAddress ?? options.chain?.book.escrow.proxy;
  if (!provider || !escrowAddress) throw new Error("createMarketplaceVerifier needs a chain (provider and escrow)");
  return new Verifier({
    db: options.db,
    chain: options.chain?.name ?? options.chainName ?? "base",
    provider,
    escrowAddress,
    privateKey: options.privateKey,
    logger: options.logger,
    pollIntervalMs: options.pollIntervalMs,
  });
}
