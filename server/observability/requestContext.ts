/**
 * The request a piece of code runs for. The API's first middleware opens a context per request (its id); the
 * logger adds the id to every line written inside it, so domain and adapter logs carry it without passing it along.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import crypto from "node:crypto";

export interface RequestContext {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** An incoming X-Request-Id is kept when it is 8 to 64 of A-Z a-z 0-9 . _ - (no spaces, quotes or control bytes). */
const REQUEST_ID = /^[A-Za-z0-9._-]{8,64}$/;

/** The id of a request: the caller's X-Request-Id when it is sane, a fresh UUID otherwise. */
export function requestIdFor(incoming: string | undefined): string {
  return incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
}

/** Runs `fn` inside `context`: everything it awaits and starts sees it. */
export function runInRequest<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** The request being served here, if any. */
export function currentRequest(): RequestContext | undefined {
  return storage.getStore();
}
