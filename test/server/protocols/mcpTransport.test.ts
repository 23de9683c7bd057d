/**
 * SharedPostTransport's direct tools/call (server/protocols/mcp/directCall.ts) against the SDK's own dispatch: two
 * transports, each with an SDK Server and the same tools/call handler, one attached with the handler (plain calls
 * dispatched by the transport) and one without (every request through Protocol._onrequest, as before). Every body,
 * plain or not, must get the same status and the same bytes from both; the handler must see the same `extra`; a call
 * in flight when the transport closes must be cancelled the same way. And the hand-written shape checks must accept
 * only what the SDK's schemas return unchanged.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { isDeepStrictEqual } from "node:util";
import { expect } from "chai";
import fc from "fast-check";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  EmptyResultSchema,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { SharedPostTransport, isPlainRequest } from "../../../server/protocols/mcp/transport";
import { isPlainToolCall, type ToolCallExtra, type ToolCallHandler } from "../../../server/protocols/mcp/directCall";

const AUTH: AuthInfo = { token: "sk_test", clientId: "0xabc", scopes: ["tasks:read"], extra: { scope: { who: "me" } } };

/** A page-like result the encoder holds, as endpoint.ts holds a cached page's. */
const PAGE_DATA = { tasks: [{ taskId: 1, title: "one" }], total: 1 };
const PAGE: CallToolResult = {
  content: [{ type: "text", text: JSON.stringify(PAGE_DATA) }],
  structuredContent: PAGE_DATA,
};
const PAGE_JSON = Buffer.from(JSON.stringify(CallToolResultSchema.parse(PAGE)));
const encode = (result: unknown) => (result === PAGE || isDeepStrictEqual(result, PAGE) ? PAGE_JSON : undefined);

/** What a handler can see of its `extra`, as JSON. */
function seen(extra: ToolCallExtra) {
  return {
    keys: Object.keys(extra).sort(),
    spreadKeys: Object.keys({ ...extra }).sort(),
    authInfo: extra.authInfo,
    header: extra.requestInfo?.headers["x-test"] ?? null,
    requestId: typeof extra.requestId,
    sessionId: extra.sessionId ?? null,
    meta: extra._meta ?? null,
    taskId: extra.taskId ?? null,
    signal: extra.signal instanceof AbortSignal && !extra.signal.aborted,
    sendNotification: typeof extra.sendNotification,
    sendRequest: typeof extra.sendRequest,
  };
}

interface Gate {
  entered: Promise<void>;
  open: () => void;
  record: Promise<Record<string, unknown>>;
}

function gate(): Gate & { enter: () => void; opened: Promise<void>; done: (r: Record<string, unknown>) => void } {
  let enter!: () => void;
  let open!: () => void;
  let done!: (r: Record<string, unknown>) => void;
  const entered = new Promise<void>((resolve) => (enter = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  const record = new Promise<Record<string, unknown>>((resolve) => (done = resolve));
  return { entered, opened, open, enter, record, done };
}

/** The tools/call handler both transports' servers have: one behaviour per tool name. */
function handler(waiting?: ReturnType<typeof gate>): ToolCallHandler {
  return async (request, extra) => {
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case "page":
        return PAGE;
      case "echo":
        // Keys out of the schema's order: the answer is the schema's copy.
        return { structuredContent: { request, extra: seen(extra) }, isError: false, content: [] };
      case "mcpError":
        throw new McpError(-32010, "refused here", { why: "test" });
      case "error":
        throw new Error("boom");
      case "string":
        throw "a string";
      case "null":
        throw null;
      case "badResult":
        return { content: "not a list" } as unknown as CallToolResult;
      case "notify":
        await extra.sendNotification({ method: "notifications/message", params: { level: "info", data: "x" } });
        return PAGE;
      case "ask":
        await extra.sendRequest({ method: "ping" }, EmptyResultSchema, { timeout: 20 });
        return PAGE;
      case "wait": {
        const early = args.early ? extra.signal : undefined;
        let fired = false;
        early?.addEventListener("abort", () => (fired = true));
        waiting!.enter();
        await waiting!.opened;
        waiting!.done({ early: early?.aborted ?? null, fired, late: extra.signal.aborted });
        return PAGE;
      }
      default:
        return { content: [{ type: "text", text: `no ${request.params.name}` }], isError: true };
    }
  };
}

interface Endpoint {
  url: string;
  transport: SharedPostTransport;
  /** How many requests went through the SDK's Protocol._onrequest. */
  sdkDispatches: () => number;
  errors: string[];
  close: () => Promise<void>;
}

async function endpoint(direct: boolean, waiting?: ReturnType<typeof gate>): Promise<Endpoint> {
  const callTool = handler(waiting);
  const server = new Server({ name: "test", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(CallToolRequestSchema, callTool);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [] }));
  const errors: string[] = [];
  server.onerror = (error) => errors.push(error.message);
  let dispatches = 0;
  const sdk = server as unknown as { _onrequest: (...args: unknown[]) => void };
  const onrequest = sdk._onrequest;
  sdk._onrequest = function (this: unknown, ...args: unknown[]) {
    dispatches++;
    return onrequest.apply(this, args);
  };
  const transport = new SharedPostTransport(encode);
  await transport.attach(server, direct ? callTool : undefined);
  const httpServer = http.createServer((req, res) => void transport.handlePost(req, res, AUTH));
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`,
    transport,
    sdkDispatches: () => dispatches,
    errors,
    async close() {
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}

async function post(url: string, body: string, signal?: AbortSignal) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "x-test": "yes" },
    body,
    signal,
  });
  return { status: res.status, type: res.headers.get("content-type"), body: await res.text() };
}

const call = (params: unknown, id: unknown = 1, more: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params, ...more });

/** Bodies on both sides of every check the direct path makes, and every way the handler answers. */
const BODIES = [
  ...["page", "echo", "mcpError", "error", "string", "badResult", "notify", "ask", "nothing"].map((name) =>
    call({ name, arguments: { limit: 50 } }),
  ),
  call({ name: "echo" }),
  call({ name: "echo", arguments: {} }, "an-id"),
  call({ name: "echo", arguments: { nested: { __proto__: 1 }, list: [1, "two"] } }, 0),
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"__proto__":{"x":1},"a":1}}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"constructor":"x"}}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","__proto__":{"a":1}}}',
  '{"__proto__":{"x":1},"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}',
  call({ name: "echo", arguments: [] }),
  call({ name: "echo", arguments: null }),
  call({ name: "echo", arguments: "x" }),
  call({ name: 5 }),
  call({ arguments: {} }),
  call(null),
  call([]),
  call({ name: "echo", _meta: { progressToken: 7 } }),
  call({ name: "echo", _meta: { progressToken: {} } }),
  call({ name: "echo", task: { ttl: 1000 } }),
  call({ name: "echo", other: 1 }),
  call({ name: "echo" }, 1.5),
  call({ name: "echo" }, 2 ** 53 + 2),
  call({ name: "echo" }, null),
  call({ name: "echo" }, { a: 1 }),
  call({ name: "echo" }, 1, { extra: true }),
  call({ name: "echo" }, 1, { jsonrpc: "1.0" }),
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call" }),
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { cursor: "x", _meta: {} } }),
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: "nope" }),
  JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  `[${call({ name: "page" }, 1)},${call({ name: "echo" }, "b")},${call({ name: "error" }, 3)}]`,
  `[${call({ name: "page" }, 1)},${call({ name: "echo", _meta: {} }, 2)}]`,
  `[${call({ name: "page" }, 1)},{"jsonrpc":"2.0","id":2,"method":5}]`,
  "[]",
  "{",
  "7",
];

describe("SharedPostTransport: a plain tools/call dispatched directly", () => {
  it("answers every body with the status and bytes of the SDK's dispatch", async () => {
    const [sdk, direct] = [await endpoint(false), await endpoint(true)];
    try {
      for (const body of BODIES) {
        expect(await post(direct.url, body), body).to.deep.equal(await post(sdk.url, body));
      }
      const name = fc.constantFrom("page", "echo", "error", "mcpError", "badResult", "other");
      const key = fc.constantFrom("limit", "offset", "constructor", "__proto__", "toString", "a");
      const args = fc
        .array(fc.tuple(key, fc.jsonValue()), { maxLength: 4 })
        .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`);
      const params = fc
        .record({ name, args: fc.option(args), more: fc.option(fc.constantFrom('"_meta":{}', '"task":{}', '"x":1')) })
        .map(
          ({ name, args, more }) =>
            `{"name":${JSON.stringify(name)}${args === null ? "" : `,"arguments":${args}`}${more ? `,${more}` : ""}}`,
        );
      const id = fc.oneof(fc.integer(), fc.string({ maxLength: 3 }), fc.constant(0.5));
      const body = fc
        .tuple(id, params)
        .map(([id, params]) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call","params":${params}}`);
      await fc.assert(
        fc.asyncProperty(body, async (raw) => {
          expect(await post(direct.url, raw), raw).to.deep.equal(await post(sdk.url, raw));
        }),
        { numRuns: 150 },
      );
    } finally {
      await sdk.close();
      await direct.close();
    }
  });

  it("dispatches a plain call itself and any other request through the SDK's Protocol", async () => {
    const direct = await endpoint(true);
    try {
      await post(direct.url, call({ name: "page", arguments: { limit: 50 } }));
      await post(direct.url, `[${call({ name: "page" }, 1)},${call({ name: "echo" }, 2)}]`);
      expect(direct.sdkDispatches()).to.equal(0);
      await post(direct.url, call({ name: "page", _meta: { progressToken: 1 } }));
      await post(direct.url, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }));
      expect(direct.sdkDispatches()).to.equal(2);
    } finally {
      await direct.close();
    }
  });

  it("gives the handler the SDK's extra: every field, authInfo, requestInfo and a live signal", async () => {
    const [sdk, direct] = [await endpoint(false), await endpoint(true)];
    try {
      const body = call({ name: "echo", arguments: { limit: 1 } });
      const [viaSdk, viaDirect] = [await post(sdk.url, body), await post(direct.url, body)];
      expect(viaDirect).to.deep.equal(viaSdk);
      const { extra } = JSON.parse(viaDirect.body).result.structuredContent;
      expect(extra).to.deep.include({ authInfo: AUTH, header: "yes", requestId: "number", signal: true });
      expect(extra.keys).to.include.members(["signal", "sendNotification", "sendRequest", "authInfo", "requestInfo"]);
      expect(extra.spreadKeys).to.deep.equal(extra.keys);
      expect(direct.sdkDispatches()).to.equal(0);
    } finally {
      await sdk.close();
      await direct.close();
    }
  });

  for (const early of [true, false]) {
    it(`cancels a call in flight when the transport closes (signal read ${early ? "before" : "after"}): aborted, not answered`, async () => {
      const outcomes = [];
      for (const direct of [false, true]) {
        const waiting = gate();
        const at = await endpoint(direct, waiting);
        const client = new AbortController();
        try {
          const answer = post(at.url, call({ name: "wait", arguments: { early } }), client.signal).then(
            () => "answered",
            () => "no answer",
          );
          await waiting.entered;
          await at.transport.close();
          waiting.open();
          const record = await waiting.record;
          const silent = await Promise.race([answer, new Promise((resolve) => setTimeout(resolve, 200, "silent"))]);
          outcomes.push({ record, silent, sdkDispatches: at.sdkDispatches() });
        } finally {
          client.abort();
          await at.close();
        }
      }
      expect(outcomes[0]).to.deep.equal({
        record: { early: early ? true : null, fired: early, late: true },
        silent: "silent",
        sdkDispatches: 1,
      });
      expect(outcomes[1]).to.deep.equal({ ...outcomes[0], sdkDispatches: 0 });
    });
  }

  it("answers nothing and reports the failure, as the SDK does, when a handler throws null", async () => {
    const outcomes = [];
    for (const direct of [false, true]) {
      const at = await endpoint(direct);
      const client = new AbortController();
      try {
        const answer = post(at.url, call({ name: "null" }), client.signal).then(
          () => "answered",
          () => "no answer",
        );
        const silent = await Promise.race([answer, new Promise((resolve) => setTimeout(resolve, 200, "silent"))]);
        outcomes.push({ silent, errors: at.errors });
      } finally {
        client.abort();
        await at.close();
      }
    }
    expect(outcomes[0].silent).to.equal("silent");
    expect(outcomes[0].errors).to.have.length(1);
    expect(outcomes[0].errors[0]).to.match(/^Failed to send response: TypeError/);
    expect(outcomes[1]).to.deep.equal(outcomes[0]);
  });
});

describe("The direct path's shape checks", () => {
  /** JSON text with these entries in order (duplicates and a `__proto__` key kept as JSON.parse reads them). */
  const objectText = (entries: [string, string][]) =>
    `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`;
  const json = fc.jsonValue().map((v) => JSON.stringify(v));
  const special = fc.constantFrom('"2.0"', '"tools/call"', "1", "1.5", "-0", "9007199254740993", "null", "{}", "[]");
  const string = fc.string({ maxLength: 4 }).map((v) => JSON.stringify(v));
  /** An object's JSON text: each of `fields` there most of the time, and sometimes one of the `odd` keys too. */
  const objectOf = (fields: Record<string, fc.Arbitrary<string>>, odd: string[]) =>
    fc
      .tuple(
        fc.tuple(
          ...Object.entries(fields).map(([key, value]) =>
            fc.option(
              value.map((v): [string, string] => [key, v]),
              { freq: 4 },
            ),
          ),
        ),
        fc.option(fc.tuple(fc.constantFrom(...odd), fc.oneof(json, special)), { freq: 2 }),
      )
      .map(([entries, oddOne]) => objectText([...entries, oddOne].filter((e): e is [string, string] => e !== null)));
  const args = objectOf({ limit: fc.oneof(json, special), tags: json }, ["constructor", "__proto__", "toString", "a"]);
  const toolParams = objectOf(
    { name: fc.oneof(string, string, special, json), arguments: fc.oneof(args, args, args, json, special) },
    ["_meta", "task", "x", "__proto__", "constructor"],
  );
  const message = objectOf(
    {
      jsonrpc: fc.oneof(fc.constant('"2.0"'), fc.constant('"2.0"'), json),
      id: fc.oneof(fc.integer().map(String), string, special),
      method: fc.oneof(fc.constant('"tools/call"'), string, special),
      params: fc.oneof(toolParams, toolParams, json, special),
    },
    ["result", "error", "__proto__", "x"],
  );

  it("isPlainRequest accepts only what JSONRPCMessageSchema returns unchanged", () => {
    const check = (text: string) => {
      const value = JSON.parse(text);
      if (!isPlainRequest(value)) return;
      const parsed = JSONRPCMessageSchema.safeParse(value);
      expect(parsed.success, text).to.equal(true);
      expect(isDeepStrictEqual(parsed.data, value), text).to.equal(true);
    };
    const plain = [
      call({ name: "page", arguments: { limit: 50 } }),
      JSON.stringify({ jsonrpc: "2.0", id: "x", method: "tools/list" }),
      JSON.stringify({ jsonrpc: "2.0", id: -3, method: "a", params: { cursor: "c" } }),
    ];
    for (const text of plain) {
      expect(isPlainRequest(JSON.parse(text)), text).to.equal(true);
      check(text);
    }
    fc.assert(
      fc.property(message, (text) => check(text)),
      { numRuns: 3000 },
    );
  });

  it("isPlainToolCall accepts only params CallToolRequestSchema returns unchanged", () => {
    const check = (text: string) => {
      const value = JSON.parse(text);
      if (!isPlainToolCall(value)) return;
      const parsed = CallToolRequestSchema.safeParse({ method: "tools/call", params: value });
      expect(parsed.success, text).to.equal(true);
      expect(isDeepStrictEqual(parsed.data!.params, value), text).to.equal(true);
    };
    for (const text of ['{"name":"a"}', '{"name":"a","arguments":{"limit":1,"b":[{}]}}']) {
      expect(isPlainToolCall(JSON.parse(text)), text).to.equal(true);
      check(text);
    }
    fc.assert(
      fc.property(toolParams, (text) => check(text)),
      { numRuns: 3000 },
    );
  });
});
