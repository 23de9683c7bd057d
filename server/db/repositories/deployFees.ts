/** Verified deploy-fee payments (table `deploy_fee_payments`): one row per AgentDeployed event, one deploy credit each. */
import type { Queryable } from "./util";

export interface DeployFeePayment {
  txHash: string;
  logIndex: number;
  payer: string;
  amount: string;
  nonce: number;
  blockNumber: number;
  verifiedAt: number;
  spentAt: number | null;
}

/** Records a payment; false when it was already recorded (the primary key makes this once-only, across processes). */
export async function recordDeployFeePayment(
  db: Queryable,
  payment: Omit<DeployFeePayment, "spentAt">,
): Promise<boolean> {
  const inserted = await db("deploy_fee_payments")
    .insert({
      tx_hash: payment.txHash,
      log_index: payment.logIndex,
      payer: payment.payer,
      amount: payment.amount,
      nonce: payment.nonce,
      block_number: payment.blockNumber,
      verified_at: payment.verifiedAt,
      spent_at: null,
    })
    .onConflict(["tx_hash", "log_index"])
    .ignore()
    .returning("tx_hash");
  return inserted.length > 0;
}

/** A wallet's unspent deploy credits. */
export async function countDeployCredits(db: Queryable, wallet: string): Promise<number> {
  const row = (await db("deploy_fee_payments")
    .where({ payer: wallet.toLowerCase() })
    .whereNull("spent_at")
    .count({ n: "*" })
    .first()) as { n?: number | string } | undefined;
  return Number(row?.n ?? 0);
}
