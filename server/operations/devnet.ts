/** The devnet wallet picker of the web app: demo accounts, served only when the server runs as the devnet. */
import { defineOperation, type AnyOperation } from "./operation";
import { readDevnetWallets } from "../domain/devnetWallets";
import { devnetWalletsSchema } from "../domain/schemas/devnet";

export const devnetWalletsRoute = defineOperation({
  mcp: { restOnly: "a local devnet's funded wallets, for development only" },
  method: "get",
  path: "/api/v1/devnet/wallets",
  summary: "Devnet only: the demo accounts (public Hardhat test keys) for the web app's devnet wallet picker",
  description: "NOT_FOUND unless the server runs as the devnet (DEVNET_ACCOUNTS_FILE, set by npm run devnet).",
  tags: ["public"],
  auth: "none",
  response: devnetWalletsSchema,
  errors: ["NOT_FOUND"],
  handler: ({ deps }) => readDevnetWallets(deps),
});

export const devnetRoutes: AnyOperation[] = [devnetWalletsRoute];
