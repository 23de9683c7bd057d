/**
 * MCP authorization (docs/oauth.md): the service is both the protected resource (`PUBLIC_URL/mcp`) and its OAuth 2.1
 * authorization server (issuer `PUBLIC_URL`), as the MCP 2025-11-25 authorization specification describes.
 *
 * - Clients: registered by Dynamic Client Registration (RFC 7591; public clients, `token_endpoint_auth_method`
 *   "none"), or named by a Client ID Metadata Document: a client_id that is an https URL whose JSON names the same
 *   client_id, its client_name and redirect_uris, fetched with the webhooks' address checks (loopback and private
 *   addresses, and then plain http, only with WEBHOOK_ALLOW_PRIVATE: the devnet, tests).
 * - Authorization code with PKCE S256 only; the owner approves in the web app (`/oauth/authorize`) signed in with
 *   their wallet; codes last 5 minutes and are single use.
 * - Tokens are opaque (`mat_` / `mrt_` and 64 hex), stored as SHA-256 hashes: access tokens last
 *   OAUTH_ACCESS_TOKEN_TTL_SECONDS (15 minutes) and are bound to the resource `PUBLIC_URL/mcp` (RFC 8707; accepted on
 *   /mcp only); refresh tokens rotate on every use, and presenting a rotated one again revokes its whole grant.
 * - Scopes: market:read, market:post, market:work (SCOPES); the operation catalog maps each operation to one
 *   (operations/scopes.ts).
 */
import crypto from "node:crypto";
import http from "node:http";
import https from "node:https";
import { fail } from "../errors";
import type { Deps } from "./deps";
import { hashSecret } from "./credentials";
import { checkWebhookUrl, publicOnlyLookup } from "./events/webhooks";
import {
  findOAuthClient,
  findOAuthToken,
  insertOAuthCode,
  insertOAuthGrant,
  insertOAuthTokens,
  liveOAuthGrantsOf,
  revokeOAuthGrants,
  rotateOAuthToken,
  saveOAuthClient,
  setOAuthCodeGrant,
  expireOAuthToken,
  touchOAuthGrant,
  useOAuthCode,
  type OAuthClientRecord,
} from "../db/repositories/oauth";

/** The scopes a client may ask for, with what each allows (shown on the approval page). */
export const SCOPES = {
  "market:read": "Read the market: tasks, briefs you may read, agents, services, reputation, your credits",
  "market:post": "Post tasks as you: upload briefs, build and list tasks, assign, cancel, accept or decline results",
  "market:work":
    "Work as you: bid, accept tasks, deliver results, disputes, your agent record, services, hosted agents",
} as const;
export type Scope = keyof typeof SCOPES;
export const SCOPE_NAMES = Object.keys(SCOPES) as Scope[];

export const ACCESS_TOKEN_PATTERN = /^mat_[0-9a-f]{64}$/;
const REFRESH_TOKEN_PATTERN = /^mrt_[0-9a-f]{64}$/;
const DCR_CLIENT_ID_PATTERN = /^mcp_[0-9a-f]{32}$/;
const CODE_TTL_MS = 5 * 60_000;
/** A metadata document is fetched again when older than this. */
const CLIENT_DOCUMENT_MAX_AGE_MS = 5 * 60_000;
const CLIENT_DOCUMENT_MAX_BYTES = 64 * 1024;
const CLIENT_DOCUMENT_TIMEOUT_MS = 5_000;
const PKCE_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/;

/** The issuer (this service) and the protected resource (its MCP endpoint). */
export function oauthUrls(deps: Deps) {
  const issuer = deps.config.api.publicUrl.replace(/\/+$/, "");
  return {
    issuer,
    resource: `${issuer}/mcp`,
    resourceMetadata: `${issuer}/.well-known/oauth-protected-resource/mcp`,
    authorizationEndpoint: `${issuer}/oauth/authorize`,
    tokenEndpoint: `${issuer}/oauth/token`,
    registrationEndpoint: `${issuer}/oauth/register`,
    revocationEndpoint: `${issuer}/oauth/revoke`,
  };
}

/** RFC 9728 protected-resource metadata of /mcp. */
export function protectedResourceMetadata(deps: Deps) {
  const urls = oauthUrls(deps);
  return {
    resource: urls.resource,
    authorization_servers: [urls.issuer],
    scopes_supported: SCOPE_NAMES,
    bearer_methods_supported: ["header"],
    resource_name: "Escrow task marketplace (MCP)",
    resource_documentation: `${urls.issuer}/api/v1/openapi.json`,
  };
}

/** RFC 8414 authorization-server metadata. */
export function authorizationServerMetadata(deps: Deps) {
  const urls = oauthUrls(deps);
  return {
    issuer: urls.issuer,
    authorization_endpoint: urls.authorizationEndpoint,
    token_endpoint: urls.tokenEndpoint,
    registration_endpoint: urls.registrationEndpoint,
    revocation_endpoint: urls.revocationEndpoint,
    scopes_supported: SCOPE_NAMES,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    token_endpoint_auth_methods_supported: ["none"],
    revocation_endpoint_auth_methods_supported: ["none"],
    code_challenge_methods_supported: ["S256"],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------------------------------------------

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** A redirect URI a client may register: https, or http to a loopback host (RFC 8252 native apps); no fragment. */
function checkRedirectUri(raw: unknown, code: "OAUTH_INVALID_CLIENT_METADATA" | "OAUTH_INVALID_REDIRECT_URI"): string {
  if (typeof raw !== "string" || raw.length > 2000) return fail(code, "redirect_uris: each must be a URL string");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail(code, `redirect_uris: ${raw} is not a URL`);
  }
  if (url.hash) fail(code, `redirect_uris: ${raw} must not carry a fragment`);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname))) {
    fail(code, `redirect_uris: ${raw} must be https, or http to a loopback host (127.0.0.1, [::1], localhost)`);
  }
  return raw;
}

function optionalText(value: unknown, name: string, max: number): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || value.length > max || /[\p{Cc}]/u.test(value)) {
    return fail("OAUTH_INVALID_CLIENT_METADATA", `${name}: must be text of at most ${max} characters`);
  }
  return value;
}

/** The metadata both registration ways share: redirect URIs, name, grant and response types. */
function checkClientMetadata(body: Record<string, unknown>) {
  const uris = body.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10) {
    fail("OAUTH_INVALID_REDIRECT_URI", "redirect_uris: 1 to 10 redirect URIs are required");
  }
  const redirectUris = (uris as unknown[]).map((u) => checkRedirectUri(u, "OAUTH_INVALID_REDIRECT_URI"));
  const grantTypes = body.grant_types ?? ["authorization_code"];
  if (!Array.isArray(grantTypes) || !grantTypes.includes("authorization_code")) {
    fail("OAUTH_INVALID_CLIENT_METADATA", "grant_types: must include authorization_code");
  }
  const responseTypes = body.response_types ?? ["code"];
  if (!Array.isArray(responseTypes) || !responseTypes.includes("code")) {
    fail("OAUTH_INVALID_CLIENT_METADATA", "response_types: must include code");
  }
  const clientUri = optionalText(body.client_uri, "client_uri", 500);
  if (clientUri !== null && !/^https?:\/\//.test(clientUri))
    fail("OAUTH_INVALID_CLIENT_METADATA", "client_uri: must be a URL");
  return {
    redirectUris,
    clientName: optionalText(body.client_name, "client_name", 200),
    clientUri,
    grantTypes: (grantTypes as unknown[]).filter((g) => g === "authorization_code" || g === "refresh_token"),
  };
}

/** RFC 7591 registration: a public client (no secret: PKCE protects its codes). */
export async function registerClient(deps: Deps, body: unknown) {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return fail("OAUTH_INVALID_CLIENT_METADATA", "the registration must be a JSON object");
  }
  const metadata = body as Record<string, unknown>;
  const checked = checkClientMetadata(metadata);
  const scope =
    metadata.scope === undefined ? SCOPE_NAMES.join(" ") : parseScope(metadata.scope, "OAUTH_INVALID_CLIENT_METADATA");
  const now = deps.clock.wallNowMs();
  const clientId = `mcp_${crypto.randomBytes(16).toString("hex")}`;
  const registered = {
    client_id: clientId,
    client_id_issued_at: Math.floor(now / 1000),
    client_name: checked.clientName ?? undefined,
    client_uri: checked.clientUri ?? undefined,
    redirect_uris: checked.redirectUris,
    grant_types: checked.grantTypes.length > 0 ? checked.grantTypes : ["authorization_code"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    scope,
  };
  await saveOAuthClient(deps.db, {
    clientId,
    kind: "dcr",
    clientName: checked.clientName,
    clientUri: checked.clientUri,
    redirectUris: checked.redirectUris,
    metadata: registered,
    createdAt: now,
    fetchedAt: null,
  });
  return registered;
}

/** GETs a client's metadata document: no redirects, a size and time bound, and the webhooks' address checks. */
async function fetchClientDocument(deps: Deps, clientId: string): Promise<unknown> {
  const allowPrivate = deps.config.push.webhooks.allowPrivate;
  let url: URL;
  try {
    url = await checkWebhookUrl(clientId, allowPrivate);
  } catch (error) {
    return fail("OAUTH_INVALID_CLIENT", `client_id ${clientId}: ${(error as Error).message}`);
  }
  if (url.protocol !== "https:" && !allowPrivate) {
    fail("OAUTH_INVALID_CLIENT", `client_id ${clientId}: a metadata document's URL must be https`);
  }
  const get = url.protocol === "https:" ? https.get : http.get;
  const text = await new Promise<string>((resolve, reject) => {
    const request = get(
      url,
      {
        headers: { accept: "application/json" },
        timeout: CLIENT_DOCUMENT_TIMEOUT_MS,
        ...(allowPrivate ? {} : { lookup: publicOnlyLookup }),
      },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          return reject(new Error(`answered HTTP ${response.statusCode}`));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > CLIENT_DOCUMENT_MAX_BYTES) {
            request.destroy(new Error(`is larger than ${CLIENT_DOCUMENT_MAX_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
        response.on("error", reject);
      },
    );
    request.on("timeout", () => request.destroy(new Error("did not answer in time")));
    request.on("error", reject);
  }).catch((error: Error) =>
    fail("OAUTH_INVALID_CLIENT", `client_id ${clientId}: its metadata document ${error.message}`),
  );
  try {
    return JSON.parse(text);
  } catch {
    return fail("OAUTH_INVALID_CLIENT", `client_id ${clientId}: its metadata document is not JSON`);
  }
}

function isDocumentClientId(clientId: string): boolean {
  try {
    const url = new URL(clientId);
    return (url.protocol === "https:" || url.protocol === "http:") && url.pathname !== "/";
  } catch {
    return false;
  }
}

/** The client a client_id names: a registered one, or the one its metadata document describes (fetched, cached). */
export async function resolveClient(deps: Deps, clientId: string): Promise<OAuthClientRecord> {
  if (typeof clientId !== "string" || clientId.length === 0 || clientId.length > 500) {
    return fail("OAUTH_INVALID_CLIENT", "client_id is required");
  }
  const now = deps.clock.wallNowMs();
  const known = await findOAuthClient(deps.db, clientId);
  if (known && (known.kind === "dcr" || now - (known.fetchedAt ?? 0) < CLIENT_DOCUMENT_MAX_AGE_MS)) return known;
  if (!isDocumentClientId(clientId)) {
    if (DCR_CLIENT_ID_PATTERN.test(clientId))
      return fail("OAUTH_INVALID_CLIENT", `client_id ${clientId} is not registered`);
    return fail(
      "OAUTH_INVALID_CLIENT",
      `client_id ${clientId}: register at /oauth/register, or use the https URL of a client metadata document`,
    );
  }
  const document = await fetchClientDocument(deps, clientId);
  if (document === null || typeof document !== "object" || Array.isArray(document)) {
    return fail("OAUTH_INVALID_CLIENT", `client_id ${clientId}: its metadata document is not a JSON object`);
  }
  const metadata = document as Record<string, unknown>;
  if (metadata.client_id !== clientId) {
    fail(
      "OAUTH_INVALID_CLIENT",
      `client_id ${clientId}: its metadata document names client_id ${String(metadata.client_id)}`,
    );
  }
  let checked: ReturnType<typeof checkClientMetadata>;
  try {
    checked = checkClientMetadata(metadata);
  } catch (error) {
    return fail("OAUTH_INVALID_CLIENT", `client_id ${clientId}: its metadata document: ${(error as Error).message}`);
  }
  const record: OAuthClientRecord = {
    clientId,
    kind: "cimd",
    clientName: checked.clientName,
    clientUri: checked.clientUri,
    redirectUris: checked.redirectUris,
    metadata,
    createdAt: known?.createdAt ?? now,
    fetchedAt: now,
  };
  await saveOAuthClient(deps.db, record);
  return record;
}

// ---------------------------------------------------------------------------------------------------------------
// Authorization
// ---------------------------------------------------------------------------------------------------------------

function parseScope(raw: unknown, code: "OAUTH_INVALID_SCOPE" | "OAUTH_INVALID_CLIENT_METADATA"): string {
  if (typeof raw !== "string") return fail(code, "scope: must be a space-separated list");
  const names = [...new Set(raw.split(" ").filter(Boolean))];
  const unknown = names.filter((n) => !(n in SCOPES));
  if (unknown.length > 0) fail(code, `scope: unknown ${unknown.join(", ")} (offered: ${SCOPE_NAMES.join(", ")})`);
  if (names.length === 0) fail(code, "scope: names no scope");
  return SCOPE_NAMES.filter((n) => names.includes(n)).join(" ");
}

export interface AuthorizationParams {
  response_type?: string;
  client_id?: string;
  redirect_uri?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  scope?: string;
  state?: string;
  resource?: string;
}

/** A checked authorization request: what the approval page shows and the approval issues a code for. */
export interface AuthorizationRequest {
  client: OAuthClientRecord;
  redirectUri: string;
  scope: string;
  resource: string;
  state: string | undefined;
  codeChallenge: string;
}

/** The redirect back to the client with `params` (and `state`, `iss`: RFC 9207). */
function redirectWith(
  deps: Deps,
  redirectUri: string,
  state: string | undefined,
  params: Record<string, string>,
): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  if (state !== undefined) url.searchParams.set("state", state);
  url.searchParams.set("iss", oauthUrls(deps).issuer);
  return url.toString();
}

/**
 * Checks an authorization request. The client and its redirect URI are checked first: when either is wrong nothing
 * redirects (OAUTH_INVALID_CLIENT, OAUTH_INVALID_REDIRECT_URI). Later errors carry `details.redirectTo`, the client's
 * redirect with the RFC 6749 error, which the page offers.
 */
export async function checkAuthorizationRequest(
  deps: Deps,
  params: AuthorizationParams,
): Promise<AuthorizationRequest> {
  const client = await resolveClient(deps, params.client_id ?? "");
  let redirectUri = params.redirect_uri;
  if (redirectUri === undefined && client.redirectUris.length === 1) redirectUri = client.redirectUris[0];
  if (redirectUri === undefined || !client.redirectUris.includes(redirectUri)) {
    fail("OAUTH_INVALID_REDIRECT_URI", `redirect_uri ${redirectUri ?? "(none)"} is not one the client registered`);
  }
  const uri = redirectUri as string;
  const refuse = (code: Parameters<typeof fail>[0], error: string, message: string): never =>
    fail(code, message, {
      details: { redirectTo: redirectWith(deps, uri, params.state, { error, error_description: message }) },
    });
  if (params.response_type !== "code") {
    refuse("OAUTH_UNSUPPORTED_RESPONSE_TYPE", "unsupported_response_type", "response_type must be code");
  }
  if (params.code_challenge_method !== "S256") {
    refuse("OAUTH_INVALID_REQUEST", "invalid_request", "code_challenge_method must be S256 (PKCE is required)");
  }
  if (!params.code_challenge || !PKCE_PATTERN.test(params.code_challenge)) {
    refuse("OAUTH_INVALID_REQUEST", "invalid_request", "code_challenge must be 43 to 128 characters of base64url");
  }
  const { resource } = oauthUrls(deps);
  if (params.resource !== undefined && params.resource !== resource) {
    refuse("OAUTH_INVALID_TARGET", "invalid_target", `resource must be ${resource} (this MCP server)`);
  }
  let scope: string;
  try {
    scope =
      params.scope === undefined || params.scope === ""
        ? SCOPE_NAMES.join(" ")
        : parseScope(params.scope, "OAUTH_INVALID_SCOPE");
  } catch (error) {
    return refuse("OAUTH_INVALID_SCOPE", "invalid_scope", (error as Error).message);
  }
  return { client, redirectUri: uri, scope, resource, state: params.state, codeChallenge: params.code_challenge! };
}

/** What the approval page shows of a request. */
export async function describeAuthorization(deps: Deps, params: AuthorizationParams) {
  const request = await checkAuthorizationRequest(deps, params);
  return {
    client: {
      clientId: request.client.clientId,
      name: request.client.clientName,
      uri: request.client.clientUri,
      registration: request.client.kind === "cimd" ? ("metadata-document" as const) : ("dynamic" as const),
    },
    redirectUri: request.redirectUri,
    resource: request.resource,
    scopes: request.scope.split(" ").map((name) => ({ name, description: SCOPES[name as Scope] })),
  };
}

/**
 * The owner's answer: approved, a code for `wallet` with the scopes kept (a subset of those asked for; all when
 * `scope` is absent); denied, access_denied. Either way the redirect back to the client.
 */
export async function decideAuthorization(
  deps: Deps,
  wallet: string,
  params: AuthorizationParams & { approve: boolean; grantedScope?: string },
): Promise<{ redirectTo: string }> {
  const request = await checkAuthorizationRequest(deps, params);
  if (!params.approve) {
    return {
      redirectTo: redirectWith(deps, request.redirectUri, request.state, {
        error: "access_denied",
        error_description: "the owner denied the request",
      }),
    };
  }
  let scope = request.scope;
  if (params.grantedScope !== undefined) {
    const granted = parseScope(params.grantedScope, "OAUTH_INVALID_SCOPE").split(" ");
    const asked = request.scope.split(" ");
    const extra = granted.filter((s) => !asked.includes(s));
    if (extra.length > 0) fail("OAUTH_INVALID_SCOPE", `scope: ${extra.join(", ")} was not asked for`);
    scope = granted.join(" ");
  }
  const code = `mac_${crypto.randomBytes(32).toString("hex")}`;
  await insertOAuthCode(deps.db, {
    codeHash: hashSecret(code),
    clientId: request.client.clientId,
    wallet: wallet.toLowerCase(),
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    scope,
    resource: request.resource,
    expiresAt: deps.clock.wallNowMs() + CODE_TTL_MS,
    usedAt: null,
  });
  return { redirectTo: redirectWith(deps, request.redirectUri, request.state, { code }) };
}

// ---------------------------------------------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------------------------------------------

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
}

async function issueTokens(deps: Deps, grantId: number, scope: string): Promise<TokenResponse> {
  const now = deps.clock.wallNowMs();
  const { accessTokenTtlSeconds, refreshTokenTtlSeconds } = deps.config.api.oauth;
  const access = `mat_${crypto.randomBytes(32).toString("hex")}`;
  const refresh = `mrt_${crypto.randomBytes(32).toString("hex")}`;
  await insertOAuthTokens(deps.db, [
    {
      tokenHash: hashSecret(access),
      kind: "access",
      grantId,
      expiresAt: now + accessTokenTtlSeconds * 1000,
      rotatedAt: null,
    },
    {
      tokenHash: hashSecret(refresh),
      kind: "refresh",
      grantId,
      expiresAt: now + refreshTokenTtlSeconds * 1000,
      rotatedAt: null,
    },
  ]);
  return {
    access_token: access,
    token_type: "Bearer",
    expires_in: accessTokenTtlSeconds,
    refresh_token: refresh,
    scope,
  };
}

const text = (form: Record<string, unknown>, name: string): string | undefined =>
  typeof form[name] === "string" ? (form[name] as string) : undefined;

/** The token endpoint (form fields already parsed): authorization_code with PKCE, or refresh_token with rotation. */
export async function exchangeToken(deps: Deps, form: Record<string, unknown>): Promise<TokenResponse> {
  const grantType = text(form, "grant_type");
  const clientId = text(form, "client_id");
  if (!clientId) return fail("OAUTH_INVALID_CLIENT", "client_id is required (public clients send it in the form)");
  const { resource } = oauthUrls(deps);
  const requested = text(form, "resource");
  if (requested !== undefined && requested !== resource) {
    fail("OAUTH_INVALID_TARGET", `resource must be ${resource} (this MCP server)`);
  }
  const now = deps.clock.wallNowMs();
  if (grantType === "authorization_code") {
    const code = text(form, "code");
    const verifier = text(form, "code_verifier");
    if (!code) return fail("OAUTH_INVALID_REQUEST", "code is required");
    if (!verifier || !PKCE_PATTERN.test(verifier)) {
      return fail("OAUTH_INVALID_REQUEST", "code_verifier is required: 43 to 128 characters (PKCE)");
    }
    const used = await useOAuthCode(deps.db, hashSecret(code), now);
    if (used?.replayed && used.code.grantId) {
      // A code presented again (OAuth 2.1, 4.1.3): the tokens its first exchange issued are revoked.
      await revokeOAuthGrants(deps.db, { id: used.code.grantId }, now, "code_replay");
    }
    if (!used || used.replayed) return fail("OAUTH_INVALID_GRANT", "the code is unknown or was already used");
    const c = used.code;
    if (c.expiresAt <= now) fail("OAUTH_INVALID_GRANT", "the code expired: authorize again");
    if (c.clientId !== clientId) fail("OAUTH_INVALID_GRANT", "the code was issued to another client");
    const redirectUri = text(form, "redirect_uri");
    if (redirectUri !== c.redirectUri) fail("OAUTH_INVALID_GRANT", "redirect_uri is not the one of the authorization");
    const challenge = crypto.createHash("sha256").update(verifier).digest("base64url");
    if (challenge !== c.codeChallenge)
      fail("OAUTH_INVALID_GRANT", "code_verifier does not match the code_challenge (PKCE)");
    const grantId = await insertOAuthGrant(deps.db, {
      clientId: c.clientId,
      wallet: c.wallet,
      scope: c.scope,
      resource: c.resource,
      createdAt: now,
    });
    await setOAuthCodeGrant(deps.db, c.codeHash, grantId);
    return issueTokens(deps, grantId, c.scope);
  }
  if (grantType === "refresh_token") {
    const refresh = text(form, "refresh_token");
    if (!refresh || !REFRESH_TOKEN_PATTERN.test(refresh))
      return fail("OAUTH_INVALID_GRANT", "refresh_token is unknown");
    const found = await findOAuthToken(deps.db, hashSecret(refresh));
    if (!found || found.token.kind !== "refresh") return fail("OAUTH_INVALID_GRANT", "refresh_token is unknown");
    const { token, grant } = found;
    if (grant.clientId !== clientId) return fail("OAUTH_INVALID_GRANT", "refresh_token was issued to another client");
    if (grant.revokedAt !== null) return fail("OAUTH_INVALID_GRANT", "the authorization was revoked: authorize again");
    if (token.rotatedAt !== null || !(await rotateOAuthToken(deps.db, token.tokenHash, now))) {
      // A rotated refresh token presented again: a copy is in someone else's hands. The whole family ends.
      await revokeOAuthGrants(deps.db, { id: grant.id }, now, "refresh_reuse");
      return fail(
        "OAUTH_INVALID_GRANT",
        "refresh_token was already used: the authorization is revoked, authorize again",
      );
    }
    if (token.expiresAt <= now) return fail("OAUTH_INVALID_GRANT", "refresh_token expired: authorize again");
    let scope = grant.scope;
    const asked = text(form, "scope");
    if (asked !== undefined) {
      const narrowed = parseScope(asked, "OAUTH_INVALID_SCOPE").split(" ");
      if (narrowed.some((s) => !grant.scope.split(" ").includes(s))) {
        fail("OAUTH_INVALID_SCOPE", "scope: a refresh may only keep scopes the owner granted");
      }
      scope = narrowed.join(" ");
    }
    return issueTokens(deps, grant.id, scope);
  }
  return fail("OAUTH_UNSUPPORTED_GRANT_TYPE", "grant_type must be authorization_code or refresh_token");
}

/**
 * RFC 7009: a refresh token ends its grant (every token of the family), an access token ends itself. Unknown tokens,
 * and tokens of another client, change nothing (and answer the same).
 */
export async function revokeToken(deps: Deps, form: Record<string, unknown>): Promise<void> {
  const token = text(form, "token");
  if (!token) return fail("OAUTH_INVALID_REQUEST", "token is required");
  const found = await findOAuthToken(deps.db, hashSecret(token));
  if (!found) return;
  const clientId = text(form, "client_id");
  if (clientId !== undefined && clientId !== found.grant.clientId) return;
  const now = deps.clock.wallNowMs();
  if (found.token.kind === "refresh")
    await revokeOAuthGrants(deps.db, { id: found.grant.id }, now, "revoked_by_client");
  else await expireOAuthToken(deps.db, found.token.tokenHash, now);
}

/** What a live access token acts as, or a reason it does not. */
export async function accessTokenGrant(
  deps: Deps,
  token: string,
): Promise<{ wallet: string; scopes: string[]; clientId: string } | { refused: string }> {
  const found = await findOAuthToken(deps.db, hashSecret(token));
  if (!found || found.token.kind !== "access") return { refused: "unknown OAuth access token" };
  const now = deps.clock.wallNowMs();
  if (found.token.expiresAt <= now) return { refused: "OAuth access token expired: refresh it" };
  if (found.grant.revokedAt !== null) return { refused: "the OAuth authorization was revoked: authorize again" };
  if (found.grant.resource !== oauthUrls(deps).resource)
    return { refused: "the OAuth access token is for another resource" };
  if (found.grant.lastUsedAt === null || now - found.grant.lastUsedAt > 60_000) {
    await touchOAuthGrant(deps.db, found.grant.id, now);
  }
  return { wallet: found.grant.wallet, scopes: found.grant.scope.split(" "), clientId: found.grant.clientId };
}

// ---------------------------------------------------------------------------------------------------------------
// The owner's connected clients
// ---------------------------------------------------------------------------------------------------------------

/** The clients holding a live grant of `wallet`, one row per client. */
export async function connectedClients(deps: Deps, wallet: string) {
  const grants = await liveOAuthGrantsOf(deps.db, wallet.toLowerCase());
  const byClient = new Map<string, typeof grants>();
  for (const grant of grants) byClient.set(grant.clientId, [...(byClient.get(grant.clientId) ?? []), grant]);
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  const clients = [];
  for (const [clientId, list] of byClient) {
    const client = await findOAuthClient(deps.db, clientId);
    const scopes = SCOPE_NAMES.filter((s) => list.some((g) => g.scope.split(" ").includes(s)));
    const lastUsed = Math.max(...list.map((g) => g.lastUsedAt ?? 0));
    clients.push({
      clientId,
      name: client?.clientName ?? null,
      uri: client?.clientUri ?? null,
      scopes,
      connectedAt: iso(Math.min(...list.map((g) => g.createdAt)))!,
      lastUsedAt: lastUsed === 0 ? null : iso(lastUsed),
    });
  }
  return { clients };
}

/** Revokes every grant of `clientId` for `wallet`: the client's next call is 401. */
export async function disconnectClient(deps: Deps, wallet: string, clientId: string) {
  const revoked = await revokeOAuthGrants(
    deps.db,
    { wallet: wallet.toLowerCase(), clientId },
    deps.clock.wallNowMs(),
    "revoked_by_owner",
  );
  if (revoked === 0) fail("NOT_FOUND", `no connected client ${clientId} for this wallet`);
  return { revoked: true as const, clientId };
}
