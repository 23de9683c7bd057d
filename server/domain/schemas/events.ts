/**
 * Push: the event `data` of the SSE stream (GET /api/v1/events) and of webhook deliveries, and the webhook routes'
 * bodies and answers (docs/api.md, "Events" and "Webhooks").
 */
import { z, pageLimit } from "./common";
import { MARKETPLACE_STATUSES } from "./marketplace";
import { CHAIN_NAMES } from "../../escrow/records";

export const EVENT_TYPES = [
  "task.open",
  "task.offered",
  "task.listed",
  "task.assigned",
  "task.submitted",
  "task.verdict",
  "task.disputed",
  "task.settled",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const EVENT_ROLES = ["poster", "worker", "target", "executor"] as const;
export type EventRole = (typeof EVENT_ROLES)[number];

export const marketEventSchema = z
  .object({
    id: z.string().openapi({ description: "The event id (decimal), the SSE `id:` line; strictly increasing" }),
    type: z.enum(EVENT_TYPES),
    taskHash: z.string(),
    chain: z.enum(CHAIN_NAMES).openapi({ description: "The settlement chain of the task" }),
    chainId: z.number().int().nullable().openapi({ description: "That chain's EVM chain id" }),
    onChainTaskId: z.string().openapi({ description: "Decimal string: the task's id on `chain`" }),
    role: z.enum(EVENT_ROLES).openapi({ description: "Why the recipient gets the event" }),
    state: z.enum(MARKETPLACE_STATUSES).openapi({ description: "The task's marketplace state after the event" }),
    txHash: z
      .string()
      .nullable()
      .openapi({ description: "The transaction of the event (the funding one for listing events)" }),
    at: z.string().openapi({ description: "ISO time: block time for chain events, listing time for listing events" }),
  })
  .passthrough()
  .openapi("MarketEvent", {
    description:
      "Type-specific fields: task.listed/open/offered: privacy, amount, token, deadline, verificationMode, " +
      "requiredCapabilities, targetExecutor, serviceId; task.assigned: worker; task.submitted: attempt, evidenceHash; " +
      "task.verdict: passed, attempt; task.disputed: by, escalated; task.settled: outcome (paid | refunded | " +
      "cancelled), payout and fee or refund.",
  });
export type MarketEvent = z.infer<typeof marketEventSchema>;

export const eventsQuery = z.object({
  lastEventId: z
    .string()
    .regex(/^[0-9]{1,15}$/, "must be a decimal event id")
    .optional()
    .openapi({ description: "Resume after this event id, for clients that cannot send the Last-Event-ID header" }),
});

export const WEBHOOK_URL_MAX = 2000;

export const webhookBodySchema = z
  .object({
    url: z
      .string()
      .max(WEBHOOK_URL_MAX)
      .url("must be an absolute http(s) URL")
      .openapi({ description: "Where deliveries are POSTed: http(s), a public address" }),
    events: z
      .array(z.enum(EVENT_TYPES).openapi({ description: "An event type, e.g. task.offered" }))
      .min(1)
      .max(EVENT_TYPES.length)
      .optional()
      .openapi({ description: "Event types to deliver (default: every type)" }),
  })
  .strict()
  .openapi("WebhookBody");
export type WebhookBody = z.output<typeof webhookBodySchema>;

export const webhookSchema = z
  .object({
    id: z.number().int(),
    url: z.string(),
    events: z.array(z.enum(EVENT_TYPES)).nullable().openapi({ description: "null: every type" }),
    createdAt: z.number().int().openapi({ description: "Unix seconds" }),
  })
  .openapi("Webhook");

export const createdWebhookSchema = webhookSchema
  .extend({
    secret: z.string().openapi({ description: "The signing secret: answered here only, once" }),
  })
  .openapi("CreatedWebhook");

export const webhookListSchema = z.object({ webhooks: z.array(webhookSchema) });

export const webhookIdParams = z.object({
  id: z.coerce
    .number()
    .int()
    .positive()
    .max(2_147_483_647)
    .openapi({ type: "integer", description: "The webhook's id, as its registration answered" }),
});

export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

export const deliverySchema = z
  .object({
    id: z.number().int(),
    eventId: z.string(),
    eventType: z.string().nullable().openapi({ description: "null once the event left the log (retention)" }),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    nextAttemptAt: z.string().nullable().openapi({ description: "ISO time of the next try while pending" }),
    lastStatusCode: z.number().int().nullable().openapi({ description: "HTTP status of the last answer" }),
    lastError: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("WebhookDelivery");

export const deliveriesQuery = z.object({
  limit: pageLimit,
  status: z
    .enum(DELIVERY_STATUSES)
    .optional()
    .openapi({ description: "Only the deliveries in this state (default: every state)" }),
});

export const deliveryListSchema = z.object({ deliveries: z.array(deliverySchema) });

export const deletedSchema = z.object({ deleted: z.literal(true) });
