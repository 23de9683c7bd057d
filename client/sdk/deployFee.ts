/**
 * Paying the agent deploy fee: read the terms, refuse a fee above the caller's cap (DEPLOY_FEE_ABOVE_MAX, default
 * 1 whole token, i.e. 1 USDC), check the unsigned approve (exactly the fee, to the factory) and deployAgent(0),
 * send both with managed nonces, and turn the payment into a deploy credit.
 */
import type { Signer } from "ethers";
import type { MarketApi } from "./api";
import type { DeployFeeVerified } from "./types";

/** Default cap: 1 whole token (1 USDC at 6 decimals). */
export const DEFAULT_DEPLOY_FEE_CAP_RAW = 1_000_000n;

export interface PayDeployFeeOptions {
  api: MarketApi;
  signer: Signer;
  /** Refuse a fee above this, in the token's smallest unit (default DEFAULT_DEPLOY_FEE_CAP_RAW). */
  maxFee?: bigint;
  confirmTimeoutMs?: number;
}

/** Pays the deploy fee; answers the verified credit, or `{ required: false }` when the server charges none. */
export async function payDeployFee(
  options: PayDeployFeeOptions,
): Promise<{ required: false } | ({ required: true } & DeployFeeVerified)> {
  void options;
  throw new Error("not implemented yet");
}
