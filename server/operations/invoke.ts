/**
 * One pipeline for every adapter: an operation called by REST, MCP (or any adapter to come) is checked and run by
 * `invoke`, so its refusal of hosted agents' tokens, its input checks, its posting buckets and its handler are the
 * same wherever the call arrives. The adapter resolves the caller (server/domain/callers.ts), maps its wire format to
 * the raw path, query and body, and maps the answer back.
 */
import { z } from "zod";
import { fail, type ErrorCode } from "../errors";
import type { SerializedData } from "../domain/readCache";
import type { AnyOperation, Caller } from "./operation";
import { checkJsonStrings, parseCache, parseOrThrow } from "./validation";
import { takePostingTokens } from "./postingLimits";
import { checkScope } from "./scopes";

const empty = z.object({}).passthrough();

/** The call as the adapter read it off its wire, not yet checked. */
export interface RawCall {
  params: unknown;
  query: unknown;
  /** The body (REST) or the tool arguments that are neither path nor query (MCP); undefined when none was sent. */
  body: unknown;
  /**
   * The JSON the adapter received, checked for lone surrogates and NUL characters before any schema, and the name its
   * messages give it (REST: the body; MCP: every argument).
   */
  strings: { root: unknown; location: string };
  /** Text identifying `query` (a repeated one is parsed once): REST's query string, MCP's read arguments. */
  queryKey?: string;
}

/** DELEGATION_DISABLED when a hosted agent's token calls an operation its owner's credential must call. */
export function checkAgentTokenAllowed(
  operation: Pick<AnyOperation, "refusesAgentTokens">,
  caller: Caller | undefined,
): void {
  if (caller?.via === "agent-token" && operation.refusesAgentTokens) {
    fail("DELEGATION_DISABLED", "a hosted agent's token cannot use this route: its owner's API key or session can");
  }
}

/**
 * The codes an operation can answer: the ones its declaration names, plus those the pipeline adds by itself (an input
 * schema means VALIDATION_ERROR, authentication UNAUTHORIZED, a posting family RATE_LIMIT, refusing hosted agents'
 * tokens DELEGATION_DISABLED), so declarations list only what their domain operation raises.
 */
export function operationErrorCodes(operation: AnyOperation): ErrorCode[] {
  const codes = new Set<ErrorCode>(operation.errors ?? []);
  if (operation.request?.body || operation.request?.query || operation.request?.params) codes.add("VALIDATION_ERROR");
  if (operation.auth !== "none") codes.add("UNAUTHORIZED");
  if (operation.posting) codes.add("RATE_LIMIT");
  if (operation.refusesAgentTokens) codes.add("DELEGATION_DISABLED");
  if (codes.size === 0) codes.add("VALIDATION_ERROR");
  return [...codes];
}

/** Each operation's parsed queries, by the adapter's query key. */
const parsedQueries = new WeakMap<AnyOperation, ReturnType<typeof parseCache>>();

/**
 * Runs `operation` for `caller`: the hosted-agent refusal, the string check, the body, query and path schemas (a
 * VALIDATION_ERROR naming the field), the posting buckets, then the handler, whose answer is the envelope's `data`.
 */
export async function invoke(
  operation: AnyOperation,
  caller: Caller | undefined,
  call: RawCall,
  scope: Pick<Parameters<AnyOperation["handler"]>[0], "ctx" | "deps" | "routes">,
): Promise<unknown | SerializedData> {
  checkAgentTokenAllowed(operation, caller);
  checkScope(operation, caller);
  if (call.strings.root !== undefined) checkJsonStrings(call.strings.root, call.strings.location);
  const body = operation.request?.body ? parseOrThrow(operation.request.body, call.body, "body") : undefined;
  const parseQuery = () => parseOrThrow(operation.request?.query ?? empty, call.query, "query");
  let query: unknown;
  if (call.queryKey === undefined) query = parseQuery();
  else {
    let cache = parsedQueries.get(operation);
    if (!cache) parsedQueries.set(operation, (cache = parseCache()));
    query = cache(call.queryKey, parseQuery);
  }
  const params = parseOrThrow(operation.request?.params ?? empty, call.params, "path");
  if (operation.posting && caller) {
    const { deps, ctx } = scope;
    const items = operation.posting.items(body);
    await takePostingTokens(ctx, deps.limits, deps.config.api.limits, caller.wallet, operation.posting.family, items);
  }
  return operation.handler({ body, query, params, caller, ...scope });
}
