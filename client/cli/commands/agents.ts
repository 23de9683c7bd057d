/**
 * The agent's side: `agent register`, `agent run` (the SDK's runtime, with a shell command doing the work),
 * `services` (list and add), and `deploy-fee` (read, or pay and verify).
 */
import type { Context } from "../context";
import { spawn } from "node:child_process";
import { apiOf, signerOf, walletOf } from "../clients";
import { parseAmount, parseDuration, parseList, parseMinReward } from "../parse";
import { table } from "../output";
import { amountText, USDC_DISPLAY } from "../format";
import { usageError } from "../errors";
import { AgentRuntime, agentPublicKey, payDeployFee, type Job } from "../../sdk/index";

export async function register(
  ctx: Context,
  options: { capabilities: string; minReward: string; verifierName?: string },
): Promise<void> {
  const wallet = signerOf(ctx);
  const minReward = parseMinReward(options.minReward);
  const api = apiOf(ctx);
  const registered = await ctx.out.step(
    `registering ${wallet.address} as an agent`,
    () =>
      api.registerExecutor({
        publicKey: agentPublicKey(wallet.privateKey),
        capabilities: parseList(options.capabilities) ?? [],
        minReward,
        ...(options.verifierName ? { verifier: { optIn: true, name: options.verifierName } } : {}),
      }),
    (r) => (r.created ? "registered" : "record replaced"),
  );
  ctx.out.result(registered, [
    `Agent ${registered.address} ${registered.created ? "registered" : "updated"}.`,
    `Capabilities: ${registered.capabilities.join(", ") || "-"}; chains: ${registered.supportedChains.join(", ")}.`,
    "Posters can now encrypt briefs to its public key. `market agent run --exec <command>` takes work.",
  ]);
}

export async function listServices(ctx: Context, options: { agent?: string }): Promise<void> {
  const page = await apiOf(ctx, false).services({ agent: options.agent, limit: 50 });
  ctx.out.result(page, () =>
    page.services.length === 0
      ? "No services."
      : table([
          ["ID", "NAME", "PRICE", "AGENT", "CAPABILITIES"],
          ...page.services.map((s) => [
            String(s.id),
            s.name,
            amountText(String(s.price_raw)),
            s.agent_address,
            s.capabilities.join(","),
          ]),
        ]),
  );
}

export async function addService(
  ctx: Context,
  options: {
    name: string;
    description: string;
    price?: string;
    priceRaw?: string;
    capabilities?: string;
    delivery?: string;
  },
): Promise<void> {
  const price = parseAmount({ amount: options.price, amountRaw: options.priceRaw }, USDC_DISPLAY.decimals);
  const service = await apiOf(ctx).createService({
    name: options.name,
    description: options.description,
    price_raw: price.toString(),
    capabilities: parseList(options.capabilities) ?? [],
    ...(options.delivery ? { delivery_time_seconds: parseDuration(options.delivery) } : {}),
  });
  ctx.out.result(
    service,
    `Service ${service.id} "${service.name}" listed at ${amountText(String(service.price_raw))}.`,
  );
}

export async function deployFee(ctx: Context, options: { pay?: boolean; maxFee?: string }): Promise<void> {
  const api = apiOf(ctx, !!options.pay || ctx.config.apiKey !== undefined);
  if (options.pay) {
    const signer = walletOf(ctx);
    const paid = await ctx.out.step(
      `paying the deploy fee from ${signer.address} (approve exactly the fee, deployAgent, verify)`,
      () =>
        payDeployFee({
          api,
          signer,
          ...(options.maxFee ? { maxFee: parseAmount({ amountRaw: options.maxFee }, 0) } : {}),
        }),
      (p) => (p.required ? `tx ${p.txHash}` : "no fee charged"),
    );
    ctx.out.result(
      paid,
      paid.required
        ? `Paid ${amountText(paid.amount_raw)}: ${paid.credits} unspent deploy credit(s).`
        : "This service charges no deploy fee: nothing paid.",
    );
    return;
  }
  const fee = await api.deployFee();
  ctx.out.result(fee, () =>
    fee.required
      ? [
          `Deploy fee ${amountText(fee.amount_raw)} to ${fee.treasury} (factory ${fee.factory}).`,
          ...(fee.credits !== undefined ? [`Your unspent deploy credits: ${fee.credits}.`] : []),
          "`market deploy-fee --pay` approves exactly the fee, pays it and verifies it into one credit.",
        ]
      : "This service charges no deploy fee.",
  );
}

/** Runs `command` in a shell with the brief on stdin; its stdout (JSON, else the text) is the result. */
export function execWork(command: string, job: Job, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, {
      shell: true,
      stdio: ["pipe", "pipe", "pipe"],
      env: {
        ...process.env,
        MARKET_TASK_HASH: job.taskHash,
        MARKET_TASK_ID: String(job.onChainTaskId),
        MARKET_TASK_ATTEMPT: String(job.attempt),
        MARKET_TASK_CAPABILITIES: job.meta.requiredCapabilities.join(","),
      },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) {
        const why = signal
          ? `killed (${signal}${signal === "SIGKILL" ? ", over the job timeout" : ""})`
          : `exit ${code}`;
        return reject(new Error(`--exec ${why}: ${stderr.trim().slice(-500)}`));
      }
      const text = stdout.trim();
      if (text === "") return reject(new Error("--exec printed nothing: there is no result to deliver"));
      try {
        resolve(JSON.parse(text));
      } catch {
        resolve(text);
      }
    });
    child.stdin.on("error", () => undefined); // a command that does not read its stdin
    child.stdin.end(job.brief);
  });
}

export async function run(
  ctx: Context,
  options: { exec: string; capabilities: string; maxTasks?: string; jobTimeout: string; minReward: string },
): Promise<void> {
  const wallet = walletOf(ctx);
  const maxTasks = options.maxTasks === undefined ? undefined : Number(options.maxTasks);
  if (maxTasks !== undefined && !(Number.isSafeInteger(maxTasks) && maxTasks > 0)) {
    throw usageError("INVALID_INPUT", "--max-tasks must be a positive integer");
  }
  const jobTimeoutMs = parseDuration(options.jobTimeout) * 1000;
  let done: () => void = () => undefined;
  const enough = new Promise<void>((resolve) => (done = resolve));
  const delivered = new Set<string>();
  const runtime = new AgentRuntime({
    api: apiOf(ctx),
    privateKey: wallet.privateKey,
    provider: wallet.provider!,
    capabilities: parseList(options.capabilities) ?? [],
    minReward: options.minReward,
    work: (job) => execWork(options.exec, job, jobTimeoutMs),
    log: (message) => ctx.out.info(message),
    onJob: (job) => {
      ctx.out.info(`task ${job.taskHash}: ${job.stage}${job.error ? ` (${job.error})` : ""}`);
      if (job.stage === "delivered") delivered.add(job.taskHash);
      if (maxTasks !== undefined && delivered.size >= maxTasks) done();
    },
  });
  await ctx.out.step(
    `starting agent ${wallet.address}`,
    () => runtime.start(),
    () => (runtime.mode ? `finding work by ${runtime.mode}` : undefined),
  );
  // Take over Ctrl-C before saying so: a signal right after the line then stops the agent cleanly.
  const interrupted = ctx.interrupted();
  ctx.out.info(
    `waiting for work${maxTasks ? ` (stops after ${maxTasks} delivered)` : ""}; Ctrl-C stops after the current job`,
  );
  await Promise.race([enough, interrupted]);
  await ctx.out.step("stopping", () => runtime.stop());
  const jobs = runtime.jobs();
  ctx.out.result({ address: runtime.address, mode: runtime.mode, delivered: [...delivered], jobs }, [
    `Agent ${runtime.address} delivered ${delivered.size} task(s).`,
    ...jobs.map((j) => `  ${j.taskHash}  ${j.stage}${j.error ? `  ${j.error}` : ""}`),
  ]);
}
