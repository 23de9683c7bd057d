/**
 * The POST side of the stateless Streamable HTTP transport, as an SDK `Transport` (@modelcontextprotocol/sdk's
 * custom-transport interface) that one `Server` stays connected to for the life of the app.
 *
 * Why not the SDK's StreamableHTTPServerTransport for POST: in stateless mode it must be built per request, and each
 * request then converts the Node request into a web Request (@hono/node-server, the body read through a web stream),
 * the Response back, and connects and closes a Server; measured with `npm run bench:api` (docs/agents.md), that cost
 * more than the tool call itself. This transport reads the body from Node directly and answers with the JSON bytes.
 *
 * It answers a POST exactly as the SDK transport does in stateless JSON-response mode (same checks, order, statuses,
 * JSON-RPC error codes and messages: 406 bad Accept, 415 not JSON, 413 too large, 400 parse error, batch over 100,
 * invalid JSON-RPC, two initializations, unsupported MCP-Protocol-Version; 202 for notifications and responses only;
 * 200 with one response or an array of them). Concurrent requests share the Server: each request's JSON-RPC ids are
 * replaced by ids unique to this transport on the way in and restored on the way out, so two clients both sending
 * id 1 never meet. A client's cancellation or response refers to its own ids, which name nothing on a stateless
 * server: they are dropped (still 202), as a per-request server would have ignored them.
 *
 * Each message is checked by JSONRPCMessageSchema as the SDK's transport does, except a request of the common shape
 * (isPlainRequest), which the schema would return unchanged. A `tools/call` of the plain shape is dispatched here
 * (./directCall.ts: why, and what it keeps of the SDK's dispatch); every other request goes to the Server.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import {
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  isInitializeRequest,
  type CallToolRequest,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type JSONRPCResponse,
  type MessageExtraInfo,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import { AppError } from "../../errors";
import {
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  MAX_BATCH_SIZE,
  requestBodyTooLargeMessage,
} from "@modelcontextprotocol/sdk/server/requestBody.js";
import { DirectCall, checkedToolResult, errorAnswer, isPlainToolCall, type ToolCallHandler } from "./directCall";

/**
 * One POST's requests in their order: the internal id of each, the client's id, the answers (UTF-8 JSON) gathered so
 * far and how many are still awaited. (Arrays, not maps: a POST is nearly always one request.)
 */
interface Exchange {
  ids: number[];
  clientIds: RequestId[];
  answers: Buffer[][];
  awaited: number;
  done: (answers: Buffer[][]) => void;
}

/**
 * The JSON of a result, encoded, when the server already has it (a cached page answered again), else undefined: the
 * answer is then serialized here as usual. (A page's answer is tens of kilobytes: encoding it for every request cost
 * more than the rest of the call.) Only for a result equal to one the encoder checked with CallToolResultSchema,
 * whose parse returns it unchanged: a direct tools/call does not parse it again.
 */
export type ResultEncoder = (result: unknown) => Buffer | undefined;

const COMMA = Buffer.from(",");
const OPEN = Buffer.from("[");
const CLOSE_ARRAY = Buffer.from("]");
const CLOSE_OBJECT = Buffer.from("}");

export class SharedPostTransport implements Transport {
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  private nextId = 1;
  /**
   * The connected server's own request entry point, when it has one: the SDK's message dispatch first tries each
   * request as a result and as an error response (two zod parses that fail, building their errors: a tenth of a
   * browse_tasks call in a CPU profile) before finding it is a request. This transport knows what it forwards.
   */
  private dispatchRequest?: (request: JSONRPCRequest, extra?: MessageExtraInfo) => void;
  /** The server and its tools/call handler, for the calls dispatched here (attach). */
  private direct?: { server: Server; callTool: ToolCallHandler };
  /** The calls dispatched here and not answered yet: close() cancels them, as the Protocol does its own. */
  private readonly calls = new Set<DirectCall>();
  /** Internal id -> the exchange (POST) waiting for its answer. */
  private readonly pending = new Map<number, Exchange>();

  constructor(
    private readonly encodeResult: ResultEncoder = () => undefined,
    /** Admits a batch's items beyond the first (the request itself was counted): throws an AppError to refuse. */
    private readonly admitBatch: (authInfo: AuthInfo, extraItems: number) => Promise<void> = async () => undefined,
  ) {}

  async start(): Promise<void> {}

  /**
   * Connects `server` to this transport (for the life of the app). With `callTool`, the handler the server has for
   * tools/call, a plain tools/call is dispatched here (./directCall.ts); the server must have no task store.
   */
  async attach(server: Server, callTool?: ToolCallHandler): Promise<void> {
    await server.connect(this);
    // The SDK's Protocol handles a request in _onrequest (what its onmessage calls for one). Should a later SDK
    // version lack it, requests go through onmessage as any other message (slower, the same answers).
    const onrequest = (server as unknown as { _onrequest?: unknown })._onrequest;
    if (typeof onrequest === "function") this.dispatchRequest = onrequest.bind(server);
    if (callTool) this.direct = { server, callTool };
  }

  async close(): Promise<void> {
    this.pending.clear();
    for (const call of this.calls) call.abort();
    this.calls.clear();
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Only answers to a POST's requests go anywhere: without a session there is no stream for anything else. (The
    // server's own messages: a structural test, not isJSONRPCResultResponse's parse of the whole result.)
    if (!("id" in message) || "method" in message || !("result" in message || "error" in message)) return;
    this.deliver(message as JSONRPCResponse, "result" in message ? this.encodeResult(message.result) : undefined);
  }

  /** Gathers an answer for its POST, the result's JSON `encoded` already when the encoder has it. */
  private deliver(message: JSONRPCResponse, encoded: Buffer | undefined): void {
    const id = message.id as number;
    const exchange = this.pending.get(id);
    if (!exchange) return; // its client went away
    this.pending.delete(id);
    const index = exchange.ids.indexOf(id);
    const clientId = exchange.clientIds[index];
    exchange.answers[index] =
      encoded === undefined
        ? [Buffer.from(JSON.stringify({ ...message, id: clientId }))]
        : [Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(clientId)},"result":`), encoded, CLOSE_OBJECT];
    if (--exchange.awaited === 0) exchange.done(exchange.answers);
  }

  /** Answers one POST /mcp (the caller has checked Host, Origin and the API key). */
  async handlePost(req: IncomingMessage, res: ServerResponse, authInfo: AuthInfo): Promise<void> {
    const accept = req.headers.accept;
    if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) {
      return this.refuse(
        res,
        406,
        -32000,
        "Not Acceptable: Client must accept both application/json and text/event-stream",
      );
    }
    if (!isJsonContentType(req.headers["content-type"] ?? null)) {
      return this.refuse(res, 415, -32000, "Unsupported Media Type: Content-Type must be application/json");
    }
    let raw: unknown;
    try {
      const text = await readBody(req, DEFAULT_MAX_REQUEST_BODY_SIZE);
      if (text === undefined) {
        return this.refuse(res, 413, -32000, requestBodyTooLargeMessage(DEFAULT_MAX_REQUEST_BODY_SIZE));
      }
      raw = JSON.parse(text);
    } catch {
      return this.refuse(res, 400, -32700, "Parse error: Invalid JSON");
    }
    if (Array.isArray(raw) && raw.length > MAX_BATCH_SIZE) {
      return this.refuse(res, 400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
    }
    let messages: JSONRPCMessage[];
    try {
      messages = (Array.isArray(raw) ? raw : [raw]).map((m) => (isPlainRequest(m) ? m : JSONRPCMessageSchema.parse(m)));
    } catch {
      return this.refuse(res, 400, -32700, "Parse error: Invalid JSON-RPC message");
    }
    if (messages.length > 1) {
      try {
        await this.admitBatch(authInfo, messages.length - 1);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        res.setHeader("Retry-After", String(error.headers?.["Retry-After"] ?? 1));
        return this.refuse(res, error.status, -32000, error.message);
      }
    }
    // The method test first: isInitializeRequest is a schema parse, slow when it fails (every other call).
    const initializing = messages.some((m) => "method" in m && m.method === "initialize" && isInitializeRequest(m));
    if (initializing && messages.length > 1) {
      return this.refuse(res, 400, -32600, "Invalid Request: Only one initialization request is allowed");
    }
    if (!initializing) {
      const version = headerValue(req, "mcp-protocol-version");
      if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
        return this.refuse(
          res,
          400,
          -32000,
          `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
        );
      }
    }
    const extra: MessageExtraInfo = { authInfo, requestInfo: { headers: req.headers } };
    if (!messages.some(isRequest)) {
      for (const message of messages) {
        // A client's cancellation or response names its own ids: nothing of it is pending here.
        if ("method" in message && message.method !== "notifications/cancelled") this.onmessage?.(message, extra);
      }
      res.writeHead(202).end();
      return;
    }
    const answers = await new Promise<Buffer[][]>((done) => {
      const exchange: Exchange = { ids: [], clientIds: [], answers: [], awaited: 0, done };
      const forwarded: JSONRPCMessage[] = [];
      for (const message of messages) {
        if (isRequest(message)) {
          const id = this.nextId++;
          exchange.ids.push(id);
          exchange.clientIds.push(message.id);
          exchange.awaited++;
          this.pending.set(id, exchange);
          forwarded.push({ ...message, id });
        } else if ("method" in message && message.method !== "notifications/cancelled") {
          forwarded.push(message);
        }
      }
      res.once("close", () => {
        for (const id of exchange.ids) this.pending.delete(id);
        // A client gone before its answers: nothing will answer this POST, so it ends here (nothing is written).
        if (exchange.awaited > 0) done([]);
      });
      for (const message of forwarded) {
        if (!isRequest(message)) this.onmessage?.(message, extra);
        else if (this.direct && isDirectToolCall(message)) void this.callTool(message, extra);
        else if (this.dispatchRequest) this.dispatchRequest(message, extra);
        else this.onmessage?.(message, extra);
      }
    });
    if (res.destroyed) return;
    const chunks =
      answers.length === 1
        ? answers[0]
        : [OPEN, ...answers.flatMap((a, i) => (i === 0 ? a : [COMMA, ...a])), CLOSE_ARRAY];
    const length = chunks.reduce((n, c) => n + c.length, 0);
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": length });
    res.cork();
    for (const chunk of chunks) res.write(chunk);
    res.end();
    res.uncork();
  }

  /**
   * A plain tools/call, answered as Protocol._onrequest answers it through Server's tools/call wrapper: the
   * handler's checked result, or its error as a JSON-RPC error; nothing once the call was cancelled.
   */
  private async callTool(request: JSONRPCRequest, info: MessageExtraInfo): Promise<void> {
    const { server, callTool } = this.direct!;
    const call = new DirectCall(server, request.id, info);
    this.calls.add(call);
    let answer: JSONRPCResponse | undefined;
    let encoded: Buffer | undefined;
    try {
      const result = await callTool({ method: "tools/call", params: request.params } as CallToolRequest, call);
      encoded = this.encodeResult(result);
      const checked = encoded === undefined ? checkedToolResult(result) : result;
      if (!call.aborted) answer = { result: checked, jsonrpc: "2.0", id: request.id };
    } catch (error) {
      try {
        if (!call.aborted) answer = errorAnswer(request.id, error);
      } catch (failure) {
        this.onerror?.(new Error(`Failed to send response: ${failure}`));
      }
    } finally {
      this.calls.delete(call);
    }
    if (answer) this.deliver(answer, encoded);
  }

  private refuse(res: ServerResponse, status: number, code: number, message: string): void {
    this.onerror?.(new Error(message));
    const body = JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null });
    res.writeHead(status, { "Content-Type": "application/json" }).end(body);
  }
}

const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);

/**
 * Whether `value` is a JSON-RPC request JSONRPCMessageSchema would return unchanged (so it need not run): "2.0", an id
 * that is a string or a safe integer, a string method, and params, if any, an object without `_meta` (the schema
 * checks that one) or an own `__proto__` (its copy would lose it); no other key. Anything else is parsed by the schema,
 * so a refusal is the SDK's.
 */
export function isPlainRequest(value: unknown): value is JSONRPCRequest {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const message = value as Record<string, unknown>;
  if (message.jsonrpc !== "2.0" || typeof message.method !== "string") return false;
  if (typeof message.id !== "string" && !Number.isSafeInteger(message.id)) return false;
  for (const key of Object.keys(message)) if (!REQUEST_KEYS.has(key)) return false;
  const { params } = message;
  return (
    params === undefined ||
    (typeof params === "object" &&
      params !== null &&
      !Array.isArray(params) &&
      !Object.hasOwn(params, "_meta") &&
      !Object.hasOwn(params, "__proto__"))
  );
}

/** A tools/call dispatched here: plain params (its envelope was checked by isPlainRequest or by the schema). */
function isDirectToolCall(request: JSONRPCRequest): boolean {
  return request.method === "tools/call" && isPlainToolCall(request.params);
}

/** A request among messages JSONRPCMessageSchema has parsed: a method and an id (not isJSONRPCRequest's parse again). */
function isRequest(message: JSONRPCMessage): message is JSONRPCRequest {
  return "method" in message && "id" in message;
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

/** The body as text (UTF-8, a BOM dropped as a web Request's text would), or undefined when over `maxBytes`. */
function readBody(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  if (Number(req.headers["content-length"]) > maxBytes) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= maxBytes) return void chunks.push(chunk);
      // Too large: the rest is read and dropped (the connection stays usable for the 413).
      req.off("data", onData);
      req.resume();
      resolve(undefined);
    };
    req.on("data", onData);
    req.once("end", () => resolve(decoder.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks))));
    req.once("error", reject);
  });
}

const decoder = new TextDecoder();
