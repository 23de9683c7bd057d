/** Registered agents (executors) and their capabilities: tables executors and executor_capabilities. */
import type { Knex } from "knex";
import { toBool, type Queryable } from "./util";

export interface ExecutorRecord {
  address: string;
  publicKey: string;
  /** Sorted, unique, lower-case. */
  capabilities: string[];
  /** Sorted chain names. */
  supportedChains: string[];
  /** Smallest units of the settlement token, decimal. */
  minReward: string;
  verifierOptIn: boolean;
  name: string | null;
  registeredAt: number;
  updatedAt: number;
  lastSeenAt: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const fromRow = (r: any, capabilities: string[]): ExecutorRecord => ({
  address: r.address,
  publicKey: r.public_key,
  capabilities,
  supportedChains: JSON.parse(r.supported_chains),
  minReward: String(r.min_reward),
  verifierOptIn: toBool(r.verifier_opt_in),
  name: r.name ?? null,
  registeredAt: Number(r.registered_at),
  updatedAt: Number(r.updated_at),
  lastSeenAt: Number(r.last_seen_at),
});

async function capabilitiesOf(db: Queryable, addresses: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(addresses.map((a) => [a, []]));
  if (addresses.length === 0) return out;
  const rows = await db("executor_capabilities")
    .whereIn("address", [...addresses])
    .orderBy(["address", "capability"])
    .select("address", "capability");
  for (const r of rows as { address: string; capability: string }[]) out.get(r.address)?.push(r.capability);
  return out;
}

export async function findExecutor(db: Queryable, address: string): Promise<ExecutorRecord | undefined> {
  const row = await db("executors").where({ address: address.toLowerCase() }).first();
  if (!row) return undefined;
  return fromRow(row, (await capabilitiesOf(db, [row.address])).get(row.address) ?? []);
}

/**
 * Inserts or replaces the record of `executor.address` with its capabilities; `registeredAt` of an existing record
 * is kept. Returns whether the record was created.
 */
export async function upsertExecutor(db: Queryable, executor: ExecutorRecord): Promise<boolean> {
  const row = {
    address: executor.address,
    public_key: executor.publicKey,
    supported_chains: JSON.stringify(executor.supportedChains),
    min_reward: executor.minReward,
    verifier_opt_in: executor.verifierOptIn,
    name: executor.name,
    registered_at: executor.registeredAt,
    updated_at: executor.updatedAt,
    last_seen_at: executor.lastSeenAt,
  };
  // One transaction (a savepoint inside a caller's): the record and its capabilities change together. The insert
  // decides between insert and update in one statement, so concurrent registrations of one wallet cannot collide.
  return db.transaction(async (trx) => {
    const existing = await trx("executors").where({ address: executor.address }).first("address");
    await trx("executors")
      .insert(row)
      .onConflict("address")
      .merge(["public_key", "supported_chains", "min_reward", "verifier_opt_in", "name", "updated_at", "last_seen_at"]);
    await trx("executor_capabilities").where({ address: executor.address }).delete();
    if (executor.capabilities.length > 0) {
      await trx("executor_capabilities").insert(
        executor.capabilities.map((capability) => ({ address: executor.address, capability })),
      );
    }
    return !existing;
  });
}

/**
 * Replaces the supported chains of `address`'s record (a hosted agent's, following its owner's setting); false when
 * the wallet is not registered.
 */
export async function setExecutorChains(
  db: Queryable,
  address: string,
  supportedChains: readonly string[],
  now: number,
): Promise<boolean> {
  const updated = await db("executors")
    .where({ address: address.toLowerCase() })
    .update({ supported_chains: JSON.stringify(supportedChains), updated_at: now });
  return updated > 0;
}

/** Sets last_seen_at (never backwards); returns false when the wallet is not registered. */
export async function touchExecutor(db: Queryable, address: string, now: number): Promise<boolean> {
  const wallet = address.toLowerCase();
  const updated = await db("executors").where({ address: wallet }).where("last_seen_at", "<", now).update({
    last_seen_at: now,
  });
  if (updated > 0) return true;
  return Boolean(await db("executors").where({ address: wallet }).first("address"));
}

export interface ExecutorFilter {
  /** Executors declaring every one of these (lower-case). */
  capabilities?: readonly string[];
  /** Executors settling on this chain. */
  chain?: string;
  /**
   * Verifier agents only: executors that are hosted agents (hosted_agents.wallet) with status running whose owner
   * opted in to verifying; each row's `name` is the hosted agent's verifier name.
   */
  hostedVerifiers?: boolean;
  limit: number;
  offset: number;
}

/**
 * Executors matching `filter`, best score first (from `scores`, a `(wallet, score)` subquery; missing = 0), then by
 * address; with the count of all matches. Each row carries its `score`.
 */
export async function listExecutors(
  db: Queryable,
  filter: ExecutorFilter,
  scores: Knex.Raw,
): Promise<{ executors: (ExecutorRecord & { score: number })[]; total: number }> {
  const base = () => {
    const q = db("executors");
    for (const capability of filter.capabilities ?? []) {
      q.whereExists(
        db("executor_capabilities")
          .select(db.raw("1"))
          .whereRaw("executor_capabilities.address = executors.address")
          .where("executor_capabilities.capability", capability),
      );
    }
    // supported_chains is a JSON array of names from a fixed enum: a quoted-name match is exact.
    if (filter.chain) q.where("executors.supported_chains", "like", `%"${filter.chain}"%`);
    if (filter.hostedVerifiers) {
      q.join("hosted_agents as h", "h.wallet", "executors.address")
        .where("h.status", "running")
        .where("h.verifier_opt_in", true)
        .whereNull("h.deleted_at");
    }
    return q;
  };
  const rows = await base()
    .leftJoin(db.raw("(?) as s", [scores]), "s.wallet", "executors.address")
    .select(
      "executors.*",
      db.raw("coalesce(s.score, 0) as score"),
      ...(filter.hostedVerifiers ? ["h.verifier_name as hosted_name"] : []),
    )
    .orderByRaw("coalesce(s.score, 0) desc")
    .orderBy("executors.address", "asc")
    .limit(filter.limit)
    .offset(filter.offset);
  const count = await base().count({ n: "*" }).first();
  const caps = await capabilitiesOf(
    db,
    rows.map((r: { address: string }) => r.address),
  );
  return {
    executors: rows.map((r: { address: string; score: unknown; hosted_name?: string | null }) => ({
      ...fromRow(filter.hostedVerifiers ? { ...r, name: r.hosted_name ?? null } : r, caps.get(r.address) ?? []),
      score: Number(r.score),
    })),
    total: Number(count?.n ?? 0),
  };
}
