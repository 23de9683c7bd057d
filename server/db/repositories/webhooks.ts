/**
 * Webhooks (tables `webhooks`, `webhook_deliveries`, `webhook_cursor`): a wallet's endpoints, one delivery row per
 * (webhook, event) with its attempts and outcome, and the fan-out cursor. The secret is key material: it leaves
 * only in the registration answer.
 */
import type { Queryable } from "./util";

export interface WebhookRecord {
  id: number;
  wallet: string;
  keyId: number | null;
  url: string;
  /** null: every event type. */
  events: string[] | null;
  secret: string;
  afterEventId: number;
  createdAt: number;
}

export type DeliveryStatus = "pending" | "delivered" | "failed";

export interface DeliveryRecord {
  id: number;
  webhookId: number;
  eventId: number;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAtMs: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAtMs: number;
  updatedAtMs: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const webhookFromRow = (r: any): WebhookRecord => ({
  id: Number(r.id),
  wallet: r.wallet,
  keyId: r.key_id === null || r.key_id === undefined ? null : Number(r.key_id),
  url: r.url,
  events: r.events === null || r.events === undefined ? null : JSON.parse(String(r.events)),
  secret: r.secret,
  afterEventId: Number(r.after_event_id),
  createdAt: Number(r.created_at),
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const deliveryFromRow = (r: any): DeliveryRecord => ({
  id: Number(r.id),
  webhookId: Number(r.webhook_id),
  eventId: Number(r.event_id),
  status: r.status as DeliveryStatus,
  attempts: Number(r.attempts),
  nextAttemptAtMs:
    r.next_attempt_at_ms === null || r.next_attempt_at_ms === undefined ? null : Number(r.next_attempt_at_ms),
  lastStatusCode: r.last_status_code === null || r.last_status_code === undefined ? null : Number(r.last_status_code),
  lastError: r.last_error ?? null,
  createdAtMs: Number(r.created_at_ms),
  updatedAtMs: Number(r.updated_at_ms),
});

export async function insertWebhook(db: Queryable, w: Omit<WebhookRecord, "id">): Promise<WebhookRecord> {
  const [row] = await db("webhooks")
    .insert({
      wallet: w.wallet,
      key_id: w.keyId,
      url: w.url,
      events: w.events === null ? null : JSON.stringify(w.events),
      secret: w.secret,
      after_event_id: w.afterEventId,
      created_at: w.createdAt,
    })
    .returning("id");
  const id = typeof row === "object" ? Number(row.id) : Number(row);
  return { ...w, id };
}

export async function listWebhooksOf(db: Queryable, wallet: string): Promise<WebhookRecord[]> {
  return (await db("webhooks").where({ wallet: wallet.toLowerCase() }).orderBy("id")).map(webhookFromRow);
}

export async function countWebhooksOf(db: Queryable, wallet: string): Promise<number> {
  const [row] = await db("webhooks").where({ wallet: wallet.toLowerCase() }).count({ n: "*" });
  return Number(row.n);
}

export async function findWebhook(db: Queryable, id: number): Promise<WebhookRecord | undefined> {
  const row = await db("webhooks").where({ id }).first();
  return row ? webhookFromRow(row) : undefined;
}

export async function allWebhooks(db: Queryable): Promise<WebhookRecord[]> {
  return (await db("webhooks").orderBy("id")).map(webhookFromRow);
}

/** Deletes the webhook and its deliveries; false when `wallet` has no webhook `id`. */
export async function deleteWebhook(db: Queryable, id: number, wallet: string): Promise<boolean> {
  const owned = await db("webhooks").where({ id, wallet: wallet.toLowerCase() }).first();
  if (!owned) return false;
  await db("webhook_deliveries").where({ webhook_id: id }).delete();
  await db("webhooks").where({ id }).delete();
  return true;
}

/** Adds pending deliveries (one per webhook and event; an existing pair is left alone). */
export async function insertDeliveries(
  db: Queryable,
  pairs: readonly { webhookId: number; eventId: number }[],
  nowMs: number,
): Promise<void> {
  if (pairs.length === 0) return;
  await db("webhook_deliveries")
    .insert(
      pairs.map((p) => ({
        webhook_id: p.webhookId,
        event_id: p.eventId,
        status: "pending",
        attempts: 0,
        next_attempt_at_ms: nowMs,
        created_at_ms: nowMs,
        updated_at_ms: nowMs,
      })),
    )
    .onConflict(["webhook_id", "event_id"])
    .ignore();
}

/**
 * Webhooks with a delivery due at `nowMs`, the one with the oldest due event first, leaving out `except` (the ones
 * this process is already sending to).
 */
export async function dueWebhookIds(
  db: Queryable,
  nowMs: number,
  except: readonly number[],
  limit: number,
): Promise<number[]> {
  const query = db("webhook_deliveries")
    .where({ status: "pending" })
    .andWhere("next_attempt_at_ms", "<=", nowMs)
    .groupBy("webhook_id")
    .select("webhook_id")
    .min({ first: "event_id" })
    .orderBy("first")
    .limit(limit);
  if (except.length > 0) query.whereNotIn("webhook_id", except);
  const rows = (await query) as unknown as { webhook_id: number | string }[];
  return rows.map((r) => Number(r.webhook_id));
}

/** A webhook's next delivery due at `nowMs` (oldest event first), if any. */
export async function nextDueDelivery(
  db: Queryable,
  webhookId: number,
  nowMs: number,
): Promise<DeliveryRecord | undefined> {
  const row = await db("webhook_deliveries")
    .where({ webhook_id: webhookId, status: "pending" })
    .andWhere("next_attempt_at_ms", "<=", nowMs)
    .orderBy([{ column: "event_id" }, { column: "id" }])
    .first();
  return row ? deliveryFromRow(row) : undefined;
}

/**
 * Takes a due delivery for one attempt: moves its next try to `leaseUntilMs` unless another sender took it first
 * (several API processes share the table). True when this caller holds it.
 */
export async function claimDelivery(db: Queryable, d: DeliveryRecord, leaseUntilMs: number): Promise<boolean> {
  const updated = await db("webhook_deliveries")
    .where({ id: d.id, status: "pending", next_attempt_at_ms: d.nextAttemptAtMs })
    .update({ next_attempt_at_ms: leaseUntilMs });
  return updated === 1;
}

export async function recordAttempt(
  db: Queryable,
  id: number,
  outcome: {
    status: DeliveryStatus;
    attempts: number;
    nextAttemptAtMs: number | null;
    lastStatusCode: number | null;
    lastError: string | null;
    nowMs: number;
  },
): Promise<void> {
  await db("webhook_deliveries").where({ id }).update({
    status: outcome.status,
    attempts: outcome.attempts,
    next_attempt_at_ms: outcome.nextAttemptAtMs,
    last_status_code: outcome.lastStatusCode,
    last_error: outcome.lastError,
    updated_at_ms: outcome.nowMs,
  });
}

/** A webhook's deliveries, newest first. */
export async function listDeliveries(
  db: Queryable,
  webhookId: number,
  options: { limit: number; status?: DeliveryStatus },
): Promise<DeliveryRecord[]> {
  const query = db("webhook_deliveries").where({ webhook_id: webhookId });
  if (options.status) query.andWhere({ status: options.status });
  return (await query.orderBy("id", "desc").limit(options.limit)).map(deliveryFromRow);
}

export async function getFanOutCursor(db: Queryable): Promise<number | undefined> {
  const row = await db("webhook_cursor").where({ name: "webhooks" }).first();
  return row ? Number(row.event_id) : undefined;
}

export async function setFanOutCursor(db: Queryable, eventId: number): Promise<void> {
  await db("webhook_cursor").insert({ name: "webhooks", event_id: eventId }).onConflict("name").merge(["event_id"]);
}

/** Deletes finished deliveries updated before `beforeMs` (the event log's retention). */
export async function pruneDeliveries(db: Queryable, beforeMs: number): Promise<number> {
  return db("webhook_deliveries").whereNot({ status: "pending" }).andWhere("updated_at_ms", "<", beforeMs).delete();
}
