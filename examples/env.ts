/**
 * What every example starts from: the service and the chain from the environment, a plain ethers `JsonRpcProvider`
 * and `Wallet`, and the SDK's API client. On the devnet (`npm run devnet`) take the values of one account of
 * `.devnet/accounts.json`:
 *
 *     export MARKET_API_URL=http://127.0.0.1:8787 MARKET_RPC_URL=http://127.0.0.1:8545
 *     export MARKET_API_KEY=$(node -p 'require("./.devnet/accounts.json")[0].apiKey')
 *     export MARKET_PRIVATE_KEY=$(node -p 'require("./.devnet/accounts.json")[0].privateKey')
 *     export MARKET_ARC_RPC_URL=http://127.0.0.1:8546   # arc's RPC, for examples/postOnArc.ts
 *
 * (`npm run examples` starts its own devnet and sets these for each example.)
 */
import { JsonRpcProvider, Wallet } from "ethers";
import { MarketApi, isMarketError } from "../client/sdk/index";

export function setup() {
  const missing = ["MARKET_API_URL", "MARKET_RPC_URL", "MARKET_API_KEY", "MARKET_PRIVATE_KEY"].filter(
    (name) => !process.env[name],
  );
  if (missing.length) throw new Error(`set ${missing.join(", ")} (see examples/env.ts)`);
  const provider = new JsonRpcProvider(process.env.MARKET_RPC_URL);
  const wallet = new Wallet(process.env.MARKET_PRIVATE_KEY!, provider);
  const api = new MarketApi({ baseUrl: process.env.MARKET_API_URL!, apiKey: process.env.MARKET_API_KEY });
  return { provider, wallet, api };
}

/** Runs an example: exit 0 when it ended as it should, 1 with the error's code and message otherwise. */
export function run(example: () => Promise<void>): void {
  example().then(
    () => process.exit(0),
    (error) => {
      if (isMarketError(error)) console.error(`FAILED ${error.code}: ${error.message}`, error.details ?? "");
      else console.error("FAILED", error);
      process.exit(1);
    },
  );
}
