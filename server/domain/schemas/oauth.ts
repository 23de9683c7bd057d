/** Schemas of the MCP authorization's operations (docs/oauth.md): the approval page's request and its answers. */
import { z } from "./common";

const text = (max: number, description: string) => z.string().max(max).openapi({ description });

/** The authorization request's parameters, as the client put them on /oauth/authorize (RFC 6749, 7636, 8707). */
export const authorizationParamsFields = {
  response_type: text(20, "Must be code").optional(),
  client_id: text(500, "The client: a registered client_id (mcp_...) or the https URL of its metadata document"),
  redirect_uri: text(2000, "Where the answer goes: one of the client's redirect URIs").optional(),
  code_challenge: text(128, "PKCE: base64url of the SHA-256 of the code verifier").optional(),
  code_challenge_method: text(10, "PKCE method: must be S256").optional(),
  scope: text(200, "Space-separated scopes asked for: market:read, market:post, market:work").optional(),
  state: text(1000, "The client's opaque value, returned with the answer").optional(),
  resource: text(500, "RFC 8707 resource indicator: must be this service's /mcp URL").optional(),
};

export const authorizationQuerySchema = z.object(authorizationParamsFields).openapi("OAuthAuthorizationQuery");

export const authorizationDecisionSchema = z
  .object({
    ...authorizationParamsFields,
    approve: z.boolean().openapi({ description: "true: issue a code; false: answer access_denied" }),
    grantedScope: text(200, "The scopes kept (a subset of those asked for); absent: all asked for").optional(),
  })
  .strict()
  .openapi("OAuthAuthorizationDecision");

export const authorizationDescriptionSchema = z
  .object({
    client: z.object({
      clientId: z.string(),
      name: z.string().nullable(),
      uri: z.string().nullable(),
      registration: z.enum(["dynamic", "metadata-document"]),
    }),
    redirectUri: z.string(),
    resource: z.string(),
    scopes: z.array(z.object({ name: z.string(), description: z.string() })),
  })
  .openapi("OAuthAuthorizationRequest");

export const authorizationRedirectSchema = z
  .object({
    redirectTo: z.string().openapi({ description: "The client's redirect URI with code (or error), state, iss" }),
  })
  .openapi("OAuthAuthorizationAnswer");

export const connectedClientsSchema = z
  .object({
    clients: z.array(
      z.object({
        clientId: z.string(),
        name: z.string().nullable(),
        uri: z.string().nullable(),
        scopes: z.array(z.string()),
        connectedAt: z.string(),
        lastUsedAt: z.string().nullable(),
      }),
    ),
  })
  .openapi("OAuthConnectedClients");

export const clientRevokeBodySchema = z
  .object({ clientId: text(500, "The connected client to disconnect") })
  .strict()
  .openapi("OAuthClientRevokeRequest");

export const clientRevokedSchema = z
  .object({ revoked: z.literal(true), clientId: z.string() })
  .openapi("OAuthClientRevoked");
