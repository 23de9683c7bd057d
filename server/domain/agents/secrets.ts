/**
 * Secrets at rest: hosted agents' wallet keys and their skills' secrets, sealed with AES-256-GCM under the
 * key-encryption key of the configuration (AGENT_KEY_ENCRYPTION_KEY). Each sealed value names what it is (the
 * additional data, for example `agent:<id>:key`), so a value copied to another row does not open there.
 * Format: `v1.<iv>.<tag>.<ciphertext>`, each base64url.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const VERSION = "v1";

export function sealSecret(kek: Buffer, plaintext: string, label: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", kek, iv);
  cipher.setAAD(Buffer.from(label, "utf8"));
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext]
    .map((p) => (typeof p === "string" ? p : p.toString("base64url")))
    .join(".");
}

/** Opens a sealed value; throws when the key, the label or the value is not the one it was sealed with. */
export function openSecret(kek: Buffer, sealed: string, label: string): string {
  const [version, iv, tag, ciphertext] = sealed.split(".");
  if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined) {
    throw new Error("not a sealed secret of this service");
  }
  const decipher = createDecipheriv("aes-256-gcm", kek, Buffer.from(iv, "base64url"));
  decipher.setAAD(Buffer.from(label, "utf8"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
}

/** The labels sealed values carry. */
export const secretLabel = {
  walletKey: (agentId: string) => `agent:${agentId}:key`,
  skillSecrets: (agentId: string, skill: string) => `agent:${agentId}:skill:${skill}`,
};
