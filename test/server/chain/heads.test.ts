/**
 * New-head sources: over a WebSocket to a node (the in-process Hardhat chain served as `hardhat node` serves it, HTTP
 * and WebSocket on one port) and from an EIP-1193 provider in this process.
 */
import { expect } from "chai";
import hre, { network } from "hardhat";
import { TASK_NODE_CREATE_SERVER } from "hardhat/builtin-tasks/task-names";
import type { JsonRpcServer } from "hardhat/types";
import { eip1193Heads, webSocketHeads, type HeadSource } from "../../../server/chain/heads";

/** A port of this suite's range that nothing listens on. */
const CLOSED_PORT = 18_299;

async function serveChain(): Promise<{ server: JsonRpcServer; url: string }> {
  const server: JsonRpcServer = await hre.run(TASK_NODE_CREATE_SERVER, {
    hostname: "127.0.0.1",
    port: 0,
    provider: network.provider,
  });
  const { port } = await server.listen();
  return { server, url: `ws://127.0.0.1:${port}` };
}

/** The server's WebSocket clients, which its close() leaves open. */
function dropClients(server: JsonRpcServer): number {
  const clients = (server as unknown as { _wsServer: { clients: Set<{ terminate(): void }> } })._wsServer.clients;
  for (const client of clients) client.terminate();
  return clients.size;
}

const mine = async (): Promise<number> => {
  await network.provider.send("evm_mine", []);
  return Number(await network.provider.send("eth_blockNumber", []));
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** Subscribes to `source`, mines twice and expects both heads; then unsubscribes and expects no more. */
async function expectHeadsThenSilence(source: HeadSource): Promise<void> {
  const heads: number[] = [];
  const lost: Error[] = [];
  const unsubscribe = await source.subscribe({ onHead: (n) => heads.push(n), onLost: (e) => lost.push(e) });
  const first = await mine();
  const second = await mine();
  await until(() => heads.length >= 2, "two heads");
  expect(heads).to.deep.equal([first, second]);

  await unsubscribe();
  await unsubscribe();
  await mine();
  await sleep(100);
  expect(heads, "nothing after unsubscribing").to.have.length(2);
  expect(lost, "unsubscribing is no loss").to.deep.equal([]);
}

describe("chain: new heads", () => {
  describe("webSocketHeads", () => {
    it("announces each mined block's number, and nothing after unsubscribing", async () => {
      const { server, url } = await serveChain();
      try {
        await expectHeadsThenSilence(webSocketHeads(url));
      } finally {
        dropClients(server);
        await server.close();
      }
    });

    it("reports a subscription lost when the node drops the socket", async () => {
      const { server, url } = await serveChain();
      try {
        const lost: Error[] = [];
        const unsubscribe = await webSocketHeads(url).subscribe({
          onHead: () => undefined,
          onLost: (e) => lost.push(e),
        });
        expect(dropClients(server)).to.equal(1);
        await until(() => lost.length > 0, "the loss to be reported");
        await sleep(50);
        expect(lost, "reported once").to.have.length(1);
        expect(lost[0].message).to.match(/new-head socket ws:\/\/127\.0\.0\.1:\d+ closed/);
        await unsubscribe();
      } finally {
        await server.close();
      }
    });

    it("rejects when nothing listens, without an unhandled error", async () => {
      const source = webSocketHeads(`ws://127.0.0.1:${CLOSED_PORT}`);
      await expect(source.subscribe({ onHead: () => undefined, onLost: () => undefined })).to.be.rejectedWith(
        /new-head socket ws:\/\/127\.0\.0\.1:18299/,
      );
    });

    it("rejects at once when aborted while connecting", async () => {
      const { server, url } = await serveChain();
      try {
        const abort = new AbortController();
        const subscribing = webSocketHeads(url).subscribe({
          onHead: () => undefined,
          onLost: () => undefined,
          signal: abort.signal,
        });
        abort.abort();
        await expect(subscribing).to.be.rejectedWith(/aborted/);
      } finally {
        dropClients(server);
        await server.close();
      }
    });
  });

  describe("eip1193Heads", () => {
    it("announces each mined block's number, and removes its listener when unsubscribed", async () => {
      const listeners = network.provider.listenerCount("message");
      await expectHeadsThenSilence(eip1193Heads(network.provider));
      expect(network.provider.listenerCount("message")).to.equal(listeners);
    });

    it("rejects and keeps no listener when the provider refuses eth_subscribe", async () => {
      const listeners: unknown[] = [];
      const refusing = {
        request: async () => {
          throw Object.assign(new Error("the method eth_subscribe does not exist"), { code: -32601 });
        },
        on: (_event: "message", listener: unknown) => listeners.push(listener),
        removeListener: (_event: "message", listener: unknown) => listeners.splice(listeners.indexOf(listener), 1),
      };
      await expect(
        eip1193Heads(refusing).subscribe({ onHead: () => undefined, onLost: () => undefined }),
      ).to.be.rejectedWith(/eth_subscribe does not exist/);
      expect(listeners).to.deep.equal([]);
    });
  });
});
