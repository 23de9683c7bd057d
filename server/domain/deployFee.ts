/**
 * The agent deploy fee: what hosting an agent costs on this server (DEPLOY_FEE_REQUIRED, on by default on local
 * networks), the unsigned transactions that pay it (approve exactly the fee to the factory, then deployAgent(0)), and
 * verifying a paid fee from its transaction: the receipt's AgentDeployed event from the configured factory, paid by
 * the key's wallet, with a token transfer of at least the current fee to the factory's treasury. A paid fee is one
 * deploy credit of the wallet, recorded once (the payment's primary key) by whichever sees it first: a verification,
 * or the indexer following the factory's AgentDeployed events. A payment is verified once, whatever the number of
 * concurrent or repeated verifications and restarts (DEPLOY_FEE_IN_USE after). A verification credits a payment only
 * at the indexer's confirmation depth (INDEXER_CONFIRMATIONS): the indexer rolls back the unspent credits of blocks a
 * reorg drops, so no credit is spent on a payment shallower than that (docs/api.md, "The agent deploy fee"). Deploying a hosted agent spends one
 * credit (spendDeployCredit: NO_DEPLOY_CREDIT without one); the hosted-agents routes are another issue's.
 */
import { Interface } from "ethers";
import type { Deps } from "./deps";
import { AppError, fail } from "../errors";
import {
  agentDeployedEvents,
  encodeApproveFee,
  encodeDeployAgent,
  readFactoryTerms,
  type FactoryTerms,
} from "../chain/deployFee";
import {
  countDeployCredits,
  findDeployFeePayments,
  recordDeployFeePayment,
  spendDeployCredit as spendCredit,
} from "../db/repositories/deployFees";
import type { Queryable } from "../db/repositories/util";
import type { DeployFee, DeployFeeVerified } from "./schemas/deployFee";

const transferEvent = new Interface(["event Transfer(address indexed from, address indexed to, uint256 value)"]);

async function factoryTerms(deps: Deps): Promise<{ factory: string; terms: FactoryTerms }> {
  const chain = deps.chain;
  if (!chain) return fail("DEPLOY_FEE_UNAVAILABLE", "this server has no deployment: the deploy fee cannot be read");
  const factory = chain.book.agentFactory.proxy.toLowerCase();
  let terms: FactoryTerms;
  try {
    terms = await readFactoryTerms(chain.provider, factory);
  } catch (cause) {
    return fail("DEPLOY_FEE_UNAVAILABLE", `the deploy-fee factory ${factory} could not be read; retry`, { cause });
  }
  if (terms.fee === 0n) {
    return fail("DEPLOY_FEE_UNAVAILABLE", "the factory has no deploy fee configured: nothing can be paid", {
      status: 409,
    });
  }
  return { factory, terms };
}

/** GET /agents/deploy-fee: the terms, and for a caller its transactions and credits. */
export async function readDeployFee(deps: Deps, wallet: string | undefined): Promise<DeployFee> {
  if (!deps.config.marketplace.deployFeeRequired) return { required: false };
  const { factory, terms } = await factoryTerms(deps);
  const answer: DeployFee = {
    required: true,
    factory,
    token: terms.token,
    amount_raw: terms.fee.toString(),
    treasury: terms.treasury,
    how:
      `Approve the factory for exactly ${terms.fee} of ${terms.token}, call deployAgent(0) on ${factory} from your ` +
      "wallet, then POST /api/v1/agents/deploy-fee/verify { txHash } to turn the payment into a deploy credit.",
  };
  if (!wallet) return answer;
  const from = wallet.toLowerCase();
  return {
    ...answer,
    transactions: {
      approve: { to: terms.token, data: encodeApproveFee(factory, terms.fee), from, value: "0" },
      deployAgent: { to: factory, data: encodeDeployAgent(), from, value: "0" },
    },
    credits: await countDeployCredits(deps.db, from),
  };
}

/** POST /agents/deploy-fee/verify: one paid fee becomes one deploy credit of the paying wallet, once. */
export async function verifyDeployFee(deps: Deps, wallet: string, txHash: string): Promise<DeployFeeVerified> {
  if (!deps.config.marketplace.deployFeeRequired) {
    fail("DEPLOY_FEE_UNAVAILABLE", "this server charges no deploy fee: there is nothing to verify", { status: 409 });
  }
  const { factory, terms } = await factoryTerms(deps);
  let receipt;
  try {
    receipt = await deps.chain!.receipt(txHash);
  } catch (cause) {
    return fail("DEPLOY_FEE_CHECK_FAILED", `could not read the receipt of ${txHash}; retry`, { cause });
  }
  if (!receipt) return fail("DEPLOY_FEE_NOT_FOUND", `txHash: no mined transaction ${txHash} (yet): retry once mined`);
  if (receipt.status !== 1) fail("DEPLOY_FEE_REVERTED", `txHash: transaction ${txHash} reverted: no fee was paid`);
  const required = deps.config.indexer.confirmations;
  if (required > 0) {
    let head: number;
    try {
      head = await deps.chain!.provider.getBlockNumber();
    } catch (cause) {
      return fail("DEPLOY_FEE_CHECK_FAILED", `could not read the chain's head to confirm ${txHash}; retry`, { cause });
    }
    const confirmations = Math.max(0, head - receipt.blockNumber);
    if (confirmations < required) {
      fail(
        "DEPLOY_FEE_NOT_FOUND",
        `txHash: transaction ${txHash} has ${confirmations} of the ${required} confirmations this server waits ` +
          `for (INDEXER_CONFIRMATIONS): retry in ${required - confirmations} block(s)`,
        { details: { confirmations, required } },
      );
    }
  }
  const [payment] = agentDeployedEvents(receipt, factory);
  if (!payment) {
    return fail("DEPLOY_FEE_NOT_FOUND", `txHash: transaction ${txHash} paid no deploy fee to the factory ${factory}`);
  }
  const payer = wallet.toLowerCase();
  if (payment.payer !== payer) {
    throw new AppError({
      code: "DEPLOY_FEE_NOT_PAID",
      reason: "PAYER_NOT_LINKED",
      message: `the fee of ${txHash} was paid by ${payment.payer}, not by this key's wallet ${payer}`,
    });
  }
  const paid = receipt.logs
    .filter((log) => log.address.toLowerCase() === terms.token)
    .map((log) => transferEvent.parseLog({ topics: [...log.topics], data: log.data }))
    .filter((e) => e?.name === "Transfer" && String(e.args.from).toLowerCase() === payer)
    .filter((e) => String(e!.args.to).toLowerCase() === terms.treasury)
    .reduce((sum, e) => sum + BigInt(e!.args.value), 0n);
  if (paid < terms.fee) {
    throw new AppError({
      code: "DEPLOY_FEE_NOT_PAID",
      reason: "FEE_TOO_LOW",
      message: `${txHash} moved ${paid} to the treasury; the deploy fee is ${terms.fee}`,
    });
  }
  const recorded = await recordDeployFeePayment(deps.db, {
    txHash: txHash.toLowerCase(),
    logIndex: payment.logIndex,
    payer,
    amount: paid.toString(),
    nonce: Number(payment.nonce),
    blockNumber: receipt.blockNumber,
    verifiedAt: deps.clock.wallNow(),
  });
  if (!recorded) fail("DEPLOY_FEE_IN_USE", `the fee of ${txHash} was already verified: one fee buys one deploy`);
  return {
    txHash: txHash.toLowerCase(),
    payer,
    amount_raw: paid.toString(),
    credits: await countDeployCredits(deps.db, payer),
  };
}

/**
 * Spends one deploy credit of `wallet` (a hosted agent's deploy): the payment it used. NO_DEPLOY_CREDIT (402) when the
 * wallet has none left; concurrent deploys never share one credit. Given a transaction (`db`), the credit is spent
 * only if that transaction commits (a hosted agent's insert refused with SLUG_TAKEN spends nothing).
 */
export async function spendDeployCredit(
  deps: Deps,
  wallet: string,
  db: Queryable = deps.db,
): Promise<{ txHash: string; logIndex: number }> {
  const spent = await spendCredit(db, wallet, deps.clock.wallNow());
  if (!spent) {
    return fail(
      "NO_DEPLOY_CREDIT",
      `${wallet.toLowerCase()} has no deploy credit: pay the deploy fee (GET /api/v1/agents/deploy-fee), then verify it`,
    );
  }
  return spent;
}

/**
 * Whether the payment of `txHash` is already an unspent deploy credit of `wallet` (a verification of it answers
 * DEPLOY_FEE_IN_USE, but a deploy may still spend it).
 */
export async function isUnspentCreditOf(deps: Deps, wallet: string, txHash: string): Promise<boolean> {
  const payments = await findDeployFeePayments(deps.db, txHash.toLowerCase());
  return payments.some((p) => p.payer === wallet.toLowerCase() && p.spentAt === null && p.verifiedAt !== null);
}
