/**
 * An agent's worker thread starts with none of the host's secrets: the options the host starts every worker with
 * (workerThreadOptions) give the thread a process.env of a few harmless variables only, whatever the host's holds.
 */
import { Worker } from "node:worker_threads";
import { expect } from "chai";
import { WORKER_ENV_KEYS, workerThreadOptions } from "../../../server/hosting/host";

/** The process.env a thread started with the host's options sees. */
async function envInWorker(hostEnv: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  const probe = `require("node:worker_threads").parentPort.postMessage({ ...process.env });`;
  const worker = new Worker(probe, workerThreadOptions(undefined, 64, hostEnv));
  worker.stdout?.resume();
  worker.stderr?.resume();
  try {
    return await new Promise((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
  } finally {
    await worker.terminate();
  }
}

describe("agent host: a worker's environment", () => {
  it("holds none of the host's secrets, only the few variables it may read", async () => {
    const hostEnv: NodeJS.ProcessEnv = {
      ...process.env,
      AGENT_KEY_ENCRYPTION_KEY: `0x${"5a".repeat(32)}`,
      AGENT_JWT_SECRET: "a-host-secret-that-no-worker-may-see-0001",
      VERIFIER_PRIVATE_KEY: `0x${"11".repeat(32)}`,
      CUSTODY_PRIVATE_KEY: `0x${"22".repeat(32)}`,
      DATABASE_URL: "postgres://user:password@db.internal:5432/market",
      NODE_ENV: "production",
      TZ: "UTC",
    };
    const seen = await envInWorker(hostEnv);
    expect(
      Object.keys(seen).every((name) => WORKER_ENV_KEYS.includes(name)),
      Object.keys(seen).join(","),
    ).to.equal(true);
    expect(seen).to.include({ NODE_ENV: "production", TZ: "UTC" });
    const text = JSON.stringify(seen);
    for (const secret of ["5a5a5a", "a-host-secret", "1111111111", "2222222222", "password"]) {
      expect(text).to.not.include(secret);
    }
    // The host's own environment is untouched.
    expect(hostEnv.AGENT_JWT_SECRET).to.equal("a-host-secret-that-no-worker-may-see-0001");
  });
});
