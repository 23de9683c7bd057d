/**
 * API keys and sign-in sessions as secrets: generated from 32 random bytes, stored only as SHA-256 hashes (and a short
 * prefix for keys, so a person can tell them apart), compared by hash.
 */
import crypto from "node:crypto";

export const API_KEY_PATTERN = /^sk_[0-9a-f]{64}$/;
export const SESSION_PATTERN = /^ses_[0-9a-f]{64}$/;
/** Characters of a key kept in clear to identify it in listings ("sk_" and 8 hex). */
export const KEY_PREFIX_LENGTH = 11;

export const hashSecret = (secret: string) => `0x${crypto.createHash("sha256").update(secret).digest("hex")}`;

export function newApiKey(): { key: string; keyHash: string; prefix: string } {
  const key = `sk_${crypto.randomBytes(32).toString("hex")}`;
  return { key, keyHash: hashSecret(key), prefix: key.slice(0, KEY_PREFIX_LENGTH) };
}

export function newSessionToken(): { token: string; tokenHash: string } {
  const token = `ses_${crypto.randomBytes(32).toString("hex")}`;
  return { token, tokenHash: hashSecret(token) };
}
