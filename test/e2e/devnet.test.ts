/**
 * The devnet as a newcomer meets it: startDevnet on free ports, then the MCP URL and client configuration it prints
 * and writes (.devnet/mcp.json) used as-is by the official MCP client, and the A2A card found by the official A2A client.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ClientFactory } from "@a2a-js/sdk/client";
import { devnetSummary, startDevnet, type McpClientConfig } from "../../scripts/devnet";
import { freePort } from "../helpers/api";

describe("devnet: protocol endpoints a newcomer connects to", () => {
  it("writes an MCP client configuration that the official MCP client uses as-is, and serves the A2A card", async function () {
    this.timeout(120_000);
    const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "devnet-out-"));
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "devnet-data-"));
    const devnet = await startDevnet({ port: await freePort(), apiPort: await freePort(), outDir, dataDir });
    try {
      const config = JSON.parse(fs.readFileSync(path.join(outDir, "mcp.json"), "utf8")) as McpClientConfig;
      expect(config).to.deep.equal(devnet.mcpConfig);
      const server = config.mcpServers["escrow-market"];
      expect(server.url).to.equal(`${devnet.apiUrl}/mcp`);
      // What `npm run devnet` prints: the MCP URL, then the same client configuration (URL and key header).
      const printed = devnetSummary(devnet);
      const mcpLine = printed.findIndex((line) => line.startsWith(`MCP           ${devnet.apiUrl}/mcp `));
      expect(mcpLine, printed.join("\n")).to.be.greaterThan(-1);
      expect(JSON.parse(printed[mcpLine + 1].trim())).to.deep.equal(config);
      expect(server.headers["X-API-Key"]).to.match(/^sk_[0-9a-f]{64}$/);
      const client = new Client({ name: "newcomer", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } }),
      );
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).to.include.members(["browse_tasks", "accept_task", "build_task"]);
      const status = (await client.callTool({ name: "platform_status", arguments: {} })) as { isError?: boolean };
      expect(status.isError).to.not.equal(true);
      await client.close();

      const a2a = await new ClientFactory().createFromUrl(devnet.apiUrl!);
      expect((await a2a.getAgentCard()).name).to.equal("Escrow task marketplace");
    } finally {
      await devnet.close();
      fs.rmSync(outDir, { recursive: true, force: true });
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
