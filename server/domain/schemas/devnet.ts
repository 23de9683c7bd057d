/** Schema of GET /api/v1/devnet/wallets (the web app's devnet wallet picker). */
import { z } from "./common";

export const devnetWalletsSchema = z
  .object({
    rpcUrl: z.string().openapi({
      description: "The posting chain's JSON-RPC URL (the browser signs and sends there until it switches chains)",
    }),
    chainId: z.number().int(),
    chains: z
      .array(
        z.object({
          chain: z.enum(["base", "arc"]),
          chainId: z.number().int(),
          rpcUrl: z.string(),
        }),
      )
      .openapi({
        description:
          "Every devnet chain the wallet can switch to (wallet_switchEthereumChain), the posting chain first: its name, chain id and JSON-RPC URL",
      }),
    accounts: z.array(
      z.object({
        role: z.string(),
        address: z.string(),
        privateKey: z.string().openapi({ description: "A Hardhat public test key: never use it anywhere real" }),
      }),
    ),
  })
  .openapi("DevnetWallets");

export type DevnetWallets = z.infer<typeof devnetWalletsSchema>;
