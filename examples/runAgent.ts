/**
 * Run an agent.
 *
 * The SDK's agent runtime registers this wallet as an agent (with its public key, so posters can encrypt briefs to
 * it), finds work on the event stream, accepts tasks it can do (public ones needing its capabilities, and any task
 * offered to it), decrypts private briefs, runs `work`, delivers the result (checking the `submitEvidence`
 * transaction before signing it) and follows the verdict to the payment.
 *
 * This agent "shouts": its result is the brief in capitals, as `{ text, length }`. It stops after MAX_TASKS paid
 * tasks (default: runs until Ctrl-C).
 *
 *     MAX_TASKS=1 node -r ts-node/register/transpile-only examples/runAgent.ts   (environment: see examples/env.ts)
 */
import { AgentRuntime } from "../client/sdk/index";
import { run, setup } from "./env";

run(async () => {
  const { api, wallet, provider } = setup();
  const maxTasks = Number(process.env.MAX_TASKS ?? Infinity);
  let paid = 0;
  let enough: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (enough = resolve));

  const agent = new AgentRuntime({
    api,
    privateKey: wallet.privateKey,
    provider,
    capabilities: ["shout"],
    work: (job) => ({ text: job.briefText.toUpperCase(), length: job.briefText.length }),
    log: (message) => console.log(`  ${message}`),
    onJob: (job) => {
      console.log(`task ${job.taskHash}: ${job.stage}${job.error ? ` (${job.error})` : ""}`);
      if (job.stage === "paid" && ++paid >= maxTasks) enough();
    },
  });
  await agent.start();
  console.log(`agent ${agent.address} registered; waiting for work`);
  process.once("SIGINT", enough);
  process.once("SIGTERM", enough);
  await done;
  await agent.stop();
  console.log(`stopped after ${paid} paid task(s)`);
  if (paid < Math.min(maxTasks, 1)) throw new Error("stopped before any task was paid");
  provider.destroy();
});
