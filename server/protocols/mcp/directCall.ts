/**
 * A `tools/call` that SharedPostTransport dispatches itself instead of through the SDK's Protocol: what
 * Protocol._onrequest and Server's tools/call wrapper (@modelcontextprotocol/sdk 1.x, shared/protocol.js and
 * server/index.js) do for it, for the request they would parse unchanged and on a server without sessions or a task
 * store (this app's). The same handler runs with the same `extra`, and the answer, the error and the silence after a
 * cancellation are theirs.
 *
 * Why: for a cached page (MCP `browse_tasks`) that dispatch cost more than the tool itself: two zod parses of the
 * request (the registered handler's and the wrapper's), one of the result, an AbortController per request (about
 * 5 µs on Node 20) and a chain of promises (docs/performance.md, "MCP browse_tasks"). Here the request's
 * shape is checked by hand (anything else goes the SDK's way, so every refusal stays the SDK's), a result the
 * transport's encoder already holds is not parsed again, and the AbortController is made only if the handler reads
 * `extra.signal`.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra, TaskRequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { safeParse } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type JSONRPCErrorResponse,
  type MessageExtraInfo,
  type RequestId,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";

export type ToolCallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The server's tools/call handler: the function registered with `setRequestHandler(CallToolRequestSchema, ...)`. */
export type ToolCallHandler = (request: CallToolRequest, extra: ToolCallExtra) => Promise<CallToolResult>;

/**
 * Whether a tools/call's params are ones CallToolRequestSchema returns unchanged: a string `name` and, if any,
 * `arguments` a plain JSON object, nothing else (no `_meta`, no `task`: those go the SDK's way). An `arguments` with
 * an own `constructor` key is not one (zod's record refuses it as not a plain object), nor one with `__proto__` (the
 * record drops it).
 */
export function isPlainToolCall(params: unknown): params is CallToolRequest["params"] {
  if (typeof params !== "object" || params === null || Array.isArray(params)) return false;
  for (const key of Object.keys(params)) if (key !== "name" && key !== "arguments") return false;
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== "string") return false;
  if (args === undefined) return true;
  return (
    typeof args === "object" &&
    args !== null &&
    !Array.isArray(args) &&
    !Object.hasOwn(args, "constructor") &&
    !Object.hasOwn(args, "__proto__")
  );
}

/**
 * One call in flight, and the `extra` its handler gets: the fields of Protocol._onrequest's `fullExtra` for a request
 * without a session, task or `_meta`, each an own enumerable property as there (so a spread copies them), `signal`
 * an accessor that makes the AbortController on first read (an object literal with a getter, or a controller made
 * per call, costs several microseconds: ./directCall.ts above).
 */
export class DirectCall implements ToolCallExtra {
  declare readonly signal: AbortSignal;
  readonly sessionId = undefined;
  readonly _meta = undefined;
  readonly sendNotification: ToolCallExtra["sendNotification"];
  readonly sendRequest: ToolCallExtra["sendRequest"];
  readonly authInfo: ToolCallExtra["authInfo"];
  readonly requestId: RequestId;
  readonly requestInfo: ToolCallExtra["requestInfo"];
  readonly taskId = undefined;
  readonly taskStore = undefined;
  readonly taskRequestedTtl = undefined;
  readonly closeSSEStream = undefined;
  readonly closeStandaloneSSEStream = undefined;
  #aborted = false;
  #controller?: AbortController;

  /** One descriptor for every call's `signal` (a shared getter keeps the objects' shape shared). */
  static readonly #SIGNAL: PropertyDescriptor = {
    get(this: DirectCall) {
      if (!this.#controller) {
        this.#controller = new AbortController();
        if (this.#aborted) this.#controller.abort();
      }
      return this.#controller.signal;
    },
    enumerable: true,
    configurable: true,
  };

  constructor(server: Server, requestId: RequestId, info: MessageExtraInfo | undefined) {
    Object.defineProperty(this, "signal", DirectCall.#SIGNAL);
    this.sendNotification = async (notification) => {
      if (this.#aborted) return;
      await server.notification(notification, { relatedRequestId: requestId });
    };
    this.sendRequest = async (request, resultSchema, options?: TaskRequestOptions) => {
      if (this.#aborted) throw new McpError(ErrorCode.ConnectionClosed, "Request was cancelled");
      return await server.request(request, resultSchema, { ...options, relatedRequestId: requestId });
    };
    this.authInfo = info?.authInfo;
    this.requestId = requestId;
    this.requestInfo = info?.requestInfo;
  }

  /** Whether the call was cancelled (then nothing is answered). */
  get aborted(): boolean {
    return this.#aborted;
  }

  /** Cancels the call: its signal, made now or later, is aborted. */
  abort(): void {
    this.#aborted = true;
    this.#controller?.abort();
  }
}

/**
 * The handler's result as Server's tools/call wrapper answers it: the CallToolResultSchema parse of it (its output,
 * a copy in the schema's key order), or McpError InvalidParams naming what is wrong.
 */
export function checkedToolResult(result: unknown): CallToolResult {
  const checked = safeParse(CallToolResultSchema, result);
  if (!checked.success) {
    const reason = checked.error instanceof Error ? checked.error.message : String(checked.error);
    throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call result: ${reason}`);
  }
  return checked.data as CallToolResult;
}

/**
 * The error answer Protocol._onrequest sends when a handler throws: the error's own code when it is a safe integer
 * (an McpError's), else InternalError; its message, else "Internal error"; its data when it has some. Throws (as the
 * SDK's does, which then answers nothing) for a thrown null or undefined.
 */
export function errorAnswer(id: RequestId, error: unknown): JSONRPCErrorResponse {
  const e = error as { code?: unknown; message?: string; data?: unknown };
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: Number.isSafeInteger(e.code) ? (e.code as number) : ErrorCode.InternalError,
      message: e.message ?? "Internal error",
      ...(e.data !== undefined && { data: e.data }),
    },
  };
}
