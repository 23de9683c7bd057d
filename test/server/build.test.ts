/**
 * The production build (docs/operations.md, "The production build"): tsconfig.build.json compiles the server, the CLI
 * and the SDK (with the contracts' typed bindings and ABIs) to JavaScript, and the API and the indexer start from it
 * with plain `node`: a preload refuses any module of Hardhat, ts-node or the TypeScript compiler, so a run-time
 * dependency on them fails the start. The API answers /health/live; the indexer logs "indexer started". The build goes
 * to a directory of its own under .test-build/ (inside the project, as dist/ is, so the default paths resolve alike).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture } from "../helpers/fixtures";
import { freePort } from "../helpers/api";
import { serveChain } from "../helpers/rpc";

const ROOT = path.join(__dirname, "..", "..");

const GUARD = `
const Module = require("node:module");
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (/^(hardhat|ts-node|typescript|@nomicfoundation\\/|@typechain\\/)/.test(request)) {
    throw new Error("the production build loaded " + request);
  }
  return resolve.call(this, request, ...rest);
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
  it("compiles, and the API and the indexer start from the JavaScript", async function () {
    this.timeout(240_000);
    const fx = await loadFixture(deployEscrowFixture);
    const chain = await serveChain();
    const out = path.join(ROOT, ".test-build", crypto.randomBytes(6).toString("hex"));
    const temp = fs.mkdtempSync(path.join(os.tmpdir(), "build-"));
    const children: ChildProcess[] = [];
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
      const run = (script: string) => {
        const child = spawn(process.execPath, ["--require", guard, path.join(out, script)], {
          cwd: temp,
          env,
          stdio: ["ignore", "ignore", "pipe"],
        });
        const lines: string[] = [];
        child.stderr!.setEncoding("utf8");
        child.stderr!.on("data", (chunk: string) => lines.push(...chunk.split("\n").filter(Boolean)));
        children.push(child);
        return lines;
      };
      // The indexer first: it creates the tables in the SQLite file before the API opens it.
      const indexerLines = run("server/indexer/main.js");
      const deadline = Date.now() + 60_000;
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
    } finally {
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
