/**
 * POST /a2a/v1 over real HTTP: the official @a2a-js/sdk client (discovery from /.well-known/agent-card.json, list,
 * get, send, cancel refused), raw JSON-RPC for every envelope error, both method-name styles, batches and
 * notifications, and a fuzz run that must never see a 5xx or a body that is not a JSON-RPC answer.
 */
import crypto from "node:crypto";
import { expect } from "chai";
import fc from "fast-check";
import { ethers } from "hardhat";
import { ClientFactory } from "@a2a-js/sdk/client";
import { Role, TaskState } from "@a2a-js/sdk";
import { type Market, withMarket } from "../../helpers/market";
import { encryptBrief, wrapBriefKey } from "../../../server/domain/briefs";

const A2A = "/a2a/v1";

async function rpc(m: Market, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${m.api.url}${A2A}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined };
}

const call = (method: string, params: unknown = {}, id: number | string = 1) => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});

describe("A2A JSON-RPC at /a2a/v1", () => {
  it("works with the official A2A client: discovery, ListTasks, GetTask, SendMessage, CancelTask refused", () =>
    withMarket(async (m) => {
      const first = await m.list();
      const second = await m.list();
      const client = await new ClientFactory().createFromUrl(m.api.url);

      const listed = await client.listTasks({
        tenant: "",
        contextId: "",
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 10,
        pageToken: "",
        statusTimestampAfter: undefined,
      });
      expect(listed.totalSize).to.equal(2);
      expect(listed.tasks.map((t) => t.id).sort()).to.deep.equal([first.taskHash, second.taskHash].sort());
      for (const task of listed.tasks) {
        expect(task.contextId).to.equal(task.id);
        expect(task.status?.state).to.equal(TaskState.TASK_STATE_SUBMITTED);
        expect(task.metadata?.marketplace).to.include({ taskHash: task.id, state: "open", privacy: "public" });
      }

      const got = await client.getTask({ tenant: "", id: first.taskHash, historyLength: undefined });
      expect(got.id).to.equal(first.taskHash);
      expect(got.metadata?.marketplace.onChainTaskId).to.equal(first.taskId);

      const sent = await client.sendMessage({
        tenant: "",
        message: {
          messageId: "m-1",
          contextId: "",
          taskId: "",
          role: Role.ROLE_USER,
          parts: [
            {
              content: { $case: "text", value: "I want to work" },
              metadata: undefined,
              filename: "",
              mediaType: "text/plain",
            },
          ],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
        configuration: undefined,
        metadata: undefined,
      });
      expect("messageId" in sent).to.equal(true);
      const text = JSON.stringify(sent);
      expect(text).to.contain("changes nothing").and.to.contain("/api/v1/a2a/tasks/index");
      // Acknowledging created nothing.
      expect((await m.api.request("GET", "/api/v1/a2a/tasks")).json.data.total).to.equal(2);

      let refused: unknown;
      try {
        await client.cancelTask({ tenant: "", id: first.taskHash, metadata: undefined });
      } catch (error) {
        refused = error;
      }
      expect(refused, "cancel must be refused").to.be.instanceOf(Error);
      expect((refused as Error).name).to.equal("TaskNotCancelableError");
      // The SDK's reason for the JSON-RPC code -32002 (TASK_NOT_CANCELABLE).
      expect((refused as Error & { reason: string }).reason).to.equal("TASK_NOT_CANCELABLE");
    }));

  it("answers both method-name styles: v0.3 (tasks/get, tasks/list, message/send, tasks/cancel) and 1.0", () =>
    withMarket(async (m) => {
      const { taskHash } = await m.list();
      const list03 = await rpc(m, call("tasks/list", { pageSize: 5 }));
      expect(list03.status).to.equal(200);
      expect(list03.json.result.tasks[0]).to.include({ kind: "task", id: taskHash, contextId: taskHash });
      expect(list03.json.result.tasks[0].status.state).to.equal("submitted");
      expect(list03.json.result.totalSize).to.equal(1);
      // The same public metadata as the REST open-task list.
      const rest = (await m.api.request("GET", "/api/v1/a2a/tasks")).json.data.tasks[0];
      expect(list03.json.result.tasks[0].metadata.marketplace).to.deep.equal({
        ...rest.meta,
        state: rest.state.status,
        onChainStatus: rest.state.onChainStatus,
      });

      const get03 = await rpc(m, call("tasks/get", { id: taskHash }));
      expect(get03.json.result.id, get03.text).to.equal(taskHash);
      expect(get03.json.result.status.state).to.equal("submitted");
      const get10 = await rpc(m, call("GetTask", { id: taskHash }));
      expect(get10.json.result.id, get10.text).to.equal(taskHash);
      expect(get10.json.result.status.state).to.equal("TASK_STATE_SUBMITTED");
      const list10 = await rpc(m, call("ListTasks", { pageSize: 5 }));
      expect(list10.json.result.tasks.map((t: { id: string }) => t.id)).to.deep.equal([taskHash]);

      const send03 = await rpc(
        m,
        call("message/send", {
          message: { kind: "message", messageId: "x", role: "user", parts: [{ kind: "text", text: "hi" }] },
        }),
      );
      expect(send03.json.result, send03.text).to.include({ kind: "message", role: "agent" });
      const cancel03 = await rpc(m, call("tasks/cancel", { id: taskHash }));
      expect(cancel03.json.error.code).to.equal(-32002);
      const cancel10 = await rpc(m, call("CancelTask", { id: taskHash }));
      expect(cancel10.json.error.code).to.equal(-32002);
    }));

  it("answers the JSON-RPC and A2A error codes", () =>
    withMarket(async (m) => {
      const parse = await rpc(m, "{not json");
      expect(parse.status).to.equal(200);
      expect(parse.json).to.deep.include({ jsonrpc: "2.0", id: null });
      expect(parse.json.error.code).to.equal(-32700);
      expect((await rpc(m, { jsonrpc: "1.0", id: 1, method: "tasks/get" })).json.error.code).to.equal(-32600);
      expect((await rpc(m, { jsonrpc: "2.0", id: 1 })).json.error.code).to.equal(-32600);
      expect((await rpc(m, { jsonrpc: "2.0", id: {}, method: "tasks/get" })).json).to.deep.include({ id: null });
      expect((await rpc(m, [])).json.error.code).to.equal(-32600);
      expect((await rpc(m, 42)).json.error.code).to.equal(-32600);
      const unknown = await rpc(m, call("tasks/explode", {}, "abc"));
      expect(unknown.json).to.deep.include({ id: "abc" });
      expect(unknown.json.error.code).to.equal(-32601);
      // A task id is an opaque string: one that names no task is not found, whatever its form.
      expect((await rpc(m, call("tasks/get", { id: "not-a-hash" }))).json.error.code).to.equal(-32001);
      expect((await rpc(m, call("GetTask", { id: "0x1234" }))).json.error.code).to.equal(-32001);
      expect((await rpc(m, call("tasks/list", { pageSize: 1000 }))).json.error.code).to.equal(-32602);
      const missing = ethers.hexlify(ethers.randomBytes(32));
      expect((await rpc(m, call("tasks/get", { id: missing }))).json.error.code).to.equal(-32001);
      expect((await rpc(m, call("GetTask", { id: missing }))).json.error.code).to.equal(-32001);
      expect(
        (
          await rpc(
            m,
            call("tasks/pushNotificationConfig/set", {
              taskId: missing,
              pushNotificationConfig: { url: "https://x.example" },
            }),
          )
        ).json.error.code,
      ).to.equal(-32003);
      expect((await rpc(m, call("message/stream", { message: {} }))).json.error.code).to.equal(-32004);
      expect((await rpc(m, call("SendStreamingMessage", { message: {} }))).json.error.code).to.equal(-32004);
      const wrongMethod = await fetch(`${m.api.url}${A2A}`);
      expect(wrongMethod.status).to.equal(405);
    }));

  it("answers -32601 for Object prototype names and -32602 for malformed params, naming the field", () =>
    withMarket(async (m) => {
      for (const method of ["toString", "constructor", "__proto__", "hasOwnProperty", "valueOf"]) {
        const res = await rpc(m, call(method, {}));
        expect(res.json.error.code, method).to.equal(-32601);
      }
      const invalid: [string, unknown, string][] = [
        ["tasks/pushNotificationConfig/set", {}, "params.taskId"],
        ["SendMessage", { message: null }, "params.message"],
        ["SendMessage", { message: { parts: "x" } }, "params.message"],
        ["SendMessage", { message: { messageId: "m", role: "ROLE_USER", parts: "x" } }, "params.message.parts"],
        ["SendMessage", { message: { parts: [{ text: "hi" }] } }, "params.message.messageId"],
        ["SendMessage", { message: { messageId: "m", parts: [{ text: "hi" }] } }, "params.message.role"],
        ["message/send", { message: { parts: "invalid" } }, "params.message"],
        ["message/send", {}, "params.message"],
        ["tasks/cancel", {}, "params.id"],
        ["CancelTask", {}, "params.id"],
        ["tasks/get", {}, "params.id"],
        ["GetTask", { id: "0x1234", historyLength: -1 }, "params.historyLength"],
        ["tasks/get", { id: "0x1234", historyLength: 1.5 }, "params.historyLength"],
        ["ListTasks", { status: "INVALID_STATUS" }, "params.status"],
        ["ListTasks", { historyLength: -1 }, "params.historyLength"],
        ["ListTasks", { statusTimestampAfter: "-1" }, "params.statusTimestampAfter"],
        ["tasks/list", { status: "BOGUS" }, "params.status"],
      ];
      for (const [method, params, field] of invalid) {
        const res = await rpc(m, call(method, params));
        expect(res.json.error?.code, `${method} ${JSON.stringify(params)}: ${res.text}`).to.equal(-32602);
        expect(res.json.error.message).to.include(field);
        expect(res.json.error.message).to.not.match(/internal/i);
      }
    }));

  it("answers -32001 for CancelTask and GetTask of an id that names no task; lists with the SDK's unset status", () =>
    withMarket(async (m) => {
      const { taskHash } = await m.list();
      const missing = ethers.hexlify(ethers.randomBytes(32));
      for (const [method, id] of [
        ["CancelTask", missing],
        ["tasks/cancel", missing],
        ["CancelTask", "nonexistent-task-id"],
        ["GetTask", "nonexistent-task-id"],
        ["tasks/get", "nonexistent-task-id"],
      ]) {
        const res = await rpc(m, call(method, { id }));
        expect(res.json.error?.code, `${method} ${id}: ${res.text}`).to.equal(-32001);
      }
      // A listed task still cannot be cancelled here.
      expect((await rpc(m, call("CancelTask", { id: taskHash }))).json.error.code).to.equal(-32002);
      // The official client's listTasks with only a page size sends status "UNRECOGNIZED": the open tasks.
      const client = await new ClientFactory().createFromUrl(m.api.url);
      const listed = await client.listTasks({ pageSize: 5 } as Parameters<typeof client.listTasks>[0]);
      expect(listed.tasks.map((t) => t.id)).to.deep.equal([taskHash]);
      const raw = await rpc(m, call("ListTasks", { pageSize: 5, status: "UNRECOGNIZED" }));
      expect(raw.json.result.tasks.map((t: { id: string }) => t.id)).to.deep.equal([taskHash]);
      const valid = await rpc(
        m,
        call("ListTasks", {
          status: "TASK_STATE_SUBMITTED",
          historyLength: 0,
          statusTimestampAfter: "2020-01-01T00:00:00Z",
        }),
      );
      expect(valid.json.result, valid.text).to.not.equal(undefined);
    }));

  it("filters ListTasks as A2A 1.0 documents it, through the official client and in v0.3 tasks/list", () =>
    withMarket(async (m) => {
      const first = await m.list();
      const second = await m.list();
      const client = await new ClientFactory().createFromUrl(m.api.url);
      type ListParams = Parameters<typeof client.listTasks>[0];
      const list = (params: Partial<ListParams>) => client.listTasks(params as ListParams);
      const ids = (tasks: { id: string }[]) => tasks.map((t) => t.id).sort();

      // Most recent status timestamp (listing time) first, whatever the tasks' on-chain order; REST keeps its own.
      const listedAt = (taskHash: string) =>
        m.api.testDb.db("listings").where({ task_hash: taskHash }).first("listed_at");
      const secondAt = Number((await listedAt(second.taskHash)).listed_at);
      await m.api.testDb
        .db("listings")
        .where({ task_hash: first.taskHash })
        .update({ listed_at: secondAt + 60 });
      const ordered = await list({});
      expect(ordered.tasks.map((t) => t.id)).to.deep.equal([first.taskHash, second.taskHash]);
      expect(Date.parse(ordered.tasks[0].status!.timestamp!)).to.equal((secondAt + 60) * 1000);
      const restOrder = (await m.api.request("GET", "/api/v1/a2a/tasks")).json.data.tasks;
      expect(restOrder.map((t: { meta: { taskHash: string } }) => t.meta.taskHash)).to.deep.equal([
        second.taskHash,
        first.taskHash,
      ]);

      // No page size: at most 50, the size answered; 1 to 100 accepted, 101 refused.
      const all = await list({});
      expect(all).to.deep.include({ pageSize: 50, totalSize: 2, nextPageToken: "" });
      expect(ids(all.tasks)).to.deep.equal([first.taskHash, second.taskHash].sort());
      expect((await list({ pageSize: 100 })).totalSize).to.equal(2);
      expect((await rpc(m, call("ListTasks", { pageSize: 101 }))).json.error.code).to.equal(-32602);
      const paged = await list({ pageSize: 1 });
      expect(paged).to.deep.include({ pageSize: 1, totalSize: 2, nextPageToken: "1" });
      const rest = await list({ pageSize: 1, pageToken: paged.nextPageToken });
      expect(ids([...paged.tasks, ...rest.tasks])).to.deep.equal(ids(all.tasks));

      // A contextId is a task's hash: that task alone, counted alone; any other contextId lists none.
      const one = await list({ contextId: first.taskHash.toUpperCase().replace(/^0X/, "0x") });
      expect(one).to.deep.include({ totalSize: 1, nextPageToken: "" });
      expect(ids(one.tasks)).to.deep.equal([first.taskHash]);
      for (const contextId of [ethers.hexlify(ethers.randomBytes(32)), "empty-test-context"]) {
        expect(await list({ contextId }), contextId).to.deep.include({ tasks: [], totalSize: 0, nextPageToken: "" });
      }

      // statusTimestampAfter: the tasks whose status timestamp (their listing time) is at or after it.
      const stamps = all.tasks.map((t) => t.status!.timestamp!).sort();
      const since = await list({ statusTimestampAfter: stamps[0] });
      expect(since.totalSize).to.equal(2);
      const later = await list({ statusTimestampAfter: stamps[1] });
      expect(later.tasks.every((t) => t.status!.timestamp! >= stamps[1])).to.equal(true);
      expect(later.totalSize).to.equal(later.tasks.length);
      const future = new Date(Date.parse(stamps[1]) + 86_400_000).toISOString();
      expect(await list({ statusTimestampAfter: future })).to.deep.include({ tasks: [], totalSize: 0 });

      // A state no open task is in lists none; the open tasks' state lists them.
      expect((await list({ status: TaskState.TASK_STATE_WORKING })).totalSize).to.equal(0);
      expect((await list({ status: TaskState.TASK_STATE_SUBMITTED })).totalSize).to.equal(2);

      // The v0.3 names take the same filters.
      const v03 = async (params: object) => (await rpc(m, call("tasks/list", params))).json.result;
      expect(await v03({ contextId: second.taskHash })).to.deep.include({ totalSize: 1 });
      expect((await v03({ status: "working" })).totalSize).to.equal(0);
      expect((await v03({ status: "submitted" })).totalSize).to.equal(2);
      expect((await v03({ statusTimestampAfter: future })).totalSize).to.equal(0);
      expect(await v03({})).to.deep.include({ pageSize: 50, totalSize: 2 });
    }));

  it("answers batches in order, and nothing to notifications", () =>
    withMarket(async (m) => {
      const { taskHash } = await m.list();
      const batch = await rpc(m, [
        call("tasks/get", { id: taskHash }, 1),
        { jsonrpc: "2.0", method: "tasks/list", params: {} },
        call("nope", {}, 2),
        "junk",
        call("tasks/list", { pageSize: 5 }, "list"),
      ]);
      expect(batch.status).to.equal(200);
      expect(batch.json.map((r: { id: unknown }) => r.id)).to.deep.equal([1, 2, null, "list"]);
      expect(batch.json[0].result.id).to.equal(taskHash);
      expect(batch.json[1].error.code).to.equal(-32601);
      expect(batch.json[2].error.code).to.equal(-32600);
      // tasks/list in a batch: the same result as alone (a single answer is sent as the page's encoded bytes).
      const alone = await rpc(m, call("tasks/list", { pageSize: 5 }, "list"));
      expect(alone.headers.get("content-type")).to.equal("application/json; charset=utf-8");
      expect(Number(alone.headers.get("content-length"))).to.equal(Buffer.byteLength(alone.text));
      expect(batch.json[3]).to.deep.equal(alone.json);
      expect(batch.json[3].result.tasks.map((t: { id: string }) => t.id)).to.deep.equal([taskHash]);
      const onlyNotifications = await rpc(m, [{ jsonrpc: "2.0", method: "tasks/list" }]);
      expect(onlyNotifications.status).to.equal(204);
      const single = await rpc(m, { jsonrpc: "2.0", method: "message/send", params: {} });
      expect(single.status).to.equal(204);
      expect(single.text).to.equal("");
    }));

  it("never answers a private task's brief, key or result, in either method style", () =>
    withMarket(async (m) => {
      const agent = await m.newAgent();
      const secretBrief = `brief ${crypto.randomUUID()}`;
      const { blob, key: briefKey } = encryptBrief(Buffer.from(secretBrief));
      const upload = await m.post("/api/v1/storage/upload", m.posterKey, { data: blob.toString("base64") });
      expect(upload.status, upload.text).to.equal(201);
      const wrappedKey = wrapBriefKey(briefKey, agent.publicKey);
      const { taskHash } = await m.list(
        { privacy: "private", rootHash: upload.json.data.rootHash, wrappedKeys: { [agent.address]: wrappedKey } },
        { taskHash: upload.json.data.rootHash },
      );
      const leaks = (text: string) => {
        for (const secret of [secretBrief, wrappedKey.replace(/^0x/, ""), "wrappedKey", "resultData"]) {
          expect(text, `leaks ${secret}`).not.to.contain(secret);
        }
      };
      const listed = await rpc(m, call("tasks/list", {}));
      expect(listed.json.result.tasks.map((t: { id: string }) => t.id)).to.include(taskHash);
      leaks(listed.text);
      leaks((await rpc(m, call("ListTasks", {}))).text);

      // Taken, delivered: the result exists (the poster reads it), A2A still shows only the public projection.
      expect((await m.post(`/api/v1/a2a/tasks/${taskHash}/accept`, agent.key)).status).to.equal(200);
      await m.api.synced();
      const wallet = new ethers.Wallet(agent.privateKey, ethers.provider);
      await (await m.admin.sendTransaction({ to: wallet.address, value: ethers.parseEther("1") })).wait();
      const secretResult = `result ${crypto.randomUUID()}`;
      const submitted = await m.post(`/api/v1/a2a/tasks/${taskHash}/submit`, agent.key, {
        result: { text: secretResult },
      });
      expect(submitted.status, submitted.text).to.equal(200);
      const { to, data } = submitted.json.data.unsignedTx;
      await (await wallet.sendTransaction({ to, data })).wait();
      await m.api.synced();
      const own = await m.api.request("GET", `/api/v1/tasks/${taskHash}`, { key: m.posterKey });
      expect(own.json.data.resultData).to.deep.equal({ text: secretResult });
      for (const method of ["tasks/get", "GetTask"]) {
        const got = await rpc(m, call(method, { id: taskHash }));
        expect(got.json.result.id, got.text).to.equal(taskHash);
        expect(got.json.result.metadata.marketplace).to.include({ privacy: "private", state: "submitted" });
        // docs/agents.md "State mapping": submitted is working.
        expect(got.json.result.status.state).to.equal(method === "GetTask" ? "TASK_STATE_WORKING" : "working");
        leaks(got.text);
        expect(got.text).not.to.contain(secretResult);
      }
    }));

  it("applies the per-IP limit", () =>
    withMarket(
      async (m) => {
        const statuses: number[] = [];
        for (let i = 0; i < 5; i++) statuses.push((await rpc(m, call("tasks/list"))).status);
        expect(statuses.slice(0, 3)).to.deep.equal([200, 200, 200]);
        expect(statuses.slice(3)).to.deep.equal([429, 429]);
      },
      { RATE_IP_PER_WINDOW: "3" },
    ));

  it("fuzz: any body gets a JSON-RPC answer (or 204), never a 5xx", async function () {
    this.timeout(120_000);
    await withMarket(async (m) => {
      const method = fc.constantFrom(
        "tasks/get",
        "tasks/list",
        "message/send",
        "tasks/cancel",
        "GetTask",
        "ListTasks",
        "SendMessage",
        "CancelTask",
        "x",
        "",
      );
      const request = fc.record(
        {
          jsonrpc: fc.oneof(fc.constant("2.0"), fc.string()),
          id: fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.object()),
          method: fc.oneof(method, fc.anything()),
          params: fc.oneof(
            fc.object(),
            fc.anything(),
            fc.record({
              id: fc.oneof(fc.string(), fc.hexaString()),
              pageSize: fc.anything(),
              pageToken: fc.anything(),
              message: fc.anything(),
            }),
          ),
        },
        { requiredKeys: [] },
      );
      const body = fc.oneof(
        request,
        fc.array(request, { maxLength: 4 }),
        fc.jsonValue(),
        fc.string().map((s) => `raw:${s}`),
      );
      await fc.assert(
        fc.asyncProperty(body, async (b) => {
          const raw = typeof b === "string" && b.startsWith("raw:") ? b.slice(4) : JSON.stringify(b);
          const res = await rpc(m, raw === undefined ? "null" : raw);
          expect(res.status, res.text).to.be.oneOf([200, 204]);
          if (res.status === 204) return;
          const answers = Array.isArray(res.json) ? res.json : [res.json];
          for (const a of answers) {
            expect(a.jsonrpc, res.text).to.equal("2.0");
            expect("result" in a || "error" in a, res.text).to.equal(true);
            if (a.error) expect(a.error.code, res.text).to.be.a("number").and.not.equal(-32603);
          }
        }),
        { numRuns: 300 },
      );
    });
  });
});
