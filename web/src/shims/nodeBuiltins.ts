/**
 * The SDK's file journal (client/sdk/journal.ts) imports `node:fs/promises` and `node:path`; the page keeps its
 * postings in memory and never journals to a file, so the browser build resolves both modules here (web/vite.config.mts)
 * instead of printing Vite's "externalized for browser compatibility" warnings. Any use throws, naming why.
 */
const unavailable: Record<string, unknown> = new Proxy(
  {},
  {
    get(_target, name) {
      throw new Error(
        `${String(name)}: the SDK's file journal needs Node's file system, which a browser does not have`,
      );
    },
  },
);

export default unavailable;
