/**
 * `market hosted`: the owner's hosted agents, which the service runs in its agent host (docs/hosting.md): list them,
 * the skills catalog, create one (spending a deploy credit; --pay pays the fee first), change its extra capabilities
 * and settlement chains, start, stop, pause, resume, restart, install and uninstall skills, read its log, delete it.
 */
import type { Context } from "../context";
import { apiOf, walletOf } from "../clients";
import { parseJsonObject, parseList, parseMinReward } from "../parse";
import { table } from "../output";
import { amountText } from "../format";
import { usageError } from "../errors";
import { payDeployFee, type HostedAgent, type HostedAgentAction } from "../../sdk/index";

export async function list(ctx: Context): Promise<void> {
  const { agents } = await apiOf(ctx).hostedAgents();
  ctx.out.result({ agents }, () =>
    agents.length === 0
      ? "No hosted agents. `market hosted create --slug <slug> --name <name> --skill summary --pay` makes one."
      : table([
          ["SLUG", "STATUS", "WALLET", "SKILLS", "EARNED", "PAID TASKS", "RESTARTS"],
          ...agents.map((a) => [
            a.slug ?? a.id,
            a.status === a.desiredState || a.status === "starting" ? a.status : `${a.status} (wants ${a.desiredState})`,
            a.wallet,
            a.skills.map((s) => s.skill).join(",") || "-",
            amountText(a.earnings.amount_raw),
            String(a.earnings.paidTasks),
            String(a.restarts),
          ]),
        ]),
  );
}

export async function skills(ctx: Context): Promise<void> {
  const catalog = await apiOf(ctx, false).skillCatalog();
  ctx.out.result(catalog, () =>
    table([
      ["SKILL", "CAPABILITIES", "SECRETS", "WHAT"],
      ...catalog.skills.map((s) => [
        s.id,
        s.configDependentCapabilities ? "(from its config)" : s.capabilities.join(","),
        s.requiredSecrets.join(",") || "-",
        s.title,
      ]),
    ]),
  );
}

/** `--secret name=value` (repeatable) as an object. */
function parseSecrets(pairs: string[] | undefined): Record<string, string> | undefined {
  if (!pairs || pairs.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at <= 0) throw usageError("INVALID_SECRET", `--secret ${pair}: write it as name=value`);
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

function parseConfig(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  return parseJsonObject(text, "INVALID_CONFIG", `--skill-config must be a JSON object, e.g. '{"maxSentences":2}'`);
}

function describe(agent: HostedAgent): string[] {
  return [
    `Hosted agent ${agent.slug ?? agent.id} (${agent.id}): ${agent.status}, wallet ${agent.wallet}.`,
    `Skills: ${agent.skills.map((s) => s.skill).join(", ") || "-"}; capabilities: ${agent.capabilities.join(", ") || "-"}.`,
    `Chains: ${agent.chains.join(", ")}.`,
  ];
}

export async function create(
  ctx: Context,
  options: {
    slug: string;
    name: string;
    description?: string;
    skill?: string[];
    capabilities?: string;
    chains?: string;
    minReward: string;
    verifierName?: string;
    pay?: boolean;
  },
): Promise<void> {
  const minReward = parseMinReward(options.minReward);
  const api = apiOf(ctx);
  if (options.pay) {
    const signer = walletOf(ctx);
    await ctx.out.step(
      `paying the deploy fee from ${signer.address} (approve exactly the fee, deployAgent, verify)`,
      () => payDeployFee({ api, signer }),
      (p) => (p.required ? `tx ${p.txHash}` : "no fee charged"),
    );
  }
  const agent = await ctx.out.step(`creating hosted agent ${options.slug}`, () =>
    api.createHostedAgent({
      slug: options.slug,
      name: options.name,
      ...(options.description ? { description: options.description } : {}),
      capabilities: parseList(options.capabilities) ?? [],
      ...(options.chains !== undefined ? { chains: parseList(options.chains) } : {}),
      minReward,
      skills: (options.skill ?? []).map((skill) => ({ skill })),
      verifier: options.verifierName ? { optIn: true, name: options.verifierName } : { optIn: false },
    }),
  );
  ctx.out.result(agent, [
    ...describe(agent),
    `Send its wallet a little gas, then \`market hosted start ${agent.slug}\`.`,
  ]);
}

/** `market hosted update <agent> [--capabilities <list>] [--chains <list>]`: the settings given replace the agent's. */
export async function update(ctx: Context, agent: string, options: { capabilities?: string; chains?: string }) {
  if (options.capabilities === undefined && options.chains === undefined) {
    throw usageError("NOTHING_TO_CHANGE", "give --capabilities or --chains (or both)");
  }
  const answer = await apiOf(ctx).updateHostedAgent(agent, {
    ...(options.capabilities !== undefined ? { capabilities: parseList(options.capabilities) } : {}),
    ...(options.chains !== undefined ? { chains: parseList(options.chains) } : {}),
  });
  ctx.out.result(answer, [...describe(answer), "A running agent restarts with them."]);
}

/** start, stop, pause, resume, restart. */
export function action(name: HostedAgentAction) {
  return async (ctx: Context, agent: string): Promise<void> => {
    const answer = await apiOf(ctx).hostedAgentAction(agent, name);
    ctx.out.result(answer, [
      `${name}: ${answer.slug ?? answer.id} is now wanted ${answer.desiredState} (status ${answer.status}).`,
    ]);
  };
}

export async function install(
  ctx: Context,
  agent: string,
  skill: string,
  options: { skillConfig?: string; secret?: string[] },
): Promise<void> {
  const secrets = parseSecrets(options.secret);
  const answer = await apiOf(ctx).installSkill(agent, {
    skill,
    ...(options.skillConfig !== undefined ? { config: parseConfig(options.skillConfig) } : {}),
    ...(secrets ? { secrets } : {}),
  });
  ctx.out.result(answer, describe(answer));
}

export async function uninstall(ctx: Context, agent: string, skill: string): Promise<void> {
  const answer = await apiOf(ctx).uninstallSkill(agent, skill);
  ctx.out.result(answer, `Skill ${skill} uninstalled from ${agent}.`);
}

export async function remove(ctx: Context, agent: string): Promise<void> {
  const answer = await apiOf(ctx).deleteHostedAgent(agent);
  ctx.out.result(answer, `Hosted agent ${agent} deleted: its key is erased.`);
}

export async function logs(ctx: Context, agent: string, options: { limit: string }): Promise<void> {
  const limit = Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) {
    throw usageError("INVALID_LIMIT", "--limit is a whole number from 1 to 500");
  }
  const answer = await apiOf(ctx).hostedAgentLogs(agent, { limit });
  ctx.out.result(answer, () =>
    answer.logs.length === 0 ? "No log lines yet." : answer.logs.map((l) => `${l.at} ${l.level} ${l.message}`),
  );
}
