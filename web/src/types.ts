/** The shapes the web app reads: the SDK's types (client/sdk), which the API's schemas define. */
import type { MarketEventData, MarketEventType, WebhookDeliveries } from "../../client/sdk/index";

export type {
  ApiKeyCreated,
  DevnetWallets,
  OnChainTask,
  ServiceView,
  Settlement,
  TaskMeta,
  TaskState,
  WebhookCreated,
  WebhookView,
} from "../../client/sdk/index";
export type EventType = MarketEventType;
/** One event of the wallet's stream (its `data`). */
export type MarketEvent = MarketEventData;
export type WebhookDelivery = WebhookDeliveries["deliveries"][number];
