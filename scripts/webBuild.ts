/**
 * Builds the web app (web/ -> web/dist) when web/dist is missing or older than its sources; `npm run devnet` and the
 * browser tests call it, `npm run build:web` always builds.
 */
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

export const WEB_DIR = path.join(__dirname, "..", "web");
export const WEB_DIST = path.join(WEB_DIR, "dist");

function newestMtime(entry: string): number {
  const stat = fs.statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...fs.readdirSync(entry).map((name) => newestMtime(path.join(entry, name))));
}

/** Whether web/dist/index.html is missing or older than any source of the app (src, public, index.html, config). */
export function webBuildStale(): boolean {
  const built = path.join(WEB_DIST, "index.html");
  if (!fs.existsSync(built)) return true;
  const sources = ["src", "public", "index.html", "vite.config.mts", "tsconfig.json"].map((p) => path.join(WEB_DIR, p));
  const newest = Math.max(...sources.filter((p) => fs.existsSync(p)).map(newestMtime));
  return newest > fs.statSync(built).mtimeMs;
}

/** Builds the app if stale; returns whether it built. Throws with Vite's output when the build fails. */
export function ensureWebBuilt(log: (line: string) => void = () => undefined): boolean {
  if (!webBuildStale()) return false;
  log("Building the web app (web/dist is missing or older than web/src)...");
  const vite = path.join(__dirname, "..", "node_modules", "vite", "bin", "vite.js");
  execFileSync(
    process.execPath,
    [vite, "build", "--config", path.join(WEB_DIR, "vite.config.mts"), "--logLevel", "warn"],
    {
      stdio: ["ignore", "inherit", "inherit"],
    },
  );
  return true;
}
