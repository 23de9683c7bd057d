/**
 * Liveness and readiness, for a load balancer or an orchestrator (docs/operations.md, "Health").
 *
 * - `GET /health/live`: the process answers (200 `{ status: "live" }`); nothing else is checked, so a slow database
 *   never gets a healthy process restarted.
 * - `GET /health/ready`: 200 when every part this process needs answers within READY_TIMEOUT_MS: the database, Redis
 *   (when REDIS_URL is set), the chain RPC, and an index no more than READY_MAX_INDEXER_LAG blocks behind the chain's
 *   head. Otherwise 503 with code NOT_READY naming each failing part (`details.failing`), and every check's outcome
 *   in `details.checks`. A process that is shutting down answers 503 at once (`shutdown`), so traffic drains from it.
 */
import type { Middleware } from "koa";
import { AppError } from "../errors";
import type { Deps } from "../domain/deps";
import { getCheckpoint } from "../db/repositories/checkpoints";
import { CHECKPOINT_NAME } from "../indexer/sync";

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
  checks: Partial<Record<HealthPart, CheckResult>>;
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

/** Runs every readiness check at once. */
export async function readiness(deps: Deps, options: HealthOptions = {}): Promise<Readiness> {
  const { readyTimeoutMs: timeoutMs, readyMaxIndexerLag: maxLag } = deps.config.observability;
  const checks: Partial<Record<HealthPart, CheckResult>> = {};
  if (options.draining?.()) checks.shutdown = { ok: false, ms: 0, detail: "the process is shutting down" };
  const headRead = timed(timeoutMs, async () => {
    if (!deps.chain) throw new Error(`no deployment for network ${deps.config.network}`);
    return String(await deps.chain.provider.getBlockNumber());
  });
  const [database, redis, chain] = await Promise.all([
    timed(timeoutMs, async () => {
      await deps.db.raw("select 1");
      return undefined;
    }),
    deps.config.api.redisUrl
      ? timed(timeoutMs, async () => {
          await deps.limits.peekWindow("health:ready", 1000);
          return undefined;
        })
      : undefined,
    headRead,
  ]);
  checks.database = database;
  if (redis) checks.redis = redis;
  checks.chain = chain;
  if (chain.ok && database.ok) {
    const head = Number(chain.detail);
    checks.indexer = await timed(timeoutMs, async () => {
      const checkpoint = await indexedBlock(deps);
      if (checkpoint === null) throw new Error("nothing indexed yet");
      const lag = Math.max(0, head - checkpoint);
      if (lag > maxLag) throw new Error(`${lag} blocks behind the head (${head}); at most ${maxLag} allowed`);
      return `${lag} blocks behind the head`;
    });
  } else {
    checks.indexer = { ok: false, ms: 0, detail: `cannot be checked without the ${chain.ok ? "database" : "chain"}` };
  }
  const failing = (Object.keys(checks) as HealthPart[]).filter((part) => !checks[part]!.ok);
  return { ready: failing.length === 0, failing, checks };
}

/** This process's indexer's checkpoint when it holds the writer lock, else the shared one in the database. */
async function indexedBlock(deps: Deps): Promise<number | null> {
  const status = deps.indexer?.status();
  if (status && status.checkpoint !== null && (status.state === "backfilling" || status.state === "following")) {
    return status.checkpoint;
  }
  return (await getCheckpoint(deps.db, deps.config.api.postingChain, CHECKPOINT_NAME))?.blockNumber ?? null;
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
      ctx.body = { success: true, data: { status: "ready", checks: result.checks } };
      return;
    }
    throw new AppError({
      code: "NOT_READY",
      message: `not ready: ${result.failing.map((part) => `${part} (${result.checks[part]!.detail})`).join("; ")}`,
      details: { failing: result.failing, checks: result.checks },
    });
  };
}
