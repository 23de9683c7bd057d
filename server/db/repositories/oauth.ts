/** The MCP authorization server's records (migration 015_oauth): clients, codes, grants and tokens. */
import type { Queryable } from "./util";

export interface OAuthClientRecord {
  clientId: string;
  kind: "dcr" | "cimd";
  clientName: string | null;
  clientUri: string | null;
  redirectUris: string[];
  metadata: Record<string, unknown>;
  createdAt: number;
  fetchedAt: number | null;
}

export interface OAuthCodeRecord {
  codeHash: string;
  clientId: string;
  wallet: string;
  redirectUri: string;
  codeChallenge: string;
  scope: string;
  resource: string;
  expiresAt: number;
  usedAt: number | null;
  grantId?: number | null;
}

export interface OAuthGrantRecord {
  id: number;
  clientId: string;
  wallet: string;
  scope: string;
  resource: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export interface OAuthTokenRecord {
  tokenHash: string;
  kind: "access" | "refresh";
  grantId: number;
  expiresAt: number;
  rotatedAt: number | null;
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const toClient = (r: any): OAuthClientRecord => ({
  clientId: r.client_id,
  kind: r.kind,
  clientName: r.client_name,
  clientUri: r.client_uri,
  redirectUris: JSON.parse(r.redirect_uris),
  metadata: JSON.parse(r.metadata),
  createdAt: Number(r.created_at),
  fetchedAt: num(r.fetched_at),
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const toGrant = (r: any): OAuthGrantRecord => ({
  id: Number(r.id),
  clientId: r.client_id,
  wallet: r.wallet,
  scope: r.scope,
  resource: r.resource,
  createdAt: Number(r.created_at),
  lastUsedAt: num(r.last_used_at),
  revokedAt: num(r.revoked_at),
});

export async function findOAuthClient(db: Queryable, clientId: string): Promise<OAuthClientRecord | undefined> {
  const row = await db("oauth_clients").where({ client_id: clientId }).first();
  return row ? toClient(row) : undefined;
}

/** Inserts a client, or replaces a metadata document's client with its newer fetch. */
export async function saveOAuthClient(db: Queryable, client: OAuthClientRecord): Promise<void> {
  await db("oauth_clients")
    .insert({
      client_id: client.clientId,
      kind: client.kind,
      client_name: client.clientName,
      client_uri: client.clientUri,
      redirect_uris: JSON.stringify(client.redirectUris),
      metadata: JSON.stringify(client.metadata),
      created_at: client.createdAt,
      fetched_at: client.fetchedAt,
    })
    .onConflict("client_id")
    .merge(["client_name", "client_uri", "redirect_uris", "metadata", "fetched_at"]);
}

export async function insertOAuthCode(db: Queryable, code: OAuthCodeRecord): Promise<void> {
  await db("oauth_codes").insert({
    code_hash: code.codeHash,
    client_id: code.clientId,
    wallet: code.wallet,
    redirect_uri: code.redirectUri,
    code_challenge: code.codeChallenge,
    scope: code.scope,
    resource: code.resource,
    expires_at: code.expiresAt,
    used_at: null,
  });
}

/**
 * Marks a code used and answers it, once: a second presentation (or an unknown code) answers undefined, with the
 * code's record when it had been used already (so its grant can be revoked).
 */
export async function useOAuthCode(
  db: Queryable,
  codeHash: string,
  now: number,
): Promise<{ code: OAuthCodeRecord; replayed: boolean } | undefined> {
  const row = await db("oauth_codes").where({ code_hash: codeHash }).first();
  if (!row) return undefined;
  const code: OAuthCodeRecord = {
    codeHash: row.code_hash,
    clientId: row.client_id,
    wallet: row.wallet,
    redirectUri: row.redirect_uri,
    codeChallenge: row.code_challenge,
    scope: row.scope,
    resource: row.resource,
    expiresAt: Number(row.expires_at),
    usedAt: num(row.used_at),
    grantId: num(row.grant_id),
  };
  const updated = await db("oauth_codes").where({ code_hash: codeHash }).whereNull("used_at").update({ used_at: now });
  return { code, replayed: updated === 0 };
}

/** Records the grant a code's exchange created (so a replay of the code can revoke it). */
export async function setOAuthCodeGrant(db: Queryable, codeHash: string, grantId: number): Promise<void> {
  await db("oauth_codes").where({ code_hash: codeHash }).update({ grant_id: grantId });
}

export async function insertOAuthGrant(
  db: Queryable,
  grant: { clientId: string; wallet: string; scope: string; resource: string; createdAt: number },
): Promise<number> {
  const [row] = await db("oauth_grants")
    .insert({
      client_id: grant.clientId,
      wallet: grant.wallet,
      scope: grant.scope,
      resource: grant.resource,
      created_at: grant.createdAt,
    })
    .returning("id");
  return Number(typeof row === "object" ? row.id : row);
}

export async function findOAuthGrant(db: Queryable, id: number): Promise<OAuthGrantRecord | undefined> {
  const row = await db("oauth_grants").where({ id }).first();
  return row ? toGrant(row) : undefined;
}

export async function touchOAuthGrant(db: Queryable, id: number, now: number): Promise<void> {
  await db("oauth_grants").where({ id }).update({ last_used_at: now });
}

/** Revokes grants (and so every token of their families); answers how many were live. */
export async function revokeOAuthGrants(
  db: Queryable,
  where: { id?: number; wallet?: string; clientId?: string },
  now: number,
  reason: string,
): Promise<number> {
  const query = db("oauth_grants").whereNull("revoked_at");
  if (where.id !== undefined) query.where({ id: where.id });
  if (where.wallet !== undefined) query.where({ wallet: where.wallet });
  if (where.clientId !== undefined) query.where({ client_id: where.clientId });
  return query.update({ revoked_at: now, revoked_reason: reason });
}

/** A wallet's live grants, newest first. */
export async function liveOAuthGrantsOf(db: Queryable, wallet: string): Promise<OAuthGrantRecord[]> {
  const rows = await db("oauth_grants").where({ wallet }).whereNull("revoked_at").orderBy("id", "desc");
  return rows.map(toGrant);
}

export async function insertOAuthTokens(db: Queryable, tokens: OAuthTokenRecord[]): Promise<void> {
  await db("oauth_tokens").insert(
    tokens.map((t) => ({
      token_hash: t.tokenHash,
      kind: t.kind,
      grant_id: t.grantId,
      expires_at: t.expiresAt,
      rotated_at: t.rotatedAt,
    })),
  );
}

/** A token with its grant, whatever their state (the caller judges expiry, rotation and revocation). */
export async function findOAuthToken(
  db: Queryable,
  tokenHash: string,
): Promise<{ token: OAuthTokenRecord; grant: OAuthGrantRecord } | undefined> {
  const token = await db("oauth_tokens").where({ token_hash: tokenHash }).first();
  if (!token) return undefined;
  const grant = await findOAuthGrant(db, Number(token.grant_id));
  if (!grant) return undefined;
  return {
    token: {
      tokenHash: token.token_hash,
      kind: token.kind,
      grantId: Number(token.grant_id),
      expiresAt: Number(token.expires_at),
      rotatedAt: num(token.rotated_at),
    },
    grant,
  };
}

/** Marks a refresh token rotated, once: false when it already was (a reuse). */
export async function rotateOAuthToken(db: Queryable, tokenHash: string, now: number): Promise<boolean> {
  return (
    (await db("oauth_tokens").where({ token_hash: tokenHash }).whereNull("rotated_at").update({ rotated_at: now })) > 0
  );
}

/** Ends one token (RFC 7009 revocation of an access token). */
export async function expireOAuthToken(db: Queryable, tokenHash: string, now: number): Promise<void> {
  await db("oauth_tokens").where({ token_hash: tokenHash }).update({ expires_at: now });
}
