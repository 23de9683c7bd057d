/**
 * Paying the agent deploy fee: read the terms, refuse a fee above the caller's cap (DEPLOY_FEE_ABOVE_MAX, default
 * 1 whole token, i.e. 1 USDC), check the unsigned approve (exactly the fee, to the factory) and deployAgent(0),
 * send both with managed nonces, and turn the payment into a deploy credit.
 */
import type { Signer } from "ethers";
import type { MarketApi } from "./api";
import { checkApproveTx, checkBalance, checkDeployAgentTx, checkOwner } from "./checks";
import { refuse } from "./errors";
import { TxSender } from "./sender";
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
  const { api, signer } = options;
  if (!signer) refuse("NO_SIGNER", "paying the deploy fee signs two transactions: pass a signer");
  if (!signer.provider) refuse("NO_RPC", "the signer has no provider");
  const wallet = (await signer.getAddress()).toLowerCase();
  checkOwner((await api.whoami()).address, wallet);
  const terms = await api.deployFee();
  if (!terms.required) return { required: false };
  if (!terms.factory || !terms.token || !terms.amount_raw || !terms.transactions) {
    refuse("TX_MISMATCH", "the deploy-fee terms lack the factory, token, amount or transactions");
  }
  const fee = BigInt(terms.amount_raw);
  const cap = options.maxFee ?? DEFAULT_DEPLOY_FEE_CAP_RAW;
  if (fee > cap) {
    refuse("DEPLOY_FEE_ABOVE_MAX", `the deploy fee ${fee} is above the cap ${cap}`, {
      details: { fee: fee.toString(), max: cap.toString() },
    });
  }
  const { approve, deployAgent } = terms.transactions;
  checkApproveTx(approve, terms.token, terms.factory, fee, wallet);
  checkDeployAgentTx(deployAgent, terms.factory, wallet);
  await checkBalance(signer.provider, terms.token, wallet, fee);
  const sender = new TxSender(signer, { confirmTimeoutMs: options.confirmTimeoutMs });
  await sender.sendAndWait({ to: approve.to, data: approve.data });
  const paid = await sender.sendAndWait({ to: deployAgent.to, data: deployAgent.data });
  return { required: true, ...(await api.verifyDeployFee(paid.hash)) };
}
