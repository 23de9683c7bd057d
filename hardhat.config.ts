import fs from "node:fs";
import path from "node:path";
import { HardhatUserConfig, subtask } from "hardhat/config";
import {
  TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD,
  TASK_TEST_GET_TEST_FILES,
  TASK_TEST_RUN_MOCHA_TESTS,
} from "hardhat/builtin-tasks/task-names";
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

// `npm test` is `hardhat test --parallel`: mocha hands one file at a time to TEST_JOBS worker processes, in the order
// returned here. The slowest files go first (test/durations.json, their measured seconds; `npm run test:durations`
// remeasures), so that no long file starts last while the other workers sit idle; a file not measured yet counts as
// slow. Each worker is a process of its own: its own Hardhat network, database files and ports.
subtask(TASK_TEST_GET_TEST_FILES, async (args: { testFiles: string[] }, _hre, runSuper) => {
  const files: string[] = await runSuper(args);
  const durations = JSON.parse(fs.readFileSync(path.join(__dirname, "test", "durations.json"), "utf8")) as Record<
    string,
    number
  >;
  const seconds = (file: string) => durations[path.relative(__dirname, file).split(path.sep).join("/")] ?? Infinity;
  return [...files].sort((a, b) => seconds(b) - seconds(a) || a.localeCompare(b));
});

// The browser tests and the devnet build the web app when web/dist is stale; in a parallel run two workers would
// build it into the same folder at once, so a parallel run builds it first, once.
subtask(TASK_TEST_RUN_MOCHA_TESTS, async (args: { parallel: boolean; testFiles: string[] }, _hre, runSuper) => {
  const web = [path.join("test", "web"), path.join("test", "e2e", "devnet.test.ts")];
  if (args.parallel && args.testFiles.some((file) => web.some((part) => file.includes(part)))) {
    const { ensureWebBuilt } = await import("./scripts/webBuild");
    ensureWebBuilt((line) => console.log(line));
  }
  return runSuper(args);
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
  mocha: {
    timeout: 120_000,
    // Worker processes of a parallel run (`hardhat test --parallel`, as `npm test` runs it). Most files wait on child
    // processes, servers and the browser as much as they compute, so a two-core machine keeps three busy.
    jobs: Number(process.env.TEST_JOBS ?? 3),
    // Loaded first by every worker of a parallel run: ts-node with a transpile cache shared by the workers and every
    // process the tests spawn (test/helpers/transpileCache.js).
    require: [path.join(__dirname, "test", "helpers", "transpileCache.js")],
    // TEST_FILE_TIMES=<file.json> adds each test file's wall time to the spec reporter's output (test/helpers/fileTimes.ts).
    ...(process.env.TEST_FILE_TIMES ? { reporter: "test/helpers/fileTimes.ts" } : {}),
  },
};

export default config;
