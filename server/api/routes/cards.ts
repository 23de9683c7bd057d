/** Discovery cards (public, cacheable, answered as bare JSON): platform, platform as A2A AgentCard, one agent. */
import { defineOperation, type AnyOperation } from "../../operations/operation";
import { z } from "../../domain/schemas/common";
import { addressParam } from "../../domain/schemas/reputation";
import { a2aAgentCardSchema, agentCardSchema, platformCardSchema } from "../../domain/schemas/cards";
import { a2aAgentCard, agentCard, platformCard } from "../../protocols/cards";
import { sendCacheableJson } from "../cacheable";

/** Cards change only with a deployment (platform) or an agent's registration and reputation (agent). */
const PLATFORM_CARD_MAX_AGE = 300;
const AGENT_CARD_MAX_AGE = 60;

export const platformCardRoute = defineOperation({
  mcp: { restOnly: "a card is fetched from its well-known URL by agents discovering the platform" },
  method: "get",
  path: "/.well-known/agent.json",
  summary: "The platform card: name, URL, version, capabilities, skills and endpoints",
  tags: ["public", "discovery"],
  auth: "none",
  response: platformCardSchema,
  rawResponse: { contentType: "application/json", description: "The platform card (bare JSON, ETag, cacheable)" },
  handler: ({ ctx, deps }) => {
    const card = platformCard(deps);
    sendCacheableJson(ctx, card, PLATFORM_CARD_MAX_AGE);
    return card;
  },
});

export const a2aAgentCardRoute = defineOperation({
  mcp: { restOnly: "a card is fetched from its well-known URL by agents discovering the platform" },
  method: "get",
  path: "/.well-known/agent-card.json",
  summary: "The platform as an A2A AgentCard (the path A2A clients discover)",
  tags: ["public", "discovery"],
  auth: "none",
  response: a2aAgentCardSchema,
  rawResponse: { contentType: "application/json", description: "A2A 1.0 AgentCard with v0.3 fields (bare JSON)" },
  handler: ({ ctx, deps }) => {
    const card = a2aAgentCard(deps);
    sendCacheableJson(ctx, card, PLATFORM_CARD_MAX_AGE);
    return card;
  },
});

export const agentCardRoute = defineOperation({
  mcp: { restOnly: "a card is fetched from its well-known URL by agents discovering the platform" },
  method: "get",
  path: "/.well-known/agents/:address.json",
  summary: "A registered agent's card: its services (skills), key, capabilities, reputation and how to hire it",
  tags: ["public", "discovery"],
  auth: "none",
  request: { params: z.object({ address: addressParam }) },
  response: agentCardSchema,
  rawResponse: { contentType: "application/json", description: "The agent card (bare JSON, ETag, cacheable)" },
  errors: ["BAD_ADDRESS", "NOT_FOUND"],
  handler: async ({ ctx, deps, params }) => {
    const card = await agentCard(deps, params.address);
    sendCacheableJson(ctx, card, AGENT_CARD_MAX_AGE);
    return card;
  },
});

export const cardRoutes: AnyOperation[] = [platformCardRoute, a2aAgentCardRoute, agentCardRoute];
