/**
 * The push stream `GET /api/v1/events` (Server-Sent Events, contract in docs/sdk.md): `id`, `event` and one-line JSON
 * `data` per event, `: keep-alive` comments as heartbeat. The subscription resumes with `Last-Event-ID` after a
 * disconnect, backing off exponentially (with jitter) between failed attempts; a 429 waits for its Retry-After. A
 * server without the stream answers 404: the subscription ends with ApiError NOT_FOUND so the caller can fall back
 * to polling; 401 and 403 end it too (a key problem is not fixed by retrying). A hosted agent's log is followed the
 * same way (`followAgentLogs`).
 */
import type { MarketApi } from "./api";
import { ApiError } from "./errors";
import type { HostedAgentLogs, MarketEvent, MarketEventData } from "./types";

export const EVENTS_PATH = "/api/v1/events";

export interface SubscribeOptions {
  /** Resume after this event id. */
  lastEventId?: string;
  /** First reconnect delay (default 1 s), doubled per failed attempt up to maxDelayMs (default 30 s). */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** No byte (event or heartbeat) for this long means the connection is dead: reconnect (default 45 s). */
  idleTimeoutMs?: number;
  /** Called when a connection is open (200 text/event-stream). */
  onOpen?: () => void;
  /** Called on each failed connection before the back-off (the subscription keeps trying), or a failed handler. */
  onError?: (error: unknown, retryInMs: number) => void;
}

export interface EventSubscription {
  /** The id of the last event handled (to resume a later subscription). */
  readonly lastEventId: string | undefined;
  /** Settles when the subscription ends: resolves on close(), rejects on a final error (404, 401, 403). */
  readonly done: Promise<void>;
  close(): Promise<void>;
}

/** One parsed SSE event. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** Parses SSE text incrementally: feed chunks, get complete events (comments and retry lines are skipped). */
export class SseParser {
  private buffer = "";
  private data: string[] = [];
  private id: string | undefined;
  private event: string | undefined;

  feed(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const out: SseEvent[] = [];
    for (;;) {
      const match = /\r\n|\n|\r/.exec(this.buffer);
      if (!match) break;
      // A lone \r at the end may be the first half of \r\n: wait for the next chunk.
      if (match[0] === "\r" && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const dispatched = this.line(line);
      if (dispatched) out.push(dispatched);
    }
    return out;
  }

  private line(line: string): SseEvent | undefined {
    if (line === "") {
      const event = this.data.length > 0 ? { id: this.id, event: this.event, data: this.data.join("\n") } : undefined;
      this.data = [];
      this.id = undefined;
      this.event = undefined;
      return event;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id" && !value.includes("\u0000")) this.id = value;
    return undefined;
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });

/** Subscribes to the caller's events; `handler` runs for each event in order (the next waits for it). */
export function subscribe(
  api: MarketApi,
  handler: (event: MarketEvent) => void | Promise<void>,
  options: SubscribeOptions = {},
): EventSubscription {
  return followSse(
    api,
    EVENTS_PATH,
    (raw, json) => {
      const data = json as MarketEventData;
      return handler({ id: raw.id ?? String(data.id ?? ""), type: raw.event ?? String(data.type), data });
    },
    options,
  );
}

/** One line of a hosted agent's log, as followed. */
export type AgentLogLine = HostedAgentLogs["logs"][number];

/**
 * Follows a hosted agent's log (`GET /api/v1/agents/{agent}/logs` with Accept: text/event-stream; the owner's key):
 * `handler` runs for each new line in order, resuming with Last-Event-ID after a disconnect as `subscribe` does.
 * `options.lastEventId` starts after that line id (else with the lines written from now on).
 */
export function followAgentLogs(
  api: MarketApi,
  agent: string,
  handler: (line: AgentLogLine) => void | Promise<void>,
  options: SubscribeOptions = {},
): EventSubscription {
  return followSse(
    api,
    `/api/v1/agents/${encodeURIComponent(agent)}/logs`,
    (_raw, json) => handler(json as AgentLogLine),
    options,
  );
}

/** An SSE stream of one-line JSON records at `path`, resumed with Last-Event-ID, backing off between failures. */
function followSse(
  api: MarketApi,
  path: string,
  handler: (raw: SseEvent, data: unknown) => void | Promise<void>,
  options: SubscribeOptions,
): EventSubscription {
  const initialDelay = options.initialDelayMs ?? 1000;
  const maxDelay = options.maxDelayMs ?? 30_000;
  const idleTimeout = options.idleTimeoutMs ?? 45_000;
  const stopped = new AbortController();
  let lastEventId = options.lastEventId;
  let failures = 0;

  const backoff = () => {
    const base = Math.min(maxDelay, initialDelay * 2 ** failures);
    failures++;
    return Math.round(base / 2 + (Math.random() * base) / 2);
  };

  async function connectOnce(): Promise<number | undefined> {
    const connection = new AbortController();
    const abort = () => connection.abort();
    stopped.signal.addEventListener("abort", abort, { once: true });
    let idle: NodeJS.Timeout | undefined;
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => connection.abort(), idleTimeout);
    };
    try {
      const response = await api.send("GET", path, {
        headers: {
          accept: "text/event-stream",
          ...(lastEventId !== undefined ? { "last-event-id": lastEventId } : {}),
        },
        signal: connection.signal,
      });
      if ([401, 403, 404].includes(response.status)) throw await finalError(response, path);
      if (response.status === 429) {
        const seconds = Number(response.headers.get("retry-after"));
        await response.body?.cancel();
        failures++;
        return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : backoff();
      }
      const type = response.headers.get("content-type") ?? "";
      if (!response.ok || !type.includes("text/event-stream") || !response.body) {
        await response.body?.cancel();
        throw new Error(`GET ${path} answered ${response.status} ${type}`);
      }
      options.onOpen?.();
      failures = 0;
      touch();
      const parser = new SseParser();
      const decoder = new TextDecoder();
      const reader = response.body.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        touch();
        for (const raw of parser.feed(decoder.decode(value, { stream: true }))) {
          let data: unknown;
          try {
            data = JSON.parse(raw.data);
          } catch (error) {
            options.onError?.(error, 0);
            continue;
          }
          try {
            await handler(raw, data);
          } catch (error) {
            options.onError?.(error, 0);
          }
          if (raw.id !== undefined) lastEventId = raw.id;
        }
      }
      return initialDelay; // the server closed the stream: reconnect soon
    } catch (error) {
      if (error instanceof ApiError) throw error;
      if (stopped.signal.aborted) return undefined;
      const wait = backoff();
      options.onError?.(error, wait);
      return wait;
    } finally {
      clearTimeout(idle);
      stopped.signal.removeEventListener("abort", abort);
    }
  }

  const done = (async () => {
    while (!stopped.signal.aborted) {
      const wait = await connectOnce();
      if (wait === undefined || stopped.signal.aborted) break;
      await sleep(wait, stopped.signal);
    }
  })();
  done.catch(() => undefined);

  return {
    get lastEventId() {
      return lastEventId;
    },
    done,
    async close() {
      stopped.abort();
      await done.catch(() => undefined);
    },
  };
}

async function finalError(response: Response, path: string): Promise<ApiError> {
  const text = await response.text().catch(() => "");
  let error: { code?: string; message?: string } | undefined;
  try {
    error = (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
  } catch {
    error = undefined;
  }
  const code =
    error?.code ?? (response.status === 404 ? "NOT_FOUND" : response.status === 401 ? "UNAUTHORIZED" : "FORBIDDEN");
  return new ApiError(code, error?.message ?? `GET ${path} answered ${response.status}`, {
    status: response.status,
  });
}
