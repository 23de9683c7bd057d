/** Node's Buffer for the browser (the `buffer` package), installed before any SDK module evaluates (main.tsx). */
import { Buffer } from "buffer";

const scope = globalThis as unknown as { Buffer?: typeof Buffer };
scope.Buffer ??= Buffer;
