/**
 * Push: the SSE event stream (GET /api/v1/events), REST only since the stream is the HTTP exchange itself; webhooks
 * are operations of the catalog (server/operations/webhooks.ts). The stream's rules (replay, heartbeat, connection
 * limit) live in server/domain/events; this file writes the text/event-stream framing.
 */
import { PassThrough } from "node:stream";
import { startSseResponse } from "../sseResponse";
import { defineOperation } from "../../operations/operation";
import { eventsQuery, marketEventSchema, type MarketEvent } from "../../domain/schemas/events";
import { openEventStream, parseLastEventId } from "../../domain/events";

/** A stream whose client reads slower than events come is ended (it resumes with Last-Event-ID). */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

const frame = (event: MarketEvent) => `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

export const eventsRoute = defineOperation({
  mcp: { restOnly: "the event stream is the HTTP stream itself (Server-Sent Events)" },
  method: "get",
  path: "/api/v1/events",
  summary: "The caller's marketplace events as a Server-Sent Events stream",
  description:
    "text/event-stream of `id:` (the event id), `event:` (the type) and `data:` (one line of JSON, the MarketEvent " +
    "schema) records, and a `: keep-alive` comment every EVENTS_HEARTBEAT_MS (15 s). Resume with the Last-Event-ID " +
    "header (or ?lastEventId=): every later event of the caller is replayed, then live ones follow; without it the " +
    "stream starts with events from now on. Events are kept EVENTS_RETENTION_DAYS (7). At most " +
    "EVENTS_MAX_STREAMS_PER_KEY (5) concurrent streams per API key, EVENTS_MAX_STREAMS_PER_WALLET (10) per wallet " +
    "and EVENTS_MAX_STREAMS_PER_IP (20) per client address: over one, 429 RATE_LIMIT. A stream ends after " +
    "EVENTS_MAX_STREAM_LIFETIME_MS (1 h), and within seconds of its key's revocation. The open stream does " +
    "not count against the per-IP request budget (its opening request does, once).",
  tags: ["push"],
  auth: "required",
  request: { query: eventsQuery },
  response: marketEventSchema,
  rawResponse: {
    contentType: "text/event-stream",
    description: "Server-Sent Events; each `data:` line is a MarketEvent",
  },
  errors: ["VALIDATION_ERROR", "UNAUTHORIZED", "RATE_LIMIT"],
  handler: async ({ ctx, caller, deps, query }) => {
    const header = ctx.get("last-event-id");
    const lastEventId = header
      ? parseLastEventId(header, "Last-Event-ID")
      : query.lastEventId !== undefined
        ? parseLastEventId(query.lastEventId, "lastEventId")
        : undefined;
    const body = new PassThrough();
    let ended = false;
    const timers: { heartbeat?: NodeJS.Timeout } = {};
    const stream = await openEventStream(deps, caller!, ctx.ip, lastEventId, {
      send(event) {
        if (ended) return;
        if (body.writableLength > MAX_BUFFERED_BYTES) return end();
        body.write(frame(event));
      },
      close: () => end(),
    });
    function end() {
      if (ended) return;
      ended = true;
      clearInterval(timers.heartbeat);
      stream.close();
      body.end();
    }
    timers.heartbeat = setInterval(() => body.write(": keep-alive\n\n"), deps.config.push.heartbeatMs);
    startSseResponse(ctx, body, end);
    stream.start().catch((error) => {
      deps.logger.warn("event stream failed; closing it (the client resumes with Last-Event-ID)", { error });
      end();
    });
    // Answered: ctx.body is the stream (the router leaves it alone); the schema documents each `data:` line.
    return undefined as never;
  },
});
