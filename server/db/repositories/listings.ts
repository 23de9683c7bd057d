/**
 * Marketplace listings (tables `listings` and `listing_capabilities`): the terms a poster attached to a funded task
 * when indexing it. Keyed by the on-chain task id; one listing per task hash. Addresses and hashes are lower-case.
 */
import type { ChainName } from "../../escrow/records";
import { chunks, inIds, queryRows, type Queryable } from "./util";

export type Privacy = "private" | "public";

export interface ListingRecord {
  taskId: number;
  taskHash: string;
  chain: ChainName;
  poster: string;
  txHash: string;
  privacy: Privacy;
  verificationMode: string;
  verificationCriteria: Record<string, unknown> | null;
  verifierAddress: string | null;
  rootHash: string | null;
  /** Key material: never part of a public projection. */
  wrappedKeys: Record<string, string> | null;
  targetExecutor: string | null;
  serviceId: number | null;
  /** A rental's service terms when it was listed (immutable), else null. */
  serviceTerms: { serviceId: number; name: string; priceRaw: string; token: string; agent: string } | null;
  publicBrief: string | null;
  /** Key material: never part of a public projection. */
  custodyWrappedKey: string | null;
  /** From the funding receipt (null only for rows written before migration 004). */
  token: string | null;
  amount: string | null;
  deadline: number | null;
  listedAt: number;
  /** Sorted, lower-case. */
  capabilities: string[];
}

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
const parse = <T>(v: unknown): T | null => (v === null || v === undefined ? null : (JSON.parse(String(v)) as T));

const toRow = (l: ListingRecord) => ({
  task_id: l.taskId,
  task_hash: l.taskHash,
  chain: l.chain,
  poster: l.poster,
  tx_hash: l.txHash,
  privacy: l.privacy,
  verification_mode: l.verificationMode,
  verification_criteria: json(l.verificationCriteria),
  verifier_address: l.verifierAddress,
  root_hash: l.rootHash,
  wrapped_keys: json(l.wrappedKeys),
  target_executor: l.targetExecutor,
  service_id: l.serviceId,
  service_terms: json(l.serviceTerms),
  public_brief: l.publicBrief,
  custody_wrapped_key: l.custodyWrappedKey,
  token: l.token,
  amount: l.amount,
  deadline: l.deadline,
  listed_at: l.listedAt,
});

/** The columns of `listings` (capabilities live in `listing_capabilities`). */
export const LISTING_COLUMNS = Object.keys(toRow({ capabilities: [] } as unknown as ListingRecord));

/** A `listings` row and its capabilities as a ListingRecord. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const listingFromRow = (r: any, capabilities: string[]): ListingRecord => ({
  taskId: Number(r.task_id),
  taskHash: r.task_hash,
  chain: r.chain,
  poster: r.poster,
  txHash: r.tx_hash,
  privacy: r.privacy as Privacy,
  verificationMode: r.verification_mode,
  verificationCriteria: parse(r.verification_criteria),
  verifierAddress: r.verifier_address ?? null,
  rootHash: r.root_hash ?? null,
  wrappedKeys: parse(r.wrapped_keys),
  targetExecutor: r.target_executor ?? null,
  serviceId: r.service_id === null || r.service_id === undefined ? null : Number(r.service_id),
  serviceTerms: parse(r.service_terms),
  publicBrief: r.public_brief ?? null,
  custodyWrappedKey: r.custody_wrapped_key ?? null,
  token: r.token ?? null,
  amount: r.amount === null || r.amount === undefined ? null : String(r.amount),
  deadline: r.deadline === null || r.deadline === undefined ? null : Number(r.deadline),
  listedAt: Number(r.listed_at),
  capabilities,
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function withCapabilities(db: Queryable, rows: any[]): Promise<ListingRecord[]> {
  const ids = [...new Set(rows.map((r) => Number(r.task_id)))];
  // Keyed by chain and task id: the same on-chain id may be listed on two chains.
  const caps = new Map<string, string[]>();
  if (ids.length > 0) {
    const inList = inIds(db, "task_id", ids);
    const capRows = await queryRows(
      db,
      `select "chain", "task_id", "capability" from "listing_capabilities" ` +
        `where ${inList.sql} order by "task_id", "capability"`,
      [inList.binding],
    );
    for (const c of capRows) {
      const key = `${c.chain}:${Number(c.task_id)}`;
      if (!caps.has(key)) caps.set(key, []);
      caps.get(key)!.push(c.capability);
    }
  }
  return rows.map((r) => listingFromRow(r, caps.get(`${r.chain}:${Number(r.task_id)}`) ?? []));
}

/** Writes a listing and its capabilities; call inside a transaction so both land or neither. */
export async function insertListing(db: Queryable, listing: ListingRecord): Promise<void> {
  await db("listings").insert(toRow(listing));
  const caps = listing.capabilities.map((capability) => ({
    chain: listing.chain,
    task_id: listing.taskId,
    capability,
  }));
  for (const chunk of chunks(caps)) await db("listing_capabilities").insert(chunk);
}

/** The listing of on-chain task `taskId` of `chain` (without a chain: of the lowest chain name that has one). */
export async function findListingByTaskId(
  db: Queryable,
  taskId: number,
  chain?: ChainName,
): Promise<ListingRecord | undefined> {
  return findListing(db, "task_id", taskId, chain);
}

export async function findListingByHash(db: Queryable, taskHash: string): Promise<ListingRecord | undefined> {
  return findListing(db, "task_hash", taskHash.toLowerCase());
}

/**
 * One listing with its capabilities in one statement (a row per capability; one row with a null capability when it
 * has none): a task read is a hot path, and each statement costs about as much again as SQLite takes to answer it.
 */
async function findListing(db: Queryable, column: "task_id" | "task_hash", value: number | string, chain?: ChainName) {
  let rows = await queryRows(
    db,
    `select "listings".*, "listing_capabilities"."capability" from "listings" left join "listing_capabilities" ` +
      `on "listing_capabilities"."task_id" = "listings"."task_id" ` +
      `and "listing_capabilities"."chain" = "listings"."chain" where "listings"."${column}" = ? ` +
      (chain ? `and "listings"."chain" = ? ` : "") +
      `order by "listings"."chain", "listing_capabilities"."capability"`,
    chain ? [value, chain] : [value],
  );
  if (rows.length === 0) return undefined;
  rows = rows.filter((r) => r.chain === rows[0].chain);
  return listingFromRow(
    rows[0],
    rows.flatMap((r) => (r.capability === null ? [] : [r.capability as string])),
  );
}

/** The listings of `taskIds` on `chain` that exist, by task id (ids are per chain: a page of two chains asks each). */
export async function getListings(
  db: Queryable,
  taskIds: readonly number[],
  chain: ChainName,
): Promise<Map<number, ListingRecord>> {
  if (taskIds.length === 0) return new Map();
  const ids = inIds(db, "task_id", taskIds);
  const rows = await queryRows(db, `select * from "listings" where "chain" = ? and ${ids.sql}`, [chain, ids.binding]);
  const out = new Map<number, ListingRecord>();
  for (const l of await withCapabilities(db, rows)) out.set(l.taskId, l);
  return out;
}

/** A poster's listings (of one chain, or of every chain), newest task first (by on-chain id, then chain). */
export async function listListingsByPoster(
  db: Queryable,
  poster: string,
  { limit, offset, chain }: { limit: number; offset: number; chain?: ChainName },
): Promise<{ listings: ListingRecord[]; total: number }> {
  const where = { poster: poster.toLowerCase(), ...(chain ? { chain } : {}) };
  const rows = await db("listings")
    .where(where)
    .orderBy("task_id", "desc")
    .orderBy("chain")
    .limit(limit)
    .offset(offset);
  const count = await db("listings").where(where).count({ n: "*" }).first();
  return { listings: await withCapabilities(db, rows), total: Number(count?.n ?? 0) };
}

/** Whether `error` is a unique or primary-key violation (SQLite or PostgreSQL): a concurrent insert won. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  if (e?.code === "23505") return true;
  if (typeof e?.code === "string" && /^SQLITE_CONSTRAINT_(PRIMARYKEY|UNIQUE)$/.test(e.code)) return true;
  return typeof e?.message === "string" && /UNIQUE constraint failed/i.test(e.message);
}
