/**
 * The marketplace verifier's factory. The composition root (server/main.ts) creates one when VERIFIER_PRIVATE_KEY is
 * set and the network has a deployment, starts it with the server and stops it on close.
 *
 * @example
 *   const verifier = createMarketplaceVerifier({ db, chain, privateKey: config.marketplace.verifierPrivateKey! });
 *   await verifier.start();
 *   await verifier.requestAssign(7, worker);           // sent now; confirmed by the loop
 *   const done = await verifier.settled(assignKey(7)); // { status: "confirmed", txHash, ... }
 */
import type { Knex } from "knex";
import type { Provider } from "ethers";
import type { Logger } from "../logger";
import type { ChainGateway } from "../chain/gateway";
import { Verifier } from "./verifier";
import type { MarketplaceVerifier } from "./types";

export * from "./types";
export { classifyBroadcastError, revertReason, type BroadcastFailure, type RevertReason } from "../chain/rpcErrors";

export interface CreateVerifierOptions {
  db: Knex;
  /** The chain the escrow lives on: its provider and address book (or pass provider and escrowAddress). */
  chain?: Pick<ChainGateway, "book" | "provider">;
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
    provider,
    escrowAddress,
    privateKey: options.privateKey,
    logger: options.logger,
    pollIntervalMs: options.pollIntervalMs,
  });
}
