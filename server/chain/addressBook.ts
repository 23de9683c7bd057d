/** The address book `deployments/<network>.json` that deploy writes and the server and SDK read. */
import fs from "node:fs";
import path from "node:path";
import { PROJECT_ROOT } from "../projectRoot";

export interface AddressBook {
  chainId: number;
  network: string;
  escrow: { proxy: string; implementation: string };
  agentFactory: { proxy: string; implementation: string };
  token: { address: string; symbol: string; decimals: number };
  admin: string;
  treasury: string;
  verifier: string;
  feeBps: number;
  startBlock: number;
}

export const DEFAULT_DEPLOYMENTS_DIR = path.join(PROJECT_ROOT, "deployments");

export function addressBookPath(network: string, dir = DEFAULT_DEPLOYMENTS_DIR): string {
  return path.join(dir, `${network}.json`);
}

export class AddressBookMissingError extends Error {
  override name = "AddressBookMissingError";
}

export function readAddressBook(network: string, dir = DEFAULT_DEPLOYMENTS_DIR): AddressBook {
  const file = addressBookPath(network, dir);
  if (!fs.existsSync(file)) {
    throw new AddressBookMissingError(
      `no address book for network ${network} at ${file}: deploy first (npm run devnet for the local devnet)`,
    );
  }
  return JSON.parse(fs.readFileSync(file, "utf8")) as AddressBook;
}
