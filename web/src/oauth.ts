/**
 * MCP authorization in the page (docs/oauth.md): the approval page's request check and answer, and the settings'
 * connected clients, through the SDK client's generic request (these operations are the web app's own).
 */
import { marketApi } from "./api";

export interface AuthorizationDescription {
  client: { clientId: string; name: string | null; uri: string | null; registration: "dynamic" | "metadata-document" };
  redirectUri: string;
  resource: string;
  scopes: { name: string; description: string }[];
}

export interface ConnectedClient {
  clientId: string;
  name: string | null;
  uri: string | null;
  scopes: string[];
  connectedAt: string;
  lastUsedAt: string | null;
}

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
  marketApi().request<AuthorizationDescription>("GET", "/api/v1/oauth/authorization", { query: params });

export const decideAuthorization = (
  params: Record<string, string>,
  decision: { approve: boolean; grantedScope?: string },
  sessionToken: string,
) =>
  marketApi().request<{ redirectTo: string }>("POST", "/api/v1/oauth/authorization", {
    body: { ...params, ...decision },
    bearer: sessionToken,
  });

export const listConnectedClients = (sessionToken: string) =>
  marketApi().request<{ clients: ConnectedClient[] }>("GET", "/api/v1/oauth/clients", { bearer: sessionToken });

export const disconnectClient = (clientId: string, sessionToken: string) =>
  marketApi().request<{ revoked: true }>("POST", "/api/v1/oauth/clients/revoke", {
    body: { clientId },
    bearer: sessionToken,
  });
