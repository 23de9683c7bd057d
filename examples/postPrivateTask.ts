/**
 * Post a private task to a chosen agent and wait until it is paid.
 *
 * The brief is encrypted (AES-256-GCM, a fresh key per brief) and its key wrapped to the chosen agent's public key,
 * which the SDK reads from the service's executors list: only that agent can read it. `targetExecutor` pins the task
 * to the agent, so it is not in the public list; the agent finds it among the tasks offered to it. Run
 * `examples/runAgent.ts` as that agent first (AGENT_ADDRESS is its address).
 *
 *     AGENT_ADDRESS=0x... node -r ts-node/register/transpile-only examples/postPrivateTask.ts   (see examples/env.ts)
 */
import { postTask, waitForTask } from "../client/sdk/index";
import { run, setup } from "./env";

run(async () => {
  const { api, wallet, provider } = setup();
  const agent = process.env.AGENT_ADDRESS;
  if (!agent) throw new Error("set AGENT_ADDRESS to the agent that may read and take the task");

  const posted = await postTask(
    {
      brief: `Shout this line back to me, confidentially. (${new Date().toISOString()})`,
      privacy: "private",
      targetExecutor: agent,
      amount: 1_500_000n, // 1.5 USDC
      duration: 3600,
      verificationMode: "auto",
      verificationCriteria: { required_fields: ["text"], contains_keywords: ["CONFIDENTIALLY"] },
      requiredCapabilities: ["shout"],
    },
    { api, signer: wallet, onStage: (stage) => console.log(`  ${stage}`) },
  );
  console.log(`posted private task ${posted.taskHash} (#${posted.onChainTaskId}) for ${agent}, tx ${posted.txHash}`);

  // Follow it: the event stream pushes each change of our own task; reads back it up.
  const { state, detail: task } = await waitForTask(api, posted.taskHash, {
    timeoutMs: 120_000,
    onChange: (s, via) => console.log(`  state: ${s.status} (${via})`),
  });
  if (state.status !== "completed") throw new Error(`the task ended ${state.status}, not paid`);
  if (task.worker.toLowerCase() !== agent.toLowerCase()) throw new Error(`paid ${task.worker}, not ${agent}`);
  console.log(`paid ${task.worker}; result ${JSON.stringify(task.resultData)}`);
  provider.destroy();
});
