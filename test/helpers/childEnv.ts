/**
 * The environment a spawned process inherits from the test run when a test otherwise gives it only what it names
 * (PATH and the variables under test): NODE_OPTIONS, which in `npm test` loads the transpile cache the test workers
 * share (test/helpers/transpileCache.js), so a spawned CLI or server does not transpile the sources again. The
 * process runs the same JavaScript either way.
 */
export function childEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    ...(process.env.NODE_OPTIONS ? { NODE_OPTIONS: process.env.NODE_OPTIONS } : {}),
  };
}
