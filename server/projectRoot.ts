/**
 * The project's root directory (the one holding package.json): the base of the default data, deployments and web
 * app directories, the same whether this code runs from the TypeScript sources (server/) or from the build
 * (dist/server/, `npm run build`).
 */
import fs from "node:fs";
import path from "node:path";

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, "..");
  }
}

export const PROJECT_ROOT = findRoot(__dirname);
