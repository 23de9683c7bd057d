/**
 * Hosted agents in API tests: creating one over HTTP, a live agent host row (capacity), paying the deploy fee with
 * the transactions the API builds, a hosted agent's token, and a logger that keeps what it was told.
 */
import { expect } from "chai";
import type { ApiResponse, TestApi } from "./api";
import type { Market } from "./market";
import type { Logger } from "../../server/logger";
import { issueAgentToken } from "../../server/domain/agents/tokens";

export const AGENTS = "/api/v1/agents";
export const ACTION = `${AGENTS}/action`;
export const DEPLOY_FEE = `${AGENTS}/deploy-fee`;

export function expectError(res: ApiResponse, status: number, code: string, words?: string) {
  expect(res.status, res.text).to.equal(status);
  expect(res.json.success, res.text).to.equal(false);
  expect(res.json.error.code, res.text).to.equal(code);
  if (words) expect(res.json.error.message, res.text).to.contain(words);
}

/** Creates a hosted agent as `key`'s wallet; answers its view. */
export async function createAgent(api: TestApi, key: string, body: Record<string, unknown>) {
  const res = await api.request("POST", AGENTS, { key, body: { name: "Agent", ...body } });
  expect(res.status, res.text).to.equal(201);
  return res.json.data;
}

/** A live agent host of `capacity` (seen now by the service's clock). */
export async function addLiveHost(api: TestApi, id: string, capacity: number, seenAtMs = api.clock.wallNowMs()) {
  await api.deps.db("agent_hosts").insert({ id, capacity, seen_at_ms: seenAtMs });
}

export async function act(api: TestApi, key: string, agentId: string | undefined, action: string) {
  return api.request("POST", ACTION, { key, body: agentId === undefined ? { action } : { agentId, action } });
}

/** Pays the deploy fee from `signer` with the transactions the API built for `key`; the deployAgent tx hash. */
export async function payDeployFee(m: Market, signer: typeof m.worker, key: string): Promise<string> {
  const terms = (await m.api.request("GET", DEPLOY_FEE, { key })).json.data;
  await (await m.usdc.mint(signer.address, BigInt(terms.amount_raw))).wait();
  for (const tx of [terms.transactions.approve, terms.transactions.deployAgent]) {
    await (await signer.sendTransaction({ to: tx.to, data: tx.data })).wait();
  }
  const logs = await m.agentFactory.queryFilter(m.agentFactory.filters.AgentDeployed(signer.address), -1);
  return logs[logs.length - 1].transactionHash;
}

export async function agentToken(api: TestApi, agent: { id: string; wallet: string }): Promise<string> {
  return (await issueAgentToken(api.deps.config.hostedAgents, { agentId: agent.id, wallet: agent.wallet })).token;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A Logger that records every line (message and fields, as JSON) for assertions. */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const make = (bound: Record<string, unknown>): Logger => {
    const write = (level: string) => (msg: string, fields?: Record<string, unknown>) =>
      void lines.push(
        JSON.stringify({ level, msg, ...bound, ...fields }, (_k, v) => (v instanceof Error ? v.message : v)),
      );
    return {
      debug: write("debug"),
      info: write("info"),
      warn: write("warn"),
      error: write("error"),
      child: (fields) => make({ ...bound, ...fields }),
    };
  };
  return Object.assign(make({}), { lines });
}
