/** Schema of GET /api/v1/devnet/wallets (the web app's devnet wallet picker). */
import { z } from "./common";

export const devnetWalletsSchema = z
  .object({
    rpcUrl: z.string().openapi({ description: "The devnet chain's JSON-RPC URL (the browser signs and sends there)" }),
    chainId: z.number().int(),
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
