/**
 * Serves the built web app (web/dist, `npm run build:web`) at PUBLIC_URL/ — the platform card's `endpoints.app`.
 * Hashed files under /assets/ are immutable for a year; index.html and the other files are revalidated on every
 * load (no-cache). Paths of the API and the protocols (/api/, /mcp, /a2a/, /.well-known/) are never touched; any
 * other GET that asks for HTML gets index.html so the app's own routes (/tasks/7) survive a reload.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type Koa from "koa";
import type { Deps } from "../domain/deps";

const RESERVED = /^\/(?:api\/|mcp(?:\/|$)|a2a\/|\.well-known\/)/;
const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2",
};
const IMMUTABLE = "public, max-age=31536000, immutable";

/**
 * The page's Content-Security-Policy: scripts only from this origin, no inline script, no framing. Styles allow
 * 'unsafe-inline' because the UI library sets CSS variables in a style element. `connect-src` adds the devnet's chains
 * when the devnet wallet picker is on (the browser signs there); a browser wallet talks to its own node.
 */
export function contentSecurityPolicy(deps: Deps): string {
  const connect = ["'self'"];
  if (deps.config.api.web.devnetAccountsFile) {
    // Every devnet chain the wallet can switch to (GET /devnet/wallets lists them).
    for (const chain of deps.config.chains) {
      if (deps.chains.has(chain.name)) connect.push(new URL(chain.rpcUrl).origin);
    }
  }
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${connect.join(" ")}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

async function readable(file: string): Promise<boolean> {
  try {
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

export function webApp(deps: Deps): Koa.Middleware {
  const root = path.resolve(deps.config.api.web.distDir);
  const csp = contentSecurityPolicy(deps);
  return async (ctx, next) => {
    if ((ctx.method !== "GET" && ctx.method !== "HEAD") || RESERVED.test(ctx.path)) return next();
    let relative: string;
    try {
      relative = decodeURIComponent(ctx.path);
    } catch {
      return next();
    }
    let file = path.resolve(root, "." + relative);
    const inside = file.startsWith(root + path.sep);
    const asset = inside && relative.startsWith("/assets/");
    if (!inside || !(await readable(file))) {
      // A navigation (Accept: text/html) to an app route (no file extension) gets the app; the rest stays a 404.
      const navigation = /\btext\/html\b/.test(ctx.get("accept"));
      if (asset || path.extname(relative) !== "" || !navigation) return next();
      file = path.join(root, "index.html");
      if (!(await readable(file))) {
        ctx.status = 503;
        ctx.set("Cache-Control", "no-store");
        ctx.type = "text/plain";
        ctx.body = "The web app is not built: run `npm run build:web` (npm run devnet builds it).\n";
        return;
      }
    }
    const ext = path.extname(file);
    ctx.status = 200;
    ctx.type = TYPES[ext] ?? "application/octet-stream";
    ctx.set("Cache-Control", asset ? IMMUTABLE : "no-cache");
    ctx.set("X-Content-Type-Options", "nosniff");
    if (ext === ".html") {
      ctx.set("Content-Security-Policy", csp);
      ctx.set("Referrer-Policy", "no-referrer");
    }
    const stat = await fs.stat(file);
    ctx.length = stat.size;
    ctx.lastModified = stat.mtime;
    ctx.etag = `W/"${stat.size.toString(16)}-${stat.mtimeMs.toString(16)}"`;
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.body = await fs.readFile(file); // Koa sends no body for HEAD
  };
}
