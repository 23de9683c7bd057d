/**
 * An MCP host's OAuth state as the MCP SDK's client keeps it (OAuthClientProvider), in memory: its registration, its
 * tokens and the PKCE verifier, and every authorization URL the SDK asked it to open. Each test's host names itself
 * (`redirectUrl`, `clientMetadata`) in a subclass.
 */
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";

export abstract class MemoryOAuthHost implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  /** Every authorization URL the SDK asked the host to open. */
  readonly authorizationUrls: URL[] = [];

  abstract get redirectUrl(): string;
  abstract get clientMetadata(): OAuthClientMetadata;

  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url);
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}
