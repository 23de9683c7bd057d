/**
 * Private briefs: AES-256-GCM with a fresh key per brief, the key wrapped per agent with ECIES on secp256k1. Built on
 * the audited @noble primitives. The byte layouts below are a public format: agents implement them to read briefs.
 *
 * Brief blob (uploaded; its SHA-256 is the task hash), 32 + n bytes:
 *   "BRF1" (4, ASCII magic) | iv (12) | ciphertext (n) | GCM tag (16)
 *   AES-256-GCM, key = 32 random bytes, additional data = the magic.
 *
 * Wrapped key (one per agent public key), 126 bytes, sent as hex:
 *   0x01 (1, version) | ephemeral public key, uncompressed (65) | iv (12) | encrypted brief key (32) | GCM tag (16)
 *   shared  = x coordinate of ECDH(ephemeral private key, agent public key)            (32 bytes)
 *   wrapKey = HKDF-SHA256(ikm = shared, salt = ephemeral public key, info = "escrow-market/brief-key/v1", 32 bytes)
 *   AES-256-GCM(wrapKey, iv, brief key), additional data = version byte | ephemeral public key
 *
 * Agent public keys are uncompressed secp256k1 points as 130 hex characters without 0x ("04" + X + Y).
 *
 * This module is the one implementation: the service imports it (server/domain/briefs.ts re-exports it) and so do
 * clients through the SDK. It depends on @noble only.
 */
import { secp256k1 } from "@noble/curves/secp256k1";
import { gcm } from "@noble/ciphers/aes";
import { hkdf } from "@noble/hashes/hkdf";
import { sha256 } from "@noble/hashes/sha256";
import { randomBytes } from "@noble/hashes/utils";

export const BRIEF_MAGIC = Buffer.from("BRF1", "ascii");
export const WRAP_VERSION = 0x01;
export const WRAP_INFO = Buffer.from("escrow-market/brief-key/v1", "utf8");
export const WRAPPED_KEY_BYTES = 1 + 65 + 12 + 32 + 16;

export class BriefCryptoError extends Error {
  override name = "BriefCryptoError";
}

const unhex = (value: string) => Buffer.from(value.replace(/^0x/, ""), "hex");

/** Whether `hex` is an uncompressed secp256k1 public key (130 hex, "04" prefix) on the curve. */
export function isValidAgentPublicKey(hex: string): boolean {
  if (!/^04[0-9a-fA-F]{128}$/.test(hex)) return false;
  try {
    secp256k1.ProjectivePoint.fromHex(hex).assertValidity();
    return true;
  } catch {
    return false;
  }
}

/** The agent public key (130 hex, no 0x) of a private key. */
export function agentPublicKey(privateKey: string | Uint8Array): string {
  const key = typeof privateKey === "string" ? unhex(privateKey) : privateKey;
  return Buffer.from(secp256k1.getPublicKey(key, false)).toString("hex");
}

export interface EncryptOptions {
  /** For test vectors only: a fixed key and IV. */
  key?: Uint8Array;
  iv?: Uint8Array;
}

export function encryptBrief(plaintext: Uint8Array, options: EncryptOptions = {}): { blob: Buffer; key: Buffer } {
  const key = Buffer.from(options.key ?? randomBytes(32));
  const iv = Buffer.from(options.iv ?? randomBytes(12));
  if (key.length !== 32 || iv.length !== 12) throw new BriefCryptoError("brief key must be 32 bytes and IV 12 bytes");
  const sealed = gcm(key, iv, BRIEF_MAGIC).encrypt(plaintext);
  return { blob: Buffer.concat([BRIEF_MAGIC, iv, Buffer.from(sealed)]), key };
}

export function decryptBrief(blob: Uint8Array, key: Uint8Array): Buffer {
  const bytes = Buffer.from(blob);
  if (bytes.length < 4 + 12 + 16 || !bytes.subarray(0, 4).equals(BRIEF_MAGIC)) {
    throw new BriefCryptoError("not a brief blob (magic BRF1)");
  }
  try {
    return Buffer.from(gcm(key, bytes.subarray(4, 16), BRIEF_MAGIC).decrypt(bytes.subarray(16)));
  } catch (error) {
    throw new BriefCryptoError(`brief does not decrypt with this key: ${(error as Error).message}`);
  }
}

export interface WrapOptions {
  /** For test vectors only: a fixed ephemeral private key and IV. */
  ephemeralPrivateKey?: Uint8Array;
  iv?: Uint8Array;
}

function wrapKeyFor(shared: Uint8Array, ephemeralPublic: Uint8Array): Uint8Array {
  return hkdf(sha256, shared, ephemeralPublic, WRAP_INFO, 32);
}

/** Wraps a 32-byte brief key to an agent public key; returns the 126-byte layout as hex (no 0x). */
export function wrapBriefKey(briefKey: Uint8Array, agentPublicKeyHex: string, options: WrapOptions = {}): string {
  if (briefKey.length !== 32) throw new BriefCryptoError("brief key must be 32 bytes");
  if (!isValidAgentPublicKey(agentPublicKeyHex)) {
    throw new BriefCryptoError("agent public key must be 130 hex characters of an uncompressed secp256k1 point");
  }
  const ephemeralPrivate = options.ephemeralPrivateKey ?? secp256k1.utils.randomPrivateKey();
  const ephemeralPublic = secp256k1.getPublicKey(ephemeralPrivate, false);
  const shared = secp256k1.getSharedSecret(ephemeralPrivate, agentPublicKeyHex, true).subarray(1);
  const iv = Buffer.from(options.iv ?? randomBytes(12));
  const aad = Buffer.concat([Buffer.from([WRAP_VERSION]), ephemeralPublic]);
  const sealed = gcm(wrapKeyFor(shared, ephemeralPublic), iv, aad).encrypt(briefKey);
  return Buffer.concat([aad, iv, Buffer.from(sealed)]).toString("hex");
}

/** Unwraps a brief key with the agent's private key. */
export function unwrapBriefKey(wrappedHex: string, agentPrivateKey: string | Uint8Array): Buffer {
  const bytes = unhex(wrappedHex);
  if (bytes.length !== WRAPPED_KEY_BYTES || bytes[0] !== WRAP_VERSION) {
    throw new BriefCryptoError(`wrapped key must be ${WRAPPED_KEY_BYTES} bytes starting with version ${WRAP_VERSION}`);
  }
  const ephemeralPublic = bytes.subarray(1, 66);
  const iv = bytes.subarray(66, 78);
  const privateKey = typeof agentPrivateKey === "string" ? unhex(agentPrivateKey) : agentPrivateKey;
  try {
    const shared = secp256k1.getSharedSecret(privateKey, ephemeralPublic, true).subarray(1);
    return Buffer.from(gcm(wrapKeyFor(shared, ephemeralPublic), iv, bytes.subarray(0, 66)).decrypt(bytes.subarray(78)));
  } catch (error) {
    throw new BriefCryptoError(`wrapped key does not open with this private key: ${(error as Error).message}`);
  }
}

/** Who may read a private brief: an agent's wallet address and its public key (from the executors list). */
export interface BriefRecipient {
  address: string;
  publicKey: string;
}

export interface SealedBrief {
  /** The blob to upload; its SHA-256 is the task hash. */
  blob: Buffer;
  /** The brief key: the poster keeps it to read the brief again. */
  key: Buffer;
  /** Address (lower-case) to the key wrapped to that agent, as the index body's `wrappedKeys`. */
  wrappedKeys: Record<string, string>;
  /** The key wrapped to the service's custody key, when one was given (`custodyWrappedKey`). */
  custodyWrappedKey?: string;
}

/** Encrypts a brief and wraps its key to each recipient (and to the custody key, when given). */
export function sealBrief(
  plaintext: Uint8Array,
  recipients: readonly BriefRecipient[],
  options: { custodyPublicKey?: string } = {},
): SealedBrief {
  const { blob, key } = encryptBrief(plaintext);
  const wrappedKeys: Record<string, string> = {};
  for (const r of recipients) wrappedKeys[r.address.toLowerCase()] = wrapBriefKey(key, r.publicKey);
  const sealed: SealedBrief = { blob, key, wrappedKeys };
  if (options.custodyPublicKey) sealed.custodyWrappedKey = wrapBriefKey(key, options.custodyPublicKey);
  return sealed;
}

/** Reads a private brief: unwraps the agent's wrapped key with its private key, then decrypts the blob. */
export function openBrief(blob: Uint8Array, wrappedKeyHex: string, agentPrivateKey: string | Uint8Array): Buffer {
  return decryptBrief(blob, unwrapBriefKey(wrappedKeyHex, agentPrivateKey));
}
