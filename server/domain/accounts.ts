/**
 * Accounts: sign-in with Ethereum (EIP-4361), sessions and API keys.
 *
 * Sign-in: a wallet asks for a nonce (bound to its address, single use, SIWE_NONCE_TTL_SECONDS), signs the
 * EIP-4361 message the service prepared (or one it built itself with the same fields), and trades message and
 * signature for a session token (`ses_` + 64 hex, SESSION_TTL_SECONDS). The message is parsed strictly by the
 * EIP-4361 grammar (the `siwe` library's ABNF parser); its domain and URI must be this service's (config.api.publicUrl) and its chain id the
 * deployment's. A session may manage API keys; every other authenticated route takes API keys only.
 *
 * Addresses are lower-case everywhere in storage and responses; only the signed message carries the EIP-55 form the
 * EIP requires. Times in responses are ISO 8601 UTC strings; the database keeps unix seconds.
 *
 * @example
 *   const { message } = await issueNonce(deps, "0xf39f...");
 *   const signature = await wallet.signMessage(message);
 *   const { sessionToken } = await signIn(deps, { message, signature });
 */
import crypto from "node:crypto";
import { getAddress, verifyMessage } from "ethers";
import { SiweMessage as SiweLibraryMessage } from "siwe";
import type { Knex } from "knex";
import type { Deps } from "./deps";
import { AppError, fail } from "../errors";
import { SESSION_PATTERN, hashSecret, newApiKey, newSessionToken } from "./credentials";
import { consumeNonce, findNonce, insertNonce, pruneNonces } from "../db/repositories/authNonces";
import { recordSignIn } from "../db/repositories/users";
import { deleteSession, insertSession, pruneSessions } from "../db/repositories/sessions";
import {
  countActiveKeysOf,
  findActiveKeyByHash,
  findKeyOf,
  insertApiKey,
  listKeysOf,
  revokeKey,
  touchKey,
  type ApiKeyRow,
} from "../db/repositories/apiKeys";
import type { Db } from "../db/knex";
import { ApiKeyCreated, ApiKeyView, NonceResponse, SessionResponse } from "./schemas/accounts";

const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();
const unixNow = (nowMs: number) => Math.floor(nowMs / 1000);

// ---------------------------------------------------------------------------------------------------------------
// EIP-4361 messages
// ---------------------------------------------------------------------------------------------------------------

/** The fields of an EIP-4361 message, as written in it. */
export interface SiweMessage {
  /** Optional `scheme://` before the domain. */
  scheme?: string;
  /** RFC 3986 authority requesting the sign-in (host and port). */
  domain: string;
  /** The signing wallet, EIP-55 checksummed. */
  address: string;
  statement?: string;
  uri: string;
  version: "1";
  chainId: number;
  nonce: string;
  /** RFC 3339 date-times. */
  issuedAt: string;
  expirationTime?: string;
  notBefore?: string;
  requestId?: string;
  resources?: string[];
}

export const SIGN_IN_STATEMENT = "Sign in to the escrow task marketplace.";
/** Length of issued nonces: 24 characters of [A-Za-z0-9] (about 142 bits). */
export const NONCE_LENGTH = 24;
/** Expired nonces are kept this long (so a late attempt hears "expired", not "unknown"), then deleted. */
const NONCE_RETENTION_SECONDS = 86_400;

const HEADER_SUFFIX = " wants you to sign in with your Ethereum account:";

/** A line present but not in its syntax, or a line the grammar does not allow: VALIDATION_ERROR naming the field. */
function malformed(field: string, message: string): never {
  throw new AppError({ code: "VALIDATION_ERROR", message: `${field}: ${message}`, details: { field } });
}

/** A required line absent: MISSING_FIELDS naming the field. */
function missing(field: string, message: string): never {
  throw new AppError({ code: "MISSING_FIELDS", message: `${field}: ${message}`, details: { missing: [field] } });
}

/** The lines every message has after the address, in order, with the field names errors use. */
const REQUIRED_LINES = [
  ["message.URI", "URI: "],
  ["message.Version", "Version: "],
  ["message.Chain ID", "Chain ID: "],
  ["message.Nonce", "Nonce: "],
  ["message.Issued At", "Issued At: "],
] as const;

/** The field a `siwe` error names ("line 9: invalid nonce", "invalid EIP-55 address", ...). */
const FIELD_OF_ERROR: [RegExp, string][] = [
  [/EIP-55|\baddress\b/i, "message.address"],
  [/\bdomain\b/i, "message.domain"],
  [/\bversion\b/i, "message.Version"],
  [/chain-id/i, "message.Chain ID"],
  [/\bnonce\b/i, "message.Nonce"],
  [/issued-at/i, "message.Issued At"],
  [/expiration-time/i, "message.Expiration Time"],
  [/not-before/i, "message.Not Before"],
  [/requestID/i, "message.Request ID"],
  [/resource/i, "message.Resources"],
  [/\bURI\b/, "message.URI"],
];

/** The field of a message line, by its position and prefix. */
const FIELD_OF_LINE: [string, string][] = [
  ["URI: ", "message.URI"],
  ["Version: ", "message.Version"],
  ["Chain ID: ", "message.Chain ID"],
  ["Nonce: ", "message.Nonce"],
  ["Issued At: ", "message.Issued At"],
  ["Expiration Time: ", "message.Expiration Time"],
  ["Not Before: ", "message.Not Before"],
  ["Request ID: ", "message.Request ID"],
  ["Resources:", "message.Resources"],
  ["- ", "message.Resources"],
];

/**
 * VALIDATION_ERROR for a message the `siwe` parser refused, naming the field: from its own words when it names one,
 * else from the line it stopped at ("max line number was N").
 */
function refusal(source: string, lines: readonly string[], error: unknown): never {
  const text = error instanceof Error ? error.message : typeof error === "string" ? error : JSON.stringify(error);
  const named = /line (\d+): ([^\n]+)/.exec(text) ?? /^()([^\n]*invalid (?!message)[^\n]*)$/im.exec(text);
  if (named && named[2]) {
    const field = FIELD_OF_ERROR.find(([pattern]) => pattern.test(named[2]))?.[1] ?? "message";
    malformed(field, named[1] ? `line ${named[1]}: ${named[2]}` : named[2]);
  }
  // Where the parser stopped: the line it names, or the line after the prefix it matched (trailing lines).
  const stopped = /max line number was (\d+)/.exec(text);
  const matched = /"matched":(\d+)/.exec(text);
  const lineNumber = stopped
    ? Number(stopped[1])
    : matched && Number(matched[1]) > 0
      ? source.slice(0, Number(matched[1]) + 1).split("\n").length
      : 0;
  const line = lines[lineNumber - 1] ?? "";
  if (lineNumber === 1) malformed("message.domain", 'the first line must be "<domain>' + HEADER_SUFFIX + '"');
  if (lineNumber === 2) malformed("message.address", "the second line must be an EIP-55 address");
  const field = FIELD_OF_LINE.find(([prefix]) => line.startsWith(prefix))?.[1];
  if (field) malformed(field, `line ${lineNumber} is not in the EIP-4361 syntax`);
  if (lineNumber === 4) malformed("message.statement", "the statement may hold no line break and no '<' or '>'");
  const allowed = "after Issued At only Expiration Time, Not Before, Request ID and Resources may follow, in order";
  return malformed("message", lineNumber > 0 ? `unexpected line ${lineNumber}: ${allowed}` : "not an EIP-4361 message");
}

/** The EIP-4361 text of `m`, built by the `siwe` library (lines in the grammar's order, LF, no trailing LF). */
export function buildSiweMessage(m: SiweMessage): string {
  return new SiweLibraryMessage({ ...m, chainId: m.chainId }).prepareMessage();
}

/**
 * Parses an EIP-4361 message with the `siwe` library's ABNF parser (the EIP's grammar, EIP-55 address, RFC 3339
 * dates checked for real days). A required line absent answers MISSING_FIELDS; a malformed line, or a line the
 * grammar does not allow, VALIDATION_ERROR. Both name the field.
 */
export function parseSiweMessage(text: string): SiweMessage {
  const lines = text.split("\n");
  if (!lines[0].endsWith(HEADER_SUFFIX)) {
    malformed("message.domain", `the first line must be "<domain>${HEADER_SUFFIX}" (lines end with LF only)`);
  }
  if (lines[1] === undefined || lines[1] === "") missing("message.address", "the second line must be the address");
  for (const [field, prefix] of REQUIRED_LINES) {
    if (!lines.some((line) => line.startsWith(prefix))) missing(field, `the line "${prefix}..." is required`);
  }
  if (text.endsWith("\n")) malformed("message", "must not end with a line break");
  // The parser reports a bad statement at the line after it, so it is named here: EIP-4361's statement grammar.
  if (
    lines[2] === "" &&
    lines[3] !== "" &&
    lines[4] === "" &&
    !/^[A-Za-z0-9._~:/?#[\]@!$&'()*+,;= -]+$/.test(lines[3])
  ) {
    malformed(
      "message.statement",
      "the statement may hold letters, digits, spaces and URI characters only (no '<', '>')",
    );
  }
  let parsed: SiweLibraryMessage;
  try {
    parsed = new SiweLibraryMessage(text);
  } catch (error) {
    return refusal(text, lines, error);
  }
  const optional = {
    scheme: parsed.scheme,
    statement: parsed.statement,
    expirationTime: parsed.expirationTime,
    notBefore: parsed.notBefore,
    requestId: parsed.requestId,
    resources: parsed.resources,
  };
  return {
    domain: parsed.domain,
    address: parsed.address,
    uri: parsed.uri,
    version: "1",
    chainId: Number(parsed.chainId),
    nonce: parsed.nonce,
    issuedAt: parsed.issuedAt!,
    ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
  };
}

/** What a sign-in message must name: this service's domain and URI (from PUBLIC_URL) and the deployment's chain. */
export interface SignInContext {
  scheme: string;
  domain: string;
  origin: string;
  uri: string;
  chainId: number;
}

export function signInContext(deps: Deps): SignInContext {
  const url = new URL(deps.config.api.publicUrl);
  return {
    scheme: url.protocol.replace(/:$/, ""),
    domain: url.host,
    origin: url.origin,
    uri: deps.config.api.publicUrl.replace(/\/+$/, ""),
    chainId: deps.chain?.book.chainId ?? 1,
  };
}

/** A random nonce of [A-Za-z0-9] (rejection sampling, so every character is equally likely). */
export function newNonce(length = NONCE_LENGTH): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const limit = 256 - (256 % alphabet.length); // 248: bytes at or above it would bias the first characters
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.randomBytes(length * 2)) {
      if (byte < limit && out.length < length) out += alphabet[byte % alphabet.length];
    }
  }
  return out;
}

/** What sign-in nonces are for; a hosted agent's key export binds its nonces to `key-export:<agent id>`. */
export const SIGN_IN_PURPOSE = "sign-in";

/**
 * A fresh single-use nonce for `address` (lower-case) and `purpose` (SIGN_IN_PURPOSE, or a key export's), and this
 * service's EIP-4361 message naming it, with `statement` (sign-in's, or a hosted agent's key export) and the nonce's
 * expiry as its Expiration Time. The nonce is spent only for its purpose (checkNonce, spendNonce).
 */
export async function issueServiceMessage(
  deps: Deps,
  address: string,
  statement: string,
  options: { purpose: string; nowMs?: number; requestId?: string },
): Promise<{ message: string; nonce: string; issuedAt: number; expiresAt: number; context: SignInContext }> {
  const context = signInContext(deps);
  const issuedAt = unixNow(options.nowMs ?? deps.clock.wallNowMs());
  const expiresAt = issuedAt + deps.config.api.nonceTtlSeconds;
  const nonce = newNonce();
  await insertNonce(deps.db, { nonce, address, purpose: options.purpose, issuedAt, expiresAt });
  const message = buildSiweMessage({
    domain: context.domain,
    address: getAddress(address),
    statement,
    uri: context.uri,
    version: "1",
    chainId: context.chainId,
    nonce,
    issuedAt: iso(issuedAt),
    expirationTime: iso(expiresAt),
    ...(options.requestId ? { requestId: options.requestId } : {}),
  });
  return { message, nonce, issuedAt, expiresAt, context };
}

/** Issues a sign-in nonce for `address` (lower-case) and the ready-to-sign message naming it. */
export async function issueNonce(deps: Deps, address: string, nowMs = deps.clock.wallNowMs()): Promise<NonceResponse> {
  const { message, nonce, issuedAt, expiresAt, context } = await issueServiceMessage(deps, address, SIGN_IN_STATEMENT, {
    purpose: SIGN_IN_PURPOSE,
    nowMs,
  });
  await pruneNonces(deps.db, issuedAt - NONCE_RETENTION_SECONDS).catch((error) =>
    deps.logger.warn("could not prune sign-in nonces", { error }),
  );
  return {
    nonce,
    issuedAt: iso(issuedAt),
    expiresAt: iso(expiresAt),
    domain: context.domain,
    uri: context.uri,
    chainId: context.chainId,
    message,
  };
}

/**
 * Checks that a parsed message is for this service and valid now: domain, scheme, URI and chain id (BAD_SIGNATURE
 * naming which), Expiration Time and Not Before (NONCE_INVALID). Sign-in and hosted agents' key exports share it.
 */
export function checkMessageContext(deps: Deps, message: SiweMessage, nowMs: number): void {
  const expected = signInContext(deps);

  if (message.domain.toLowerCase() !== expected.domain.toLowerCase()) {
    fail("BAD_SIGNATURE", `message domain ${message.domain} is not this service's domain ${expected.domain}`);
  }
  if (message.scheme !== undefined && message.scheme.toLowerCase() !== expected.scheme) {
    fail("BAD_SIGNATURE", `message scheme ${message.scheme} is not this service's scheme ${expected.scheme}`);
  }
  if (new URL(message.uri).origin !== expected.origin) {
    fail("BAD_SIGNATURE", `message URI ${message.uri} is not on this service (${expected.origin})`);
  }
  if (message.chainId !== expected.chainId) {
    fail("BAD_SIGNATURE", `message Chain ID ${message.chainId} is not this service's chain id ${expected.chainId}`);
  }
  if (message.expirationTime !== undefined && Date.parse(message.expirationTime) <= nowMs) {
    fail("NONCE_INVALID", `message expired at ${message.expirationTime}: request a new nonce`);
  }
  if (message.notBefore !== undefined && Date.parse(message.notBefore) > nowMs) {
    fail("NONCE_INVALID", `message is not valid before ${message.notBefore}`);
  }
}

/** The wallet (lower-case) that signed `message` (personal_sign); BAD_SIGNATURE for a malformed signature. */
export function signerOf(message: string, signature: string): string {
  try {
    return verifyMessage(message, signature).toLowerCase();
  } catch (error) {
    throw new AppError({ code: "BAD_SIGNATURE", message: "signature: not a valid ECDSA signature", cause: error });
  }
}

/**
 * Checks that a signed message's nonce is usable by `address` for `purpose`, before anything is consumed: issued
 * (NONCE_INVALID; `renew` says how to get one), for this address (NONCE_MISMATCH), for this purpose, not used and not
 * expired (NONCE_INVALID).
 */
export async function checkNonce(
  deps: Deps,
  nonce: string,
  address: string,
  purpose: string,
  now: number,
  renew: string,
) {
  const row = await findNonce(deps.db, nonce);
  if (!row) fail("NONCE_INVALID", `message.Nonce: unknown nonce: ${renew}`);
  if (row.address !== address) fail("NONCE_MISMATCH", "message.Nonce: this nonce was issued for another address");
  if (row.purpose !== purpose) {
    fail("NONCE_INVALID", `message.Nonce: this nonce was issued for ${row.purpose}, not ${purpose}: ${renew}`);
  }
  if (row.usedAt !== null) fail("NONCE_INVALID", "message.Nonce: this nonce was already used: request a new one");
  if (row.expiresAt <= now) fail("NONCE_INVALID", "message.Nonce: this nonce has expired: request a new one");
}

/** Consumes a checked nonce inside `trx`: NONCE_INVALID when a concurrent request used it first. */
export async function spendNonce(trx: Knex.Transaction, nonce: string, address: string, purpose: string, now: number) {
  if (!(await consumeNonce(trx, nonce, address, purpose, now))) {
    fail("NONCE_INVALID", "message.Nonce: this nonce was already used: request a new one");
  }
}

/**
 * Verifies a signed EIP-4361 message and opens a session. Checks, in order: the grammar (MISSING_FIELDS,
 * VALIDATION_ERROR); domain, URI and chain id (BAD_SIGNATURE naming which); Expiration Time and Not Before
 * (NONCE_INVALID); the signature (BAD_SIGNATURE); then the nonce: unknown, used or expired (NONCE_INVALID) or issued
 * for another wallet (NONCE_MISMATCH). Nothing is consumed before the signature is known good, so a forged attempt
 * cannot burn a wallet's nonce. The nonce is consumed, the user recorded and the session stored in one transaction.
 */
export async function signIn(
  deps: Deps,
  input: { message: string; signature: string },
  nowMs = deps.clock.wallNowMs(),
): Promise<SessionResponse> {
  const message = parseSiweMessage(input.message);
  checkMessageContext(deps, message, nowMs);

  // A message written for another purpose (a hosted agent's key export) never signs in, whatever its nonce.
  if (message.statement !== undefined && message.statement !== SIGN_IN_STATEMENT) {
    fail("BAD_SIGNATURE", `message.statement: not this service's sign-in statement "${SIGN_IN_STATEMENT}"`);
  }

  const address = message.address.toLowerCase();
  if (signerOf(input.message, input.signature) !== address) {
    fail("BAD_SIGNATURE", `signature is not by the message's address ${message.address}`);
  }

  const now = unixNow(nowMs);
  const renew = "request one from POST /api/v1/auth/nonce";
  await checkNonce(deps, message.nonce, address, SIGN_IN_PURPOSE, now, renew);

  const { token, tokenHash } = newSessionToken();
  const expiresAt = now + deps.config.api.sessionTtlSeconds;
  await deps.db.transaction(async (trx) => {
    await spendNonce(trx, message.nonce, address, SIGN_IN_PURPOSE, now);
    await recordSignIn(trx, address, now);
    await insertSession(trx, { tokenHash, address, createdAt: now, expiresAt });
  });
  await pruneSessions(deps.db, now).catch((error) => deps.logger.warn("could not prune expired sessions", { error }));
  return { sessionToken: token, address, expiresAt: iso(expiresAt) };
}

/**
 * Ends a session (sign-out): its token answers 401 from the next request on, in every process (sessions are read
 * from the database on each request). An API key is not a session: VALIDATION_ERROR saying how to revoke one.
 */
export async function signOut(deps: Deps, presented: string): Promise<{ signedOut: true }> {
  if (!SESSION_PATTERN.test(presented)) {
    fail(
      "VALIDATION_ERROR",
      "Authorization: sign-out ends a session token (ses_...); revoke an API key with DELETE /api/v1/api-keys/{id}",
    );
  }
  await deleteSession(deps.db, hashSecret(presented));
  return { signedOut: true };
}

// ---------------------------------------------------------------------------------------------------------------
// API keys
// ---------------------------------------------------------------------------------------------------------------

const keyView = (row: ApiKeyRow): ApiKeyView => ({
  id: row.id,
  prefix: row.prefix,
  label: row.label,
  createdAt: iso(row.createdAt),
  revokedAt: row.revokedAt === null ? null : iso(row.revokedAt),
  lastUsedAt: row.lastUsedAt === null ? null : iso(row.lastUsedAt),
  expiresAt: row.expiresAt === null ? null : iso(row.expiresAt),
});

/** How fresh a key's recorded last use is kept (docs/api.md, "Signing in and API keys"). */
export const LAST_USED_RESOLUTION_SECONDS = 60;

/**
 * How long a key found active is trusted without reading it again (docs/api.md, "Signing in and API keys"). Reading it
 * on every request, through knex's pool, is a large share of an authenticated call under load (docs/performance.md);
 * a revocation clears the entry in the process that made it at once, and other processes sharing the database stop
 * the key within this.
 */
export const ACTIVE_KEY_CACHE_MS = 1_000;
const ACTIVE_KEY_CACHE_SIZE = 10_000;
/** Per database (every API of one process over one database shares its keys' revocations). */
const activeKeys = new WeakMap<Db, Map<string, { key: ApiKeyRow; untilMs: number }>>();

function activeKeyCache(db: Db) {
  let cache = activeKeys.get(db);
  if (!cache) activeKeys.set(db, (cache = new Map()));
  return cache;
}

/** Whether a web session key's time has run out at `nowMs` (an ordinary key never does). */
export function keyExpired(key: Pick<ApiKeyRow, "expiresAt">, nowMs: number): boolean {
  return key.expiresAt !== null && key.expiresAt <= unixNow(nowMs);
}

/**
 * The unrevoked key a presented API key names, or undefined (unknown or revoked); an expired web session key is
 * answered too (the caller refuses it, saying the session expired: `keyExpired`). Its last use is recorded, to the
 * minute, without delaying the answer. Only keys found unrevoked are cached (ACTIVE_KEY_CACHE_MS): a key created in
 * another process works at once.
 */
export async function activeApiKey(deps: Deps, presentedKey: string): Promise<ApiKeyRow | undefined> {
  const keyHash = hashSecret(presentedKey);
  const cache = activeKeyCache(deps.db);
  const nowMs = deps.clock.wallNowMs();
  let key = cache.get(keyHash);
  if (!key || key.untilMs <= nowMs) {
    const row = await findActiveKeyByHash(deps.db, keyHash);
    if (!row) {
      cache.delete(keyHash);
      return undefined;
    }
    if (cache.size >= ACTIVE_KEY_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    key = { key: row, untilMs: nowMs + ACTIVE_KEY_CACHE_MS };
    cache.set(keyHash, key);
  }
  // Last use is informational, to the minute: written at most once a minute per key (a write per request cost a fifth
  // of a task build), and never blocking the request.
  const now = unixNow(nowMs);
  if (keyExpired(key.key, nowMs)) return key.key;
  const { lastUsedAt } = key.key;
  if (lastUsedAt === null || now - lastUsedAt >= LAST_USED_RESOLUTION_SECONDS) {
    key.key = { ...key.key, lastUsedAt: now };
    touchKey(deps.db, key.key.id, now).catch(() => undefined);
  }
  return key.key;
}

/**
 * A new key acting as `wallet`. The key is returned once; only its SHA-256 hash and prefix are stored. A web session
 * key (`sessionKey`) expires on its own SESSION_TTL_SECONDS after it is made, as a sign-in session does; an ordinary
 * key never expires. Expired and revoked keys do not count toward API_MAX_KEYS_PER_WALLET.
 */
export async function createApiKey(
  deps: Deps,
  wallet: string,
  label: string | null,
  options: { sessionKey?: boolean } = {},
  nowMs = deps.clock.wallNowMs(),
): Promise<ApiKeyCreated> {
  const { maxKeysPerWallet, sessionTtlSeconds } = deps.config.api;
  const now = unixNow(nowMs);
  if ((await countActiveKeysOf(deps.db, wallet, now)) >= maxKeysPerWallet) {
    fail("KEY_LIMIT", `a wallet has at most ${maxKeysPerWallet} active API keys: revoke one first`, {
      details: { maxKeys: maxKeysPerWallet },
    });
  }
  const { key, keyHash, prefix } = newApiKey();
  const expiresAt = options.sessionKey ? now + sessionTtlSeconds : null;
  const row = await insertApiKey(deps.db, { address: wallet, keyHash, prefix, label, createdAt: now, expiresAt });
  return {
    id: row.id,
    key,
    prefix: row.prefix,
    label: row.label,
    createdAt: iso(row.createdAt),
    expiresAt: row.expiresAt === null ? null : iso(row.expiresAt),
  };
}

/** Every key of `wallet`, revoked and expired ones included, oldest first; never the key or its hash. */
export async function listApiKeys(deps: Deps, wallet: string): Promise<{ keys: ApiKeyView[] }> {
  return { keys: (await listKeysOf(deps.db, wallet)).map(keyView) };
}

/**
 * Revokes a key of `wallet`; the next request with it answers 401. Revoking a revoked key answers the same success
 * (idempotent) and keeps its first revocation time. Another wallet's key, or an unknown id, is NOT_FOUND.
 */
export async function revokeApiKey(
  deps: Deps,
  wallet: string,
  id: number,
  nowMs = deps.clock.wallNowMs(),
): Promise<{ id: number; revoked: true }> {
  const key = await findKeyOf(deps.db, wallet, id);
  if (!key) fail("NOT_FOUND", `path.id: no API key ${id} for this wallet`);
  if (key.revokedAt === null) await revokeKey(deps.db, wallet, id, unixNow(nowMs));
  // Effective on this process's next request: its cached entry goes (other processes: ACTIVE_KEY_CACHE_MS), and its
  // open streams end now (other processes': EVENTS_CREDENTIAL_CHECK_MS).
  const cache = activeKeyCache(deps.db);
  for (const [hash, entry] of cache) if (entry.key.id === id) cache.delete(hash);
  deps.streams?.endKey(id);
  return { id, revoked: true };
}

/** The wallet a key acts as. An account has exactly one wallet here, so `addresses` is that one. */
export function whoami(wallet: string): { address: string; addresses: string[] } {
  return { address: wallet, addresses: [wallet] };
}
