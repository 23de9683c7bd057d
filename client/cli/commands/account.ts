/**
 * `market login`, `logout`, `whoami`: the API key of the config file. Login signs in with the wallet (EIP-4361,
 * personal_sign), creates a key and saves it with the API and RPC URLs in the config file (mode 0600); the private
 * key is never written.
 */
import fs from "node:fs";
import type { Context } from "../context";
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

export async function logout(ctx: Context): Promise<void> {
  const { config, out } = ctx;
  const saved = readConfigFile(config.configPath);
  const had = saved.apiKey !== undefined;
  if (had) {
    delete saved.apiKey;
    writeConfigFile(config.configPath, saved);
  }
  const existed = fs.existsSync(config.configPath);
  out.result(
    { removed: had, configPath: existed ? config.configPath : null },
    had
      ? `Removed the API key from ${config.configPath} (the key itself stays valid until revoked).`
      : "No API key was saved.",
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
