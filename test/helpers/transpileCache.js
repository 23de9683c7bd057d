// ts-node with a disk cache of its transpile, for the test run and every process it spawns: `npm test`'s mocha
// workers load this file first (hardhat.config.ts, mocha `require`), and it puts itself in NODE_OPTIONS, so the
// `market` CLI, the API and the indexer the tests start transpile each source file once between them instead of once
// per process (the transpile is most of a CLI start's CPU time).
//
// It is a ts-node transpiler (ts-node's `transpiler` option): TypeScript's own transpileModule with the compiler
// options ts-node gives it, keyed by those options, the TypeScript version, the file name and the source, so a cached
// output is the output the same process would compute, and a spawned CLI or server runs the JavaScript it runs
// without the cache. A file with diagnostics is never cached (ts-node reports them as before). As a preload it hands
// that transpiler to every transpile-only ts-node registration of the process, when ts-node is first loaded (a process
// that never loads ts-node, such as the production build's, loads nothing more). The cache is one file per key in the
// OS temporary directory, written atomically for the concurrent processes.
"use strict";
const crypto = require("node:crypto");
const fs = require("node:fs");
const Module = require("node:module");
const os = require("node:os");
const path = require("node:path");

const DIR = path.join(os.tmpdir(), `ts-transpile-cache-${process.getuid ? process.getuid() : "user"}`);

/** ts-node's transpiler factory: `create(createOptions)` returns `{ transpile(code, { fileName }) }`. */
exports.create = function create({ service }) {
  const ts = require(service.projectLocalResolveHelper("typescript", true));
  const compilerOptions = service.config.options;
  const salt = `${ts.version}\0${JSON.stringify(compilerOptions)}\0`;
  fs.mkdirSync(DIR, { recursive: true });
  return {
    transpile(code, { fileName }) {
      const key = crypto.createHash("sha256").update(salt).update(fileName).update("\0").update(code).digest("hex");
      const file = path.join(DIR, `${key}.json`);
      try {
        return JSON.parse(fs.readFileSync(file, "utf8"));
      } catch {
        // Not cached yet: transpile. (A cache file is complete or absent: it is renamed into place.)
      }
      const result = ts.transpileModule(code, { fileName, compilerOptions, reportDiagnostics: true });
      if (result.diagnostics && result.diagnostics.length > 0) return result;
      const output = { outputText: result.outputText, sourceMapText: result.sourceMapText };
      const temp = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}`;
      try {
        fs.writeFileSync(temp, JSON.stringify(output));
        fs.renameSync(temp, file);
      } catch {
        // A cache that cannot be written costs the next process this transpile, nothing else.
      }
      return output;
    },
  };
};

/** `--require <this file>`, for NODE_OPTIONS (quoted: the path may hold spaces). */
exports.NODE_OPTION = `--require ${JSON.stringify(__filename)}`;

/** Whether a transpile-only registration is asked for (ts-node's own rule: the option, else TS_NODE_TRANSPILE_ONLY). */
function transpileOnly(options) {
  if (options && (options.typeCheck === true || options.transpiler || options.swc)) return false;
  if (options && options.transpileOnly !== undefined) return options.transpileOnly === true;
  return /^(1|true|yes|y|on)$/i.test(process.env.TS_NODE_TRANSPILE_ONLY ?? "");
}

function patchTsNode(tsNode) {
  const register = tsNode.register;
  tsNode.register = function (options) {
    if (options && typeof options.compile === "function") return register.call(this, options); // a built service
    return register.call(this, transpileOnly(options) ? { ...options, transpiler: __filename } : options);
  };
}

if (!global.__tsTranspileCache) {
  global.__tsTranspileCache = true;
  if (!(process.env.NODE_OPTIONS ?? "").includes(__filename)) {
    process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} ${exports.NODE_OPTION}`.trim();
  }
  // Wait for ts-node itself (its main module, whoever requires it) rather than load it here.
  const load = Module._load;
  Module._load = function (request, parent, isMain) {
    const loaded = load.call(this, request, parent, isMain);
    if (loaded && typeof loaded.register === "function" && typeof loaded.createRepl === "function" && loaded.VERSION) {
      Module._load = load;
      patchTsNode(loaded);
    }
    return loaded;
  };
}
