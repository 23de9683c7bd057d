/**
 * The marketplace verifier's intents (`verifier_intents`): one row per chain call it must make exactly once, keyed by
 * the settlement chain and `intent_key` (`assign:<taskId>`, `verdict:<taskId>:<attempt>`): each chain's verifier has
 * its own intents and its own nonces, and reads only its chain's rows. Status moves pending -> sent -> confirmed | failed;
 * the signed transaction is stored with the move to `sent`, before it is broadcast. Every transition is a conditional
 * update on the current status, so a late writer (the loop and a request racing) cannot move a row backwards.
 */
import type { ChainName } from "../../escrow/records";
import type { Queryable } from "./util";

/** What the verifier sends: an assignment or a verdict. The one definition (server/verifier/types.ts uses it). */
export const INTENT_KINDS = ["assign", "verdict"] as const;
export type IntentKind = (typeof INTENT_KINDS)[number];
/** An intent's states, in order: pending -> sent -> confirmed | failed. */
export const INTENT_STATUSES = ["pending", "sent", "confirmed", "failed"] as const;
export type IntentStatus = (typeof INTENT_STATUSES)[number];

export interface IntentRecord {
  id: number;
  /** The chain whose escrow the call goes to. */
  chain: ChainName;
  kind: IntentKind;
  taskId: number;
  key: string;
  /** The call's arguments: `{ worker }` for assign, `{ attempt, passed }` for verdict. */
  args: Record<string, unknown>;
  status: IntentStatus;
  nonce: number | null;
  txHash: string | null;
  /** The signed transaction, re-broadcast as-is while it is not mined. */
  rawTx: string | null;
  /** Broadcasts of the current transaction (the first one and every re-broadcast). */
  attempts: number;
  lastError: string | null;
  /** Unix seconds. */
  createdAt: number;
  updatedAt: number;
}

const TABLE = "verifier_intents";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const fromRow = (r: any): IntentRecord => ({
  id: Number(r.id),
  chain: r.chain as ChainName,
  kind: r.kind,
  taskId: Number(r.task_id),
  key: r.intent_key,
  args: JSON.parse(r.args),
  status: r.status,
  nonce: r.nonce === null || r.nonce === undefined ? null : Number(r.nonce),
  txHash: r.tx_hash ?? null,
  rawTx: r.raw_tx ?? null,
  attempts: Number(r.attempts),
  lastError: r.last_error ?? null,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

/**
 * Inserts a pending intent unless one with this chain and key exists (`on conflict do nothing`: of concurrent inserts
 * exactly one creates the row). Returns the row with this key and whether this call created it.
 */
export async function insertIntent(
  db: Queryable,
  intent: {
    chain: ChainName;
    kind: IntentKind;
    taskId: number;
    key: string;
    args: Record<string, unknown>;
    now: number;
  },
): Promise<{ intent: IntentRecord; created: boolean }> {
  const inserted = await db(TABLE)
    .insert({
      chain: intent.chain,
      kind: intent.kind,
      task_id: intent.taskId,
      intent_key: intent.key,
      args: JSON.stringify(intent.args),
      status: "pending",
      nonce: null,
      tx_hash: null,
      raw_tx: null,
      attempts: 0,
      last_error: null,
      created_at: intent.now,
      updated_at: intent.now,
    })
    .onConflict(["chain", "intent_key"])
    .ignore()
    .returning(["id"]);
  const row = await findIntent(db, intent.chain, intent.key);
  if (!row) throw new Error(`verifier intent ${intent.chain}/${intent.key} vanished after its insert`);
  return { intent: row, created: inserted.length === 1 };
}

export async function findIntent(db: Queryable, chain: ChainName, key: string): Promise<IntentRecord | undefined> {
  const row = await db(TABLE).where({ chain, intent_key: key }).first();
  return row ? fromRow(row) : undefined;
}

export async function findIntentById(db: Queryable, id: number): Promise<IntentRecord | undefined> {
  const row = await db(TABLE).where({ id }).first();
  return row ? fromRow(row) : undefined;
}

/** The intents of `chain` in one of `statuses`, oldest nonce first (rows without a nonce by id). */
export async function listIntentsByStatus(
  db: Queryable,
  chain: ChainName,
  statuses: readonly IntentStatus[],
): Promise<IntentRecord[]> {
  const rows = await db(TABLE)
    .where({ chain })
    .whereIn("status", statuses)
    .orderBy([
      { column: "nonce", order: "asc" },
      { column: "id", order: "asc" },
    ]);
  return rows.map(fromRow);
}

/** Every intent of a task on `chain`, oldest first. */
export async function listIntentsByTask(db: Queryable, chain: ChainName, taskId: number): Promise<IntentRecord[]> {
  const rows = await db(TABLE).where({ chain, task_id: taskId }).orderBy("id", "asc");
  return rows.map(fromRow);
}

/**
 * The highest nonce of an intent of `chain` that holds or held a nonce there (not failed), or null: the verifier's
 * nonces are per chain. A failed intent's nonce is either consumed on-chain (a reverted transaction: the chain's own
 * count covers it) or was never used.
 */
export async function highestActiveNonce(db: Queryable, chain: ChainName): Promise<number | null> {
  const row = await db(TABLE)
    .where({ chain })
    .whereNot({ status: "failed" })
    .whereNotNull("nonce")
    .max({ n: "nonce" })
    .first();
  const n = row?.n;
  return n === null || n === undefined ? null : Number(n);
}

/** pending -> sent with the signed transaction. False when the row was no longer pending. */
export async function markSent(
  db: Queryable,
  id: number,
  tx: { nonce: number; txHash: string; rawTx: string; now: number },
): Promise<boolean> {
  const n = await db(TABLE).where({ id, status: "pending" }).update({
    status: "sent",
    nonce: tx.nonce,
    tx_hash: tx.txHash,
    raw_tx: tx.rawTx,
    attempts: 0,
    last_error: null,
    updated_at: tx.now,
  });
  return n === 1;
}

/** One more broadcast of a sent intent, with its error if it failed (null clears the last error). */
export async function recordBroadcast(db: Queryable, id: number, error: string | null, now: number): Promise<void> {
  await db(TABLE)
    .where({ id, status: "sent" })
    .update({ attempts: db.raw("attempts + 1"), last_error: error, updated_at: now });
}

/** sent -> confirmed (the receipt says status 1). */
export async function markConfirmed(db: Queryable, id: number, now: number): Promise<boolean> {
  const n = await db(TABLE).where({ id, status: "sent" }).update({ status: "confirmed", updated_at: now });
  return n === 1;
}

/** pending | sent -> failed with the reason. */
export async function markFailed(db: Queryable, id: number, error: string, now: number): Promise<boolean> {
  const n = await db(TABLE)
    .where({ id })
    .whereIn("status", ["pending", "sent"])
    .update({ status: "failed", last_error: error, updated_at: now });
  return n === 1;
}

/** pending -> failed: a call refused before anything of it reached the chain. */
export async function failPendingIntent(db: Queryable, id: number, error: string, now: number): Promise<boolean> {
  const n = await db(TABLE)
    .where({ id, status: "pending" })
    .update({ status: "failed", last_error: error, updated_at: now });
  return n === 1;
}

/** Removes a pending intent (its call was refused before anything was signed or accepted by the node). */
export async function deletePendingIntent(db: Queryable, id: number): Promise<boolean> {
  const n = await db(TABLE).where({ id, status: "pending" }).delete();
  return n === 1;
}

/**
 * Puts a sent intent whose transaction the node refused back to pending (the transaction can never be mined: its
 * nonce is free again), so it can be deleted or signed anew.
 */
export async function unsend(db: Queryable, id: number, now: number): Promise<boolean> {
  const n = await db(TABLE).where({ id, status: "sent" }).update({
    status: "pending",
    nonce: null,
    tx_hash: null,
    raw_tx: null,
    attempts: 0,
    updated_at: now,
  });
  return n === 1;
}

/**
 * failed -> pending with new arguments: a new attempt of a call whose transaction can never be mined (it reverted,
 * or its nonce went to another transaction). False when the row was not failed.
 */
export async function retryFailedIntent(
  db: Queryable,
  id: number,
  args: Record<string, unknown>,
  now: number,
): Promise<boolean> {
  const n = await db(TABLE)
    .where({ id, status: "failed" })
    .update({
      status: "pending",
      args: JSON.stringify(args),
      nonce: null,
      tx_hash: null,
      raw_tx: null,
      attempts: 0,
      updated_at: now,
    });
  return n === 1;
}
