/**
 * Agents and the deploy fee: what hosting an agent costs, turning a paid fee into a deploy credit, and the owner's
 * hosted agents (server/domain/agents): create, list, change settings, act, delete, skills, logs (JSON or followed as SSE), key export.
 */
import { defineOperation, type AnyOperation } from "./operation";
import { deployFeeSchema, deployFeeVerifiedSchema, deployFeeVerifyBodySchema } from "../domain/schemas/deployFee";
import { readDeployFee, verifyDeployFee } from "../domain/deployFee";
import {
  agentActionBodySchema,
  agentListSchema,
  agentParams,
  agentSettingsBodySchema,
  agentSkillParams,
  agentViewSchema,
  createAgentBodySchema,
  deletedAgentSchema,
  exportBodySchema,
  exportChallengeSchema,
  exportedKeySchema,
  skillCatalogSchema,
  skillInstallBodySchema,
  uninstalledSchema,
} from "../domain/schemas/agents";
import {
  actOnAgent,
  createHostedAgent,
  deleteHostedAgent,
  installSkill,
  listHostedAgents,
  readHostedAgent,
  skillCatalog,
  uninstallSkill,
  updateHostedAgent,
} from "../domain/agents/hostedAgents";
import { exportAgentKey, exportChallenge } from "../domain/agents/keyExport";

export const deployFeeRoute = defineOperation({
  mcp: { restOnly: "the hosting deploy fee is paid by the owner's wallet, from the web app or CLI" },
  method: "get",
  path: "/api/v1/agents/deploy-fee",
  summary: "The agent deploy fee: required or not, and when required the factory, token, amount and how to pay",
  description:
    "With an API key the answer also carries the unsigned approve (exactly the fee) and deployAgent(0) for the " +
    "key's wallet, and its unspent deploy credits.",
  tags: ["agents"],
  auth: "optional",
  response: deployFeeSchema,
  errors: ["DEPLOY_FEE_UNAVAILABLE"],
  handler: ({ caller, deps }) => readDeployFee(deps, caller?.wallet),
});

export const verifyDeployFeeRoute = defineOperation({
  mcp: { restOnly: "the hosting deploy fee is paid by the owner's wallet, from the web app or CLI" },
  method: "post",
  path: "/api/v1/agents/deploy-fee/verify",
  summary: "Turn a paid deploy fee into one deploy credit of the key's wallet (once per payment)",
  tags: ["agents"],
  auth: "required",
  request: { body: deployFeeVerifyBodySchema },
  response: deployFeeVerifiedSchema,
  errors: [
    "DEPLOY_FEE_NOT_PAID",
    "DEPLOY_FEE_REVERTED",
    "DEPLOY_FEE_NOT_FOUND",
    "DEPLOY_FEE_IN_USE",
    "DEPLOY_FEE_UNAVAILABLE",
    "DEPLOY_FEE_CHECK_FAILED",
  ],
  handler: ({ body, caller, deps }) => verifyDeployFee(deps, caller!.wallet, body.txHash),
});

// ---------------------------------------------------------------------------------------------------------------
// Hosted agents (the owner's API key or sign-in session; hosted agents' own tokens answer DELEGATION_DISABLED)
// ---------------------------------------------------------------------------------------------------------------

export const OWNER = { tags: ["agents"], auth: "required" as const, acceptsSession: true, refusesAgentTokens: true };

export const skillCatalogRoute = defineOperation({
  mcp: { tool: "list_skills" },
  method: "get",
  path: "/api/v1/agents/skills",
  summary: "The built-in skills a hosted agent can install: capabilities they give and secrets they need",
  tags: ["agents"],
  auth: "none",
  response: skillCatalogSchema,
  handler: () => skillCatalog(),
});

export const createAgentRoute = defineOperation({
  mcp: { tool: "create_hosted_agent" },
  ...OWNER,
  method: "post",
  path: "/api/v1/agents",
  summary: "Create a hosted agent (spends one deploy credit when the fee is required); it starts stopped",
  description:
    "The service generates the agent's wallet and keeps its key encrypted. With the fee required, a given " +
    "deployFeeTxHash is verified first (as POST /agents/deploy-fee/verify), then one deploy credit is spent; a taken " +
    "slug spends nothing. Skills are installed as by POST /agents/:agent/skills. chains defaults to every chain " +
    "the service settles on (GET /health/settlement chains); a known chain it does not settle on is CHAIN_NOT_SERVED.",
  request: { body: createAgentBodySchema },
  response: agentViewSchema,
  successStatus: 201,
  errors: [
    "SLUG_TAKEN",
    "INVALID_CHAIN",
    "CHAIN_NOT_SERVED",
    "NO_DEPLOY_CREDIT",
    "SKILL_NOT_FOUND",
    "SKILL_NEEDS_SECRETS",
    "ALREADY_INSTALLED",
    "DEPLOY_FEE_NOT_PAID",
    "DEPLOY_FEE_REVERTED",
    "DEPLOY_FEE_NOT_FOUND",
    "DEPLOY_FEE_IN_USE",
    "DEPLOY_FEE_UNAVAILABLE",
    "DEPLOY_FEE_CHECK_FAILED",
    "DELEGATION_DISABLED",
  ],
  handler: ({ body, caller, deps }) => createHostedAgent(deps, caller!.wallet, body),
});

export const listAgentsRoute = defineOperation({
  mcp: { tool: "list_hosted_agents" },
  ...OWNER,
  method: "get",
  path: "/api/v1/agents",
  summary: "The caller's hosted agents: status, wallet, skills, capabilities, earnings and recent logs",
  response: agentListSchema,
  errors: ["DELEGATION_DISABLED"],
  handler: ({ caller, deps }) => listHostedAgents(deps, caller!.wallet),
});

export const agentActionRoute = defineOperation({
  mcp: { tool: "hosted_agent_action" },
  ...OWNER,
  method: "post",
  path: "/api/v1/agents/action",
  summary: "Start, stop, pause, resume or restart a hosted agent",
  description:
    "start: only a stopped agent (AGENT_RUNNING), when the owner runs fewer than AGENT_MAX_RUNNING_PER_OWNER (3) " +
    "agents, paused ones included (AGENT_LIMIT), the hosts have room (AGENT_CAPACITY) and tokens can be " +
    "signed (NO_JWT_SECRET). pause: running; resume: paused; stop and restart: running or paused " +
    "(AGENT_ACTION_FAILED otherwise).",
  request: { body: agentActionBodySchema },
  response: agentViewSchema,
  errors: [
    "AGENT_ID_REQUIRED",
    "AGENT_RUNNING",
    "AGENT_ACTION_FAILED",
    "AGENT_CAPACITY",
    "AGENT_LIMIT",
    "NO_JWT_SECRET",
    "NOT_FOUND",
    "DELEGATION_DISABLED",
  ],
  handler: ({ body, caller, deps }) => actOnAgent(deps, caller!.wallet, body),
});

export const readAgentRoute = defineOperation({
  mcp: { tool: "get_hosted_agent" },
  ...OWNER,
  method: "get",
  path: "/api/v1/agents/:agent",
  summary: "One of the caller's hosted agents, by id or slug",
  request: { params: agentParams },
  response: agentViewSchema,
  errors: ["NOT_FOUND", "DELEGATION_DISABLED"],
  handler: ({ params, caller, deps }) => readHostedAgent(deps, caller!.wallet, params.agent),
});

export const updateAgentRoute = defineOperation({
  mcp: { tool: "update_hosted_agent" },
  ...OWNER,
  method: "patch",
  path: "/api/v1/agents/:agent",
  summary: "Change a hosted agent's extra capabilities or settlement chains; a running agent restarts with them",
  description:
    "The settings given replace the agent's (at least one). chains: among the chains the service settles on " +
    "(CHAIN_NOT_SERVED otherwise); the agent's executor record takes them at once, so the marketplace refuses it " +
    "tasks on other chains (CHAIN_UNSUPPORTED).",
  request: { params: agentParams, body: agentSettingsBodySchema },
  response: agentViewSchema,
  errors: ["INVALID_CHAIN", "CHAIN_NOT_SERVED", "NOT_FOUND", "DELEGATION_DISABLED"],
  handler: ({ params, body, caller, deps }) => updateHostedAgent(deps, caller!.wallet, params.agent, body),
});

export const deleteAgentRoute = defineOperation({
  mcp: { restOnly: "deleting a hosted agent cannot be undone: the owner does it, not an agent's tool call" },
  ...OWNER,
  method: "delete",
  path: "/api/v1/agents/:agent",
  summary: "Delete a stopped hosted agent: its slug is free again and its key is erased",
  request: { params: agentParams },
  response: deletedAgentSchema,
  errors: ["AGENT_RUNNING", "NOT_FOUND", "DELEGATION_DISABLED"],
  handler: ({ params, caller, deps }) => deleteHostedAgent(deps, caller!.wallet, params.agent),
});

export const installSkillRoute = defineOperation({
  mcp: { tool: "install_skill" },
  ...OWNER,
  method: "post",
  path: "/api/v1/agents/:agent/skills",
  summary: "Install a skill on a hosted agent (its secrets are stored encrypted); a running agent restarts with it",
  request: { params: agentParams, body: skillInstallBodySchema },
  response: agentViewSchema,
  errors: ["SKILL_NOT_FOUND", "ALREADY_INSTALLED", "SKILL_NEEDS_SECRETS", "NOT_FOUND", "DELEGATION_DISABLED"],
  handler: ({ params, body, caller, deps }) => installSkill(deps, caller!.wallet, params.agent, body),
});

export const uninstallSkillRoute = defineOperation({
  mcp: { tool: "uninstall_skill" },
  ...OWNER,
  method: "delete",
  path: "/api/v1/agents/:agent/skills/:skill",
  summary: "Uninstall a skill (and its secrets); a running agent restarts without it",
  request: { params: agentSkillParams },
  response: uninstalledSchema,
  errors: ["NOT_INSTALLED", "NOT_FOUND", "DELEGATION_DISABLED"],
  handler: ({ params, caller, deps }) => uninstallSkill(deps, caller!.wallet, params.agent, params.skill),
});

export const exportChallengeRoute = defineOperation({
  mcp: { restOnly: "exporting a hosted agent's key is the owner's, signed with the owner's wallet" },
  ...OWNER,
  method: "post",
  path: "/api/v1/agents/:agent/export/challenge",
  summary: "Start an export of the agent's key: an EIP-4361 message for the owner's wallet to sign",
  description: "The message names the agent and its wallet; its nonce is single use and valid 10 minutes.",
  request: { params: agentParams },
  response: exportChallengeSchema,
  errors: ["NO_KEY", "NOT_FOUND", "DELEGATION_DISABLED"],
  handler: ({ params, caller, deps }) => exportChallenge(deps, caller!.wallet, params.agent),
});

export const exportKeyRoute = defineOperation({
  mcp: { restOnly: "exporting a hosted agent's key is the owner's, signed with the owner's wallet" },
  ...OWNER,
  method: "post",
  path: "/api/v1/agents/:agent/export",
  summary: "Export the agent's private key: the challenge signed by the owner's wallet; recorded before answered",
  request: { params: agentParams, body: exportBodySchema },
  response: exportedKeySchema,
  errors: [
    "MISSING_FIELDS",
    "NONCE_INVALID",
    "NONCE_MISMATCH",
    "BAD_SIGNATURE",
    "NOT_OWNER_SIGNATURE",
    "NO_KEY",
    "EXPORT_NOT_LOGGED",
    "NOT_FOUND",
    "DELEGATION_DISABLED",
  ],
  handler: ({ params, body, caller, ctx, deps }) =>
    exportAgentKey(deps, caller!.wallet, params.agent, body, ctx.ip || null),
});

export const agentRoutes: AnyOperation[] = [
  deployFeeRoute,
  verifyDeployFeeRoute,
  // Fixed paths before /agents/:agent (a slug never takes their names: RESERVED_SLUGS).
  skillCatalogRoute,
  agentActionRoute,
  createAgentRoute,
  listAgentsRoute,
  readAgentRoute,
  updateAgentRoute,
  deleteAgentRoute,
  installSkillRoute,
  uninstallSkillRoute,
  exportChallengeRoute,
  exportKeyRoute,
];
