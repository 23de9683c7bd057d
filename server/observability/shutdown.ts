/**
 * How each process ends on SIGTERM or SIGINT (docs/operations.md, "Shutdown"): it runs its own `close` once (stop
 * taking work, finish what is in flight, release locks and leases) and exits 0; if `close` fails or has not finished
 * within SHUTDOWN_TIMEOUT_MS it exits 1, so an orchestrator never waits on a stuck process. A second signal while
 * stopping changes nothing.
 */
import type { Logger } from "../logger";

export interface ShutdownOptions {
  logger: Logger;
  /** The longest `close` may take (SHUTDOWN_TIMEOUT_MS). */
  timeoutMs: number;
  close(): Promise<void>;
  /** Ends the process (tests pass their own). */
  exit?: (code: number) => void;
  /** The signals that stop it (default SIGTERM and SIGINT; tests pass none and call the returned function). */
  signals?: NodeJS.Signals[];
}

/** Installs the SIGTERM and SIGINT handlers; returns the stop function they call. */
export function stopOnSignals(options: ShutdownOptions): (signal: string) => Promise<void> {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let stopping: Promise<void> | undefined;
  const stop = (signal: string) => {
    stopping ??= (async () => {
      const started = Date.now();
      options.logger.info("stopping", { signal, timeoutMs: options.timeoutMs });
      const bound = setTimeout(() => {
        options.logger.error("shutdown did not finish in time: exiting anyway", { timeoutMs: options.timeoutMs });
        exit(1);
      }, options.timeoutMs);
      bound.unref();
      try {
        await options.close();
        clearTimeout(bound);
        options.logger.info("stopped", { signal, ms: Date.now() - started });
        exit(0);
      } catch (error) {
        clearTimeout(bound);
        options.logger.error("shutdown failed", { signal, error });
        exit(1);
      }
    })();
    return stopping;
  };
  for (const signal of options.signals ?? ["SIGTERM", "SIGINT"]) process.on(signal, () => void stop(signal));
  return stop;
}
