/**
 * `npm run examples`: starts a fresh devnet on free ports (in-process chain, API, indexer, marketplace verifier and
 * the example agent), runs every example script as a user would (a separate Node process talking to the devnet over
 * HTTP, configured by MARKET_* environment variables), prints each one's outcome, and exits 0 only when each ended
 * as it should (exit code 0 within its time limit). CI runs it after the tests (.ci/run).
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startDevnet, type Devnet } from "../scripts/devnet";
import { freePort } from "../test/helpers/api";

interface Example {
  /** What it shows. */
  title: string;
  file: string;
  /** The devnet account it acts as. */
  role: string;
  /** Extra environment. */
  env?: (devnet: Devnet) => Promise<Record<string, string>> | Record<string, string>;
  /** Started in the background; the next example starts once its output matches `readyWhen`. */
  background?: { readyWhen: RegExp };
  timeoutMs: number;
}

const account = (devnet: Devnet, role: string) => devnet.accounts.find((a) => a.role === role)!;

const EXAMPLES: Example[] = [
  {
    title: "post a public task and wait until it is paid",
    file: "postPublicTask.ts",
    role: "poster",
    timeoutMs: 120_000,
  },
  {
    title: "post a task with plain ethers and REST (the devnet's provider setup: cacheTimeout -1)",
    file: "plainEthers.ts",
    role: "poster-2",
    timeoutMs: 60_000,
  },
  {
    title: "post a task on arc with a plain ethers wallet on arc's RPC and wait until it is paid on arc",
    file: "postOnArc.ts",
    role: "poster",
    env: (devnet) => ({ MARKET_ARC_RPC_URL: devnet.arcRpcUrl, WAIT_UNTIL_PAID: "1" }),
    timeoutMs: 150_000,
  },
  {
    title: "run an agent (takes the private task offered to it, then stops)",
    file: "runAgent.ts",
    role: "agent-2",
    env: () => ({ MAX_TASKS: "1" }),
    background: { readyWhen: /waiting for work/ },
    timeoutMs: 150_000,
  },
  {
    title: "post a private task to a chosen agent and wait until it is paid",
    file: "postPrivateTask.ts",
    role: "poster-2",
    env: (devnet) => ({ AGENT_ADDRESS: account(devnet, "agent-2").address }),
    timeoutMs: 120_000,
  },
  {
    title: "react to a webhook (verify its signature)",
    file: "webhook.ts",
    role: "poster",
    env: async () => ({ WEBHOOK_PORT: String(await freePort()) }),
    timeoutMs: 120_000,
  },
];

interface Running {
  example: Example;
  child: ChildProcess;
  started: number;
  done: Promise<{ code: number | null; timedOut: boolean; ended: number }>;
}

function start(example: Example, env: Record<string, string>): Running {
  const child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", path.join(__dirname, example.file)], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const prefix = `  [${example.file}] `;
  const forward = (stream: NodeJS.ReadableStream, to: NodeJS.WriteStream) => {
    let pending = "";
    stream.on("data", (chunk: Buffer) => {
      pending += chunk.toString("utf8");
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) to.write(prefix + line + "\n");
    });
    stream.on("end", () => pending && to.write(prefix + pending + "\n"));
  };
  forward(child.stdout!, process.stdout);
  forward(child.stderr!, process.stderr);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, example.timeoutMs);
  const done = new Promise<{ code: number | null; timedOut: boolean; ended: number }>((resolve) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, timedOut, ended: Date.now() });
    }),
  );
  return { example, child, started: Date.now(), done };
}

/** Resolves when the child's stdout matches `pattern`, rejects if it exits first. */
function readiness(running: Running, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = "";
    running.child.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString("utf8");
      if (pattern.test(seen)) resolve();
    });
    void running.done.then(({ code }) => reject(new Error(`exited (code ${code}) before it was ready`)));
  });
}

async function main() {
  // The webhook example's receiver listens on 127.0.0.1: the devnet delivers to private addresses (never elsewhere).
  process.env.WEBHOOK_ALLOW_PRIVATE ??= "true";
  process.env.LOG_LEVEL ??= "warn";
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "examples-devnet-"));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "examples-data-"));
  const devnet = await startDevnet({ port: await freePort(), apiPort: await freePort(), outDir, dataDir });
  console.log(`devnet: API ${devnet.apiUrl}, base ${devnet.rpcUrl}, arc ${devnet.arcRpcUrl}`);
  const outcomes: { title: string; ok: boolean; detail: string }[] = [];
  const background: Running[] = [];
  const finish = async (running: Running) => {
    const { code, timedOut, ended } = await running.done;
    const seconds = ((ended - running.started) / 1000).toFixed(1);
    const ok = code === 0 && !timedOut;
    const detail = timedOut ? `timed out after ${seconds} s` : `exit ${code}, ${seconds} s`;
    outcomes.push({ title: `${running.example.file}: ${running.example.title}`, ok, detail });
    console.log(`${ok ? "PASS" : "FAIL"} ${running.example.file}: ${running.example.title} (${detail})`);
  };
  try {
    for (const example of EXAMPLES) {
      const who = account(devnet, example.role);
      const env = {
        MARKET_API_URL: devnet.apiUrl!,
        MARKET_RPC_URL: devnet.rpcUrl,
        MARKET_API_KEY: who.apiKey,
        MARKET_PRIVATE_KEY: who.privateKey,
        ...(await example.env?.(devnet)),
      };
      console.log(`\n== ${example.file}: ${example.title} (as ${example.role})`);
      const running = start(example, env);
      if (example.background) {
        background.push(running);
        try {
          await readiness(running, example.background.readyWhen);
        } catch (error) {
          console.log(`  ${example.file} never became ready: ${(error as Error).message}`);
        }
        continue;
      }
      await finish(running);
    }
    for (const running of background) await finish(running);
  } finally {
    for (const running of background) running.child.kill("SIGKILL");
    await devnet.close();
    for (const dir of [outDir, dataDir]) fs.rmSync(dir, { recursive: true, force: true });
  }
  const failed = outcomes.filter((o) => !o.ok);
  console.log(`\nexamples: ${outcomes.length - failed.length} passed, ${failed.length} failed`);
  for (const o of failed) console.log(`  FAIL ${o.title} (${o.detail})`);
  return failed.length === 0 && outcomes.length === EXAMPLES.length ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
