/**
 * The worker threads' code. From the production build (`npm run build:node`: this module is dist/server/hosting/
 * workerCode.js and worker.js lies beside it) a worker runs the built worker.js as it is: no compiler at run time.
 *
 * From the sources (ts-node: the devnet, tests, `npm start`), a worker thread starts without its parent's require
 * hooks, and registering ts-node in every worker would load the TypeScript compiler into every agent's heap (about
 * 60 MB each, bench:agents). Instead the host transpiles worker.ts and the project files it imports (followed through
 * their relative imports) once, and each worker's bootstrap installs a `.ts` require hook that compiles nothing: it
 * runs the precompiled JavaScript. A file the walk missed (a dynamic import) is transpiled in the worker on demand.
 */
import fs from "node:fs";
import path from "node:path";

export const WORKER_ENTRY = path.join(__dirname, "worker.ts");

/** The built worker, when this module runs from the build (undefined from the sources). */
export const BUILT_WORKER_ENTRY: string | undefined = (() => {
  if (path.extname(__filename) !== ".js") return undefined;
  const built = path.join(__dirname, "worker.js");
  return fs.existsSync(built) ? built : undefined;
})();

/** How a worker thread is started: its code (a file, or the bootstrap's source to eval) and its extra workerData. */
export interface WorkerLaunch {
  code: string;
  eval: boolean;
  data: { entry?: string; sources?: CompiledSources };
}

/** The built worker.js as a file; else the bootstrap over the transpiled sources (compiled on the first call). */
export function workerLaunch(): WorkerLaunch {
  if (BUILT_WORKER_ENTRY) return { code: BUILT_WORKER_ENTRY, eval: false, data: {} };
  return { code: WORKER_BOOTSTRAP, eval: true, data: { entry: WORKER_ENTRY, sources: compileWorkerSources() } };
}

/** Absolute .ts path -> CommonJS JavaScript. */
export type CompiledSources = Record<string, string>;

/** Import and export statements with a relative module (group 1: `type` when type-only, erased at run time). */
const STATEMENT = /^\s*(?:import|export)\s+(type\s+)?(?:[^;"']*?\s+from\s+)?["'](\.{1,2}\/[^"']+)["']/gm;
const DYNAMIC = /(?:import|require)\s*\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

/** The relative modules `source` loads at run time. */
function runtimeImports(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(STATEMENT)) if (!m[1]) out.push(m[2]);
  for (const m of source.matchAll(DYNAMIC)) out.push(m[1]);
  return out;
}

function resolveTs(from: string, specifier: string): string | undefined {
  const base = path.resolve(path.dirname(from), specifier);
  for (const candidate of [`${base}.ts`, path.join(base, "index.ts"), base]) {
    if (candidate.endsWith(".ts") && fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

let cached: CompiledSources | undefined;

/** worker.ts and every project file it reaches by relative imports, transpiled (cached for the process). */
export function compileWorkerSources(): CompiledSources {
  if (cached) return cached;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ts = require("typescript") as typeof import("typescript");
  const out: CompiledSources = {};
  const queue = [WORKER_ENTRY];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (out[file] !== undefined) continue;
    const source = fs.readFileSync(file, "utf8");
    out[file] = ts.transpileModule(source, {
      fileName: file,
      compilerOptions: {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.CommonJS,
        esModuleInterop: true,
        resolveJsonModule: true,
        sourceMap: false,
        inlineSourceMap: false,
      },
    }).outputText;
    for (const specifier of runtimeImports(source)) {
      const target = resolveTs(file, specifier);
      if (target && out[target] === undefined) queue.push(target);
    }
  }
  cached = out;
  return out;
}

/**
 * The worker's bootstrap (run with `eval`): a `.ts` require hook serving workerData.sources, transpiling a file it
 * does not have with TypeScript (loaded only then), then worker.ts.
 */
const WORKER_BOOTSTRAP = `
const { workerData } = require("node:worker_threads");
const Module = require("node:module");
const sources = workerData.sources;
let ts;
require.extensions[".ts"] = function (module, filename) {
  let code = sources[filename];
  if (code === undefined) {
    ts = ts || require("typescript");
    const text = require("node:fs").readFileSync(filename, "utf8");
    code = ts.transpileModule(text, {
      fileName: filename,
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, esModuleInterop: true },
    }).outputText;
  }
  module._compile(code, filename);
};
Module.createRequire(workerData.entry)(workerData.entry);
`;
