/** Node's Buffer for the browser (the `buffer` package), installed before the brief crypto module evaluates. */
import { Buffer } from "buffer";

const scope = globalThis as unknown as { Buffer?: typeof Buffer };
scope.Buffer ??= Buffer;
