/**
 * `market login`, `logout`, `whoami`: the API key of the config file. Login signs in with the wallet (EIP-4361,
 * personal_sign), creates a key and saves it with the API and RPC URLs in the config file (mode 0600); the private
 * key is never written. Logout revokes that key on the service, then removes it from the file.
 */
import fs from "node:fs";
import type { Context } from "../context";
import { MarketApi } from "../../sdk";
import { apiOf, signerOf } from "../clients";
import { readConfigFile, writeConfigFile } from "../config";

export async function login(ctx: Context, options: { label: string }): Promise<void> {
  const { config, out } = ctx;
  const wallet = signerOf(ctx);
  const api = apiOf(ctx, false);
  const session = await out.step(
    `signing in as ${wallet.address} at ${config.apiUrl}`,
    () => api.signIn(wallet),
    (s) => `session until ${s.expiresAt}`,
  );
  const created = await out.step(
    "creating an API key",
    () => api.createApiKey({ label: options.label }, session.sessionToken),
    (k) => `${k.prefix}… (id ${k.id})`,
  );
  const saved = {
    ...readConfigFile(config.configPath),
    apiUrl: config.apiUrl,
    rpcUrl: config.rpcUrl,
    apiKey: created.key,
    address: session.address,
    savedAt: new Date().toISOString(),
  };
  writeConfigFile(config.configPath, saved);
  out.result({ address: session.address, keyId: created.id, prefix: created.prefix, configPath: config.configPath }, [
    `Signed in as ${session.address}.`,
    `API key ${created.prefix}… saved in ${config.configPath} (mode 0600).`,
    "Revoke it with the account's key list if it leaks.",
  ]);
}

/**
 * Revokes the config file's API key on the service it was made for (found by its prefix in the wallet's key list),
 * then removes it from the file. When the service cannot be reached or refuses, the key is still removed from the
 * file and the answer says it stays valid (`revoked: false`, `revokeError`).
 */
export async function logout(ctx: Context): Promise<void> {
  const { config, out } = ctx;
  const saved = readConfigFile(config.configPath);
  const key = saved.apiKey;
  if (key === undefined) {
    const existed = fs.existsSync(config.configPath);
    out.result(
      { removed: false, revoked: false, configPath: existed ? config.configPath : null },
      "No API key was saved.",
    );
    return;
  }
  let revokeError: string | undefined;
  try {
    const api = new MarketApi({ baseUrl: saved.apiUrl ?? config.apiUrl, apiKey: key });
    const matches = (await api.listApiKeys()).keys.filter((k) => key.startsWith(k.prefix) && k.revokedAt === null);
    if (matches.length !== 1) revokeError = `the service lists ${matches.length} active keys with this key's prefix`;
    else await out.step(`revoking the API key ${matches[0].prefix}…`, () => api.revokeApiKey(matches[0].id));
  } catch (error) {
    revokeError = (error as Error).message;
  }
  delete saved.apiKey;
  writeConfigFile(config.configPath, saved);
  const revoked = revokeError === undefined;
  out.result(
    { removed: true, revoked, ...(revoked ? {} : { revokeError }), configPath: config.configPath },
    revoked
      ? `Revoked the API key and removed it from ${config.configPath}.`
      : `Removed the API key from ${config.configPath}, but could not revoke it (${revokeError}): it stays valid until revoked.`,
  );
}

export async function whoami(ctx: Context): Promise<void> {
  const { config, out } = ctx;
  const me = await apiOf(ctx).whoami();
  const signer = config.privateKey ? signerOf(ctx).address.toLowerCase() : null;
  const data = {
    address: me.address,
    addresses: me.addresses,
    signer,
    apiUrl: config.apiUrl,
    rpcUrl: config.rpcUrl,
    configPath: config.configPath,
    sources: config.sources,
  };
  out.result(data, [
    `API key acts as  ${me.address}`,
    `Signing wallet   ${signer ?? "(none: set MARKET_PRIVATE_KEY to sign)"}${
      signer && signer !== me.address ? "  (differs from the key's wallet: transactions would be refused)" : ""
    }`,
    `API              ${config.apiUrl}  (${config.sources.apiUrl})`,
    `RPC              ${config.rpcUrl}  (${config.sources.rpcUrl})`,
    `API key from     ${config.sources.apiKey}; config file ${config.configPath}`,
  ]);
}
