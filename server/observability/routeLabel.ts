/**
 * A request's route as a bounded label (metrics, logs): the matched route's template (`/api/v1/tasks/:id`), the
 * protocol endpoints by their prefix, the web app's pages as one label, anything else as `unmatched`. Raw paths
 * would make one series per task id.
 */
import type { Context } from "koa";

export function routeLabel(ctx: Context): string {
  const matched = (ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute;
  if (typeof matched === "string") return matched;
  const path = ctx.path;
  if (path === "/mcp" || path.startsWith("/mcp/")) return "/mcp";
  if (path === "/a2a/v1" || path.startsWith("/a2a/v1/")) return "/a2a/v1";
  if (path === "/metrics" || path === "/health/live" || path === "/health/ready") return path;
  if (ctx.method === "GET" && !path.startsWith("/api/") && ctx.status < 400) return "web";
  return "unmatched";
}
