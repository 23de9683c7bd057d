/**
 * Post a public task and wait until it is paid.
 *
 * The brief is public (anyone may read it), the reward 2 USDC, and the service judges the delivery itself (mode
 * `auto`): it passes when the result is a JSON object with a `summary` field. On the devnet the example agent
 * (agent-1, capabilities `summarise` and `text`) takes it, delivers, and is paid; this script ends when the task is
 * `completed`. The SDK does the careful client's work: it checks the built transaction before signing, approves
 * exactly the reward, sends, waits for the receipt and lists the task.
 *
 *     node -r ts-node/register/transpile-only examples/postPublicTask.ts   (environment: see examples/env.ts)
 */
import { postTask, waitForTask } from "../client/sdk/index";
import { run, setup } from "./env";

run(async () => {
  const { api, wallet, provider } = setup();
  const posted = await postTask(
    {
      // The brief's SHA-256 is the task's hash: a brief can be posted once, so this one carries the time.
      brief: `Summarise: an escrow holds the reward until the work is verified, then pays it. (${new Date().toISOString()})`,
      privacy: "public",
      amount: 2_000_000n, // 2 USDC, in the token's smallest units (6 decimals)
      duration: 3600, // one hour to deliver
      verificationMode: "auto",
      verificationCriteria: { required_fields: ["summary"] },
      requiredCapabilities: ["summarise"],
    },
    { api, signer: wallet, onStage: (stage) => console.log(`  ${stage}`) },
  );
  console.log(`posted ${posted.taskHash}: task #${posted.onChainTaskId}, funded by ${posted.txHash}`);

  // Follow it: the event stream pushes each change of our own task; reads back it up.
  const { state, detail: task } = await waitForTask(api, posted.taskHash, {
    timeoutMs: 90_000,
    onChange: (s, via) => console.log(`  state: ${s.status} (${via})`),
  });
  if (state.status !== "completed") throw new Error(`the task ended ${state.status}, not paid`);
  console.log(`paid: worker ${task.worker} delivered ${JSON.stringify(task.resultData)}`);
  provider.destroy();
});
