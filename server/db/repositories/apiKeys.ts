import { queryRows, type Queryable } from "./util";

export interface ApiKeyRow {
  id: number;
  address: string;
  prefix: string;
  label: string | null;
  createdAt: number;
  revokedAt: number | null;
  lastUsedAt: number | null;
  /** When a web session key ends on its own (unix seconds); null for an ordinary key, which never expires. */
  expiresAt: number | null;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const fromRow = (r: any): ApiKeyRow => ({
  id: Number(r.id),
  address: r.address,
  prefix: r.prefix,
  label: r.label ?? null,
  createdAt: Number(r.created_at),
  revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
  lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
  expiresAt: r.expires_at === null || r.expires_at === undefined ? null : Number(r.expires_at),
});

export async function insertApiKey(
  db: Queryable,
  key: {
    address: string;
    keyHash: string;
    prefix: string;
    label: string | null;
    createdAt: number;
    /** A web session key's end; absent or null: an ordinary key. */
    expiresAt?: number | null;
  },
): Promise<ApiKeyRow> {
  const [row] = await db("api_keys")
    .insert({
      address: key.address,
      key_hash: key.keyHash,
      prefix: key.prefix,
      label: key.label,
      created_at: key.createdAt,
      expires_at: key.expiresAt ?? null,
    })
    .returning("*");
  return fromRow(row);
}

/** The key with this hash that is not revoked (it may have expired: the caller compares `expiresAt` with now). */
export async function findActiveKeyByHash(db: Queryable, keyHash: string): Promise<ApiKeyRow | undefined> {
  const [row] = await queryRows(db, `select * from "api_keys" where "key_hash" = ? and "revoked_at" is null`, [
    keyHash,
  ]);
  return row ? fromRow(row) : undefined;
}

export async function listKeysOf(db: Queryable, address: string): Promise<ApiKeyRow[]> {
  const rows = await db("api_keys").where({ address }).orderBy("id");
  return rows.map(fromRow);
}

/** Revokes a key of `address`; false when it has no such active key. */
export async function revokeKey(db: Queryable, address: string, id: number, at: number): Promise<boolean> {
  const updated = await db("api_keys").where({ id, address }).whereNull("revoked_at").update({ revoked_at: at });
  return updated === 1;
}

export async function touchKey(db: Queryable, id: number, at: number): Promise<void> {
  await db("api_keys").where({ id }).update({ last_used_at: at });
}

/** One key of `address` by id, revoked or not; undefined for an unknown id or another wallet's key. */
export async function findKeyOf(db: Queryable, address: string, id: number): Promise<ApiKeyRow | undefined> {
  const row = await db("api_keys").where({ id, address }).first();
  return row ? fromRow(row) : undefined;
}

/** The ids among `ids` of keys that are revoked. */
export async function revokedKeyIds(db: Queryable, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db("api_keys").whereIn("id", ids).whereNotNull("revoked_at").select("id");
  return rows.map((r: { id: number | string }) => Number(r.id));
}

/** Active keys of `address` at `now` (unix seconds): not revoked and not expired. */
export async function countActiveKeysOf(db: Queryable, address: string, now: number): Promise<number> {
  const [row] = await db("api_keys")
    .where({ address })
    .whereNull("revoked_at")
    .andWhere((q) => q.whereNull("expires_at").orWhere("expires_at", ">", now))
    .count({ n: "*" });
  return Number(row.n);
}
