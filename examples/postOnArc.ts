/**
 * Post a task on arc, the service's second settlement chain, with a plain ethers wallet on arc's RPC.
 *
 * One service settles on base (the posting chain) and arc. Naming `chain: "arc"` makes the SDK pin arc's entry of
 * the settlement record (its escrow, token and chain id: a wallet on another chain's RPC is refused before anything
 * is signed), build for arc's escrow, approve exactly the reward on arc's USDC, fund, and list the task with its
 * funding read on arc. The script then checks the funding on arc's RPC itself and follows the task until the
 * marketplace shows it listed on arc (or further along, should an agent take it meanwhile).
 *
 * On the devnet the wallet is funded on both chains and `npm run devnet` prints arc's RPC URL (DEVNET_ARC_PORT,
 * default http://127.0.0.1:8546). Set WAIT_UNTIL_PAID=1 to keep following until the task is paid: that needs an
 * agent that takes `summarise` work on arc and the marketplace verifier settling on arc.
 *
 *     MARKET_ARC_RPC_URL=http://127.0.0.1:8546 node -r ts-node/register/transpile-only examples/postOnArc.ts
 *     (the rest of the environment: see examples/env.ts)
 */
import { Contract, JsonRpcProvider, Wallet } from "ethers";
import { postTask, waitForTask } from "../client/sdk/index";
import { run, setup } from "./env";

const LISTED_OR_LATER = ["open", "assigned", "submitted", "verified", "completed"];

run(async () => {
  const arcRpcUrl = process.env.MARKET_ARC_RPC_URL;
  if (!arcRpcUrl) throw new Error("set MARKET_ARC_RPC_URL to arc's JSON-RPC URL (the devnet prints it)");
  const { api, provider: baseProvider } = setup();
  baseProvider.destroy();
  // A plain provider and wallet on arc (no read cache, as examples/plainEthers.ts explains).
  const provider = new JsonRpcProvider(arcRpcUrl, undefined, { cacheTimeout: -1 });
  const wallet = new Wallet(process.env.MARKET_PRIVATE_KEY!, provider);

  const arc = (await api.settlement()).chains.find((c) => c.chain === "arc");
  if (!arc?.postable) throw new Error(`this service does not post on arc (${JSON.stringify(arc ?? null)})`);
  console.log(`arc: chain id ${arc.chainId}, escrow ${arc.escrowAddress}, token ${arc.token?.symbol}`);

  const posted = await postTask(
    {
      brief: `Summarise: one marketplace, two settlement chains; this task settles on arc. (${new Date().toISOString()})`,
      privacy: "public",
      amount: 1_000_000n, // 1 USDC on arc, in the token's smallest units (6 decimals)
      duration: 3600,
      verificationMode: "auto",
      verificationCriteria: { required_fields: ["summary"] },
      requiredCapabilities: ["summarise"],
    },
    { api, signer: wallet, chain: "arc", onStage: (stage) => console.log(`  ${stage}`) },
  );
  console.log(
    `posted ${posted.taskHash} on ${posted.chain} (chain id ${posted.chainId}): task #${posted.onChainTaskId}`,
  );

  // The funding, read from arc's own RPC: mined there, sent to arc's escrow, which holds the task.
  const receipt = await provider.getTransactionReceipt(posted.txHash);
  if (receipt?.status !== 1 || receipt.to?.toLowerCase() !== arc.escrowAddress!.toLowerCase()) {
    throw new Error(`the funding ${posted.txHash} is not a mined call to arc's escrow`);
  }
  const escrow = new Contract(arc.escrowAddress!, ["function nextTaskId() view returns (uint256)"], provider);
  if ((await escrow.nextTaskId()) <= BigInt(posted.onChainTaskId)) throw new Error("arc's escrow has no such task");
  console.log(`  funded on arc in block ${receipt.blockNumber}`);

  const untilPaid = process.env.WAIT_UNTIL_PAID === "1";
  const { state, detail } = await waitForTask(api, posted.taskHash, {
    timeoutMs: untilPaid ? 120_000 : 30_000,
    readIntervalMs: 2_000,
    until: (s) => (untilPaid ? s.status === "completed" : LISTED_OR_LATER.includes(s.status)),
    onChange: (s, via) => console.log(`  state: ${s.status} (${via})`),
  });
  if (detail.a2aMeta?.chain !== undefined && detail.a2aMeta.chain !== "arc") {
    throw new Error(`the marketplace lists the task on ${detail.a2aMeta.chain}, not arc`);
  }
  console.log(`${state.status} on arc: ${posted.taskHash}`);
  provider.destroy();
});
