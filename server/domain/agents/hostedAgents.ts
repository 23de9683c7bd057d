/**
 * Hosted agents, the owner's side (docs/api.md, "Hosted agents"): create (spending one deploy credit when the fee is
 * required), change its settings (extra capabilities, settlement chains), list and read with status, earnings and
 * recent logs, the owner's actions (the state machine below), delete, skills, logs. The agent host (server/hosting)
 * runs what the owners asked for and reports the status.
 *
 * desired_state is the owner's, status the host's report:
 * - create: desired stopped, status stopped.
 * - start: only from stopped (AGENT_RUNNING), NO_JWT_SECRET without a token secret, AGENT_CAPACITY when the agents
 *   wanted running (desired running or paused) fill the live hosts' capacity -> desired running, status starting.
 * - pause: running -> paused; resume: paused -> running; stop: running | paused -> stopped; restart: running | paused,
 *   generation + 1. Any other start state: AGENT_ACTION_FAILED.
 * - installing or uninstalling a skill, or changing the settings, bumps the generation (a running worker restarts
 *   with them).
 * - delete: only when stopped (AGENT_RUNNING) -> status deleted, slug freed, key erased (export answers NO_KEY).
 *
 * The agent's wallet is generated here; its key is stored sealed under the key-encryption key and never logged.
 */
import crypto from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { Wallet } from "ethers";
import type { Deps } from "../deps";
import { AppError, fail } from "../../errors";
import { sealSecret, secretLabel } from "./secrets";
import { requireJwtSecret } from "./tokens";
import { capabilitiesFor, catalogView, findSkill } from "./skills/catalog";
import type { SkillDefinition } from "./skills/types";
import { isUnspentCreditOf, spendDeployCredit, verifyDeployFee } from "../deployFee";
import { isUniqueViolation } from "../../db/repositories/listings";
import {
  bumpGeneration,
  countAgentsWantedRunning,
  countOwnerAgentsWantedRunning,
  deleteInstalledSkill,
  findHostedAgent,
  findOwnedAgent,
  insertHostedAgent,
  insertInstalledSkill,
  listInstalledSkills,
  listOwnedAgents,
  liveHostCapacity,
  logsAfter,
  markAgentDeleted,
  payoutsTo,
  recentLogs,
  slugInUse,
  startAgentWithinCapacity,
  transitionAgent,
  updateAgentSettings,
  type DesiredState,
  type HostedAgentRow,
  type InstalledSkillRow,
  type LogRow,
} from "../../db/repositories/hostedAgents";
import { setExecutorChains } from "../../db/repositories/executors";
import type { ChainName } from "../../escrow/records";
import type {
  AgentAction,
  AgentSettingsBody,
  AgentView,
  CreateAgentBody,
  LogLine,
  SkillInstallBody,
} from "../schemas/agents";

/** Lines of log the agent view carries. */
export const RECENT_LOG_LINES = 20;

const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

export const newAgentId = () => `agt_${crypto.randomBytes(12).toString("hex")}`;

export const logLine = (row: LogRow): LogLine => ({
  id: row.id,
  level: row.level,
  message: row.message,
  at: new Date(row.atMs).toISOString(),
});

// ---------------------------------------------------------------------------------------------------------------
// Skills
// ---------------------------------------------------------------------------------------------------------------

/** GET /agents/skills: the built-in catalog (public). */
export const skillCatalog = catalogView;

/** A checked install: SKILL_NOT_FOUND, VALIDATION_ERROR naming the config field, SKILL_NEEDS_SECRETS naming the secret. */
interface PreparedInstall {
  skill: SkillDefinition;
  config: Record<string, unknown>;
  secrets: Record<string, string> | undefined;
}

function prepareInstall(deps: Deps, install: SkillInstallBody, field: string): PreparedInstall {
  const skill = findSkill(install.skill);
  if (!skill) {
    return fail("SKILL_NOT_FOUND", `${field}.skill: no skill ${install.skill}: GET /api/v1/agents/skills lists them`);
  }
  let config: Record<string, unknown>;
  try {
    // Private addresses (a webhook to 127.0.0.1) are the host's setting, never the owner's.
    config = skill.parseConfig(install.config ?? {}, { allowPrivateAddresses: deps.config.push.webhooks.allowPrivate });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new AppError({
      code: "VALIDATION_ERROR",
      message: `${field}.config: skill ${skill.id}: ${reason}`,
      details: { field: `${field}.config`, skill: skill.id },
    });
  }
  const missing = skill.requiredSecrets.filter((name) => !install.secrets?.[name]);
  if (missing.length > 0) {
    throw new AppError({
      code: "SKILL_NEEDS_SECRETS",
      message: `${field}.secrets: skill ${skill.id} needs the secret${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`,
      details: { skill: skill.id, missing },
    });
  }
  return { skill, config, secrets: install.secrets };
}

function installRow(deps: Deps, agentId: string, prepared: PreparedInstall, now: number): InstalledSkillRow {
  const secrets = prepared.secrets && Object.keys(prepared.secrets).length > 0 ? prepared.secrets : undefined;
  return {
    agentId,
    skill: prepared.skill.id,
    config: prepared.config,
    encryptedSecrets: secrets
      ? sealSecret(
          deps.config.hostedAgents.keyEncryptionKey,
          JSON.stringify(secrets),
          secretLabel.skillSecrets(agentId, prepared.skill.id),
        )
      : null,
    installedAt: now,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Views
// ---------------------------------------------------------------------------------------------------------------

/** Its skills' capabilities (as their installs' configs give them) and the owner's extra ones, sorted. */
function capabilitiesOf(agent: HostedAgentRow, skills: readonly InstalledSkillRow[]): string[] {
  const all = new Set(agent.capabilities);
  for (const installed of skills) {
    const skill = findSkill(installed.skill);
    if (skill) for (const c of capabilitiesFor(skill, installed.config)) all.add(c);
  }
  return [...all].sort();
}

function earningsOf(payouts: readonly string[]): AgentView["earnings"] {
  return { amount_raw: payouts.reduce((sum, p) => sum + BigInt(p), 0n).toString(), paidTasks: payouts.length };
}

async function agentViews(deps: Deps, agents: readonly HostedAgentRow[]): Promise<AgentView[]> {
  const skills = await listInstalledSkills(
    deps.db,
    agents.map((a) => a.id),
  );
  // One query for every agent's payouts (the logs are read per agent: the last lines of each).
  const payouts = await payoutsTo(
    deps.db,
    agents.map((a) => a.wallet),
  );
  return Promise.all(
    agents.map(async (agent) => {
      const own = skills.filter((s) => s.agentId === agent.id);
      return {
        id: agent.id,
        slug: agent.slug,
        name: agent.name,
        description: agent.description,
        owner: agent.owner,
        wallet: agent.wallet,
        status: agent.status,
        desiredState: agent.desiredState,
        minReward: agent.minReward,
        capabilities: capabilitiesOf(agent, own),
        extraCapabilities: agent.capabilities,
        chains: agent.chains,
        skills: own.map((s) => ({ skill: s.skill, config: s.config, installedAt: iso(s.installedAt) })),
        verifier: { optIn: agent.verifierOptIn, name: agent.verifierName },
        restarts: agent.restarts,
        generation: agent.generation,
        lastError: agent.lastError,
        earnings: earningsOf(payouts.get(agent.wallet.toLowerCase()) ?? []),
        recentLogs: (await recentLogs(deps.db, agent.id, RECENT_LOG_LINES)).map(logLine),
        createdAt: iso(agent.createdAt),
        updatedAt: iso(agent.updatedAt),
      };
    }),
  );
}

/** The owner's live agent by id or slug; NOT_FOUND otherwise (another owner's agent is not found either). */
export async function ownedAgent(
  deps: Deps,
  owner: string,
  idOrSlug: string,
  includeDeleted = false,
): Promise<HostedAgentRow> {
  const agent = await findOwnedAgent(deps.db, owner, idOrSlug, includeDeleted);
  if (!agent) return fail("NOT_FOUND", `no hosted agent ${idOrSlug} of this wallet: GET /api/v1/agents lists them`);
  return agent;
}

async function viewOf(deps: Deps, owner: string, idOrSlug: string): Promise<AgentView> {
  const [view] = await agentViews(deps, [await ownedAgent(deps, owner, idOrSlug)]);
  return view;
}

/** GET /agents. */
export async function listHostedAgents(deps: Deps, owner: string): Promise<{ agents: AgentView[] }> {
  return { agents: await agentViews(deps, await listOwnedAgents(deps.db, owner)) };
}

/** GET /agents/:agent. */
export const readHostedAgent = (deps: Deps, owner: string, idOrSlug: string) => viewOf(deps, owner, idOrSlug);

// ---------------------------------------------------------------------------------------------------------------
// Create and delete
// ---------------------------------------------------------------------------------------------------------------

/**
 * HOSTED_AGENTS=off: no agent is created or started (off the devnet such a server has no key-encryption key of its
 * own, only the public development one): AGENT_CAPACITY, a capacity of zero.
 */
function requireHosting(deps: Deps): void {
  if (!deps.config.hostedAgents.enabled) {
    fail("AGENT_CAPACITY", "hosted agents are off on this server (HOSTED_AGENTS=off): none can be created or started");
  }
}

function slugTaken(slug: string): never {
  return fail("SLUG_TAKEN", `body.slug: ${slug} is taken by another agent: choose another slug`);
}

/** Every chain this service settles on (CHAINS), sorted: a new agent's chains when the owner names none. */
const configuredChains = (deps: Deps): ChainName[] => deps.config.chains.map((c) => c.name).sort();

/** The owner's `chains` when this service settles on each (CHAIN_NOT_SERVED naming the first it does not). */
function servedChains(deps: Deps, chains: readonly ChainName[], field = "body.chains"): ChainName[] {
  const configured = configuredChains(deps);
  const unserved = chains.find((c) => !configured.includes(c));
  if (unserved) {
    fail(
      "CHAIN_NOT_SERVED",
      `${field}: this service does not settle on ${unserved} (its chains: ${configured.join(", ")}; GET /api/v1/health/settlement)`,
      { details: { chain: unserved, configured } },
    );
  }
  return [...chains];
}

/**
 * POST /agents. With the fee required: a given deployFeeTxHash is verified first (a payment already verified as an
 * unspent credit of this wallet is accepted as is), then one credit is spent in the transaction that inserts the
 * agent, so a taken slug spends nothing. The service generates the agent's wallet; `options.walletKey` is for the
 * devnet only (its hosted example agent keeps the demo account agent-1's wallet): the REST route never passes it.
 */
export async function createHostedAgent(
  deps: Deps,
  owner: string,
  body: CreateAgentBody,
  options: { walletKey?: string } = {},
): Promise<AgentView> {
  requireHosting(deps);
  const wallet = owner.toLowerCase();
  const chains = body.chains ? servedChains(deps, body.chains) : configuredChains(deps);
  const seen = new Set<string>();
  const installs = body.skills.map((install, i) => {
    if (seen.has(install.skill)) {
      fail("ALREADY_INSTALLED", `body.skills[${i}].skill: ${install.skill} is listed twice`);
    }
    seen.add(install.skill);
    return prepareInstall(deps, install, `body.skills[${i}]`);
  });
  const feeRequired = deps.config.marketplace.deployFeeRequired;
  if (feeRequired && body.deployFeeTxHash) {
    try {
      await verifyDeployFee(deps, wallet, body.deployFeeTxHash);
    } catch (error) {
      const alreadyCredit =
        error instanceof AppError &&
        error.code === "DEPLOY_FEE_IN_USE" &&
        (await isUnspentCreditOf(deps, wallet, body.deployFeeTxHash));
      if (!alreadyCredit) throw error;
    }
  }
  // After the fee's verification: a payment given with a taken slug is a credit of the wallet for its next try.
  if (await slugInUse(deps.db, body.slug)) slugTaken(body.slug);

  const id = newAgentId();
  const agentWallet = options.walletKey ? new Wallet(options.walletKey) : Wallet.createRandom();
  const now = deps.clock.wallNow();
  const kek = deps.config.hostedAgents.keyEncryptionKey;
  try {
    await deps.db.transaction(async (trx) => {
      if (await slugInUse(trx, body.slug)) slugTaken(body.slug);
      const credit = feeRequired ? await spendDeployCredit(deps, wallet, trx) : undefined;
      await insertHostedAgent(trx, {
        id,
        slug: body.slug,
        owner: wallet,
        name: body.name,
        description: body.description ?? null,
        capabilities: body.capabilities,
        chains,
        minReward: body.minReward,
        wallet: agentWallet.address.toLowerCase(),
        encryptedKey: sealSecret(kek, agentWallet.privateKey, secretLabel.walletKey(id)),
        verifierOptIn: body.verifier.optIn,
        verifierName: body.verifier.name ?? null,
        deployTxHash: credit?.txHash ?? null,
        deployLogIndex: credit?.logIndex ?? null,
        createdAt: now,
      });
      for (const install of installs) await insertInstalledSkill(trx, installRow(deps, id, install, now));
    });
  } catch (error) {
    // A concurrent create took the slug between the check and the insert: nothing was spent (rolled back).
    if (!(error instanceof AppError) && isUniqueViolation(error)) slugTaken(body.slug);
    throw error;
  }
  deps.logger.info("hosted agent created", { agentId: id, owner: wallet, wallet: agentWallet.address.toLowerCase() });
  return viewOf(deps, wallet, id);
}

/** DELETE /agents/:agent: only a stopped agent (AGENT_RUNNING otherwise). */
export async function deleteHostedAgent(
  deps: Deps,
  owner: string,
  idOrSlug: string,
): Promise<{ id: string; deleted: true }> {
  const agent = await ownedAgent(deps, owner, idOrSlug);
  if (!(await markAgentDeleted(deps.db, agent.id, deps.clock.wallNow()))) {
    fail("AGENT_RUNNING", `agent ${agent.id} is ${agent.desiredState}: stop it before deleting it`);
  }
  deps.agentHost?.wake();
  return { id: agent.id, deleted: true };
}

/**
 * PATCH /agents/:agent: replaces the settings given (the extra capabilities, the chains; CHAIN_NOT_SERVED for a
 * chain this service does not settle on). The generation is bumped, so a running worker restarts and registers them;
 * the agent's executor record, when its wallet is registered, takes the new chains at once (the marketplace's
 * CHAIN_UNSUPPORTED follows them even before the worker restarts, or while the agent is stopped).
 */
export async function updateHostedAgent(
  deps: Deps,
  owner: string,
  idOrSlug: string,
  body: AgentSettingsBody,
): Promise<AgentView> {
  const agent = await ownedAgent(deps, owner, idOrSlug);
  const chains = body.chains ? servedChains(deps, body.chains) : undefined;
  const now = deps.clock.wallNow();
  const chainNow = chains ? await deps.clock.chainNow() : 0;
  await deps.db.transaction(async (trx) => {
    if (!(await updateAgentSettings(trx, agent.id, { capabilities: body.capabilities, chains }, now))) {
      fail("NOT_FOUND", `no hosted agent ${idOrSlug} of this wallet: GET /api/v1/agents lists them`);
    }
    if (chains) await setExecutorChains(trx, agent.wallet, chains, chainNow);
  });
  deps.agentHost?.wake();
  deps.logger.info("hosted agent settings changed", { agentId: agent.id, changed: Object.keys(body) });
  return viewOf(deps, owner, agent.id);
}

// ---------------------------------------------------------------------------------------------------------------
// Actions
// ---------------------------------------------------------------------------------------------------------------

/** The states each action starts from, and where it leads. */
const TRANSITIONS: Record<Exclude<AgentAction, "start">, { from: DesiredState[]; to?: DesiredState }> = {
  pause: { from: ["running"], to: "paused" },
  resume: { from: ["paused"], to: "running" },
  stop: { from: ["running", "paused"], to: "stopped" },
  restart: { from: ["running", "paused"] },
};

/** AGENT_CAPACITY with the figures of the moment (after a start found no room). */
async function capacityFull(deps: Deps, sinceMs: number): Promise<never> {
  const [wanted, capacity] = await Promise.all([countAgentsWantedRunning(deps.db), liveHostCapacity(deps.db, sinceMs)]);
  throw new AppError({
    code: "AGENT_CAPACITY",
    message:
      capacity === 0
        ? "no agent host is running: start one (RUN_AGENT_HOST=true) or retry later"
        : `the agent hosts are full (${wanted} of ${capacity} agents running): stop an agent or retry later`,
    details: { running: wanted, capacity },
  });
}

/** POST /agents/action. */
export async function actOnAgent(
  deps: Deps,
  owner: string,
  input: { agentId?: string; action: AgentAction },
): Promise<AgentView> {
  if (!input.agentId?.trim()) {
    return fail("AGENT_ID_REQUIRED", "body.agentId: the agent's id (agt_...) or slug is required");
  }
  const agent = await ownedAgent(deps, owner, input.agentId.trim());
  const now = deps.clock.wallNow();
  if (input.action === "start") {
    requireHosting(deps);
    if (agent.desiredState !== "stopped") {
      fail("AGENT_RUNNING", `agent ${agent.id} is ${agent.desiredState} already: stop it first to start it again`);
    }
    requireJwtSecret(deps.config.hostedAgents);
    // The hosts' room and the start in one statement: concurrent starts never exceed the capacity.
    const sinceMs = deps.clock.wallNowMs() - deps.config.hostedAgents.leaseMs;
    const perOwner = deps.config.hostedAgents.maxRunningPerOwner;
    if (!(await startAgentWithinCapacity(deps.db, agent.id, { sinceMs, perOwner }, now))) {
      const current = await findHostedAgent(deps.db, agent.id);
      if (current && current.deletedAt === null && current.desiredState !== "stopped") {
        fail("AGENT_RUNNING", `agent ${agent.id} was started meanwhile`);
      }
      const mine = await countOwnerAgentsWantedRunning(deps.db, owner);
      if (mine >= perOwner) {
        fail(
          "AGENT_LIMIT",
          `an owner runs at most ${perOwner} hosted agents at once (${mine} running or paused): stop one first`,
          { details: { running: mine, maxRunning: perOwner } },
        );
      }
      await capacityFull(deps, sinceMs);
    }
  } else {
    const transition = TRANSITIONS[input.action];
    const moved = await transitionAgent(
      deps.db,
      agent.id,
      {
        from: transition.from,
        to: transition.to,
        bumpGeneration: input.action === "restart",
      },
      now,
    );
    if (!moved) {
      fail(
        "AGENT_ACTION_FAILED",
        `cannot ${input.action} agent ${agent.id}: it is ${agent.desiredState} (${input.action} needs ${transition.from.join(" or ")})`,
      );
    }
  }
  deps.agentHost?.wake();
  deps.logger.info("hosted agent action", { agentId: agent.id, action: input.action });
  return viewOf(deps, owner, agent.id);
}

// ---------------------------------------------------------------------------------------------------------------
// Skills of an agent
// ---------------------------------------------------------------------------------------------------------------

/** POST /agents/:agent/skills. */
export async function installSkill(
  deps: Deps,
  owner: string,
  idOrSlug: string,
  body: SkillInstallBody,
): Promise<AgentView> {
  const agent = await ownedAgent(deps, owner, idOrSlug);
  const prepared = prepareInstall(deps, body, "body");
  const now = deps.clock.wallNow();
  await deps.db.transaction(async (trx) => {
    if (!(await insertInstalledSkill(trx, installRow(deps, agent.id, prepared, now)))) {
      fail("ALREADY_INSTALLED", `body.skill: agent ${agent.id} has ${prepared.skill.id} installed already`);
    }
    await bumpGeneration(trx, agent.id, now);
  });
  deps.agentHost?.wake();
  return viewOf(deps, owner, agent.id);
}

/** DELETE /agents/:agent/skills/:skill. */
export async function uninstallSkill(
  deps: Deps,
  owner: string,
  idOrSlug: string,
  skill: string,
): Promise<{ id: string; skill: string; uninstalled: true }> {
  const agent = await ownedAgent(deps, owner, idOrSlug);
  const now = deps.clock.wallNow();
  await deps.db.transaction(async (trx) => {
    if (!(await deleteInstalledSkill(trx, agent.id, skill))) {
      fail("NOT_INSTALLED", `path.skill: agent ${agent.id} has no skill ${skill} installed`);
    }
    await bumpGeneration(trx, agent.id, now);
  });
  deps.agentHost?.wake();
  return { id: agent.id, skill, uninstalled: true };
}

// ---------------------------------------------------------------------------------------------------------------
// Logs
// ---------------------------------------------------------------------------------------------------------------

/** Interval at which a log follow looks for new lines. */
export const LOG_FOLLOW_POLL_MS = 500;

/** Where a log follow starts: after line `after`, or, when undefined, after the newest line now. */
export async function logFollowStart(deps: Deps, agent: HostedAgentRow, after: number | undefined): Promise<number> {
  return after ?? (await readAgentLogs(deps, agent, { limit: 1 })).logs.at(-1)?.id ?? 0;
}

/**
 * Follows an agent's log: `write` gets each line after line `after` (logFollowStart), in order, polled every
 * LOG_FOLLOW_POLL_MS, until `signal` aborts. Settles when the follow ends: aborted, or a read failed (logged; the
 * client resumes from its last line).
 */
export async function followAgentLogs(
  deps: Deps,
  agent: HostedAgentRow,
  after: number,
  write: (line: LogLine) => void,
  signal: AbortSignal,
): Promise<void> {
  let cursor = after;
  try {
    while (!signal.aborted) {
      const { logs } = await readAgentLogs(deps, agent, { after: cursor, limit: 500 });
      for (const line of logs) {
        if (signal.aborted) return;
        write(line);
        cursor = line.id;
      }
      // Aborting ends the wait at once (its rejection is the loop's exit, not a failure).
      if (logs.length < 500) await delay(LOG_FOLLOW_POLL_MS, undefined, { signal }).catch(() => undefined);
    }
  } catch (error) {
    deps.logger.warn("agent log follow failed; closing it (the client resumes with Last-Event-ID)", { error });
  }
}

/** GET /agents/:agent/logs: lines after `after` (oldest first), or the last `limit` lines without it. */
export async function readAgentLogs(
  deps: Deps,
  agent: HostedAgentRow,
  query: { after?: number; limit: number },
): Promise<{ logs: LogLine[] }> {
  const rows =
    query.after === undefined
      ? await recentLogs(deps.db, agent.id, query.limit)
      : await logsAfter(deps.db, agent.id, query.after, query.limit);
  return { logs: rows.map(logLine) };
}
