/**
 * The production build (docs/operations.md, "The production build"): tsconfig.build.json compiles the server, the CLI
 * and the SDK (with the contracts' typed bindings and ABIs) to JavaScript, and the API and the indexer start from it
 * with plain `node`: a preload refuses any module of Hardhat, ts-node or the TypeScript compiler, so a run-time
 * dependency on them fails the start. The API answers /health/live; the indexer logs "indexer started"; a standalone
 * agent host runs a hosted agent until its worker thread reports ready. The preload reaches the agent's worker thread
 * too (a thread has a module loader of its own), and refuses a worker started from evaluated code: the built worker.js
 * runs as it is. The build goes to a directory of its own under .test-build/ (inside the project, as dist/ is, so the
 * default paths resolve alike).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Wallet } from "ethers";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture } from "../helpers/fixtures";
import { freePort } from "../helpers/api";
import { serveChain } from "../helpers/rpc";
import { agentLog, hostedAgentRow, insertHostedAgent } from "../helpers/hostedAgentRows";
import { loadConfig } from "../../server/config";
import { createDb, dbOptions, type Db } from "../../server/db/knex";

const ROOT = path.join(__dirname, "..", "..");

/** The guard's source (a preload of the processes; the same code run first in every worker thread they start). */
const GUARD = `
const Module = require("node:module");
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (/^(hardhat|ts-node|typescript|@nomicfoundation\\/|@typechain\\/)/.test(request)) {
    throw new Error("the production build loaded " + request);
  }
  return resolve.call(this, request, ...rest);
};
const threads = require("node:worker_threads");
const Thread = threads.Worker;
threads.Worker = class extends Thread {
  constructor(file, options = {}) {
    if (options.eval) throw new Error("the production build started a worker from evaluated code");
    super("require(" + JSON.stringify(__filename) + "); require(" + JSON.stringify(String(file)) + ");", {
      ...options,
      eval: true,
    });
  }
};
`;

function get(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    http
      .get(url, (res) => {
        res.resume();
        resolve(res.statusCode);
      })
      .on("error", () => resolve(undefined));
  });
}

describe("production build: plain node, no Hardhat, ts-node or compiler at run time", () => {
  it("compiles, and the API, the indexer and an agent host running a hosted agent start from the JavaScript", async function () {
    this.timeout(600_000);
    const fx = await loadFixture(deployEscrowFixture);
    const chain = await serveChain();
    const out = path.join(ROOT, ".test-build", crypto.randomBytes(6).toString("hex"));
    const temp = fs.mkdtempSync(path.join(os.tmpdir(), "build-"));
    const children: ChildProcess[] = [];
    let db: Db | undefined;
    try {
      execFileSync(
        process.execPath,
        [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json", "--outDir", out],
        {
          cwd: ROOT,
          stdio: "pipe",
        },
      );
      for (const entry of ["server/main.js", "server/indexer/main.js", "client/cli/main.js", "client/sdk/index.js"]) {
        expect(fs.existsSync(path.join(out, entry)), entry).to.equal(true);
      }
      const guard = path.join(temp, "guard.js");
      fs.writeFileSync(guard, GUARD);
      fs.mkdirSync(path.join(temp, "deployments"));
      fs.writeFileSync(
        path.join(temp, "deployments", "hardhat.json"),
        JSON.stringify({ ...fx.book, network: "hardhat" }),
      );
      const port = await freePort();
      const env = {
        PATH: process.env.PATH ?? "",
        NETWORK: "hardhat",
        RPC_URL: chain.url,
        DEPLOYMENTS_DIR: path.join(temp, "deployments"),
        DATA_DIR: temp,
        API_PORT: String(port),
        RUN_AGENT_HOST: "false",
        RUN_INDEXER: "false",
        LOG_LEVEL: "info",
      };
      const run = (script: string, extra: Record<string, string> = {}) => {
        const child = spawn(process.execPath, ["--require", guard, path.join(out, script)], {
          cwd: temp,
          env: { ...env, ...extra },
          stdio: ["ignore", "ignore", "pipe"],
        });
        const lines: string[] = [];
        child.stderr!.setEncoding("utf8");
        child.stderr!.on("data", (chunk: string) => lines.push(...chunk.split("\n").filter(Boolean)));
        children.push(child);
        return lines;
      };
      // The indexer first: it creates the tables in the SQLite file before the API opens it. The loops below poll
      // real processes (their logs, their HTTP port, the database they write), which no test clock reaches.
      const indexerLines = run("server/indexer/main.js");
      const deadline = Date.now() + 120_000;
      while (!indexerLines.some((l) => l.includes('"msg":"indexer started"'))) {
        if (Date.now() > deadline || children[0].exitCode !== null) {
          throw new Error(`the built indexer did not start:\n${indexerLines.join("\n")}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const apiLines = run("server/main.js");
      while ((await get(`http://127.0.0.1:${port}/health/live`)) !== 200) {
        if (Date.now() > deadline || children[1].exitCode !== null) {
          throw new Error(`the built API did not answer /health/live:\n${apiLines.join("\n")}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await get(`http://127.0.0.1:${port}/health/ready`)).to.equal(200);

      // A hosted agent in the database the processes share, then a standalone agent host from the build: the
      // agent's worker thread (the built worker.js, under the guard) starts, reaches the API and the chain, and
      // reports ready, which the host records as "running".
      const config = loadConfig({ ...env });
      db = createDb(dbOptions(config));
      const wallet = Wallet.createRandom();
      const agent = await insertHostedAgent(db, config.hostedAgents.keyEncryptionKey, {
        privateKey: wallet.privateKey,
        wallet: wallet.address,
        skills: [{ skill: "summary" }],
      });
      const hostLines = run("server/hosting/main.js", {
        API_URL: `http://127.0.0.1:${port}`,
        AGENT_HOST_ID: "built-host",
        WEBHOOK_ALLOW_PRIVATE: "true",
      });
      const hostDeadline = Date.now() + 120_000;
      for (;;) {
        const row = await hostedAgentRow(db, agent.id);
        if (row.status === "running") break;
        if (Date.now() > hostDeadline || children[2].exitCode !== null || row.status === "crashed") {
          const log = (await agentLog(db, agent.id)).map((l) => `${l.level} ${l.message}`);
          throw new Error(
            `the built agent host did not run the agent (status ${row.status}):\n${[...hostLines, ...log].join("\n")}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect((await hostedAgentRow(db, agent.id)).leaseHost).to.equal("built-host");
      expect(hostLines.find((l) => l.includes('"msg":"agent host started"'))).to.include('"workerCode":"built"');
    } finally {
      await db?.destroy();
      for (const child of children) child.kill("SIGKILL");
      await chain.close();
      fs.rmSync(out, { recursive: true, force: true });
      // .test-build/ itself too, unless another run's build is still in it.
      if (fs.readdirSync(path.dirname(out)).length === 0)
        fs.rmSync(path.dirname(out), { recursive: true, force: true });
      fs.rmSync(temp, { recursive: true, force: true });
    }
  });
});
