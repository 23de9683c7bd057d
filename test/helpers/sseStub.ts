/**
 * A stand-in for `GET /api/v1/events` (docs/api.md "Events"), for driving clients through what the real stream rarely
 * does on cue (dropped connections, refusals, a server without the stream): a local HTTP server that serves the stream itself (id/event/data lines, `: keep-alive` comments,
 * Last-Event-ID replay from its log) and, when given an API, forwards every other request to it unchanged.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { MarketEventData } from "../../client/sdk/index";

export interface SseStub {
  url: string;
  /** Every request seen: method, path (with query) and headers. */
  requests: { method: string; path: string; headers: http.IncomingHttpHeaders; at: number }[];
  /** Appends an event to the log and sends it to every open stream. */
  emit(type: string, data: Partial<MarketEventData>): string;
  /** Closes every open stream (clients should reconnect and resume). */
  dropConnections(): void;
  /** Answers the next `n` stream requests with this status (and optional headers) instead of the stream. */
  refuseNext(n: number, status: number, headers?: Record<string, string>): void;
  openStreams(): number;
  close(): Promise<void>;
}

export async function startSseStub(options: { forwardTo?: string; noStream?: boolean } = {}): Promise<SseStub> {
  const log: { id: number; type: string; data: Record<string, unknown> }[] = [];
  const streams = new Set<http.ServerResponse>();
  const requests: SseStub["requests"] = [];
  let refusals: { n: number; status: number; headers: Record<string, string> } = { n: 0, status: 0, headers: {} };

  const write = (res: http.ServerResponse, e: (typeof log)[number]) =>
    res.write(`id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e.data)}\n\n`);

  const server = http.createServer(async (req, res) => {
    requests.push({ method: req.method!, path: req.url!, headers: req.headers, at: Date.now() });
    const url = new URL(req.url!, "http://stub");
    if (url.pathname === "/api/v1/events" && options.noStream) {
      // A service without the stream (an older server): the runtime's cue to poll.
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ success: false, error: { code: "NOT_FOUND", message: "no event stream here" } }));
      return;
    }
    if (url.pathname === "/api/v1/events") {
      if (refusals.n > 0) {
        refusals.n--;
        res.writeHead(refusals.status, { "content-type": "application/json", ...refusals.headers });
        res.end(JSON.stringify({ success: false, error: { code: "RATE_LIMIT", message: "refused by the stub" } }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.write(": keep-alive\n\n");
      const after = Number(req.headers["last-event-id"] ?? url.searchParams.get("lastEventId") ?? 0);
      for (const e of log) if (e.id > after) write(res, e);
      streams.add(res);
      req.on("close", () => streams.delete(res));
      return;
    }
    if (!options.forwardTo) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ success: false, error: { code: "NOT_FOUND", message: "no such route" } }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host") headers[k] = v;
    const answer = await fetch(`${options.forwardTo}${req.url}`, {
      method: req.method,
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    const body = Buffer.from(await answer.arrayBuffer());
    res.writeHead(answer.status, {
      "content-type": answer.headers.get("content-type") ?? "application/octet-stream",
      ...(answer.headers.get("retry-after") ? { "retry-after": answer.headers.get("retry-after")! } : {}),
    });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    emit(type, data) {
      const id = log.length + 1;
      const event = { id, type, data: { id: String(id), type, at: new Date().toISOString(), txHash: null, ...data } };
      log.push(event);
      for (const res of streams) write(res, event);
      return String(id);
    },
    dropConnections() {
      for (const res of streams) res.destroy();
      streams.clear();
    },
    refuseNext(n, status, headers = {}) {
      refusals = { n, status, headers };
    },
    openStreams: () => streams.size,
    async close() {
      for (const res of streams) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
