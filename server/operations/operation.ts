/**
 * A route is declared once: its zod schemas validate the request, type the handler, and generate the OpenAPI
 * document. Handlers are thin: they call the domain and return the `data` of the success envelope.
 */
import type { Context } from "koa";
import type { ZodTypeAny, z } from "zod";
import type { Deps } from "../domain/deps";
import { fail, type ErrorCode } from "../errors";
import type { SerializedData } from "../domain/readCache";

export type AuthMode = "none" | "optional" | "required";
/** Posting families with their own token buckets (spec: uploads, task builds, task listings). */
export type PostingFamily = "uploads" | "builds" | "listings";

export interface Caller {
  /** The wallet the API key acts as (lower-case); a hosted agent's token acts as the agent's own wallet. */
  wallet: string;
  keyId: number | null;
  /** How the caller authenticated. */
  via: "api-key" | "session" | "agent-token";
  /** With a hosted agent's token: the agent (its requests count against the agent's own window). */
  agentId?: string;
}

export interface RouteInput<B extends ZodTypeAny, Q extends ZodTypeAny, P extends ZodTypeAny> {
  body: z.output<B>;
  query: z.output<Q>;
  params: z.output<P>;
  caller: Caller | undefined;
  ctx: Context;
  deps: Deps;
  /** Every route the app serves (the OpenAPI document describes exactly these). */
  routes: readonly AnyRoute[];
}

export interface RouteDefinition<
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
   * compile). VALIDATION_ERROR, UNAUTHORIZED and RATE_LIMIT are added by the frame (see openapi.ts routeErrorCodes).
   */
  errors?: readonly ErrorCode[];
  handler(input: RouteInput<B, Q, P>): Promise<z.input<R> | SerializedData> | z.input<R> | SerializedData;
}

export function defineRoute<B extends ZodTypeAny, Q extends ZodTypeAny, P extends ZodTypeAny, R extends ZodTypeAny>(
  route: RouteDefinition<B, Q, P, R>,
): RouteDefinition<B, Q, P, R> {
  return route;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteDefinition<any, any, any, any>;

/** DELEGATION_DISABLED when a hosted agent's token calls a route its owner's credential must call (REST and MCP). */
export function checkAgentTokenAllowed(route: Pick<AnyRoute, "refusesAgentTokens">, caller: Caller | undefined): void {
  if (caller?.via === "agent-token" && route.refusesAgentTokens) {
    fail("DELEGATION_DISABLED", "a hosted agent's token cannot use this route: its owner's API key or session can");
  }
}
