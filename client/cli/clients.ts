/**
 * The SDK objects a command needs, built from the resolved configuration: the API client, and a plain ethers
 * `JsonRpcProvider` + `Wallet` for commands that sign. Each is released when the command ends.
 */
import { JsonRpcProvider, Wallet } from "ethers";
import { MarketApi } from "../sdk/index";
import { requireApiKey, requirePrivateKey, rpcUrlFor } from "./config";
import type { Context } from "./context";

/** The API client; `keyed` requires an API key (every route but the public reads). */
export function apiOf(ctx: Context, keyed = true): MarketApi {
  const apiKey = keyed ? requireApiKey(ctx.config) : ctx.config.apiKey;
  return new MarketApi({ baseUrl: ctx.config.apiUrl, apiKey });
}

/** The signing wallet on a plain JsonRpcProvider of `chain`'s RPC URL (rpcUrlFor; default the configured one). */
export function walletOf(ctx: Context, chain?: "base" | "arc"): Wallet {
  const privateKey = requirePrivateKey(ctx.config);
  const provider = new JsonRpcProvider(rpcUrlFor(ctx.config, chain));
  ctx.onClose(() => provider.destroy());
  return new Wallet(privateKey, provider);
}

/** The wallet without a provider, for signing messages only (sign-in). */
export function signerOf(ctx: Context): Wallet {
  return new Wallet(requirePrivateKey(ctx.config));
}
