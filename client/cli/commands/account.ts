/**
 * `market login`, `logout`, `whoami`: the API key of the config file. Login signs in with the wallet (EIP-4361,
 * personal_sign), creates a key and saves it with the API and RPC URLs in the config file (mode 0600); the private
 * key is never written. Logout revokes that key on the service, then removes it from the file.
 */
import fs from "node:fs";
import type { Context } from "../context";
import { MarketApi } from "../../sdk/index";
import { apiOf, signerOf } from "../clients";
import { readConfigFile, writeConfigFile } from "../config";
import { table } from "../output";
import { CliError, usageError } from "../errors";
import { EXIT } from "../exitCodes";

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
    "`market keys` lists the wallet's keys; `market keys revoke <id>` revokes one (if it leaks).",
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

/** `market keys`: the wallet's API keys (active and revoked), the one in use marked. */
export async function listKeys(ctx: Context): Promise<void> {
  const { config, out } = ctx;
  const { keys } = await apiOf(ctx).listApiKeys();
  const current = config.apiKey;
  const rows = keys.map((k) => ({ ...k, current: current !== undefined && current.startsWith(k.prefix) }));
  out.result({ keys: rows }, () =>
    rows.length === 0
      ? "No API keys."
      : table([
          ["ID", "KEY", "LABEL", "CREATED", "LAST USED", "STATE"],
          ...rows.map((k) => [
            String(k.id),
            `${k.prefix}…${k.current ? " (this one)" : ""}`,
            k.label ?? "-",
            k.createdAt,
            k.lastUsedAt ?? "-",
            k.revokedAt ? `revoked ${k.revokedAt}` : "active",
          ]),
        ]).concat(["Revoke one with: market keys revoke <id>"]),
  );
}

/** `market keys revoke <id>`: revokes one of the wallet's keys (the one in use too, when asked). */
export async function revokeKey(ctx: Context, idText: string): Promise<void> {
  if (!/^[1-9][0-9]{0,9}$/.test(idText.trim())) {
    throw usageError("INVALID_INPUT", `${JSON.stringify(idText)} is not a key id: \`market keys\` lists them`);
  }
  const id = Number(idText.trim());
  const api = apiOf(ctx);
  const key = (await api.listApiKeys()).keys.find((k) => k.id === id);
  if (!key) {
    throw new CliError({
      code: "NOT_FOUND",
      message: `the wallet has no API key ${id}`,
      hint: "`market keys` lists the wallet's keys and their ids",
      exit: EXIT.REFUSED,
    });
  }
  const self = ctx.config.apiKey?.startsWith(key.prefix) ?? false;
  await ctx.out.step(`revoking the API key ${key.prefix}… (id ${id})`, () => api.revokeApiKey(id));
  ctx.out.result({ id, prefix: key.prefix, revoked: true, current: self }, [
    `Revoked the API key ${key.prefix}… (id ${id}).`,
    ...(self ? ["It was the key this command used: run `market login` for a new one."] : []),
  ]);
}
