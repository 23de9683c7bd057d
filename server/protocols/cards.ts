/**
 * The discovery cards, built from one description of the platform (PLATFORM) and the service's public URL:
 * - the spec's platform card (GET /.well-known/agent.json);
 * - the same platform as an A2A AgentCard (GET /.well-known/agent-card.json, the path A2A clients discover): the A2A
 *   1.0 fields (supportedInterfaces with the JSON-RPC URL for protocol versions 1.0 and 0.3) plus the v0.3 top-level
 *   fields (url, protocolVersion, preferredTransport), so clients of either version read it unmodified;
 * - a registered agent's card (GET /.well-known/agents/{address}.json), whose skills are its active services.
 */
import type { Deps } from "../domain/deps";
import { readExecutorProfile } from "../domain/executors";
import { activeServicesOf } from "../domain/services";
import type { A2AAgentCard, AgentCard, PlatformCard } from "../domain/schemas/cards";

/** What the platform is and offers: the one source of both platform cards. */
export const PLATFORM = {
  name: "Escrow task marketplace",
  description:
    "A marketplace where software agents take paid tasks: posters fund a USDC reward into an on-chain escrow, an " +
    "agent delivers, and is paid once the result is verified. The service never holds a user's key: money-moving " +
    "operations answer unsigned transactions.",
  version: "1.1.0",
  skills: [
    {
      id: "task_execution",
      name: "Task execution",
      description: "Browse open tasks, bid, accept, fetch the brief, submit results and get paid on verification.",
      tags: ["tasks", "escrow", "work"],
    },
    {
      id: "blind_escrow",
      name: "Blind escrow",
      description:
        "Post a task whose reward is held by the escrow contract; private briefs are encrypted to chosen agents.",
      tags: ["escrow", "usdc", "privacy"],
    },
    {
      id: "rent_an_agent",
      name: "Rent an agent",
      description: "Hire a registered agent's priced service with a task pinned to it (targetExecutor, serviceId).",
      tags: ["services", "hire"],
    },
  ],
} as const;

export interface PlatformUrls {
  base: string;
  mcp: string;
  openapi: string;
  a2aJsonRpc: string;
  agentCards: string;
  app: string;
}

/** Absolute URLs of the service's endpoints, from PUBLIC_URL. */
export function platformUrls(deps: Deps): PlatformUrls {
  const base = deps.config.api.publicUrl.replace(/\/+$/, "");
  return {
    base,
    mcp: `${base}/mcp`,
    openapi: `${base}/api/v1/openapi.json`,
    a2aJsonRpc: `${base}/a2a/v1`,
    agentCards: `${base}/.well-known/agents/{address}.json`,
    app: `${base}/`,
  };
}

export function platformCard(deps: Deps): PlatformCard {
  const urls = platformUrls(deps);
  return {
    name: PLATFORM.name,
    url: urls.base,
    version: PLATFORM.version,
    capabilities: { a2a: true, streaming: false, pushNotifications: false },
    skills: PLATFORM.skills.map(({ id, name, description }) => ({ id, name, description })),
    endpoints: {
      mcp: urls.mcp,
      openapi: urls.openapi,
      a2aJsonRpc: urls.a2aJsonRpc,
      agentCards: urls.agentCards,
      app: urls.app,
    },
  };
}

export function a2aAgentCard(deps: Deps): A2AAgentCard {
  const urls = platformUrls(deps);
  return {
    name: PLATFORM.name,
    description: PLATFORM.description,
    version: PLATFORM.version,
    supportedInterfaces: [
      { url: urls.a2aJsonRpc, protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "" },
      { url: urls.a2aJsonRpc, protocolBinding: "JSONRPC", protocolVersion: "0.3", tenant: "" },
    ],
    provider: { organization: PLATFORM.name, url: urls.base },
    documentationUrl: urls.openapi,
    capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["application/json"],
    skills: PLATFORM.skills.map((s) => ({
      ...s,
      tags: [...s.tags],
      examples: [],
      inputModes: ["application/json"],
      outputModes: ["application/json"],
      securityRequirements: [],
    })),
    signatures: [],
    // A2A v0.3 fields, for clients of that version.
    protocolVersion: "0.3.0",
    url: urls.a2aJsonRpc,
    preferredTransport: "JSONRPC",
  };
}

/** The agent's active rent-an-agent services, as card skills (one per service, with its price). */
async function cardSkills(deps: Deps, address: string): Promise<AgentCard["skills"]> {
  return (await activeServicesOf(deps, address)).map((service) => ({
    id: String(service.id),
    name: service.name,
    description: service.description,
    price_raw: service.price_raw,
  }));
}

/** GET /.well-known/agents/{address}.json: NOT_FOUND unless the address is a registered agent. */
export async function agentCard(deps: Deps, address: string): Promise<AgentCard> {
  const { executor, reputation } = await readExecutorProfile(deps, address);
  const urls = platformUrls(deps);
  const skills = await cardSkills(deps, executor.address);
  return {
    name: executor.name ?? `Agent ${executor.address}`,
    description:
      `A registered agent of ${PLATFORM.name}` +
      (executor.capabilities.length > 0 ? ` (capabilities: ${executor.capabilities.join(", ")})` : ""),
    url: urls.agentCards.replace("{address}", executor.address),
    skills,
    blindmarket: {
      address: executor.address,
      publicKey: executor.publicKey,
      capabilities: executor.capabilities,
      reputation: reputation.score,
      tasksCompleted: reputation.completed,
      invoke: {
        mcp: {
          url: urls.mcp,
          tool: "index_task",
          arguments: { targetExecutor: executor.address, serviceId: skills[0] ? Number(skills[0].id) : "<a skill id>" },
          description:
            "Fund a task paying at least the service's price_raw (build_task answers the unsigned createTask and " +
            "its approveTx: sign and send both, the approval first), then call index_task with its txHash and taskHash and these " +
            "arguments: only this agent may take it.",
        },
        api: {
          method: "POST",
          url: `${urls.base}/api/v1/a2a/tasks/index`,
          body: { targetExecutor: executor.address, serviceId: skills[0] ? Number(skills[0].id) : "<a skill id>" },
          description:
            "Fund a task paying at least the service's price_raw (POST /api/v1/tasks builds it), then list it with " +
            "targetExecutor and serviceId: only this agent may take it.",
        },
      },
    },
  };
}
