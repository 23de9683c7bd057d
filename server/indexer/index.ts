/**
 * The one construction of the Indexer, for the API's process (server/main.ts) and the indexer's own
 * (server/indexer/main.ts): the address book names the escrow, the agent factory and the start block.
 */
import { JsonRpcProvider } from "ethers";
import type { Knex } from "knex";
import type { ChainConfig, Config } from "../config";
import type { Logger } from "../logger";
import { readAddressBook, type AddressBook } from "../chain/addressBook";
import { providerChainReader, type ChainReader } from "../chain/escrowLogs";
import { webSocketHeads } from "../chain/heads";
import { Indexer } from "./sync";

export { Indexer } from "./sync";
export { ChainIdentityMismatchError } from "./chainIdentity";

export function resetHint(config: Config): string {
  return config.databaseUrl
    ? "reset the database with `npm run db:reset` (drops this project's tables)"
    : `delete ${config.sqliteFile} (or run \`npm run db:reset\`)`;
}

export interface IndexerSources {
  /** The chain to read (default: a provider on RPC_URL, and new heads from the chain's WebSocket URL if it has one). */
  chain?: ChainReader;
  /** The deployment (default: read from the address book of NETWORK). */
  book?: AddressBook;
  /** Called after each range with new events (the API's process wakes its event streams). */
  onEvents?: () => void;
}

/**
 * The indexer of one settlement chain (`chainConfig`, default the posting chain): its RPC URL, address book and
 * confirmations; its rows, checkpoint and writer lock are its own in the shared database.
 */
export function createIndexer(
  config: Config,
  db: Knex,
  logger: Logger,
  sources: IndexerSources = {},
  chainConfig: ChainConfig = config.chains[0],
): Indexer {
  const chain =
    sources.chain ??
    providerChainReader(
      new JsonRpcProvider(chainConfig.rpcUrl, undefined, { staticNetwork: true }),
      chainConfig.wsUrl ? webSocketHeads(chainConfig.wsUrl) : undefined,
    );
  const book = sources.book ?? readAddressBook(chainConfig.network, config.deploymentsDir);
  return new Indexer({
    db,
    chain,
    chainName: chainConfig.name,
    network: chainConfig.network,
    escrowAddress: book.escrow.proxy,
    agentFactoryAddress: book.agentFactory.proxy,
    startBlock: book.startBlock,
    config: { ...config.indexer, confirmations: chainConfig.confirmations },
    logger: logger.child({ component: "indexer", chain: chainConfig.name }),
    resetHint: resetHint(config),
    onEvents: sources.onEvents,
  });
}
