/**
 * The remote MCP endpoint over real HTTP with the official MCP TypeScript client (Client +
 * StreamableHTTPClientTransport): authentication, the catalog, every tool called at least once, a whole task from
 * post to paid driven only through tools with the wallets signing what they return, the per-key limit, and a fuzz of
 * raw bodies.
 */
import crypto from "node:crypto";
import http from "node:http";
import { expect } from "chai";
import fc from "fast-check";
import { ethers } from "hardhat";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { secp256k1 } from "@noble/curves/secp256k1";
import { DAY, USDC } from "../../helpers/fixtures";
import { type Market, withMarket } from "../../helpers/market";
import { agentPublicKey } from "../../../server/domain/briefs";
import { MCP_TOOLS } from "../../../server/protocols/mcp/tools";
import { act, addLiveHost, agentToken, createAgent } from "../../helpers/hostedAgents";

const REQUIRED_TOOLS = [
  "platform_status",
  "get_settlement",
  "browse_tasks",
  "get_task",
  "search_agents",
  "get_reputation",
  "get_leaderboard",
  "get_my_posted_tasks",
  "browse_services",
  "get_service",
  "upload_brief",
  "build_task",
  "index_task",
  "register_executor",
  "bid_on_task",
  "accept_task",
  "fetch_brief",
  "submit_result",
  "finalize_task",
  "decline_task",
  "verify_task",
  "cancel_task",
  "reclaim_task",
  "raise_dispute",
  "release_work",
];

async function connect(m: Market, key: string): Promise<Client> {
  const client = new Client({ name: "marketplace-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${m.api.url}/mcp`), { requestInit: { headers: { "X-API-Key": key } } }),
  );
  return client;
}

interface ToolAnswer {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; text?: string }[];
}

async function tool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
  return (await client.callTool({ name, arguments: args })) as ToolAnswer;
}

function ok(answer: ToolAnswer) {
  expect(answer.isError, JSON.stringify(answer.structuredContent)).to.not.equal(true);
  expect(JSON.parse(answer.content[0].text!)).to.deep.equal(
    "result" in (answer.structuredContent ?? {}) && Object.keys(answer.structuredContent!).length === 1
      ? answer.structuredContent!.result
      : answer.structuredContent,
  );
  return answer.structuredContent as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

function failed(answer: ToolAnswer, code: string) {
  expect(answer.isError, JSON.stringify(answer)).to.equal(true);
  expect((answer.structuredContent?.error as { code: string }).code).to.equal(code);
  expect(answer.content[0].text).to.match(new RegExp(`^${code}: `));
}

const HOSTED_AGENT_TOOLS = [
  "list_skills",
  "list_hosted_agents",
  "get_hosted_agent",
  "create_hosted_agent",
  "update_hosted_agent",
  "hosted_agent_action",
  "install_skill",
  "uninstall_skill",
];

/** Called in "manages the key's webhooks". */
const WEBHOOK_TOOLS = ["create_webhook", "list_webhooks", "delete_webhook", "list_webhook_deliveries"];

describe("Remote MCP at /mcp", () => {
  it("manages the owner's hosted agents, each refusal with REST's code; a hosted agent's token may not", () =>
    withMarket(
      async (m) => {
        const owner = await connect(m, m.posterKey);
        const catalog = ok(await tool(owner, "list_skills"));
        expect(catalog.skills.map((s: { id: string }) => s.id)).to.include.members(["summary", "webhook", "verifier"]);
        const agent = ok(
          await tool(owner, "create_hosted_agent", {
            slug: "mcp-agent",
            name: "MCP agent",
            skills: [{ skill: "summary" }],
          }),
        );
        expect(agent.slug).to.equal("mcp-agent");
        failed(await tool(owner, "create_hosted_agent", { slug: "mcp-agent", name: "Again" }), "SLUG_TAKEN");
        expect(ok(await tool(owner, "list_hosted_agents")).agents.map((a: { id: string }) => a.id)).to.deep.equal([
          agent.id,
        ]);
        expect(ok(await tool(owner, "get_hosted_agent", { agent: "mcp-agent" })).id).to.equal(agent.id);
        // Its settings, as PATCH /agents/{agent} changes them (one chain configured here: base).
        const changed = ok(
          await tool(owner, "update_hosted_agent", { agent: agent.id, capabilities: ["Klingon"], chains: ["base"] }),
        );
        expect(changed).to.deep.include({ extraCapabilities: ["klingon"], chains: ["base"], generation: 1 });
        failed(await tool(owner, "update_hosted_agent", { agent: agent.id, chains: ["arc"] }), "CHAIN_NOT_SERVED");
        failed(await tool(owner, "update_hosted_agent", { agent: agent.id, chains: ["solana"] }), "INVALID_CHAIN");
        ok(await tool(owner, "install_skill", { agent: agent.id, skill: "keywords" }));
        failed(await tool(owner, "install_skill", { agent: agent.id, skill: "keywords" }), "ALREADY_INSTALLED");
        failed(await tool(owner, "install_skill", { agent: agent.id, skill: "nope" }), "SKILL_NOT_FOUND");
        failed(
          await tool(owner, "install_skill", {
            agent: agent.id,
            skill: "webhook",
            config: { url: "https://owner.example/hook", capabilities: ["translate"] },
          }),
          "SKILL_NEEDS_SECRETS",
        );
        ok(await tool(owner, "uninstall_skill", { agent: agent.id, skill: "keywords" }));
        failed(await tool(owner, "uninstall_skill", { agent: agent.id, skill: "keywords" }), "NOT_INSTALLED");
        failed(await tool(owner, "hosted_agent_action", { action: "start" }), "AGENT_ID_REQUIRED");
        failed(await tool(owner, "hosted_agent_action", { agentId: agent.id, action: "pause" }), "AGENT_ACTION_FAILED");
        // No agent host is alive in this test: nowhere to run it.
        failed(await tool(owner, "hosted_agent_action", { agentId: agent.id, action: "start" }), "AGENT_CAPACITY");
        await addLiveHost(m.api, "mcp-test-host", 1);
        expect(
          ok(await tool(owner, "hosted_agent_action", { agentId: agent.id, action: "start" })).desiredState,
        ).to.equal("running");
        failed(await tool(owner, "hosted_agent_action", { agentId: agent.id, action: "start" }), "AGENT_RUNNING");
        await owner.close();

        // The running agent's own token reaches MCP as the agent's wallet, but not its owner's tools.
        const token = await agentToken(m.api, { id: agent.id, wallet: agent.wallet });
        const hosted = new Client({ name: "hosted-agent", version: "1.0.0" });
        await hosted.connect(
          new StreamableHTTPClientTransport(new URL(`${m.api.url}/mcp`), {
            requestInit: { headers: { Authorization: `Bearer ${token}` } },
          }),
        );
        ok(await tool(hosted, "get_settlement"));
        failed(await tool(hosted, "list_hosted_agents"), "DELEGATION_DISABLED");
        failed(await tool(hosted, "create_hosted_agent", { slug: "child", name: "Child" }), "DELEGATION_DISABLED");
        await hosted.close();
      },
      { DEPLOY_FEE_REQUIRED: "false" },
    ));

  it("manages the key's webhooks, each refusal with REST's code; a hosted agent's token may not", () =>
    withMarket(
      async (m) => {
        const owner = await connect(m, m.posterKey);
        failed(await tool(owner, "create_webhook", { url: "http://127.0.0.1:9/hook" }), "WEBHOOK_URL_NOT_PUBLIC");
        failed(await tool(owner, "create_webhook", { url: "not a url" }), "VALIDATION_ERROR");
        const created = ok(
          await tool(owner, "create_webhook", { url: "https://93.184.216.34/hook", events: ["task.settled"] }),
        );
        expect(created.secret).to.be.a("string").with.length.above(10);
        expect(created.events).to.deep.equal(["task.settled"]);
        ok(await tool(owner, "create_webhook", { url: "https://93.184.216.34/second" }));
        failed(await tool(owner, "create_webhook", { url: "https://93.184.216.34/third" }), "WEBHOOK_LIMIT");
        // The same webhooks on REST: one store, whichever adapter wrote them.
        const rest = await m.api.request("GET", "/api/v1/webhooks", { key: m.posterKey });
        const listed = ok(await tool(owner, "list_webhooks"));
        expect(listed).to.deep.equal(rest.json.data);
        expect(listed.webhooks.map((w: { id: number; secret?: string }) => [w.id, w.secret])).to.deep.include([
          created.id,
          undefined,
        ]);
        expect(ok(await tool(owner, "list_webhook_deliveries", { id: created.id })).deliveries).to.deep.equal([]);
        failed(await tool(owner, "list_webhook_deliveries", { id: created.id, status: "lost" }), "VALIDATION_ERROR");
        expect(ok(await tool(owner, "delete_webhook", { id: created.id }))).to.deep.equal({ deleted: true });
        failed(await tool(owner, "delete_webhook", { id: created.id }), "NOT_FOUND");
        failed(await tool(owner, "list_webhook_deliveries", { id: created.id }), "NOT_FOUND");
        await owner.close();

        const running = await createAgent(m.api, m.posterKey, { slug: "hook-agent", skills: [{ skill: "summary" }] });
        await addLiveHost(m.api, "mcp-webhook-host", 1);
        expect((await act(m.api, m.posterKey, running.id, "start")).status).to.equal(200);
        const agent = await agentToken(m.api, { id: running.id, wallet: running.wallet });
        const hosted = new Client({ name: "hosted-agent", version: "1.0.0" });
        await hosted.connect(
          new StreamableHTTPClientTransport(new URL(`${m.api.url}/mcp`), {
            requestInit: { headers: { Authorization: `Bearer ${agent}` } },
          }),
        );
        failed(await tool(hosted, "create_webhook", { url: "https://93.184.216.34/agent" }), "DELEGATION_DISABLED");
        failed(await tool(hosted, "list_webhooks"), "DELEGATION_DISABLED");
        await hosted.close();
      },
      { WEBHOOK_MAX_PER_WALLET: "2", DEPLOY_FEE_REQUIRED: "false" },
    ));

  it("needs an API key (401 with WWW-Authenticate without one, 403 for a bad one) and this service's Host", () =>
    withMarket(async (m) => {
      const init = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
      };
      const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
      const none = await fetch(`${m.api.url}/mcp`, { method: "POST", headers, body: JSON.stringify(init) });
      expect(none.status).to.equal(401);
      expect(none.headers.get("www-authenticate")).to.match(/^Bearer realm="mcp"/);
      const bad = await fetch(`${m.api.url}/mcp`, {
        method: "POST",
        headers: { ...headers, "x-api-key": `sk_${"0".repeat(64)}` },
        body: JSON.stringify(init),
      });
      expect(bad.status).to.equal(403);
      expect(bad.headers.get("www-authenticate")).to.equal(null);
      // A page of any origin may call (CORS, no cookies: it needs the key); an Origin no browser sends is refused.
      const otherOrigin = await fetch(`${m.api.url}/mcp`, {
        method: "POST",
        headers: { ...headers, "x-api-key": m.posterKey, origin: "https://host.example" },
        body: JSON.stringify(init),
      });
      expect(otherOrigin.status).to.equal(200);
      for (const origin of ["ftp://host.example", "https://host.example/page", "not an origin"]) {
        const malformed = await fetch(`${m.api.url}/mcp`, {
          method: "POST",
          headers: { ...headers, "x-api-key": m.posterKey, origin },
          body: JSON.stringify(init),
        });
        expect(malformed.status, origin).to.equal(403);
      }
      // A rebinding attack presents its own host name: refused before authentication.
      const port = new URL(m.api.url).port;
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(
          {
            host: "127.0.0.1",
            port,
            path: "/mcp",
            method: "POST",
            headers: { ...headers, host: `evil.example:${port}`, "x-api-key": m.posterKey },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on("error", reject);
        req.end(JSON.stringify(init));
      });
      expect(status).to.equal(403);
    }));

  it("tells the official client's user which key was refused, or that none was sent, and how to get one", () =>
    withMarket(async (m) => {
      const refusal = async (headers: Record<string, string>) => {
        const client = new Client({ name: "host", version: "1.0.0" });
        const transport = new StreamableHTTPClientTransport(new URL(`${m.api.url}/mcp`), {
          requestInit: { headers },
        });
        const error = await client.connect(transport).then(
          () => undefined,
          (e: Error) => e,
        );
        expect(error, "connecting must fail").to.be.instanceOf(Error);
        return error!.message;
      };
      const bad = `sk_${"0".repeat(64)}`;
      const badMessage = await refusal({ "X-API-Key": bad });
      expect(badMessage).to.include(
        "The marketplace API key sent (sk_0000...) was refused: invalid or revoked API key",
      );
      expect(badMessage).to.not.include(bad);
      for (const message of [badMessage, await refusal({})]) {
        expect(message).to.include(`${m.api.url}/settings`);
        expect(message).to.include("market login");
        expect(message).to.include("X-API-Key: <key>");
      }
      expect(await refusal({})).to.include("No marketplace API key was sent");
      expect(await refusal({ Authorization: "Bearer nope" })).to.include(
        "(nope...) was refused: API key must be sk_ followed by 64 hex characters",
      );

      const raw = await fetch(`${m.api.url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "x-api-key": bad,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      // A refused API key: 403 and no challenge (an OAuth host would start OAuth on a 401 and hide this message).
      expect(raw.status).to.equal(403);
      expect(raw.headers.get("www-authenticate")).to.equal(null);
      const refused = (await raw.json()).error;
      expect(refused).to.deep.include({ code: -32001, data: { code: "UNAUTHORIZED" } });
      expect(refused.message).to.include("(sk_0000...) was refused").and.include("remove the key");
      // The same key as a bearer token is still an API key; a bearer that is no API key (an OAuth token, say) keeps
      // the 401 and its challenge, where an OAuth client refreshes or signs in again.
      const asBearer = await fetch(`${m.api.url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${bad}`,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(asBearer.status).to.equal(403);
      const notAKey = await fetch(`${m.api.url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: "Bearer nope",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(notAKey.status).to.equal(401);
      expect(notAKey.headers.get("www-authenticate")).to.match(
        /^Bearer realm="mcp", error="invalid_token", error_description="UNAUTHORIZED: The marketplace API key sent \(nope/,
      );
    }));

  it("lists the catalog with input schemas and read-only hints", () =>
    withMarket(async (m) => {
      const client = await connect(m, m.posterKey);
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      expect(names).to.include.members(REQUIRED_TOOLS);
      const byName = new Map(tools.map((t) => [t.name, t]));
      for (const name of ["browse_tasks", "get_task", "get_reputation", "platform_status", "fetch_brief"]) {
        expect(byName.get(name)!.annotations?.readOnlyHint, name).to.equal(true);
      }
      for (const name of ["build_task", "accept_task", "submit_result", "reclaim_task"]) {
        expect(byName.get(name)!.annotations?.readOnlyHint, name).to.equal(false);
      }
      const build = byName.get("build_task")!.inputSchema as {
        properties: Record<string, unknown>;
        required: string[];
      };
      expect(build.properties).to.include.keys(["taskHash", "token", "amount", "duration", "verificationMode"]);
      expect(build.required).to.include.members(["taskHash", "amount"]);
      expect((byName.get("accept_task")!.inputSchema as { required: string[] }).required).to.deep.equal(["hash"]);
      // Once it has listed the tools, the SDK's client checks each read's structuredContent against its outputSchema.
      await m.list(); // a listed task, so that the pages are not empty
      // A result that does not match throws (an error result is checked too).
      const answered: string[] = [];
      for (const name of tools.filter((t) => t.annotations?.readOnlyHint && t.outputSchema).map((t) => t.name)) {
        if ((byName.get(name)!.inputSchema as { required?: string[] }).required?.length) continue;
        if ((await tool(client, name)).isError !== true) answered.push(name);
      }
      expect(answered).to.include.members(["platform_status", "get_settlement", "browse_tasks", "get_leaderboard"]);
      failed(await tool(client, "get_reputation", { address: "0x12" }), "BAD_ADDRESS"); // an error result checks too
      await client.close();
    }));

  it("carries REST's error codes as tool errors, and validates arguments with the same schemas", () =>
    withMarket(async (m) => {
      const client = await connect(m, m.posterKey);
      failed(await tool(client, "get_reputation", { address: "0x12" }), "BAD_ADDRESS");
      failed(await tool(client, "accept_task", { hash: "7" }), "TASK_ID_DEPRECATED");
      failed(await tool(client, "accept_task", { hash: ethers.hexlify(ethers.randomBytes(32)) }), "NOT_REGISTERED");
      failed(await tool(client, "get_task", { id: "zero" }), "INVALID_TASK_ID");
      failed(await tool(client, "build_task", { taskHash: "0x00" }), "VALIDATION_ERROR");
      failed(await tool(client, "get_leaderboard", { surprise: 1 }), "VALIDATION_ERROR");
      failed(await tool(client, "no_such_tool"), "NOT_FOUND");
      await client.close();
    }));

  it("answers a plain tools/call (the transport's direct path) byte for byte as through the SDK's dispatch", () =>
    withMarket(async (m) => {
      await m.list();
      await m.list();
      const headers = {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "x-api-key": m.posterKey,
      };
      const answer = async (params: Record<string, unknown>, id: number | string) => {
        const res = await fetch(`${m.api.url}/mcp`, {
          method: "POST",
          headers,
          body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params }),
        });
        return { status: res.status, type: res.headers.get("content-type"), body: await res.text() };
      };
      // `_meta` (here empty) sends a call the SDK's way (transport.ts isPlainRequest): the same answer is expected.
      for (const [params, id] of [
        [{ name: "browse_tasks", arguments: { limit: 50 } }, 1],
        [{ name: "browse_tasks", arguments: { limit: 1, offset: 1 } }, "two"],
        [{ name: "get_task", arguments: { id: "1" } }, 3],
        [{ name: "get_task", arguments: { id: "zero" } }, 4],
        [{ name: "get_leaderboard", arguments: { surprise: 1 } }, 5],
        [{ name: "no_such_tool" }, 6],
      ] as const) {
        const direct = await answer(params, id);
        expect(direct.status).to.equal(200);
        expect(await answer({ ...params, _meta: {} }, id), JSON.stringify(params)).to.deep.equal(direct);
      }
    }));

  it("drives a task from post to paid through the tools alone, wallets signing what they return", () =>
    withMarket(async (m) => {
      const poster = await connect(m, m.posterKey);
      const workerWallet = m.worker;
      const workerKey = await m.api.createKey(workerWallet.address);
      const worker = await connect(m, workerKey);
      const amount = USDC(40);

      // Poster: upload, build, approve exactly the reward, send, index.
      const brief = Buffer.from(`translate: hello ${crypto.randomUUID()}`);
      const uploaded = ok(await tool(poster, "upload_brief", { data: brief.toString("base64") }));
      const taskHash = uploaded.rootHash as string;
      await (await m.usdc.connect(m.poster).approve(await m.escrow.getAddress(), 0n)).wait();
      const built = ok(
        await tool(poster, "build_task", {
          taskHash,
          token: m.token,
          amount: amount.toString(),
          locationZone: "global",
          duration: String(DAY),
          verificationMode: "manual",
        }),
      );
      // The approval comes from the tool too (the wallet approved nothing): exactly the reward, on the token.
      expect(built.approveTx).to.deep.include({ to: m.token, from: m.poster.address.toLowerCase(), value: "0" });
      const call = m.usdc.interface.parseTransaction({ data: built.approveTx.data })!;
      expect([call.name, call.args[0], call.args[1]]).to.deep.equal(["approve", built.unsignedTx.to, amount]);
      await (await m.poster.sendTransaction({ to: built.approveTx.to, data: built.approveTx.data })).wait();
      const funding = await m.poster.sendTransaction({ to: built.unsignedTx.to, data: built.unsignedTx.data });
      await funding.wait();
      const indexed = ok(
        await tool(poster, "index_task", {
          txHash: funding.hash,
          taskHash,
          privacy: "public",
          publicBrief: "translate hello",
        }),
      );
      expect(indexed.taskHash ?? indexed.tasks?.[0]?.taskHash ?? taskHash).to.equal(taskHash);
      await m.api.synced();

      // Worker: register, find it, bid, accept, read the brief, submit; sign submitEvidence.
      ok(
        await tool(worker, "register_executor", {
          publicKey: agentPublicKey(secp256k1.utils.randomPrivateKey()),
          capabilities: ["translation"],
        }),
      );
      const browsed = ok(await tool(worker, "browse_tasks", { limit: 10 }));
      expect(browsed.tasks.map((t: { meta: { taskHash: string } }) => t.meta.taskHash)).to.include(taskHash);
      ok(await tool(worker, "bid_on_task", { hash: taskHash, message: "on it" }));
      expect(ok(await tool(poster, "list_applicants", { hash: taskHash })).applicants).to.have.length(1);
      const accepted = ok(await tool(worker, "accept_task", { hash: taskHash }));
      expect(accepted.state).to.be.oneOf(["assigning", "assigned"]);
      await m.api.synced();
      const fetched = ok(await tool(worker, "fetch_brief", { hash: taskHash }));
      expect(Buffer.from(fetched.blobBase64, "base64").equals(brief)).to.equal(true);
      const submitted = ok(await tool(worker, "submit_result", { hash: taskHash, result: { text: "bonjour" } }));
      await (
        await workerWallet.sendTransaction({ to: submitted.unsignedTx.to, data: submitted.unsignedTx.data })
      ).wait();
      await m.api.synced();

      // Poster: finalize (the marketplace verifier settles); the worker is paid.
      const before = await m.usdc.balanceOf(workerWallet.address);
      ok(await tool(poster, "finalize_task", { hash: taskHash }));
      for (let i = 0; i < 100 && (await m.usdc.balanceOf(workerWallet.address)) === before; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const paid = (await m.usdc.balanceOf(workerWallet.address)) - before;
      expect(paid).to.equal(amount - (amount * 1000n) / 10_000n);
      await m.api.synced();
      const task = ok(await tool(worker, "get_task", { id: taskHash }));
      expect(task.a2aState.status).to.equal("completed");

      // The remaining reads and the refusals of the remaining money tools, each called once.
      // The figures count the completed task and the registered worker.
      expect(ok(await tool(poster, "platform_status")).stats).to.include({
        completedTasks: 1,
        openTasks: 0,
        totalAgents: 1,
      });
      ok(await tool(poster, "get_settlement"));
      ok(await tool(poster, "search_agents", {}));
      expect(ok(await tool(poster, "get_reputation", { address: workerWallet.address })).completed).to.equal(1);
      ok(await tool(poster, "get_leaderboard"));
      expect(ok(await tool(poster, "get_my_posted_tasks", {})).tasks[0].meta.taskHash).to.equal(taskHash);
      ok(await tool(worker, "get_my_executor"));
      ok(await tool(worker, "heartbeat", {}));
      const service = ok(
        await tool(worker, "create_service", { name: "Translate", description: "EN to FR", price_raw: 5_000_000 }),
      );
      expect(ok(await tool(poster, "browse_services", {})).services.map((x: { id: number }) => x.id)).to.deep.equal([
        service.id,
      ]);
      expect(ok(await tool(poster, "get_service", { id: String(service.id) })).price_raw).to.equal(5_000_000);
      expect(
        ok(await tool(worker, "update_service", { id: String(service.id), price_raw: 6_000_000 })).price_raw,
      ).to.equal(6_000_000);
      expect(ok(await tool(worker, "deactivate_service", { id: String(service.id) })).active).to.equal(false);
      expect(ok(await tool(worker, "get_offered_tasks", {})).tasks).to.deep.equal([]);
      // A completed task refuses every other move, each with the code REST answers.
      const refusals: [Client, string, Record<string, unknown>, string][] = [
        [poster, "decline_task", { hash: taskHash }, "INVALID_STATE"],
        [worker, "verify_task", { hash: taskHash, passed: true }, "NO_ONCHAIN_VERIFIER"],
        [poster, "cancel_task", { hash: taskHash }, "INVALID_STATUS"],
        [poster, "reclaim_task", { hash: taskHash }, "INVALID_STATUS"],
        [poster, "raise_dispute", { hash: taskHash }, "INVALID_STATE"],
        [worker, "release_work", { hash: taskHash }, "INVALID_STATE"],
        [worker, "escalate_work", { hash: taskHash }, "INVALID_STATE"],
        [poster, "assign_worker", { hash: taskHash, worker: workerWallet.address }, "NOT_OPEN"],
        [poster, "build_task_batch", { token: m.token, tasks: [] }, "VALIDATION_ERROR"],
        [poster, "split_unruled_dispute", { hash: taskHash }, "INVALID_STATUS"],
        [poster, "contest_open_task", { hash: taskHash }, "INVALID_STATE"],
        [poster, "judge_open_task", { hash: taskHash, winner: workerWallet.address }, "INVALID_STATE"],
        [worker, "withdraw_credit", { token: m.token }, "INVALID_STATE"],
      ];
      for (const [client, name, args, code] of refusals) {
        failed(await tool(client, name, args), code);
      }
      // A verdict pays the worker directly: nothing is credited to it.
      expect(ok(await tool(poster, "get_credits", { address: workerWallet.address })).credits).to.deep.equal([]);
      const called = new Set([
        "upload_brief",
        "build_task",
        "index_task",
        "register_executor",
        "browse_tasks",
        "bid_on_task",
        "list_applicants",
        "accept_task",
        "fetch_brief",
        "submit_result",
        "finalize_task",
        "get_task",
        "platform_status",
        "get_settlement",
        "search_agents",
        "get_reputation",
        "get_leaderboard",
        "get_my_posted_tasks",
        "get_my_executor",
        "heartbeat",
        "decline_task",
        "verify_task",
        "cancel_task",
        "reclaim_task",
        "raise_dispute",
        "release_work",
        "assign_worker",
        "build_task_batch",
        "create_service",
        "browse_services",
        "get_service",
        "update_service",
        "deactivate_service",
        "get_offered_tasks",
        "escalate_work",
        "split_unruled_dispute",
        "contest_open_task",
        "judge_open_task",
        "withdraw_credit",
        "get_credits",
      ]);
      // The hosted-agent and webhook tools are called in the tests of their own above.
      expect(
        MCP_TOOLS.map((t) => t.name).filter(
          (n) => !called.has(n) && !HOSTED_AGENT_TOOLS.includes(n) && !WEBHOOK_TOOLS.includes(n),
        ),
      ).to.deep.equal([]);
      await poster.close();
      await worker.close();
    }));

  it("limits tool calls per key (RATE_MCP_CALLS_PER_MINUTE) with RATE_LIMIT and retryAfterSeconds", () =>
    withMarket(
      async (m) => {
        const client = await connect(m, m.posterKey);
        for (let i = 0; i < 3; i++) ok(await tool(client, "get_settlement"));
        const refused = await tool(client, "get_settlement");
        failed(refused, "RATE_LIMIT");
        expect(
          (refused.structuredContent!.error as { details: { retryAfterSeconds: number } }).details.retryAfterSeconds,
        ).to.be.within(1, 60);
        // Another key has its own budget.
        const other = await connect(m, await m.api.createKey(m.stranger.address));
        ok(await tool(other, "get_settlement"));
        await client.close();
        await other.close();
      },
      { RATE_MCP_CALLS_PER_MINUTE: "3" },
    ));

  it("fuzz: raw bodies never get a 5xx; every answer is JSON-RPC, a refused body a JSON-RPC error", async function () {
    this.timeout(120_000);
    await withMarket(
      async (m) => {
        const headers = {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "x-api-key": m.posterKey,
        };
        const body = fc.oneof(
          fc.jsonValue().map((v) => JSON.stringify(v)),
          fc.string(),
          fc
            .record({
              jsonrpc: fc.constant("2.0"),
              id: fc.integer(),
              method: fc.constantFrom("tools/call", "tools/list", "initialize", "x"),
              params: fc.anything(),
            })
            .map((v) => JSON.stringify(v)),
          fc
            .record({
              jsonrpc: fc.constant("2.0"),
              id: fc.integer(),
              method: fc.constant("tools/call"),
              params: fc.record({
                name: fc.constantFrom(...MCP_TOOLS.map((t) => t.name)),
                arguments: fc.dictionary(fc.string(), fc.jsonValue()),
              }),
            })
            .map((v) => JSON.stringify(v)),
        );
        await fc.assert(
          fc.asyncProperty(body, async (raw) => {
            const res = await fetch(`${m.api.url}/mcp`, { method: "POST", headers, body: raw });
            expect(res.status, raw).to.be.below(500);
            const text = await res.text();
            // 202 (a notification or a response sent to the server) has no body; anything else is JSON-RPC, and a
            // refused body (4xx) is a JSON-RPC error object.
            if (res.status === 202) return;
            const parsed = JSON.parse(text);
            for (const a of Array.isArray(parsed) ? parsed : [parsed]) {
              expect(a.jsonrpc, text).to.equal("2.0");
              expect("result" in a || "error" in a, text).to.equal(true);
              if (res.status !== 200) expect(a.error.code, text).to.be.a("number");
            }
          }),
          { numRuns: 200 },
        );
      },
      { RATE_MCP_CALLS_PER_MINUTE: "100000" },
    );
  });
});
