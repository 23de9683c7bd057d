/**
 * Agents and the deploy fee: what hosting an agent costs, turning a paid fee into a deploy credit, and the owner's
 * hosted agents (server/domain/agents): create, list, act, delete, skills, logs (JSON or followed as SSE), key export.
 */
import { PassThrough } from "node:stream";
import { startSseResponse } from "../sseResponse";
import { takeStreamSlot } from "../../domain/events";
import { defineRoute, type AnyRoute } from "../route";
import { deployFeeSchema, deployFeeVerifiedSchema, deployFeeVerifyBodySchema } from "../../domain/schemas/deployFee";
import { readDeployFee, verifyDeployFee } from "../../domain/deployFee";
import {
  agentActionBodySchema,
  agentListSchema,
  agentParams,
  agentSkillParams,
  agentViewSchema,
  createAgentBodySchema,
  deletedAgentSchema,
  exportBodySchema,
  exportChallengeSchema,
  exportedKeySchema,
  logsQuery,
  logsSchema,
  skillCatalogSchema,
  skillInstallBodySchema,
  uninstalledSchema,
  type LogLine,
} from "../../domain/schemas/agents";
import {
  actOnAgent,
  createHostedAgent,
  deleteHostedAgent,
  followAgentLogs,
  installSkill,
  listHostedAgents,
  logFollowStart,
  ownedAgent,
  readAgentLogs,
  readHostedAgent,
  skillCatalog,
  uninstallSkill,
} from "../../domain/agents/hostedAgents";
import { exportAgentKey, exportChallenge } from "../../domain/agents/keyExport";

export const deployFeeRoute = defineRoute({
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

export const verifyDeployFeeRoute = defineRoute({
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

const OWNER = { tags: ["agents"], auth: "required" as const, acceptsSession: true, refusesAgentTokens: true };

export const skillCatalogRoute = defineRoute({
  method: "get",
  path: "/api/v1/agents/skills",
  summary: "The built-in skills a hosted agent can install: capabilities they give and secrets they need",
  tags: ["agents"],
  auth: "none",
  response: skillCatalogSchema,
  handler: () => skillCatalog(),
});

export const createAgentRoute = defineRoute({
  ...OWNER,
  method: "post",
  path: "/api/v1/agents",
  summary: "Create a hosted agent (spends one deploy credit when the fee is required); it starts stopped",
  description:
    "The service generates the agent's wallet and keeps its key encrypted. With the fee required, a given " +
    "deployFeeTxHash is verified first (as POST /agents/deploy-fee/verify), then one deploy credit is spent; a taken " +
    "slug spends nothing. Skills are installed as by POST /agents/:agent/skills.",
  request: { body: createAgentBodySchema },
  response: agentViewSchema,
  successStatus: 201,
  errors: [
    "SLUG_TAKEN",
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

export const listAgentsRoute = defineRoute({
  ...OWNER,
  method: "get",
  path: "/api/v1/agents",
  summary: "The caller's hosted agents: status, wallet, skills, capabilities, earnings and recent logs",
  response: agentListSchema,
  errors: ["DELEGATION_DISABLED"],
  handler: ({ caller, deps }) => listHostedAgents(deps, caller!.wallet),
});

export const agentActionRoute = defineRoute({
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

export const readAgentRoute = defineRoute({
  ...OWNER,
  method: "get",
  path: "/api/v1/agents/:agent",
  summary: "One of the caller's hosted agents, by id or slug",
  request: { params: agentParams },
  response: agentViewSchema,
  errors: ["NOT_FOUND", "DELEGATION_DISABLED"],
  handler: ({ params, caller, deps }) => readHostedAgent(deps, caller!.wallet, params.agent),
});

export const deleteAgentRoute = defineRoute({
  ...OWNER,
  method: "delete",
  path: "/api/v1/agents/:agent",
  summary: "Delete a stopped hosted agent: its slug is free again and its key is erased",
  request: { params: agentParams },
  response: deletedAgentSchema,
  errors: ["AGENT_RUNNING", "NOT_FOUND", "DELEGATION_DISABLED"],
  handler: ({ params, caller, deps }) => deleteHostedAgent(deps, caller!.wallet, params.agent),
});

export const agentLogsRoute = defineRoute({
  ...OWNER,
  method: "get",
  path: "/api/v1/agents/:agent/logs",
  summary: "A hosted agent's log: JSON lines, or followed as Server-Sent Events (Accept: text/event-stream)",
  description:
    "JSON: { logs } after ?after=<id> (oldest first), or the last `limit` lines without it. With Accept: " +
    "text/event-stream: one `id:`/`event: log`/`data:` record per line (after ?after= or Last-Event-ID, else the " +
    "new ones), polled every 500 ms, until the client goes. At most EVENTS_MAX_STREAMS_PER_KEY (5) concurrent follows " +
    "per API key, EVENTS_MAX_STREAMS_PER_WALLET (10) per wallet and EVENTS_MAX_STREAMS_PER_IP (20) per client " +
    "address (counted apart from event streams): over one, 429 RATE_LIMIT.",
  request: { params: agentParams, query: logsQuery },
  response: logsSchema,
  errors: ["NOT_FOUND", "DELEGATION_DISABLED", "RATE_LIMIT"],
  handler: async ({ params, query, caller, ctx, deps }) => {
    const agent = await ownedAgent(deps, caller!.wallet, params.agent);
    if (!/text\/event-stream/i.test(ctx.get("accept"))) return readAgentLogs(deps, agent, query);
    const lastEventId = Number(ctx.get("last-event-id") || NaN);
    const after = await logFollowStart(
      deps,
      agent,
      query.after ?? (Number.isSafeInteger(lastEventId) ? lastEventId : undefined),
    );
    // Capped per key, wallet and client address (429 RATE_LIMIT), each polling the database; ended by the registry
    // at its lifetime or its credential's revocation.
    const gone = new AbortController();
    const release = takeStreamSlot(deps, caller!, ctx.ip, "log", () => gone.abort());
    const body = new PassThrough();
    startSseResponse(ctx, body, () => {
      gone.abort();
      body.end();
    });
    const write = (line: LogLine) => body.write(`id: ${line.id}\nevent: log\ndata: ${JSON.stringify(line)}\n\n`);
    // Ends the stream when the follow ends (the client went, or a read failed: it resumes with Last-Event-ID).
    void followAgentLogs(deps, agent, after, write, gone.signal).then(() => {
      release();
      body.end();
    });
    return undefined as never;
  },
});

export const installSkillRoute = defineRoute({
  ...OWNER,
  method: "post",
  path: "/api/v1/agents/:agent/skills",
  summary: "Install a skill on a hosted agent (its secrets are stored encrypted); a running agent restarts with it",
  request: { params: agentParams, body: skillInstallBodySchema },
  response: agentViewSchema,
  errors: ["SKILL_NOT_FOUND", "ALREADY_INSTALLED", "SKILL_NEEDS_SECRETS", "NOT_FOUND", "DELEGATION_DISABLED"],
  handler: ({ params, body, caller, deps }) => installSkill(deps, caller!.wallet, params.agent, body),
});

export const uninstallSkillRoute = defineRoute({
  ...OWNER,
  method: "delete",
  path: "/api/v1/agents/:agent/skills/:skill",
  summary: "Uninstall a skill (and its secrets); a running agent restarts without it",
  request: { params: agentSkillParams },
  response: uninstalledSchema,
  errors: ["NOT_INSTALLED", "NOT_FOUND", "DELEGATION_DISABLED"],
  handler: ({ params, caller, deps }) => uninstallSkill(deps, caller!.wallet, params.agent, params.skill),
});

export const exportChallengeRoute = defineRoute({
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

export const exportKeyRoute = defineRoute({
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

export const agentRoutes: AnyRoute[] = [
  deployFeeRoute,
  verifyDeployFeeRoute,
  // Fixed paths before /agents/:agent (a slug never takes their names: RESERVED_SLUGS).
  skillCatalogRoute,
  agentActionRoute,
  createAgentRoute,
  listAgentsRoute,
  readAgentRoute,
  deleteAgentRoute,
  agentLogsRoute,
  installSkillRoute,
  uninstallSkillRoute,
  exportChallengeRoute,
  exportKeyRoute,
];
