import { HardhatUserConfig, subtask } from "hardhat/config";
import { TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD } from "hardhat/builtin-tasks/task-names";
import "@nomicfoundation/hardhat-toolbox";
import "@openzeppelin/hardhat-upgrades";

const SOLC_VERSION = "0.8.28";

// Hardhat cannot download compilers here: use the solc-js build shipped in the `solc` npm package, pinned to the
// exact version above (package.json pins the same).
subtask(TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD, async (args: { solcVersion: string }, _hre, runSuper) => {
  if (args.solcVersion !== SOLC_VERSION) return runSuper(args);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const solc = require("solc");
  return {
    compilerPath: require.resolve("solc/soljson.js"),
    isSolcJs: true,
    version: SOLC_VERSION,
    longVersion: solc.version(),
  };
});

const deployerKey = process.env.DEPLOYER_PRIVATE_KEY;
// `hardhat coverage` instruments every contract: the escrow's implementation, which deploys its module in its
// constructor, then needs more than the 2^24 gas per transaction that Osaka (Hardhat's default hardfork, EIP-7825)
// allows. Coverage runs on Prague, which has no such cap; every other run keeps the default.
const COVERAGE = process.argv.includes("coverage");

const config: HardhatUserConfig = {
  solidity: {
    version: SOLC_VERSION,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: "cancun",
      viaIR: false,
    },
  },
  networks: {
    hardhat: {
      // Open-submission and pause tests jump months ahead; keep the chain's clock free.
      allowBlocksWithSameTimestamp: true,
      ...(COVERAGE ? { hardfork: "prague" } : {}),
    },
    localhost: { url: process.env.DEVNET_RPC_URL ?? "http://127.0.0.1:8545" },
    ...(process.env.RPC_URL
      ? { remote: { url: process.env.RPC_URL, accounts: deployerKey ? [deployerKey] : [] } }
      : {}),
  },
  typechain: { outDir: "typechain-types", target: "ethers-v6" },
  gasReporter: { enabled: process.env.REPORT_GAS === "true" },
  mocha: { timeout: 120_000 },
};

export default config;
