/**
 * Answers a request with a Server-Sent Events stream (the event feed, a hosted agent's log): the stream's own
 * keep-alive replaces the server's idle timeout (docs/api.md, "Connections"), the socket is never reused for another
 * request (a stopping server waits for none), and `end` runs once the client goes, also when it went while the
 * stream was being opened. `body` is where the caller writes its `id`/`event`/`data` records.
 */
import type { PassThrough } from "node:stream";
import type { Context } from "koa";

export function startSseResponse(ctx: Context, body: PassThrough, end: () => void): void {
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.status = 200;
  ctx.type = "text/event-stream";
  ctx.set("Cache-Control", "no-cache, no-transform");
  ctx.set("X-Accel-Buffering", "no");
  ctx.set("Connection", "close");
  ctx.body = body;
  body.write("retry: 3000\n: connected\n\n");
  ctx.res.once("close", end);
  // A client gone while the stream was being opened: its close event has passed already.
  if (ctx.req.socket.destroyed) end();
}
