/**
 * A second in-process Hardhat chain beside `hre`'s: the devnet's arc chain and the tests' (test/helpers/arc.ts).
 */
import hre from "hardhat";
import { HardhatContext } from "hardhat/internal/context";
import { Environment } from "hardhat/internal/core/runtime-environment";
import type { HardhatRuntimeEnvironment } from "hardhat/types";

/**
 * A second Hardhat runtime whose in-process chain has `chainId`: the same configuration, tasks and plugins (ethers,
 * upgrades) as `hre`, with its own provider, so the deploy script runs on it unchanged.
 */
export function secondChainRuntime(chainId: number): HardhatRuntimeEnvironment {
  const context = HardhatContext.getHardhatContext();
  const config = {
    ...hre.config,
    networks: { ...hre.config.networks, hardhat: { ...hre.config.networks.hardhat, chainId } },
  };
  // The plugins' environment extenders add ethers and upgrades as on `hre`.
  return new Environment(
    config,
    hre.hardhatArguments,
    hre.tasks,
    hre.scopes,
    context.environmentExtenders,
    hre.userConfig,
    context.providerExtenders,
  ) as unknown as HardhatRuntimeEnvironment;
}
