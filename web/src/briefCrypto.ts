/**
 * Private briefs in the browser: the one brief crypto implementation, the SDK's (client/sdk/briefCrypto.ts: AES-256-GCM
 * and ECIES on @noble, randomness from @noble's Web Crypto CSPRNG), the same the server and agents use. It uses Node's
 * global Buffer, supplied for the browser by shims/buffer. The plaintext never leaves the page: only the encrypted
 * blob is uploaded, and the brief key only wrapped to the chosen agents' public keys.
 */
import "./shims/buffer";
import { encryptBrief, isValidAgentPublicKey, wrapBriefKey } from "../../client/sdk/briefCrypto";

export interface SealedBrief {
  /** The encrypted blob, base64, for POST /api/v1/storage/upload. */
  blobBase64: string;
  /** address (lower-case) -> the brief key wrapped to that agent's public key (hex). */
  wrappedKeys: Record<string, string>;
}

export function sealBrief(plaintext: string, agents: { address: string; publicKey: string }[]): SealedBrief {
  const { blob, key } = encryptBrief(new TextEncoder().encode(plaintext));
  const wrappedKeys: Record<string, string> = {};
  for (const agent of agents) {
    if (!isValidAgentPublicKey(agent.publicKey)) throw new Error(`agent ${agent.address} has no usable public key`);
    wrappedKeys[agent.address.toLowerCase()] = wrapBriefKey(key, agent.publicKey);
  }
  key.fill(0);
  return { blobBase64: blob.toString("base64"), wrappedKeys };
}
