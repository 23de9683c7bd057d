import type { ChainName } from "../../escrow/records";
/**
 * Deploy-fee payments (table `deploy_fee_payments`): one row per AgentDeployed event of the configured factory, one
 * deploy credit each. A row comes from a verification (POST /agents/deploy-fee/verify, `verified_at`) or from the
 * indexer (`indexed_at`), whichever sees the payment first; the primary key (tx_hash, log_index) keeps it one row.
 */
import { bulkInsert, insertChunks, type Queryable } from "./util";

export interface DeployFeePayment {
  txHash: string;
  logIndex: number;
  payer: string;
  /** The fee that reached the treasury (read by a verification; null for a payment only the indexer has seen). */
  amount: string | null;
  nonce: number;
  blockNumber: number;
  verifiedAt: number | null;
  indexedAt: number | null;
  spentAt: number | null;
}

/**
 * Records a verified payment; false when it was verified already. A payment the indexer recorded first is verified
 * once: the conditional update lets exactly one of concurrent verifications through (on SQLite and PostgreSQL).
 */
export async function recordDeployFeePayment(
  db: Queryable,
  payment: Omit<DeployFeePayment, "spentAt" | "indexedAt"> & { amount: string; verifiedAt: number },
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
      indexed_at: null,
      spent_at: null,
    })
    .onConflict(["chain", "tx_hash", "log_index"])
    .ignore()
    .returning("tx_hash");
  if (inserted.length > 0) return true;
  const claimed = await db("deploy_fee_payments")
    .where({ tx_hash: payment.txHash, log_index: payment.logIndex })
    .whereNull("verified_at")
    .update({ verified_at: payment.verifiedAt, amount: payment.amount });
  return claimed > 0;
}

/** The columns an indexed payment sets; amount, verified_at and spent_at stay null. */
const INDEXED_COLUMNS = ["chain", "tx_hash", "log_index", "payer", "nonce", "block_number", "indexed_at"];
const INDEXED_PG_TYPES = ["text", "text", "integer", "text", "bigint", "bigint", "bigint"];
const INDEXED_CONFLICT = `on conflict ("chain", "tx_hash", "log_index") do nothing`;

/** Records payments the indexer found (AgentDeployed events); a payment already recorded is left as it is. */
export async function recordIndexedDeployFees(
  db: Queryable,
  chain: ChainName,
  payments: readonly (Pick<DeployFeePayment, "txHash" | "logIndex" | "payer" | "nonce" | "blockNumber"> & {
    /** The block's timestamp. */
    indexedAt: number;
  })[],
): Promise<void> {
  for (const chunk of insertChunks(db, payments)) {
    const rows = chunk.map((p) => [chain, p.txHash, p.logIndex, p.payer, p.nonce, p.blockNumber, p.indexedAt]);
    await bulkInsert(db, "deploy_fee_payments", INDEXED_COLUMNS, rows, INDEXED_CONFLICT, INDEXED_PG_TYPES);
  }
}

/** A reorg undid the blocks after `blockNumber`: their unspent payments go (the indexer records them again if re-mined). */
export async function deleteUnspentDeployFeesAfter(
  db: Queryable,
  chain: ChainName,
  blockNumber: number,
): Promise<number> {
  return db("deploy_fee_payments")
    .where({ chain })
    .where("block_number", ">", blockNumber)
    .whereNull("spent_at")
    .delete();
}

/** The payments (AgentDeployed events) of one transaction. */
export async function findDeployFeePayments(db: Queryable, txHash: string): Promise<DeployFeePayment[]> {
  const rows = await db("deploy_fee_payments").where({ tx_hash: txHash.toLowerCase() }).orderBy("log_index");
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return rows.map((r: any) => ({
    txHash: r.tx_hash,
    logIndex: Number(r.log_index),
    payer: r.payer,
    amount: r.amount ?? null,
    nonce: Number(r.nonce),
    blockNumber: Number(r.block_number),
    verifiedAt: r.verified_at === null ? null : Number(r.verified_at),
    indexedAt: r.indexed_at === null ? null : Number(r.indexed_at),
    spentAt: r.spent_at === null ? null : Number(r.spent_at),
  }));
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

/**
 * Spends one of the wallet's credits (the oldest): the payment it spent, or undefined when the wallet has none left.
 * Each attempt is a conditional update, so concurrent spenders never spend one credit twice.
 */
export async function spendDeployCredit(
  db: Queryable,
  wallet: string,
  spentAt: number,
): Promise<{ txHash: string; logIndex: number } | undefined> {
  const payer = wallet.toLowerCase();
  for (;;) {
    const candidates = (await db("deploy_fee_payments")
      .where({ payer })
      .whereNull("spent_at")
      .orderBy([{ column: "block_number" }, { column: "log_index" }])
      .limit(8)
      .select("tx_hash", "log_index")) as { tx_hash: string; log_index: number }[];
    if (candidates.length === 0) return undefined;
    for (const c of candidates) {
      const spent = await db("deploy_fee_payments")
        .where({ tx_hash: c.tx_hash, log_index: c.log_index })
        .whereNull("spent_at")
        .update({ spent_at: spentAt });
      if (spent > 0) return { txHash: c.tx_hash, logIndex: Number(c.log_index) };
    }
  }
}
