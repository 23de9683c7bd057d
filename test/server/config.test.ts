/**
 * The hosted agents' secrets in the configuration: off the devnet the service refuses to start without a
 * key-encryption key (as `npm start` meets it: the process exits naming the variable), runs without a token secret
 * (starting an agent then answers NO_JWT_SECRET), and on local networks uses fixed development values, which serve
 * only a local chain (id 31337): pointed at any other chain, the service refuses to start.
 */
import { spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { expect } from "chai";
import { checkDevelopmentSecrets, ConfigError, loadConfig } from "../../server/config";
import { childEnv } from "../helpers/childEnv";

const REMOTE = { NETWORK: "base-sepolia", RPC_URL: "http://127.0.0.1:1" };
const KEK = `0x${"5a".repeat(32)}`;

describe("configuration: hosted agents' secrets", () => {
  it("refuses a remote network without AGENT_KEY_ENCRYPTION_KEY, naming it and how to make one", () => {
    expect(() => loadConfig(REMOTE))
      .to.throw(ConfigError)
      .with.property("message")
      .that.matches(
        /AGENT_KEY_ENCRYPTION_KEY: required on network base-sepolia.*openssl rand -hex 32.*HOSTED_AGENTS=off/,
      );
    expect(() => loadConfig({ ...REMOTE, AGENT_KEY_ENCRYPTION_KEY: "0x1234" })).to.throw(
      ConfigError,
      /AGENT_KEY_ENCRYPTION_KEY: must be 0x followed by 64 hex characters/,
    );
    expect(() => loadConfig({ ...REMOTE, AGENT_JWT_SECRET: "short", AGENT_KEY_ENCRYPTION_KEY: KEK })).to.throw(
      ConfigError,
      /AGENT_JWT_SECRET: must be at least 32 characters/,
    );
  });

  it("takes the configured key, and no token secret unless configured, off the devnet", () => {
    const config = loadConfig({ ...REMOTE, AGENT_KEY_ENCRYPTION_KEY: KEK });
    expect(config.hostedAgents.keyEncryptionKey.toString("hex")).to.equal("5a".repeat(32));
    expect(config.hostedAgents.jwtSecret).to.equal(undefined);
    const secret = "s".repeat(32);
    expect(
      loadConfig({ ...REMOTE, AGENT_KEY_ENCRYPTION_KEY: KEK, AGENT_JWT_SECRET: secret }).hostedAgents.jwtSecret,
    ).to.equal(secret);
    // Hosting off: no key needed, no host.
    const off = loadConfig({ ...REMOTE, HOSTED_AGENTS: "off" });
    expect(off.hostedAgents).to.include({ enabled: false, runHost: false });
  });

  it("uses fixed development values on local networks, the same on every start", () => {
    const a = loadConfig({ NETWORK: "localhost" });
    const b = loadConfig({ NETWORK: "hardhat" });
    expect(a.hostedAgents.keyEncryptionKey.equals(b.hostedAgents.keyEncryptionKey)).to.equal(true);
    expect(a.hostedAgents.jwtSecret).to.be.a("string").with.length.of.at.least(32);
    expect(a.hostedAgents).to.include({ enabled: true, runHost: true, capacity: 10, leaseMs: 15_000 });
    expect(a.api.limits.agentPerWindow).to.equal(300);
  });

  it("npm start's entry point exits 1 with the message when the key is missing off the devnet", async function () {
    this.timeout(60_000);
    const root = path.join(__dirname, "..", "..");
    const child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", "server/main.ts"], {
      cwd: root,
      env: { ...childEnv(), ...REMOTE },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code, stderr).to.equal(1);
    expect(stderr).to.include("AGENT_KEY_ENCRYPTION_KEY: required on network base-sepolia");
  });

  it("npm start's entry point refuses development secrets on a chain that is not local (id 31337)", async function () {
    this.timeout(60_000);
    // A node that says it is chain 1, as a mainnet RPC would.
    const rpc = http.createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        const calls = [JSON.parse(body)].flat() as { id: number; method: string }[];
        const answers = calls.map((c) =>
          c.method === "eth_chainId"
            ? { jsonrpc: "2.0", id: c.id, result: "0x1" }
            : { jsonrpc: "2.0", id: c.id, error: { code: -32601, message: "not here" } },
        );
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(Array.isArray(JSON.parse(body)) ? answers : answers[0]));
      });
    });
    await new Promise<void>((resolve) => rpc.listen(0, "127.0.0.1", resolve));
    try {
      const root = path.join(__dirname, "..", "..");
      const rpcUrl = `http://127.0.0.1:${(rpc.address() as AddressInfo).port}`;
      const child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", "server/main.ts"], {
        cwd: root,
        env: { ...childEnv(), NETWORK: "localhost", RPC_URL: rpcUrl },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (chunk) => (stderr += chunk));
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      expect(code, stderr).to.equal(1);
      expect(stderr).to.include("public development secrets of NETWORK=localhost serve only a local chain");
      expect(stderr).to.include("is chain 1");
    } finally {
      await new Promise<void>((r) => rpc.close(() => r()));
    }
  });

  it("allows development secrets on chain 31337 only, and any chain once both secrets are set", async () => {
    const local = loadConfig({ NETWORK: "localhost" });
    expect(local.hostedAgents.developmentSecrets).to.equal(true);
    await checkDevelopmentSecrets(local, async () => 31337n);
    for (const answer of [async () => 1n, async () => 8453n, () => Promise.reject(new Error("down"))]) {
      let refused: unknown;
      await checkDevelopmentSecrets(local, answer).catch((error) => (refused = error));
      expect(refused).to.be.instanceOf(ConfigError);
    }
    const configured = loadConfig({
      NETWORK: "localhost",
      AGENT_KEY_ENCRYPTION_KEY: KEK,
      AGENT_JWT_SECRET: "s".repeat(32),
    });
    expect(configured.hostedAgents.developmentSecrets).to.equal(false);
    await checkDevelopmentSecrets(configured, async () => 1n);
    // Only one of the two set: the other is still public.
    expect(
      loadConfig({ NETWORK: "localhost", AGENT_KEY_ENCRYPTION_KEY: KEK }).hostedAgents.developmentSecrets,
    ).to.equal(true);
    expect(loadConfig({ NETWORK: "localhost", HOSTED_AGENTS: "off" }).hostedAgents.developmentSecrets).to.equal(false);
  });
});
