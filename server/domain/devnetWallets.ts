/**
 * The devnet wallet picker's data: the demo accounts the devnet writes to `.devnet/accounts.json` (Hardhat's public
 * test keys) and the chains to sign on (the posting chain first). Only the devnet sets DEVNET_ACCOUNTS_FILE; anywhere else this answers
 * NOT_FOUND, so no deployment can hand out keys by accident.
 */
import fs from "node:fs/promises";
import { fail } from "../errors";
import type { Deps } from "./deps";
import { z } from "./schemas/common";
import type { DevnetWallets } from "./schemas/devnet";

const accountsFile = z.array(z.object({ role: z.string(), address: z.string(), privateKey: z.string() }).passthrough());

export async function readDevnetWallets(deps: Deps): Promise<DevnetWallets> {
  const file = deps.config.api.web.devnetAccountsFile;
  if (!file || !deps.chain) fail("NOT_FOUND", "devnet wallets exist only when the server runs as the devnet");
  let raw: string;
  try {
    raw = await fs.readFile(file, "utf8");
  } catch {
    fail("NOT_FOUND", "the devnet has not written its accounts yet");
  }
  const accounts = accountsFile.parse(JSON.parse(raw));
  const chains = deps.config.chains.flatMap((c) => {
    const gateway = deps.chains.get(c.name);
    return gateway ? [{ chain: c.name, chainId: gateway.book.chainId, rpcUrl: c.rpcUrl }] : [];
  });
  return {
    rpcUrl: deps.config.rpcUrl,
    chainId: deps.chain.book.chainId,
    chains,
    accounts: accounts.map(({ role, address, privateKey }) => ({ role, address, privateKey })),
  };
}
