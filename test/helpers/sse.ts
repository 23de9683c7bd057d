/**
 * A Server-Sent Events client for tests, over plain node:http as any client would speak it: opens
 * GET /api/v1/events (or another stream's path) with an API key (and Last-Event-ID), parses `id:`/`event:`/`data:` records and `:` comments, and
 * waits for what a test expects.
 */
import http from "node:http";

export interface SseEvent {
  id: string;
  event: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any;
}

export interface SseStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The error envelope when the answer was not a stream. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json?: any;
  events: SseEvent[];
  comments: string[];
  /** Resolves once `count` events arrived (all of them, in order). */
  waitForEvents(count: number, timeoutMs?: number): Promise<SseEvent[]>;
  /** Resolves when an event matching `match` arrived. */
  waitFor(match: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Resolves once `count` comment lines equal to `text` arrived (`: keep-alive` heartbeats). */
  waitForComments(text: string, count: number, timeoutMs?: number): Promise<void>;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

export interface SseOptions {
  key?: string;
  /** Send the key as `Authorization: Bearer` instead of X-API-Key. */
  bearer?: boolean;
  lastEventId?: string;
  query?: string;
  /** Another stream than /api/v1/events (a hosted agent's log follow). */
  path?: string;
}

export function openEvents(baseUrl: string, options: SseOptions = {}): Promise<SseStream> {
  const url = new URL(`${baseUrl}${options.path ?? "/api/v1/events"}${options.query ?? ""}`);
  const headers: Record<string, string> = { accept: "text/event-stream" };
  if (options.key)
    headers[options.bearer ? "authorization" : "x-api-key"] = options.bearer ? `Bearer ${options.key}` : options.key;
  if (options.lastEventId !== undefined) headers["last-event-id"] = options.lastEventId;
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers }, (response) => {
      const status = response.statusCode ?? 0;
      if (status !== 200 || !String(response.headers["content-type"]).startsWith("text/event-stream")) {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => (text += chunk));
        response.on("end", () => {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve(stream(status, response.headers, json, undefined));
        });
        return;
      }
      resolve(stream(status, response.headers, undefined, response));
    });
    request.on("error", reject);

    function stream(
      status: number,
      responseHeaders: http.IncomingHttpHeaders,
      json: unknown,
      response: http.IncomingMessage | undefined,
    ): SseStream {
      const events: SseEvent[] = [];
      const comments: string[] = [];
      const waiters = new Set<() => void>();
      let buffer = "";
      let endedResolve: () => void = () => undefined;
      const ended = new Promise<void>((r) => (endedResolve = r));
      const wake = () => waiters.forEach((w) => w());
      if (response) {
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          buffer += chunk;
          for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
            const record = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const fields: Record<string, string> = {};
            for (const line of record.split("\n")) {
              if (line.startsWith(":")) comments.push(line.slice(1).trim());
              else if (line.includes(":")) {
                const at = line.indexOf(":");
                fields[line.slice(0, at)] = line.slice(at + 1).replace(/^ /, "");
              }
            }
            if (fields.data !== undefined) {
              events.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data) });
            }
            wake();
          }
        });
        response.on("end", () => endedResolve());
        response.on("close", () => endedResolve());
        response.on("error", () => endedResolve());
      } else endedResolve();
      const until = <T>(check: () => T | undefined, what: string, timeoutMs: number) =>
        new Promise<T>((res, rej) => {
          const done = check();
          if (done !== undefined) return res(done);
          const timer = setTimeout(() => {
            waiters.delete(waiter);
            rej(new Error(`timed out waiting for ${what}; got ${JSON.stringify(events.map((e) => e.event))}`));
          }, timeoutMs);
          const waiter = () => {
            const value = check();
            if (value === undefined) return;
            clearTimeout(timer);
            waiters.delete(waiter);
            res(value);
          };
          waiters.add(waiter);
        });
      return {
        status,
        headers: responseHeaders,
        json,
        events,
        comments,
        waitForEvents: (count, timeoutMs = 20_000) =>
          until(() => (events.length >= count ? events.slice(0, count) : undefined), `${count} events`, timeoutMs),
        waitFor: (match, timeoutMs = 20_000) => until(() => events.find(match), "a matching event", timeoutMs),
        waitForComments: (text, count, timeoutMs = 20_000) =>
          until(
            () => (comments.filter((c) => c === text).length >= count ? true : undefined),
            `${count} "${text}" comments`,
            timeoutMs,
          ).then(() => undefined),
        ended,
        close: () => {
          request.destroy();
          response?.destroy();
        },
      };
    }
  });
}
