/**
 * The API client: every answer is the envelope `{ success, data }` or `{ success: false, error: { code, message } }`;
 * failures throw an ApiError carrying the stable `code` (branch on it, never on the message).
 */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export interface Credentials {
  /** An API key (sk_...): every route except sign-in. */
  apiKey?: string;
  /** A sign-in session (ses_...): the API key routes only. */
  sessionToken?: string;
}

export async function api<T>(
  path: string,
  options: { method?: string; body?: unknown; auth?: Credentials; useSession?: boolean } = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const token = options.useSession ? options.auth?.sessionToken : options.auth?.apiKey;
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(path, {
    method: options.method ?? (options.body === undefined ? "GET" : "POST"),
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  let payload: { success?: boolean; data?: T; error?: { code: string; message: string; details?: unknown } };
  try {
    payload = await response.json();
  } catch {
    throw new ApiError("BAD_RESPONSE", `the API answered ${response.status} without JSON`, response.status);
  }
  if (!response.ok || payload.success !== true) {
    const error = payload.error ?? { code: "BAD_RESPONSE", message: `the API answered ${response.status}` };
    throw new ApiError(error.code, error.message, response.status, error.details);
  }
  return payload.data as T;
}

/** A user-facing line for any error: the API's code and message, or the wallet's. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return `${error.message} (${error.code})`;
  if (error && typeof error === "object") {
    const e = error as { shortMessage?: string; message?: string; code?: unknown };
    if (e.code === 4001 || e.code === "ACTION_REJECTED") return "The wallet refused the request.";
    return e.shortMessage ?? e.message ?? String(error);
  }
  return String(error);
}
