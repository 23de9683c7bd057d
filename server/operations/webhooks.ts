/**
 * Webhooks (/api/v1/webhooks): the key's wallet's events POSTed, signed, to a URL of the owner's; on REST and as MCP
 * tools. Hosted agents' tokens may not manage them (DELEGATION_DISABLED: a webhook outlives the token and would send
 * the agent's events to an address its owner did not choose through the owner API). Delivery and its retries live
 * in server/domain/events/webhooks.ts.
 */
import { defineOperation, type AnyOperation } from "./operation";
import {
  createdWebhookSchema,
  deletedSchema,
  deliveriesQuery,
  deliveryListSchema,
  webhookBodySchema,
  webhookIdParams,
  webhookListSchema,
} from "../domain/schemas/events";
import { listWebhooks, registerWebhook, removeWebhook, webhookDeliveries } from "../domain/events/webhooks";

export const createWebhookRoute = defineOperation({
  mcp: { tool: "create_webhook" },
  method: "post",
  path: "/api/v1/webhooks",
  summary: "Register a webhook: the key's wallet's events are POSTed to `url`, signed",
  description:
    "Answers the signing secret once. Each delivery is a JSON POST of a MarketEvent with X-Market-Signature " +
    "(t=<unix>,v1=<hex HMAC-SHA256(secret, '<t>.<raw body>')>), X-Market-Event-Id, X-Market-Event and " +
    "X-Market-Delivery; any 2xx is delivered, anything else retried with exponential back-off " +
    "(WEBHOOK_RETRY_BASE_MS doubled, WEBHOOK_MAX_ATTEMPTS attempts). Loopback, private, link-local and reserved " +
    "addresses are refused (WEBHOOK_URL_NOT_PUBLIC) unless the server allows them (the devnet).",
  tags: ["push"],
  auth: "required",
  refusesAgentTokens: true,
  request: { body: webhookBodySchema },
  response: createdWebhookSchema,
  successStatus: 201,
  errors: ["VALIDATION_ERROR", "UNAUTHORIZED", "WEBHOOK_URL_NOT_PUBLIC", "WEBHOOK_LIMIT"],
  handler: ({ body, caller, deps }) => registerWebhook(deps, caller!, body),
});

export const listWebhooksRoute = defineOperation({
  mcp: { tool: "list_webhooks" },
  method: "get",
  path: "/api/v1/webhooks",
  summary: "The key's wallet's webhooks (without their secrets)",
  tags: ["push"],
  auth: "required",
  refusesAgentTokens: true,
  response: webhookListSchema,
  errors: ["UNAUTHORIZED"],
  handler: ({ caller, deps }) => listWebhooks(deps, caller!.wallet),
});

export const deleteWebhookRoute = defineOperation({
  mcp: { tool: "delete_webhook" },
  method: "delete",
  path: "/api/v1/webhooks/:id",
  summary: "Delete a webhook and its deliveries",
  tags: ["push"],
  auth: "required",
  refusesAgentTokens: true,
  request: { params: webhookIdParams },
  response: deletedSchema,
  errors: ["VALIDATION_ERROR", "UNAUTHORIZED", "NOT_FOUND"],
  handler: ({ params, caller, deps }) => removeWebhook(deps, caller!.wallet, params.id),
});

export const webhookDeliveriesRoute = defineOperation({
  mcp: { tool: "list_webhook_deliveries" },
  method: "get",
  path: "/api/v1/webhooks/:id/deliveries",
  summary: "A webhook's deliveries, newest first: status, attempts, next try, last HTTP status and error",
  tags: ["push"],
  auth: "required",
  refusesAgentTokens: true,
  request: { params: webhookIdParams, query: deliveriesQuery },
  response: deliveryListSchema,
  errors: ["VALIDATION_ERROR", "UNAUTHORIZED", "NOT_FOUND"],
  handler: ({ params, query, caller, deps }) => webhookDeliveries(deps, caller!.wallet, params.id, query),
});

export const webhookRoutes: AnyOperation[] = [
  createWebhookRoute,
  listWebhooksRoute,
  deleteWebhookRoute,
  webhookDeliveriesRoute,
];
