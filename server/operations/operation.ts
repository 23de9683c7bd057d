/**
 * An operation is declared once: its zod schemas validate the input (whichever adapter carries it), type the
 * handler, and generate the OpenAPI document and the MCP tool's input schema; its auth, posting family and error codes
 * hold on every adapter, because every adapter runs it through `invoke` (invoke.ts). Handlers are thin: they call
 * the domain and return the `data` of the success envelope.
 */
import type { Context } from "koa";
import type { ZodTypeAny, z } from "zod";
import type { Deps } from "../domain/deps";
import type { ErrorCode } from "../errors";
import type { SerializedData } from "../domain/readCache";
import type { Caller } from "../domain/callers";

export type { Caller };

/** The version of the operation catalog, as REST (OpenAPI) and MCP (server info) announce it. */
export const API_VERSION = "1.1.0";

export type AuthMode = "none" | "optional" | "required";
/** Posting families with their own token buckets (spec: uploads, task builds, task listings). */
export type PostingFamily = "uploads" | "builds" | "listings";

/**
 * Where an operation is offered besides REST: as the MCP tool `tool` (its description defaults to the summary and
 * the REST method and path), or REST only, with the reason.
 */
export type McpExposure = { tool: string; description?: string } | { restOnly: string };

export interface OperationInput<B extends ZodTypeAny, Q extends ZodTypeAny, P extends ZodTypeAny> {
  body: z.output<B>;
  query: z.output<Q>;
  params: z.output<P>;
  caller: Caller | undefined;
  /** The HTTP request carrying the call (on MCP, the /mcp request: its address counts against the posting buckets). */
  ctx: Context;
  deps: Deps;
  /** Every route the app serves (the OpenAPI document describes exactly these). */
  routes: readonly AnyOperation[];
}

export interface OperationDefinition<
  B extends ZodTypeAny = ZodTypeAny,
  Q extends ZodTypeAny = ZodTypeAny,
  P extends ZodTypeAny = ZodTypeAny,
  R extends ZodTypeAny = ZodTypeAny,
> {
  method: "get" | "post" | "patch" | "delete";
  /** Koa-style path (`/api/v1/tasks/:id`). */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  /** The MCP tool offering this operation, or why it is REST only. */
  mcp: McpExposure;
  auth: AuthMode;
  /** Also accept a sign-in session (accounts routes); API-key routes never take sessions. */
  acceptsSession?: boolean;
  /**
   * A hosted agent's token may not use this route (403 DELEGATION_DISABLED): API-key management, webhooks, the owner's
   * hosted-agent routes.
   */
  refusesAgentTokens?: boolean;
  /** Token-bucket family for posting routes; `items` counts the units of one call (bulk calls count each item). */
  posting?: { family: PostingFamily; items: (body: z.output<B>) => number };
  /** Largest request body in bytes (default: the app's JSON limit). */
  bodyLimit?: number;
  request?: { body?: B; query?: Q; params?: P };
  /** Schema of `data` in the success envelope. */
  response: R;
  successStatus?: 200 | 201;
  /** The handler answers raw bytes itself (sets ctx.body) instead of the envelope: documented as this media type. */
  rawResponse?: { contentType: string; description: string };
  /**
   * Error codes this route's operation can answer, for the OpenAPI description (typed: a misspelt code does not
   * compile). VALIDATION_ERROR, UNAUTHORIZED and RATE_LIMIT are added by the pipeline (invoke.ts operationErrorCodes).
   */
  errors?: readonly ErrorCode[];
  handler(input: OperationInput<B, Q, P>): Promise<z.input<R> | SerializedData> | z.input<R> | SerializedData;
}

export function defineOperation<B extends ZodTypeAny, Q extends ZodTypeAny, P extends ZodTypeAny, R extends ZodTypeAny>(
  route: OperationDefinition<B, Q, P, R>,
): OperationDefinition<B, Q, P, R> {
  return route;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOperation = OperationDefinition<any, any, any, any>;
