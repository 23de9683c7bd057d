/**
 * Liveness and readiness, for a load balancer or an orchestrator (docs/operations.md, "Health").
 *
 * - `GET /health/live`: the process answers (200 `{ status: "live" }`); nothing else is checked, so a slow database
 *   never gets a healthy process restarted.
 * - `GET /health/ready`: 200 when every part this process needs answers within READY_TIMEOUT_MS: the database, Redis
 *   (when REDIS_URL is set), and on every configured chain (CHAINS) its RPC and an index no more than
 *   READY_MAX_INDEXER_LAG blocks behind that chain's head. Otherwise 503 with code NOT_READY naming each failing part
 *   (`details.failing`), every check's outcome in `details.checks` (`chain` and `indexer` merged over the chains) and
 *   each chain's own in `details.chains` (`{ base: { chain, indexer }, arc: {...} }`). A process that is shutting down answers 503 at once (`shutdown`), so traffic drains from it.
 */
import type { Middleware } from "koa";
import { AppError } from "../errors";
import type { Deps } from "../domain/deps";
import { getCheckpoint } from "../db/repositories/checkpoints";
import { CHECKPOINT_NAME } from "../indexer/sync";
import type { ChainName } from "../escrow/records";

export type HealthPart = "database" | "redis" | "chain" | "indexer" | "shutdown";

export interface CheckResult {
  ok: boolean;
  /** Milliseconds the check took. */
  ms: number;
  /** Why it failed, or what it saw (the indexer's lag). */
  detail?: string;
}

export interface Readiness {
  ready: boolean;
  failing: HealthPart[];
  /** `chain` and `indexer` hold every configured chain's outcome merged (see `chains` for each one's). */
  checks: Partial<Record<HealthPart, CheckResult>>;
  /** Each configured chain's RPC and indexer checks. */
  chains: Partial<Record<ChainName, ChainChecks>>;
}

export interface HealthOptions {
  /** True once the process has begun shutting down. */
  draining?: () => boolean;
}

class CheckTimeout extends Error {
  override name = "CheckTimeout";
}

async function timed(timeoutMs: number, check: () => Promise<string | undefined>): Promise<CheckResult> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const detail = await Promise.race([
      check(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new CheckTimeout(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, ms: Date.now() - started, ...(detail ? { detail } : {}) };
  } catch (error) {
    return { ok: false, ms: Date.now() - started, detail: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

/** One settlement chain's checks: its RPC (the head block) and its index's lag behind that head. */
export interface ChainChecks {
  chain: CheckResult;
  indexer: CheckResult;
}

/** Runs every readiness check at once, the chain and indexer checks on every configured chain. */
export async function readiness(deps: Deps, options: HealthOptions = {}): Promise<Readiness> {
  const { readyTimeoutMs: timeoutMs } = deps.config.observability;
  const checks: Partial<Record<HealthPart, CheckResult>> = {};
  if (options.draining?.()) checks.shutdown = { ok: false, ms: 0, detail: "the process is shutting down" };
  const database = timed(timeoutMs, async () => {
    await deps.db.raw("select 1");
    return undefined;
  });
  const [databaseResult, redis, perChain] = await Promise.all([
    database,
    deps.config.api.redisUrl
      ? timed(timeoutMs, async () => {
          await deps.limits.peekWindow("health:ready", 1000);
          return undefined;
        })
      : undefined,
    Promise.all(deps.config.chains.map(async ({ name }) => [name, await chainChecks(deps, name, database)] as const)),
  ]);
  checks.database = databaseResult;
  if (redis) checks.redis = redis;
  const chains = Object.fromEntries(perChain) as Partial<Record<ChainName, ChainChecks>>;
  checks.chain = merged(perChain.map(([name, c]) => [name, c.chain]));
  checks.indexer = merged(perChain.map(([name, c]) => [name, c.indexer]));
  const failing = (Object.keys(checks) as HealthPart[]).filter((part) => !checks[part]!.ok);
  return { ready: failing.length === 0, failing, checks, chains };
}

/** `chain`'s RPC head, then its index's lag (once the head and the database answered). */
async function chainChecks(deps: Deps, chain: ChainName, database: Promise<CheckResult>): Promise<ChainChecks> {
  const { readyTimeoutMs: timeoutMs, readyMaxIndexerLag: maxLag } = deps.config.observability;
  const head = await timed(timeoutMs, async () => {
    const gateway = gatewayOf(deps, chain);
    if (!gateway) {
      const network = deps.config.chains.find((c) => c.name === chain)?.network ?? deps.config.network;
      throw new Error(`no deployment for network ${network}`);
    }
    return String(await gateway.provider.getBlockNumber());
  });
  const db = await database;
  if (!head.ok || !db.ok) {
    return {
      chain: head,
      indexer: { ok: false, ms: 0, detail: `cannot be checked without the ${head.ok ? "database" : "chain"}` },
    };
  }
  const block = Number(head.detail);
  const indexer = await timed(timeoutMs, async () => {
    const checkpoint = await indexedBlock(deps, chain);
    if (checkpoint === null) throw new Error("nothing indexed yet");
    const lag = Math.max(0, block - checkpoint);
    if (lag > maxLag) throw new Error(`${lag} blocks behind the head (${block}); at most ${maxLag} allowed`);
    return `${lag} blocks behind the head`;
  });
  return { chain: head, indexer };
}

/**
 * One part's outcome over every chain: ok when each chain's is; the slowest check's time; the detail as is with one
 * chain, else each chain's prefixed by its name (the failing ones, or all when none fails).
 */
function merged(results: readonly (readonly [ChainName, CheckResult])[]): CheckResult {
  const ok = results.every(([, r]) => r.ok);
  const ms = Math.max(0, ...results.map(([, r]) => r.ms));
  if (results.length === 1) return results[0][1];
  const shown = results.filter(([, r]) => !ok === !r.ok && r.detail !== undefined);
  const detail = shown.map(([name, r]) => `${name}: ${r.detail}`).join("; ");
  return { ok, ms, ...(detail ? { detail } : {}) };
}

/** The gateway of `chain`: the posting chain's is deps.chain, the others' in deps.chains. */
function gatewayOf(deps: Deps, chain: ChainName) {
  return chain === deps.config.api.postingChain ? deps.chain : deps.chains.get(chain);
}

/** `chain`'s indexer's checkpoint when this process's indexer holds the writer lock, else the one in the database. */
async function indexedBlock(deps: Deps, chain: ChainName): Promise<number | null> {
  const indexer =
    chain === deps.config.api.postingChain ? (deps.indexer ?? deps.indexers?.get(chain)) : deps.indexers?.get(chain);
  const status = indexer?.status();
  if (status && status.checkpoint !== null && (status.state === "backfilling" || status.state === "following")) {
    return status.checkpoint;
  }
  return (await getCheckpoint(deps.db, chain, CHECKPOINT_NAME))?.blockNumber ?? null;
}

/** Answers GET /health/live and GET /health/ready (inside the envelope, which answers NOT_READY); passes the rest on. */
export function healthRoutes(deps: Deps, options: HealthOptions = {}): Middleware {
  return async (ctx, next) => {
    if (ctx.method !== "GET" && ctx.method !== "HEAD") return next();
    if (ctx.path === "/health/live") {
      ctx.set("Cache-Control", "no-store");
      ctx.body = { success: true, data: { status: "live" } };
      return;
    }
    if (ctx.path !== "/health/ready") return next();
    ctx.set("Cache-Control", "no-store");
    const result = await readiness(deps, options);
    if (result.ready) {
      ctx.body = { success: true, data: { status: "ready", checks: result.checks, chains: result.chains } };
      return;
    }
    throw new AppError({
      code: "NOT_READY",
      message: `not ready: ${result.failing.map((part) => `${part} (${result.checks[part]!.detail})`).join("; ")}`,
      details: { failing: result.failing, checks: result.checks, chains: result.chains },
    });
  };
}
