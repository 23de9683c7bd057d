/**
 * The API's Node HTTP server with its timeouts (docs/api.md, "Connections"): a client that sends its headers too
 * slowly, takes too long over its whole request, or falls silent mid-request is disconnected, so stalled connections
 * cannot pile up. Used by the composition root and by the test API alike.
 */
import http from "node:http";
import type { ApiConfig } from "../config";

export function createHttpServer(listener: http.RequestListener, timeouts: ApiConfig["timeouts"]): http.Server {
  const server = http.createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      // How often Node checks the two limits above (default 30 s, which would let a stalled client stay that long).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(timeouts.headersMs / 4))),
    },
    listener,
  );
  server.keepAliveTimeout = timeouts.keepAliveMs;
  // Socket inactivity at any point of a request (a body that stops arriving, a client that stops reading).
  server.setTimeout(timeouts.idleMs, (socket) => socket.destroy());
  return server;
}
