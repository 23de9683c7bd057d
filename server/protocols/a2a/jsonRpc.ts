/**
 * POST /a2a/v1: A2A over JSON-RPC 2.0, unauthenticated, mounted in Koa (no Express). The envelope is checked here
 * (parse error -32700, invalid request -32600, method not found -32601, batches, notifications get no answer); each
 * request is then dispatched by its method's name to @a2a-js/sdk's transport handler for its protocol version:
 * A2A 1.0 names (SendMessage, GetTask, ListTasks, CancelTask, ...) to JsonRpcTransportHandler, v0.3 names
 * (message/send, tasks/get, tasks/cancel, ...) to the SDK's v0.3 compatibility handler. `tasks/list`, which the
 * marketplace spec names and v0.3 lacks, answers ListTasks in v0.3 shapes. Answers are HTTP 200 with a JSON-RPC
 * body (204 when every request was a notification); never a 5xx for a client mistake.
 */
import type { Context, Middleware } from "koa";
import { TaskState, type Task } from "@a2a-js/sdk";
import {
  JsonRpcTransportHandler,
  UnauthenticatedUser,
  defaultServerCallContextBuilder,
  type ServerCallContext,
} from "@a2a-js/sdk/server";
import { A2AError } from "@a2a-js/sdk/errors";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import { isLegacyJsonRpcMethod, isV1JsonRpcMethod } from "@a2a-js/sdk/compat/v0_3";
import type { Deps } from "../../domain/deps";
import type { Logger } from "../../logger";
import { AppError } from "../../errors";
import { readJsonBody } from "../http/body";
import { MarketplaceA2AHandler } from "./requestHandler";
import { stateNamed, V03_STATE_NAME } from "./states";
import { invalidParams } from "./params";

export const A2A_PATH = "/a2a/v1";
/** Largest JSON-RPC body (a batch included). */
export const A2A_BODY_LIMIT_BYTES = 256 * 1024;
/** Most requests in one batch. */
export const A2A_MAX_BATCH = 20;

export const JSON_RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  UNSUPPORTED_OPERATION: -32004,
} as const;

type Id = string | number | null;
interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}
type Reply = {
  jsonrpc: "2.0";
  id: Id;
  result?: unknown;
  error?: JsonRpcError;
  /**
   * `result`, serialized: its opening (small, built per request) and the rest, encoded once per page. A page is tens
   * of kilobytes: joined as a string, it was measured and encoded again for every answer (a fifth of a tasks/list
   * call's CPU under load, bench:api).
   */
  resultJson?: { head: string; tail: Buffer };
};

const errorReply = (id: Id, code: number, message: string): Reply => ({ jsonrpc: "2.0", id, error: { code, message } });

const STREAMING_METHODS = new Set(["message/stream", "tasks/resubscribe", "SendStreamingMessage", "SubscribeToTask"]);

/** A v0.3-shaped task (tasks/list answers), from the 1.0 Task the handler built. */
function v03Task(task: Task) {
  return {
    kind: "task",
    id: task.id,
    contextId: task.contextId,
    status: {
      state: V03_STATE_NAME[task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED] ?? "unknown",
      timestamp: task.status?.timestamp,
    },
    metadata: task.metadata,
  };
}

export function a2aJsonRpc(deps: Deps, logger: Logger): Middleware {
  const handler = new MarketplaceA2AHandler(deps);
  const v1 = new JsonRpcTransportHandler(handler);
  const v03 = new LegacyJsonRpcTransportHandler(handler);
  /**
   * The end of a tasks/list result for each page of A2A tasks, encoded: `,"tasks":[...v0.3 tasks]}` (the handler hands
   * out the same array while the page is unchanged).
   */
  const v03Pages = new WeakMap<readonly Task[], Buffer>();

  const context = (ctx: Context, requestedVersion: string): ServerCallContext =>
    defaultServerCallContextBuilder({
      extensions: undefined,
      user: new UnauthenticatedUser(),
      headers: ctx.headers as Record<string, string>,
      requestedVersion,
    });

  /** One request of the body (or of a batch): its reply, or null for a notification. */
  async function dispatch(ctx: Context, request: unknown): Promise<Reply | null> {
    if (typeof request !== "object" || request === null || Array.isArray(request)) {
      return errorReply(null, JSON_RPC.INVALID_REQUEST, "a JSON-RPC request must be an object");
    }
    const r = request as Record<string, unknown>;
    const idValid =
      !("id" in r) || r.id === null || typeof r.id === "string" || (typeof r.id === "number" && Number.isFinite(r.id));
    const id: Id = idValid && "id" in r ? (r.id as Id) : null;
    if (r.jsonrpc !== "2.0") return errorReply(id, JSON_RPC.INVALID_REQUEST, 'jsonrpc must be "2.0"');
    if (!idValid) return errorReply(null, JSON_RPC.INVALID_REQUEST, "id must be a string, a number or null");
    if (typeof r.method !== "string" || r.method === "") {
      return errorReply(id, JSON_RPC.INVALID_REQUEST, "method must be a non-empty string");
    }
    if ("params" in r && (typeof r.params !== "object" || r.params === null)) {
      return errorReply(id, JSON_RPC.INVALID_REQUEST, "params must be an object or an array");
    }
    const notification = !("id" in r);
    const reply = await answer(ctx, r, id);
    return notification ? null : reply;
  }

  async function answer(ctx: Context, r: Record<string, unknown>, id: Id): Promise<Reply> {
    const method = r.method as string;
    // The SDK's method tables are plain objects: `toString`, `constructor`, `__proto__` would pass their lookups.
    if (method in Object.prototype) return errorReply(id, JSON_RPC.METHOD_NOT_FOUND, `method ${method} not found`);
    const invalid = invalidParams(method, r.params ?? {});
    if (invalid !== undefined) return errorReply(id, JSON_RPC.INVALID_PARAMS, invalid);
    try {
      if (STREAMING_METHODS.has(method)) {
        return errorReply(id, JSON_RPC.UNSUPPORTED_OPERATION, `${method}: streaming is not supported`);
      }
      if (method === "tasks/list") {
        const params = (r.params ?? {}) as Record<string, unknown>;
        if (Array.isArray(params)) return errorReply(id, JSON_RPC.INVALID_PARAMS, "params must be an object");
        const list = await handler.listTasks({
          tenant: "",
          contextId: typeof params.contextId === "string" ? params.contextId : "",
          status: stateNamed(params.status),
          pageSize: params.pageSize === undefined ? undefined : (params.pageSize as number),
          pageToken: params.pageToken === undefined ? "" : String(params.pageToken),
          statusTimestampAfter:
            typeof params.statusTimestampAfter === "string" ? params.statusTimestampAfter : undefined,
        });
        let tail = v03Pages.get(list.tasks);
        if (tail === undefined) {
          tail = Buffer.from(`,"tasks":${JSON.stringify(list.tasks.map(v03Task))}}`);
          v03Pages.set(list.tasks, tail);
        }
        const { tasks: _tasks, ...rest } = list;
        return { jsonrpc: "2.0", id, resultJson: { head: JSON.stringify(rest).slice(0, -1), tail } };
      }
      let out;
      if (isV1JsonRpcMethod(method)) out = await v1.handle({ ...r, id }, context(ctx, "1.0"));
      else if (isLegacyJsonRpcMethod(method)) out = await v03.handle({ ...r, id }, context(ctx, "0.3"));
      else return errorReply(id, JSON_RPC.METHOD_NOT_FOUND, `method ${method} not found`);
      return out as Reply;
    } catch (error) {
      if (error instanceof A2AError)
        return { jsonrpc: "2.0", id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) };
      logger.error("a2a request failed", { method, error });
      return errorReply(id, JSON_RPC.INTERNAL_ERROR, "internal error");
    }
  }

  return async (ctx, next) => {
    if (ctx.path !== A2A_PATH) return next();
    if (ctx.method !== "POST") {
      ctx.set("Allow", "POST");
      throw new AppError({ code: "METHOD_NOT_ALLOWED", message: `${A2A_PATH} takes POST (JSON-RPC 2.0)` });
    }
    let body: unknown;
    try {
      body = await readJsonBody(ctx, A2A_BODY_LIMIT_BYTES);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const code = error.code === "INVALID_JSON" ? JSON_RPC.PARSE_ERROR : JSON_RPC.INVALID_REQUEST;
      return send(ctx, errorReply(null, code, error.message));
    }
    if (body === undefined)
      return send(ctx, errorReply(null, JSON_RPC.INVALID_REQUEST, "the body must be a JSON-RPC request"));
    if (Array.isArray(body)) {
      if (body.length === 0) return send(ctx, errorReply(null, JSON_RPC.INVALID_REQUEST, "an empty batch"));
      if (body.length > A2A_MAX_BATCH) {
        return send(ctx, errorReply(null, JSON_RPC.INVALID_REQUEST, `a batch holds at most ${A2A_MAX_BATCH} requests`));
      }
      const replies: Reply[] = [];
      for (const request of body) {
        const reply = await dispatch(ctx, request);
        if (reply) replies.push(reply);
      }
      return send(ctx, replies.length > 0 ? replies : undefined);
    }
    return send(ctx, (await dispatch(ctx, body)) ?? undefined);
  };
}

function send(ctx: Context, body: Reply | Reply[] | undefined): void {
  if (body === undefined) {
    ctx.status = 204;
    ctx.body = null;
    return;
  }
  ctx.status = 200;
  ctx.type = "application/json";
  // A reply whose result is pre-serialized: its opening, then the page's encoded end (resultJson.tail), then "}".
  const opening = (id: Id, head: string) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${head}`;
  if (!Array.isArray(body)) {
    // One reply (every client's usual call): sent as bytes, a page's encoded part copied, not encoded again.
    const serialized = body.resultJson;
    ctx.body =
      serialized === undefined
        ? JSON.stringify(body)
        : Buffer.concat([Buffer.from(opening(body.id, serialized.head)), serialized.tail, CLOSE_REPLY]);
    return;
  }
  const serialize = (reply: Reply) =>
    reply.resultJson === undefined
      ? JSON.stringify(reply)
      : `${opening(reply.id, reply.resultJson.head)}${reply.resultJson.tail.toString()}}`;
  ctx.body = `[${body.map(serialize).join(",")}]`;
}

const CLOSE_REPLY = Buffer.from("}");
