/** `node:crypto`'s randomBytes for the browser (vite.config.mts aliases node:crypto here): the Web Crypto CSPRNG. */
export function randomBytes(size: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(size));
}
