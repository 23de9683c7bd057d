/**
 * The settlement chains in the configuration (CHAINS and each chain's prefixed variables): a single-chain
 * environment reads as before, two chains list the posting chain first, and a chain that cannot be reached fails the
 * start naming the variable to set.
 */
import { expect } from "chai";
import { ConfigError, loadConfig } from "../../server/config";

const REMOTE = { NETWORK: "base-sepolia", RPC_URL: "https://base.example/rpc", HOSTED_AGENTS: "off" };

describe("configuration: settlement chains", () => {
  it("keeps a single-chain environment as it was: the posting chain alone, on the legacy variables", () => {
    const config = loadConfig({
      ...REMOTE,
      INDEXER_CONFIRMATIONS: "5",
      SETTLEMENT_TIER: "testnet",
      GAS_SYMBOL: "ETH",
    });
    expect(config.chains).to.deep.equal([
      {
        name: "base",
        rpcUrl: "https://base.example/rpc",
        network: "base-sepolia",
        confirmations: 5,
        tier: "testnet",
        gasSymbol: "ETH",
      },
    ]);
    expect(config.rpcUrl).to.equal("https://base.example/rpc");
    expect(config.indexer.confirmations).to.equal(5);
    expect(config.api).to.include({ postingChain: "base", settlementTier: "testnet", gasSymbol: "ETH" });
    // The devnet's defaults: the posting chain on 8545, no confirmations.
    expect(loadConfig({ NETWORK: "localhost" }).chains).to.deep.equal([
      {
        name: "base",
        rpcUrl: "http://127.0.0.1:8545",
        network: "localhost",
        confirmations: 0,
        tier: "devnet",
        gasSymbol: "ETH",
      },
    ]);
    expect(loadConfig({ ...REMOTE, POSTING_CHAIN: "arc" }).chains.map((c) => c.name)).to.deep.equal(["arc"]);
  });

  it("lists two chains, the posting chain first, each on its prefixed variables or its defaults", () => {
    const config = loadConfig({
      ...REMOTE,
      CHAINS: "arc, base",
      ARC_RPC_URL: "https://arc.example/rpc",
      ARC_CONFIRMATIONS: "1",
      ARC_GAS_SYMBOL: "USDC",
      BASE_SETTLEMENT_TIER: "mainnet",
    });
    expect(config.chains).to.deep.equal([
      {
        name: "base",
        rpcUrl: "https://base.example/rpc",
        network: "base-sepolia",
        confirmations: 3,
        tier: "mainnet",
        gasSymbol: "ETH",
      },
      {
        name: "arc",
        rpcUrl: "https://arc.example/rpc",
        network: "base-sepolia-arc",
        confirmations: 1,
        tier: "devnet",
        gasSymbol: "USDC",
      },
    ]);
    expect(config.api).to.include({ postingChain: "base", settlementTier: "mainnet" });
    // A prefixed variable overrides the legacy one for its chain, the posting chain included.
    const prefixed = loadConfig({
      ...REMOTE,
      POSTING_CHAIN: "arc",
      CHAINS: "base,arc",
      ARC_NETWORK: "arc-testnet",
      ARC_RPC_URL: "https://arc.example/rpc",
      BASE_NETWORK: "base-sepolia",
      BASE_RPC_URL: "https://base2.example/rpc",
    });
    expect(prefixed.chains.map((c) => [c.name, c.network, c.rpcUrl])).to.deep.equal([
      ["arc", "arc-testnet", "https://arc.example/rpc"],
      ["base", "base-sepolia", "https://base2.example/rpc"],
    ]);
    expect(prefixed.rpcUrl).to.equal("https://arc.example/rpc");
    // The devnet: arc on 8546 with the address book localhost-arc.
    const devnet = loadConfig({ NETWORK: "localhost", CHAINS: "base,arc" });
    expect(devnet.chains.map((c) => [c.name, c.network, c.rpcUrl, c.confirmations])).to.deep.equal([
      ["base", "localhost", "http://127.0.0.1:8545", 0],
      ["arc", "localhost-arc", "http://127.0.0.1:8546", 0],
    ]);
  });

  it("fails naming ARC_RPC_URL when arc is configured on a remote network without it", () => {
    expect(() => loadConfig({ ...REMOTE, CHAINS: "base,arc" }))
      .to.throw(ConfigError)
      .with.property("message")
      .that.matches(/^ARC_RPC_URL: required for chain arc on network base-sepolia/);
  });

  it("refuses an unknown or repeated chain, and a CHAINS without the posting chain", () => {
    expect(() => loadConfig({ ...REMOTE, CHAINS: "base,solana" })).to.throw(ConfigError, /CHAINS: .*\(not solana\)/);
    expect(() => loadConfig({ ...REMOTE, CHAINS: "base,base" })).to.throw(ConfigError, /CHAINS: must be a comma list/);
    expect(() => loadConfig({ ...REMOTE, CHAINS: "arc", ARC_RPC_URL: "https://arc.example/rpc" })).to.throw(
      ConfigError,
      /CHAINS: must include POSTING_CHAIN \(base\)/,
    );
    expect(() => loadConfig({ ...REMOTE, ARC_CONFIRMATIONS: "x" })).to.throw(ConfigError, /ARC_CONFIRMATIONS: /);
  });

  it("takes each chain's WebSocket URL for new heads, refusing one that is not ws:// or wss://", () => {
    const config = loadConfig({
      ...REMOTE,
      CHAINS: "base,arc",
      BASE_WS_URL: "wss://base.example/ws",
      ARC_RPC_URL: "https://arc.example/rpc",
    });
    expect(config.chains.map((c) => c.wsUrl)).to.deep.equal(["wss://base.example/ws", undefined]);
    expect(() => loadConfig({ ...REMOTE, ARC_WS_URL: "https://arc.example/rpc" })).to.throw(
      ConfigError,
      /ARC_WS_URL: must be a ws:\/\/ or wss:\/\/ URL/,
    );
  });

  it("polls the head every 20 ms on local networks and every 500 ms elsewhere unless INDEXER_HEAD_POLL_MS says", () => {
    expect(loadConfig({ NETWORK: "localhost" }).indexer.headPollMs).to.equal(20);
    expect(loadConfig(REMOTE).indexer.headPollMs).to.equal(500);
    expect(loadConfig({ ...REMOTE, INDEXER_HEAD_POLL_MS: "0" }).indexer.headPollMs).to.equal(0);
    expect(() => loadConfig({ ...REMOTE, INDEXER_HEAD_POLL_MS: "soon" })).to.throw(ConfigError, /INDEXER_HEAD_POLL_MS/);
  });
});
