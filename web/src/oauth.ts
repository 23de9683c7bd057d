/**
 * MCP authorization in the page (docs/oauth.md): the approval page's request check and answer, and the settings'
 * connected clients, through the SDK's typed calls.
 */
import type { OAuthAuthorizationQuery, OAuthConnectedClients, OAuthAuthorizationRequest } from "../../client/sdk/index";
import { marketApi } from "./api";

export type AuthorizationDescription = OAuthAuthorizationRequest;
export type ConnectedClient = OAuthConnectedClients["clients"][number];

/** The parameters of an authorization request the page passes on, as /oauth/authorize received them. */
const PARAMS = [
  "response_type",
  "client_id",
  "redirect_uri",
  "code_challenge",
  "code_challenge_method",
  "scope",
  "state",
  "resource",
] as const;

export function authorizationParams(search: string): Record<string, string> {
  const query = new URLSearchParams(search);
  const params: Record<string, string> = {};
  for (const name of PARAMS) {
    const value = query.get(name);
    if (value !== null) params[name] = value;
  }
  return params;
}

export const describeAuthorization = (params: Record<string, string>) =>
  marketApi().describeOAuthAuthorization(params as OAuthAuthorizationQuery);

export const decideAuthorization = (
  params: Record<string, string>,
  decision: { approve: boolean; grantedScope?: string },
  sessionToken: string,
) => marketApi().decideOAuthAuthorization({ ...(params as OAuthAuthorizationQuery), ...decision }, sessionToken);

export const listConnectedClients = (sessionToken: string) => marketApi().listOAuthClients(sessionToken);

export const disconnectClient = (clientId: string, sessionToken: string) =>
  marketApi().revokeOAuthClient(clientId, sessionToken);
