/**
 * MCP authorization's operations of the owner (docs/oauth.md): the web app's approval page reads a client's request
 * and answers it signed in; the settings page lists the connected clients and disconnects them. The OAuth exchange
 * itself (metadata, registration, tokens, revocation) is HTTP in OAuth's formats: server/protocols/oauth.
 */
import { defineOperation, type AnyOperation, type Caller } from "./operation";
import { missingCredential } from "../domain/callers";
import { connectedClients, decideAuthorization, describeAuthorization, disconnectClient } from "../domain/oauth";
import {
  authorizationDecisionSchema,
  authorizationDescriptionSchema,
  authorizationQuerySchema,
  authorizationRedirectSchema,
  clientRevokeBodySchema,
  clientRevokedSchema,
  connectedClientsSchema,
} from "../domain/schemas/oauth";

const REST_ONLY = "the owner's approval and connected clients are the web app's, signed in with the wallet";

function ownerOf(caller: Caller | undefined): string {
  if (!caller) throw missingCredential(true);
  return caller.wallet;
}

const REQUEST_ERRORS = [
  "OAUTH_INVALID_CLIENT",
  "OAUTH_INVALID_REDIRECT_URI",
  "OAUTH_INVALID_REQUEST",
  "OAUTH_INVALID_SCOPE",
  "OAUTH_INVALID_TARGET",
  "OAUTH_UNSUPPORTED_RESPONSE_TYPE",
] as const;

export const describeAuthorizationRoute = defineOperation({
  mcp: { restOnly: REST_ONLY },
  method: "get",
  path: "/api/v1/oauth/authorization",
  summary: "Check an MCP client's authorization request: the client, its redirect and the scopes it asks for",
  description:
    "The approval page's first call, with the query /oauth/authorize received. OAUTH_INVALID_CLIENT and " +
    "OAUTH_INVALID_REDIRECT_URI are shown, never redirected; other refusals carry details.redirectTo.",
  tags: ["oauth"],
  auth: "none",
  request: { query: authorizationQuerySchema },
  response: authorizationDescriptionSchema,
  errors: REQUEST_ERRORS,
  handler: ({ query, deps }) => describeAuthorization(deps, query),
});

export const decideAuthorizationRoute = defineOperation({
  mcp: { restOnly: REST_ONLY },
  method: "post",
  path: "/api/v1/oauth/authorization",
  summary: "Approve or deny an MCP client's authorization request as the signed-in wallet",
  description:
    "Takes the sign-in session (or an API key) of the owner. Approved: a single-use code (5 minutes) for the " +
    "client's token endpoint call; either way the redirect back to the client.",
  tags: ["oauth"],
  auth: "required",
  acceptsSession: true,
  refusesAgentTokens: true,
  request: { body: authorizationDecisionSchema },
  response: authorizationRedirectSchema,
  errors: [...REQUEST_ERRORS, "UNAUTHORIZED", "DELEGATION_DISABLED"],
  handler: ({ body, caller, deps }) => decideAuthorization(deps, ownerOf(caller), body),
});

export const listOAuthClientsRoute = defineOperation({
  mcp: { restOnly: REST_ONLY },
  method: "get",
  path: "/api/v1/oauth/clients",
  summary: "The MCP clients connected to the wallet by OAuth, with their scopes",
  tags: ["oauth"],
  auth: "required",
  acceptsSession: true,
  refusesAgentTokens: true,
  response: connectedClientsSchema,
  errors: ["UNAUTHORIZED", "DELEGATION_DISABLED"],
  handler: ({ caller, deps }) => connectedClients(deps, ownerOf(caller)),
});

export const revokeOAuthClientRoute = defineOperation({
  mcp: { restOnly: REST_ONLY },
  method: "post",
  path: "/api/v1/oauth/clients/revoke",
  summary: "Disconnect an MCP client: every token it holds for the wallet ends (its next call is 401)",
  tags: ["oauth"],
  auth: "required",
  acceptsSession: true,
  refusesAgentTokens: true,
  request: { body: clientRevokeBodySchema },
  response: clientRevokedSchema,
  errors: ["UNAUTHORIZED", "VALIDATION_ERROR", "NOT_FOUND", "DELEGATION_DISABLED"],
  handler: ({ body, caller, deps }) => disconnectClient(deps, ownerOf(caller), body.clientId),
});

export const oauthRoutes: AnyOperation[] = [
  describeAuthorizationRoute,
  decideAuthorizationRoute,
  listOAuthClientsRoute,
  revokeOAuthClientRoute,
];
