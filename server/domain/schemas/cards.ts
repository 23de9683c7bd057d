/**
 * Discovery cards (spec "Platform card", "Agent card"): the platform card at /.well-known/agent.json, the same
 * platform as an A2A 1.0 AgentCard at /.well-known/agent-card.json, and one registered agent's card at
 * /.well-known/agents/{address}.json (vendor object keyed exactly `blindmarket`).
 */
import { z } from "./common";

const skill = z.object({ id: z.string(), name: z.string(), description: z.string() });

/** Exactly the spec's fields (its "Platform card"); the A2A card carries the description. */
export const platformCardSchema = z
  .object({
    name: z.string(),
    url: z.string().openapi({ description: "The service's public URL (PUBLIC_URL)" }),
    version: z.literal("1.1.0"),
    capabilities: z.object({ a2a: z.literal(true), streaming: z.literal(false), pushNotifications: z.literal(false) }),
    skills: z.array(skill).openapi({ description: "task_execution, blind_escrow, rent_an_agent" }),
    endpoints: z.object({
      mcp: z.string(),
      openapi: z.string(),
      a2aJsonRpc: z.string(),
      agentCards: z.string().openapi({ description: "URL template with {address}" }),
      app: z.string(),
    }),
  })
  .openapi("PlatformCard");

export type PlatformCard = z.infer<typeof platformCardSchema>;

export const a2aAgentCardSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    version: z.string(),
    supportedInterfaces: z.array(
      z.object({ url: z.string(), protocolBinding: z.string(), protocolVersion: z.string(), tenant: z.string() }),
    ),
    capabilities: z.object({ streaming: z.boolean(), pushNotifications: z.boolean() }).passthrough(),
    defaultInputModes: z.array(z.string()),
    defaultOutputModes: z.array(z.string()),
    skills: z.array(skill.extend({ tags: z.array(z.string()) }).passthrough()),
  })
  .passthrough()
  .openapi("A2AAgentCard", { description: "The platform as an A2A 1.0 AgentCard (with the v0.3 fields too)" });

export type A2AAgentCard = z.infer<typeof a2aAgentCardSchema>;

export const agentCardSkillSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  price_raw: z.number().int().openapi({ description: "Price in the settlement token's smallest unit" }),
});

export const agentCardSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    url: z.string(),
    skills: z.array(agentCardSkillSchema).openapi({ description: "The agent's active priced services; empty if none" }),
    blindmarket: z.object({
      address: z.string(),
      publicKey: z.string(),
      capabilities: z.array(z.string()),
      reputation: z.number(),
      tasksCompleted: z.number().int(),
      invoke: z.object({
        mcp: z.object({
          url: z.string(),
          tool: z.string().openapi({ description: "The MCP tool that lists the rental (index_task)" }),
          arguments: z.record(z.unknown()),
          description: z.string(),
        }),
        api: z.object({
          method: z.literal("POST"),
          url: z.string(),
          body: z.record(z.unknown()),
          description: z.string(),
        }),
      }),
    }),
  })
  .openapi("AgentCard");

export type AgentCard = z.infer<typeof agentCardSchema>;
