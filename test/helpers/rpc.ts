/**
 * The in-process Hardhat chain served over JSON-RPC HTTP on 127.0.0.1 (as the devnet serves it), so client code is
 * tested as its users run it: a plain ethers JsonRpcProvider and Wallet speaking HTTP to an automining node, never
 * Hardhat's in-process signers.
 */
import hre, { ethers } from "hardhat";
import { JsonRpcProvider, Wallet } from "ethers";
import { TASK_NODE_CREATE_SERVER } from "hardhat/builtin-tasks/task-names";
import type { EIP1193Provider, JsonRpcServer } from "hardhat/types";
import { freePort } from "./api";

export interface ServedChain {
  url: string;
  /** A plain JsonRpcProvider on the served chain (no Hardhat in between). */
  provider: JsonRpcProvider;
  close(): Promise<void>;
}

export async function serveChain(chain: EIP1193Provider = hre.network.provider): Promise<ServedChain> {
  const server: JsonRpcServer = await hre.run(TASK_NODE_CREATE_SERVER, {
    hostname: "127.0.0.1",
    port: await freePort(),
    provider: chain,
  });
  const { address, port } = await server.listen();
  const url = `http://${address}:${port}`;
  const provider = new JsonRpcProvider(url);
  return {
    url,
    provider,
    async close() {
      provider.destroy();
      await server.close();
    },
  };
}

/** A fresh wallet on `provider` with `eth` ETH for gas (and nothing else): balances it ends with are its own. */
export async function freshWallet(provider: JsonRpcProvider, eth = "10"): Promise<Wallet> {
  const wallet = new Wallet(Wallet.createRandom().privateKey, provider);
  const [funder] = await ethers.getSigners();
  await (await funder.sendTransaction({ to: wallet.address, value: ethers.parseEther(eth) })).wait();
  return wallet;
}

/**
 * How many transactions `address` has mined, asked of the node itself. A plain provider's getTransactionCount may
 * answer from ethers' 250 ms request cache (a `tx.wait()` that polled for a replacement fills it), which on an
 * automining chain can be one transaction behind.
 */
export async function minedNonce(provider: JsonRpcProvider, address: string): Promise<number> {
  return Number(BigInt(await provider.send("eth_getTransactionCount", [address, "latest"])));
}
