/**
 * The remote MCP endpoint at /mcp: @modelcontextprotocol/sdk's Streamable HTTP transport, stateless (a server and a
 * transport per request, JSON responses, no session), mounted in Koa. Every request needs an API key (X-API-Key or
 * Authorization: Bearer), as on every authenticated route, or an OAuth access token of this server (docs/oauth.md):
 * 401 otherwise, whose WWW-Authenticate names the protected-resource metadata (RFC 9728 `resource_metadata`), except
 * for a refused API key (refuseCredential: 403, no challenge, so that a host shows why). The Host must name this
 * service (hostAllowed: DNS-rebinding protection), checked before authentication: 403 otherwise; a page of any origin
 * may call (CORS: ./cors.ts). Tool calls are limited per key (RATE_MCP_CALLS_PER_MINUTE, default 120 a minute) on
 * top of the per-IP window; a refused call is a tool error with RATE_LIMIT and retryAfterSeconds.
 */
import type { Context, Middleware } from "koa";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { Deps } from "../../domain/deps";
import { AppError } from "../../errors";
import { AuthFailure, callerFor, missingCredential, type RequestMemo } from "../../domain/callers";
import { presentedCredential } from "../http/credential";
import { API_VERSION, type Caller } from "../../operations/operation";
import { MCP_TOOLS, plain } from "./tools";
import { SerializedData } from "../../domain/readCache";
import { SharedPostTransport } from "./transport";
import type { ToolCallExtra, ToolCallHandler } from "./directCall";
import { takeStreamSlot } from "../../domain/events";
import { countRequests } from "../../operations/postingLimits";
import { oauthUrls } from "../../domain/oauth";
import { API_KEY_PATTERN } from "../../domain/credentials";

export const MCP_PATH = "/mcp";
const MINUTE_MS = 60_000;
const WWW_AUTHENTICATE = 'Bearer realm="mcp"';

/** Host names always answered: the loopback names (a DNS-rebinding attack presents the attacker's own name). */
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * DNS-rebinding protection: the Host must name this service (PUBLIC_URL's host, or a loopback name on any port). A
 * rebinding page's requests carry its own host name, whatever address it resolves to.
 *
 * An Origin, when a browser sends one, may be any origin (browser-based MCP hosts, docs/oauth.md): /mcp reads no
 * cookie, so a page of another origin acts only with a key or token its user gave it. It must still be an origin as
 * a browser serializes one (http or https, nothing after the port; or `null`, of a sandboxed or file page).
 */
export function hostAllowed(deps: Deps, host: string | undefined, origin: string | undefined): boolean {
  const publicUrl = new URL(deps.config.api.publicUrl);
  const ok = (hostPort: string) => {
    try {
      const url = new URL(`http://${hostPort}`);
      return hostPort === publicUrl.host || LOOPBACK.has(url.hostname);
    } catch {
      return false;
    }
  };
  if (!host || !ok(host)) return false;
  if (origin === undefined || origin === "null") return true;
  try {
    const url = new URL(origin);
    return /^https?:$/.test(url.protocol) && url.origin === origin;
  } catch {
    return false;
  }
}

/**
 * hostAllowed for one app, remembering its answers: a client sends the same Host and Origin on every call, and the
 * URL parses cost 2% of a browse_tasks call (bench:api). At most HOST_ANSWERS pairs (emptied when full).
 */
function hostCheck(deps: Deps) {
  // Host, then Origin (undefined: none sent) -> the answer; looked up without building a key for each request.
  const answers = new Map<string | undefined, Map<string | undefined, boolean>>();
  let size = 0;
  return (host: string | undefined, origin: string | undefined): boolean => {
    let byOrigin = answers.get(host);
    let allowed = byOrigin?.get(origin);
    if (allowed === undefined) {
      allowed = hostAllowed(deps, host, origin);
      if (size >= HOST_ANSWERS) {
        answers.clear();
        size = 0;
        byOrigin = undefined;
      }
      if (!byOrigin) answers.set(host, (byOrigin = new Map()));
      byOrigin.set(origin, allowed);
      size++;
    }
    return allowed;
  };
}
const HOST_ANSWERS = 256;

function toolError(error: AppError): CallToolResult {
  const payload = { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) };
  return {
    isError: true,
    content: [{ type: "text", text: `${error.code}: ${error.message}` }],
    structuredContent: { error: payload },
  };
}

/**
 * The tool result of each pre-serialized page and its JSON, built once (a hot page is answered many times) and checked
 * once with CallToolResultSchema, found by the page's text: also how the transport's encoder finds it (the SDK's
 * dispatch hands the transport a validated copy of the result object, a direct call the object itself). At most
 * PAGE_RESULTS entries (emptied when full).
 */
const pageResultsByText = new Map<string, { result: CallToolResult; json: Buffer }>();
const PAGE_RESULTS = 64;

function pageResult(page: SerializedData): CallToolResult {
  let entry = pageResultsByText.get(page.json);
  if (!entry) {
    const data = plain(page) as Record<string, unknown>;
    const result: CallToolResult = { content: [{ type: "text", text: page.json }], structuredContent: data };
    CallToolResultSchema.parse(result);
    entry = {
      result,
      json: Buffer.from(
        `{"content":[{"type":"text","text":${JSON.stringify(page.json)}}],"structuredContent":${page.json}}`,
      ),
    };
    if (pageResultsByText.size >= PAGE_RESULTS) pageResultsByText.clear();
    pageResultsByText.set(page.json, entry);
  }
  return entry.result;
}

/**
 * The JSON of a page's tool result, encoded (SharedPostTransport's encoder): found by its text, used only when the
 * result is that page's (the same object, or one with the same keys, one text block and the same structured values).
 * Never throws, whatever the result.
 */
function encodePageResult(result: unknown): Buffer | undefined {
  const r = result as Partial<CallToolResult> | null | undefined;
  const content = r?.content;
  const block = Array.isArray(content) && content.length === 1 ? (content[0] as unknown) : undefined;
  const text =
    typeof block === "object" && block !== null && (block as { type?: unknown }).type === "text"
      ? (block as { text?: unknown }).text
      : undefined;
  const entry = typeof text === "string" ? pageResultsByText.get(text) : undefined;
  if (!entry || !r) return undefined;
  if (entry.result === r) return entry.json;
  const structured = r.structuredContent;
  if (Object.keys(block!).length !== 2 || Object.keys(r).length !== 2) return undefined;
  if (typeof structured !== "object" || structured === null) return undefined;
  const mine = entry.result.structuredContent!;
  const keys = Object.keys(structured);
  if (keys.length !== Object.keys(mine).length || keys.some((k) => structured[k] !== mine[k])) return undefined;
  return entry.json;
}

function toolResult(answer: unknown): CallToolResult {
  const data = plain(answer);
  if (answer instanceof SerializedData && data !== null && typeof data === "object" && !Array.isArray(data)) {
    return pageResult(answer);
  }
  const structured = data !== null && typeof data === "object" && !Array.isArray(data) ? data : { result: data };
  return {
    // A pre-serialized page (SerializedData) is already the JSON text of its data.
    content: [{ type: "text", text: answer instanceof SerializedData ? answer.json : JSON.stringify(data) }],
    structuredContent: structured as Record<string, unknown>,
  };
}

/**
 * One JSON Schema validator for every request's server: the SDK's default builds a new Ajv per Server (a new server
 * per stateless request), which costs more than the whole tool call (docs/performance.md).
 */
const sharedValidator = new AjvJsonSchemaValidator();

/** What a request's handlers need, passed through the transport's authInfo (servers are reused across requests). */
interface RequestScope {
  caller: Caller;
  ctx: Context;
}

function scopeOf(extra: { authInfo?: { extra?: Record<string, unknown> } }): RequestScope {
  return extra.authInfo!.extra!.scope as RequestScope;
}

function mcpServer(deps: Deps, callTool: ToolCallHandler): Server {
  const server = new Server(
    { name: "escrow-task-marketplace", version: API_VERSION },
    {
      jsonSchemaValidator: sharedValidator,
      capabilities: { tools: {} },
      instructions:
        "Escrow task marketplace. Tools that move money answer unsigned transactions: check, sign and send them " +
        "with your own wallet, then call the next tool. Errors carry the REST API's stable error.code.",
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: MCP_TOOLS.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema as { type: "object" },
      ...(tool.outputSchema ? { outputSchema: tool.outputSchema as { type: "object" } } : {}),
      annotations: tool.annotations,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, callTool);
  return server;
}

/** The tools/call handler: the caller's per-key limit, then the tool, its answer or refusal as a tool result. */
function toolCallHandler(deps: Deps): ToolCallHandler {
  const tools = new Map(MCP_TOOLS.map((tool) => [tool.name, tool]));
  return async (request, extra: ToolCallExtra) => {
    const { caller, ctx } = scopeOf(extra);
    const tool = tools.get(request.params.name);
    if (!tool) {
      return toolError(new AppError({ code: "NOT_FOUND", message: `no tool named ${request.params.name}` }));
    }
    const limit = deps.config.api.limits.mcpCallsPerMinute;
    const hit = await deps.limits.hitWindow(`mcp:${caller.keyId ?? caller.wallet}`, MINUTE_MS);
    if (hit.count > limit) {
      const retryAfterSeconds = Math.max(1, Math.ceil(hit.resetInMs / 1000));
      return toolError(
        new AppError({
          code: "RATE_LIMIT",
          message: `more than ${limit} tool calls this minute with this key: retry in ${retryAfterSeconds} s`,
          details: { retryAfterSeconds },
        }),
      );
    }
    try {
      return toolResult(await tool.run({ args: request.params.arguments ?? {}, caller, deps, ctx }));
    } catch (error) {
      if (error instanceof AppError) return toolError(error);
      deps.logger.error("mcp tool failed", { tool: tool.name, error });
      return toolError(new AppError({ code: "INTERNAL_ERROR", message: "internal error" }));
    }
  };
}

/**
 * For GET, DELETE and other methods (rare: no session, so nothing to stream or end): the SDK's stateless transport,
 * per request as the SDK requires, with servers built once and reused, one request at a time each (a server costs
 * more to build than a tool call).
 */
function serverPool(deps: Deps, callTool: ToolCallHandler, size = 32) {
  const idle: Server[] = [];
  return {
    take: () => idle.pop() ?? mcpServer(deps, callTool),
    give: (server: Server) => {
      if (idle.length < size) idle.push(server);
    },
  };
}

export function mcpEndpoint(deps: Deps): Middleware {
  const callTool = toolCallHandler(deps);
  const pool = serverPool(deps, callTool);
  const allowedHost = hostCheck(deps);
  // POST (every call): one server for all requests, over a transport that answers each POST as the SDK's stateless
  // transport would (./transport.ts: why).
  // Each item of a batch counts against the per-IP (or hosted agent's) window, as a request of its own would.
  const shared = new SharedPostTransport(encodePageResult, (authInfo, extraItems) => {
    const { caller, ctx } = authInfo.extra!.scope as RequestScope;
    return countRequests(deps.limits, deps.config.api.limits, ctx, caller.agentId, extraItems);
  });
  void shared.attach(mcpServer(deps, callTool), callTool);
  return async (ctx, next) => {
    if (ctx.path !== MCP_PATH) return next();
    if (!allowedHost(ctx.get("host") || undefined, ctx.get("origin") || undefined)) {
      ctx.status = 403;
      ctx.body = {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32000, message: "Host is not this service's, or Origin is not an http(s) origin" },
      };
      return;
    }
    let caller: Caller | undefined;
    const credential = presentedCredential(ctx);
    try {
      caller = await callerFor(deps, credential, {
        acceptsSession: false,
        acceptsOAuth: true,
        memo: ctx.state as RequestMemo,
      });
    } catch (error) {
      if (error instanceof AuthFailure) {
        const apiKey = ctx.get("x-api-key").trim() !== "" || API_KEY_PATTERN.test(credential!);
        return refuseCredential(ctx, deps, credential, error.message, apiKey);
      }
      throw error;
    }
    if (!caller) return refuseCredential(ctx, deps, undefined, missingCredential(false).message, false);
    const scope: RequestScope = { caller, ctx };
    const authInfo = {
      token: caller.via,
      clientId: caller.oauthClientId ?? caller.wallet,
      scopes: [...(caller.scopes ?? [])],
      extra: { scope },
    };
    if (ctx.method === "POST") {
      ctx.respond = false; // the transport writes the response itself
      await shared.handlePost(ctx.req, ctx.res, authInfo);
      return;
    }
    // A GET is a stream: capped and ended like event streams, and never open past the idle timeout (a stateless
    // server sends nothing on it).
    const releaseStream =
      ctx.method === "GET"
        ? takeStreamSlot(deps, caller, ctx.ip, "mcp", () => ctx.res.end(), deps.config.api.timeouts.idleMs)
        : () => undefined;
    ctx.respond = false;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      // Host and Origin were checked above (hostAllowed): the transport's exact-match lists cannot say "any port" or
      // "any origin".
      enableDnsRebindingProtection: false,
    });
    const server = pool.take();
    let released = false;
    ctx.res.on("close", () => {
      releaseStream();
      if (released) return;
      released = true;
      void transport.close().finally(() => pool.give(server));
    });
    (ctx.req as typeof ctx.req & { auth?: unknown }).auth = authInfo;
    await server.connect(transport);
    await transport.handleRequest(ctx.req, ctx.res);
  };
}

/**
 * What a person reads when their MCP host cannot connect: which key was refused (the header and the key's first
 * characters, never the whole key) or that none was sent, and how to get one; for a refused API key, that removing it
 * lets a host sign in with OAuth instead.
 */
export function credentialMessage(
  publicUrl: string,
  credential: string | undefined,
  reason: string,
  apiKey = false,
): string {
  const how =
    `Get an API key: sign in with your wallet at ${publicUrl}/settings (Settings and API keys), or run ` +
    "`market login`; on a devnet each account's apiKey is in .devnet/accounts.json. Then send it as the header " +
    "X-API-Key: <key> (or Authorization: Bearer <key>). " +
    (apiKey
      ? "Or remove the key from the host's configuration: a host that signs in with OAuth then finds this server's " +
        "authorization in the 401's WWW-Authenticate resource_metadata."
      : "MCP hosts that sign in with OAuth find this server's authorization in WWW-Authenticate's resource_metadata.");
  const which = credential
    ? `The marketplace API key sent (${credential.slice(0, 7)}...) was refused: ${reason}.`
    : "No marketplace API key was sent: this MCP server needs one.";
  return `UNAUTHORIZED: ${which} ${how}`;
}

/**
 * The refusal of /mcp as a JSON-RPC error (what an MCP client shows: the SDK's client puts the body in its error),
 * data.code UNAUTHORIZED.
 *
 * No credential, or a refused bearer token (an OAuth access token, or anything not an API key): 401 with the same
 * message in WWW-Authenticate's error_description (RFC 6750), for hosts that only read the challenge, and the
 * protected-resource metadata's URL (RFC 9728 resource_metadata), where an OAuth client starts (or refreshes).
 *
 * A refused API key (`apiKey`: any X-API-Key, or an sk_ key as a bearer): 403 without a challenge (RFC 9110 15.5.4:
 * the credentials sent are not enough; do not repeat them). A person configured that key, and OAuth hosts start OAuth
 * on any 401, with or without a challenge (the MCP Inspector CLI 2.12 then says only that interactive OAuth needs a
 * TTY), hiding the message; on a 403 they show the body. docs/oauth.md, "API keys and OAuth".
 */
function refuseCredential(
  ctx: Context,
  deps: Deps,
  credential: string | undefined,
  reason: string,
  apiKey: boolean,
): void {
  const message = credentialMessage(deps.config.api.publicUrl, credential, reason, apiKey);
  ctx.body = { jsonrpc: "2.0", id: null, error: { code: -32001, message, data: { code: "UNAUTHORIZED" } } };
  if (apiKey) {
    ctx.status = 403;
    return;
  }
  const description = message.replace(/[^\x20-\x7e]|["\\]/g, "'");
  ctx.status = 401;
  ctx.set(
    "WWW-Authenticate",
    `${WWW_AUTHENTICATE}${credential ? ', error="invalid_token"' : ""}, error_description="${description}", ` +
      `resource_metadata="${oauthUrls(deps).resourceMetadata}"`,
  );
}
