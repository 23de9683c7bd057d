/**
 * One-command local devnet: serves the in-process Hardhat chain on http://127.0.0.1:8545, deploys the escrow, the
 * agent factory and MockUSDC, writes `deployments/localhost.json`, prints the addresses, and runs until stopped
 * (Ctrl-C or SIGTERM). Also usable as a library: `startDevnet()` resolves once everything is deployed.
 */
import hre from "hardhat";
import { TASK_NODE_CREATE_SERVER } from "hardhat/builtin-tasks/task-names";
import type { JsonRpcServer } from "hardhat/types";
import { addressBookPath, deployAll, type Deployment } from "./deploy";

export interface DevnetOptions {
  hostname?: string;
  port?: number;
}

export interface Devnet {
  rpcUrl: string;
  deployment: Deployment;
  close(): Promise<void>;
}

export async function startDevnet({ hostname = "127.0.0.1", port = 8545 }: DevnetOptions = {}): Promise<Devnet> {
  if (hre.network.name !== "hardhat") {
    throw new Error(`the devnet serves the in-process chain: run it without --network (got ${hre.network.name})`);
  }
  const server: JsonRpcServer = await hre.run(TASK_NODE_CREATE_SERVER, {
    hostname,
    port,
    provider: hre.network.provider,
  });
  const { port: actualPort, address } = await server.listen();
  const rpcUrl = `http://${address}:${actualPort}`;
  const deployment = await deployAll({ networkName: "localhost" });
  return {
    rpcUrl,
    deployment,
    close: async () => {
      await server.close();
    },
  };
}

async function main() {
  const devnet = await startDevnet({ port: Number(process.env.DEVNET_PORT ?? 8545) });
  const { book } = devnet.deployment;
  console.log(`Devnet chain  ${devnet.rpcUrl} (chain id ${book.chainId})`);
  console.log(`Escrow        ${book.escrow.proxy} (implementation ${book.escrow.implementation})`);
  console.log(`AgentFactory  ${book.agentFactory.proxy}`);
  console.log(`Token         ${book.token.address} (${book.token.symbol}, ${book.token.decimals} decimals)`);
  console.log(`Admin ${book.admin}  Treasury ${book.treasury}  Verifier ${book.verifier}  Fee ${book.feeBps} bps`);
  console.log(`Address book  ${addressBookPath("localhost")}`);
  console.log("Running. Stop with Ctrl-C.");
  const stop = async (signal: string) => {
    console.log(`\n${signal}: stopping the devnet`);
    await devnet.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
  await new Promise(() => undefined);
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
