/**
 * The API client of the page: the SDK's `MarketApi` (client/sdk), typed by the service's own schemas, against the
 * service that served the page. Failures are the SDK's `MarketError`s carrying the stable `code` (branch on it,
 * never on the message).
 */
import { MarketApi, MarketError } from "../../client/sdk/index";

export interface Credentials {
  /** An API key (sk_...): every route except sign-in. */
  apiKey?: string;
  /** A sign-in session (ses_...): the API key routes only. */
  sessionToken?: string;
}

/** The browser's fetch, called unbound (a fetch called as another object's method throws "Illegal invocation"). */
const browserFetch: typeof fetch = (input, init) => fetch(input, init);

/** The SDK's client for this page's service, acting with `credentials`' API key when given. */
export function marketApi(credentials?: Credentials | null): MarketApi {
  return new MarketApi({ baseUrl: window.location.origin, apiKey: credentials?.apiKey, fetch: browserFetch });
}

/** A user-facing line for any error: the API's code and message, or the wallet's. */
export function describeError(error: unknown): string {
  if (error instanceof MarketError) return `${error.message} (${error.code})`;
  if (error && typeof error === "object") {
    const e = error as { shortMessage?: string; message?: string; code?: unknown };
    if (e.code === 4001 || e.code === "ACTION_REJECTED") return "The wallet refused the request.";
    return e.shortMessage ?? e.message ?? String(error);
  }
  return String(error);
}
