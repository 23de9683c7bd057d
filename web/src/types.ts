/** The shapes the web app reads, as the API's zod schemas infer them (server/domain/schemas). */
export type { NonceResponse, SessionResponse, ApiKeyCreated, ApiKeyView } from "../../server/domain/schemas/accounts";
export type { TaskMeta, TaskState, OnChainTask } from "../../server/domain/schemas/marketplace";
export type { Settlement } from "../../server/domain/schemas/settlement";
export type { DevnetWallets } from "../../server/domain/schemas/devnet";
export type { EventType, MarketEvent } from "../../server/domain/schemas/events";
import type { z } from "zod";
import type { createdWebhookSchema, deliverySchema, webhookSchema } from "../../server/domain/schemas/events";
export type WebhookView = z.infer<typeof webhookSchema>;
export type WebhookCreated = z.infer<typeof createdWebhookSchema>;
export type WebhookDelivery = z.infer<typeof deliverySchema>;
export type { ServiceView } from "../../server/domain/schemas/services";
