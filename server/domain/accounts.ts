/**
 * Accounts: sign-in with Ethereum (EIP-4361), sessions and API keys.
 *
 * Sign-in: a wallet asks for a nonce (bound to its address, single use, SIWE_NONCE_TTL_SECONDS), signs the
 * EIP-4361 message the service prepared (or one it built itself with the same fields), and trades message and
 * signature for a session token (`ses_` + 64 hex, SESSION_TTL_SECONDS). The message is parsed strictly by the
 * EIP-4361 grammar; its domain and URI must be this service's (config.api.publicUrl) and its chain id the
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
import { z } from "./schemas/common";
import type { Deps } from "./deps";
import { AppError, fail } from "../errors";
import { newApiKey, newSessionToken } from "./credentials";
import { consumeNonce, findNonce, insertNonce, pruneNonces } from "../db/repositories/authNonces";
import { recordSignIn } from "../db/repositories/users";
import { insertSession, pruneSessions } from "../db/repositories/sessions";
import { findKeyOf, insertApiKey, listKeysOf, revokeKey, type ApiKeyRow } from "../db/repositories/apiKeys";

// ---------------------------------------------------------------------------------------------------------------
// Response schemas
// ---------------------------------------------------------------------------------------------------------------

const isoTime = z.string().openapi({ example: "2025-01-01T12:00:00.000Z", description: "ISO 8601, UTC" });

export const nonceResponseSchema = z
  .object({
    nonce: z.string().openapi({ example: "q3Yx8Lw0bN2kR7tVc1ZpH5sJ" }),
    issuedAt: isoTime,
    expiresAt: isoTime,
    domain: z.string().openapi({ example: "127.0.0.1:8787" }),
    uri: z.string().openapi({ example: "http://127.0.0.1:8787" }),
    chainId: z.number().int(),
    message: z.string().openapi({ description: "EIP-4361 message, ready to sign with personal_sign" }),
  })
  .openapi("SignInNonce");

export const sessionResponseSchema = z
  .object({
    sessionToken: z.string().openapi({ description: "ses_ followed by 64 hex; send as Authorization: Bearer" }),
    address: z.string().openapi({ description: "The signed-in wallet, lower-case" }),
    expiresAt: isoTime,
  })
  .openapi("SignInSession");

export const apiKeyCreatedSchema = z
  .object({
    id: z.number().int(),
    key: z.string().openapi({ description: "sk_ followed by 64 hex. Shown once: only its SHA-256 hash is stored" }),
    prefix: z.string().openapi({ example: "sk_3f9a01bc" }),
    label: z.string().nullable(),
    createdAt: isoTime,
  })
  .openapi("ApiKeyCreated");

export const apiKeySchema = z
  .object({
    id: z.number().int(),
    prefix: z.string(),
    label: z.string().nullable(),
    createdAt: isoTime,
    revokedAt: isoTime.nullable(),
    lastUsedAt: isoTime.nullable(),
  })
  .openapi("ApiKey");

export const apiKeyListSchema = z.object({ keys: z.array(apiKeySchema) }).openapi("ApiKeyList");

export const apiKeyRevokedSchema = z
  .object({ id: z.number().int(), revoked: z.literal(true) })
  .openapi("ApiKeyRevoked");

export const whoamiSchema = z
  .object({
    address: z.string().openapi({ description: "The wallet the key acts as, lower-case" }),
    addresses: z.array(z.string()).openapi({ description: "The account's wallets (one per account here)" }),
  })
  .openapi("WhoAmI");

export type NonceResponse = z.infer<typeof nonceResponseSchema>;
export type SessionResponse = z.infer<typeof sessionResponseSchema>;
export type ApiKeyCreated = z.infer<typeof apiKeyCreatedSchema>;
export type ApiKeyView = z.infer<typeof apiKeySchema>;

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
// RFC 3986 pieces. Each is linear: one character class per position, no nested alternatives that overlap.
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/;
const USERINFO = /^(?:[A-Za-z0-9._~!$&'()*+,;=:-]|%[0-9A-Fa-f]{2})*$/;
const HOST_PORT = /^(?:\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})+)(?::[0-9]*)?$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
// statement = *( reserved / unreserved / " " )
const STATEMENT = /^[A-Za-z0-9._~:/?#[\]@!$&'()*+,;= -]+$/;
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$/;
const NONCE = /^[A-Za-z0-9]{8,}$/;
const CHAIN_ID = /^[0-9]+$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;
// request-id = *pchar
const REQUEST_ID = /^(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})*$/;

/** A line present but not in its syntax, or a line the grammar does not allow: VALIDATION_ERROR naming the field. */
function malformed(field: string, message: string): never {
  throw new AppError({ code: "VALIDATION_ERROR", message: `${field}: ${message}`, details: { field } });
}

/** A required line absent or out of order: MISSING_FIELDS naming the field. */
function missing(field: string, message: string): never {
  throw new AppError({ code: "MISSING_FIELDS", message: `${field}: ${message}`, details: { missing: [field] } });
}

/** `[scheme "://"] authority` of the first line, or undefined when it is not in that syntax. */
function parseHeaderOrigin(line: string): { scheme?: string; domain: string } | undefined {
  if (!line.endsWith(HEADER_SUFFIX)) return undefined;
  const origin = line.slice(0, -HEADER_SUFFIX.length);
  const separator = origin.indexOf("://");
  const scheme = separator === -1 ? undefined : origin.slice(0, separator);
  const domain = separator === -1 ? origin : origin.slice(separator + 3);
  if (scheme !== undefined && !SCHEME.test(scheme)) return undefined;
  const at = domain.lastIndexOf("@");
  if (at !== -1 && !USERINFO.test(domain.slice(0, at))) return undefined;
  if (!HOST_PORT.test(domain.slice(at + 1))) return undefined;
  return { ...(scheme !== undefined ? { scheme } : {}), domain };
}

function isUri(value: string): boolean {
  if (!URI.test(value)) return false;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/** RFC 3339 date-time with its ranges checked (no 30 February). */
function isDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const offsetOk = m[7] === undefined || (Number(m[7]) <= 23 && Number(m[8]) <= 59);
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 60 &&
    offsetOk &&
    !Number.isNaN(Date.parse(value))
  );
}

/** The EIP-4361 text of `m`, line by line as the grammar orders it, joined by LF, no trailing LF. */
export function buildSiweMessage(m: SiweMessage): string {
  const lines = [`${m.scheme ? `${m.scheme}://` : ""}${m.domain}${HEADER_SUFFIX}`, m.address, ""];
  if (m.statement !== undefined) lines.push(m.statement);
  lines.push(
    "",
    `URI: ${m.uri}`,
    `Version: ${m.version}`,
    `Chain ID: ${m.chainId}`,
    `Nonce: ${m.nonce}`,
    `Issued At: ${m.issuedAt}`,
  );
  if (m.expirationTime !== undefined) lines.push(`Expiration Time: ${m.expirationTime}`);
  if (m.notBefore !== undefined) lines.push(`Not Before: ${m.notBefore}`);
  if (m.requestId !== undefined) lines.push(`Request ID: ${m.requestId}`);
  if (m.resources !== undefined) lines.push("Resources:", ...m.resources.map((r) => `- ${r}`));
  return lines.join("\n");
}

/**
 * Parses an EIP-4361 message strictly by the grammar: LF line ends, the lines in order, each value in its syntax.
 * A required line absent (or out of order) answers MISSING_FIELDS; a line present but malformed, or a line the
 * grammar does not allow, answers VALIDATION_ERROR. Both name the field.
 */
export function parseSiweMessage(text: string): SiweMessage {
  const lines = text.split("\n");
  const header = parseHeaderOrigin(lines[0]);
  if (!header) {
    malformed("message.domain", `the first line must be "<domain>${HEADER_SUFFIX}" (lines end with LF only)`);
  }
  const { scheme, domain } = header;

  const address = lines[1];
  if (address === undefined || address === "") {
    missing("message.address", "the second line must be the signing address");
  }
  if (!ADDRESS.test(address)) malformed("message.address", "must be 0x followed by 40 hex characters");
  if (getAddress(address.toLowerCase()) !== address) {
    malformed("message.address", "must be in EIP-55 checksum capitalization");
  }
  if (lines[2] !== "" && lines[2] !== undefined) malformed("message.address", "must be followed by an empty line");

  let i = 3;
  let statement: string | undefined;
  if (lines[2] === undefined || lines[3] === undefined) missing("message.URI", 'the "URI: " line is missing');
  if (lines[3] !== "") {
    statement = lines[3];
    if (!STATEMENT.test(statement)) {
      malformed(
        "message.statement",
        "may contain only letters, digits, spaces and RFC 3986 reserved or unreserved characters",
      );
    }
    if (lines[4] !== "" && lines[4] !== undefined) {
      malformed("message.statement", "must be one line followed by an empty line");
    }
    i = 5;
  } else {
    i = 4;
  }

  const ORDER = "EIP-4361 order: URI, Version, Chain ID, Nonce, Issued At";
  const required = (tag: string): string => {
    const line = lines[i];
    if (line === undefined || !line.startsWith(`${tag}: `)) {
      missing(`message.${tag}`, `the "${tag}: " line is missing (${ORDER})`);
    }
    i += 1;
    return line.slice(tag.length + 2);
  };
  const optional = (tag: string): string | undefined => {
    const line = lines[i];
    if (line === undefined || !line.startsWith(`${tag}: `)) return undefined;
    i += 1;
    return line.slice(tag.length + 2);
  };

  const uri = required("URI");
  if (!isUri(uri)) malformed("message.URI", "must be an RFC 3986 URI");
  const version = required("Version");
  if (version !== "1") malformed("message.Version", "must be 1");
  const chainId = required("Chain ID");
  if (!CHAIN_ID.test(chainId)) malformed("message.Chain ID", "must be digits");
  const nonce = required("Nonce");
  if (!NONCE.test(nonce)) malformed("message.Nonce", "must be at least 8 letters or digits");
  const issuedAt = required("Issued At");
  if (!isDateTime(issuedAt)) malformed("message.Issued At", "must be an RFC 3339 date-time");

  const expirationTime = optional("Expiration Time");
  if (expirationTime !== undefined && !isDateTime(expirationTime)) {
    malformed("message.Expiration Time", "must be an RFC 3339 date-time");
  }
  const notBefore = optional("Not Before");
  if (notBefore !== undefined && !isDateTime(notBefore)) {
    malformed("message.Not Before", "must be an RFC 3339 date-time");
  }
  const requestId = optional("Request ID");
  if (requestId !== undefined && !REQUEST_ID.test(requestId)) {
    malformed("message.Request ID", "must be RFC 3986 pchar");
  }
  let resources: string[] | undefined;
  if (lines[i] === "Resources:") {
    i += 1;
    resources = [];
    while (i < lines.length && lines[i].startsWith("- ")) {
      const resource = lines[i].slice(2);
      if (!isUri(resource)) malformed("message.Resources", `line ${i + 1} must be "- " and an RFC 3986 URI`);
      resources.push(resource);
      i += 1;
    }
  }
  if (i === lines.length - 1 && lines[i] === "") malformed("message", "must not end with a line break");
  if (i < lines.length) {
    const allowed = "after Issued At only Expiration Time, Not Before, Request ID and Resources may follow, in order";
    malformed("message", `unexpected line ${i + 1}: ${allowed}`);
  }

  return {
    ...(scheme !== undefined ? { scheme } : {}),
    domain,
    address,
    ...(statement !== undefined ? { statement } : {}),
    uri,
    version: "1",
    chainId: Number(chainId),
    nonce,
    issuedAt,
    ...(expirationTime !== undefined ? { expirationTime } : {}),
    ...(notBefore !== undefined ? { notBefore } : {}),
    ...(requestId !== undefined ? { requestId } : {}),
    ...(resources !== undefined ? { resources } : {}),
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

/**
 * Issues a nonce for `address` (lower-case) and the ready-to-sign message naming it. The message carries the
 * nonce's expiry as its Expiration Time.
 */
export async function issueNonce(deps: Deps, address: string, nowMs = deps.clock.wallNowMs()): Promise<NonceResponse> {
  const context = signInContext(deps);
  const issuedAt = unixNow(nowMs);
  const expiresAt = issuedAt + deps.config.api.nonceTtlSeconds;
  const nonce = newNonce();
  await insertNonce(deps.db, { nonce, address, issuedAt, expiresAt });
  await pruneNonces(deps.db, issuedAt - NONCE_RETENTION_SECONDS).catch((error) =>
    deps.logger.warn("could not prune sign-in nonces", { error }),
  );
  const message = buildSiweMessage({
    domain: context.domain,
    address: getAddress(address),
    statement: SIGN_IN_STATEMENT,
    uri: context.uri,
    version: "1",
    chainId: context.chainId,
    nonce,
    issuedAt: iso(issuedAt),
    expirationTime: iso(expiresAt),
  });
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

  let signer: string;
  try {
    signer = verifyMessage(input.message, input.signature);
  } catch (error) {
    throw new AppError({ code: "BAD_SIGNATURE", message: "signature: not a valid ECDSA signature", cause: error });
  }
  const address = message.address.toLowerCase();
  if (signer.toLowerCase() !== address) {
    fail("BAD_SIGNATURE", `signature is not by the message's address ${message.address}`);
  }

  const now = unixNow(nowMs);
  const nonce = await findNonce(deps.db, message.nonce);
  if (!nonce) fail("NONCE_INVALID", "message.Nonce: unknown nonce: request one from POST /api/v1/auth/nonce");
  if (nonce.address !== address) {
    fail("NONCE_MISMATCH", "message.Nonce: this nonce was issued for another address");
  }
  if (nonce.usedAt !== null) fail("NONCE_INVALID", "message.Nonce: this nonce was already used: request a new one");
  if (nonce.expiresAt <= now) fail("NONCE_INVALID", "message.Nonce: this nonce has expired: request a new one");

  const { token, tokenHash } = newSessionToken();
  const expiresAt = now + deps.config.api.sessionTtlSeconds;
  await deps.db.transaction(async (trx) => {
    if (!(await consumeNonce(trx, message.nonce, address, now))) {
      fail("NONCE_INVALID", "message.Nonce: this nonce was already used: request a new one");
    }
    await recordSignIn(trx, address, now);
    await insertSession(trx, { tokenHash, address, createdAt: now, expiresAt });
  });
  await pruneSessions(deps.db, now).catch((error) =>
    deps.logger.warn("could not prune expired sessions", { error }),
  );
  return { sessionToken: token, address, expiresAt: iso(expiresAt) };
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
});

/** A new key acting as `wallet`. The key is returned once; only its SHA-256 hash and prefix are stored. */
export async function createApiKey(
  deps: Deps,
  wallet: string,
  label: string | null,
  nowMs = deps.clock.wallNowMs(),
): Promise<ApiKeyCreated> {
  const { key, keyHash, prefix } = newApiKey();
  const row = await insertApiKey(deps.db, { address: wallet, keyHash, prefix, label, createdAt: unixNow(nowMs) });
  return { id: row.id, key, prefix: row.prefix, label: row.label, createdAt: iso(row.createdAt) };
}

/** Every key of `wallet`, revoked ones included, oldest first; never the key or its hash. */
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
  return { id, revoked: true };
}

/** The wallet a key acts as. An account has exactly one wallet here, so `addresses` is that one. */
export function whoami(wallet: string): { address: string; addresses: string[] } {
  return { address: wallet, addresses: [wallet] };
}
