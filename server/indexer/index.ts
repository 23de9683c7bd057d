/** Builds an Indexer from the configuration: the address book names the escrow and its start block. */
import { JsonRpcProvider } from "ethers";
import type { Knex } from "knex";
import type { Config } from "../config";
import type { Logger } from "../logger";
import { readAddressBook } from "../chain/addressBook";
import { providerChainReader, type ChainReader } from "../chain/escrowLogs";
import { Indexer } from "./sync";

export { Indexer } from "./sync";
export { ChainIdentityMismatchError } from "./chainIdentity";

export function resetHint(config: Config): string {
  return config.databaseUrl
    ? "reset the database with `npm run db:reset` (drops this project's tables)"
    : `delete ${config.sqliteFile} (or run \`npm run db:reset\`)`;
}

export function createIndexer(
  config: Config,
  db: Knex,
  logger: Logger,
  chain: ChainReader = providerChainReader(new JsonRpcProvider(config.rpcUrl, undefined, { staticNetwork: true })),
  options: { onEvents?: () => void } = {},
): Indexer {
  const book = readAddressBook(config.network, config.deploymentsDir);
  return new Indexer({
    db,
    chain,
    network: config.network,
    escrowAddress: book.escrow.proxy,
    agentFactoryAddress: book.agentFactory.proxy,
    startBlock: book.startBlock,
    config: config.indexer,
    logger: logger.child({ component: "indexer" }),
    resetHint: resetHint(config),
    onEvents: options.onEvents,
  });
}
