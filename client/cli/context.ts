/**
 * What every command's action gets: the resolved configuration, the output (human or `--json`), and the SDK
 * objects built from them on demand (a plain ethers `JsonRpcProvider` and `Wallet`, as a user's script would).
 */
import type { Command } from "commander";
import { resolveConfig, type GlobalFlags, type ResolvedConfig } from "./config";
import { Output, type OutputStreams } from "./output";
import { CliError, toCliError } from "./errors";
import { MarketApi } from "../sdk/index";
import { DEVNET_UNAUTHORIZED_HINT, isDevnet } from "./commands/devnet";
import { EXIT, type ExitCode } from "./exitCodes";

export interface Context {
  config: ResolvedConfig;
  out: Output;
  /** Resources to release when the command ends (providers, streams, timers). */
  onClose(release: () => void | Promise<void>): void;
  /**
   * Resolves when the user interrupts (Ctrl-C or SIGTERM). Only long-running commands call it: from then on the
   * signal stops them cleanly instead of ending the process (every other command ends at once on Ctrl-C; an
   * interrupted `post` resumes from its journal when run again).
   */
  interrupted(): Promise<void>;
}

export interface RunState {
  streams: OutputStreams;
  env: NodeJS.ProcessEnv;
  exitCode: ExitCode;
}

/**
 * Wraps a command's action: builds its context from the global flags, runs it, prints a failure as code + message +
 * what to do, and records the exit code.
 */
export function action<A extends unknown[]>(state: RunState, run: (ctx: Context, ...args: A) => Promise<void>) {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    const flags = command.optsWithGlobals<GlobalFlags>();
    const out = new Output(Boolean(flags.json), state.streams);
    const releases: (() => void | Promise<void>)[] = [];
    let stop: () => void = () => undefined;
    let interrupted: Promise<void> | undefined;
    const onSignal = () => stop();
    const onInterrupt = () => {
      if (!interrupted) {
        interrupted = new Promise<void>((resolve) => (stop = resolve));
        process.once("SIGINT", onSignal);
        process.once("SIGTERM", onSignal);
      }
      return interrupted;
    };
    let config: ResolvedConfig | undefined;
    try {
      config = resolveConfig(flags, state.env);
      const ctx: Context = { config, out, onClose: (release) => releases.push(release), interrupted: onInterrupt };
      await run(ctx, ...(args as A));
      state.exitCode = EXIT.OK;
    } catch (error) {
      let failure = toCliError(error);
      if (failure.code === "UNAUTHORIZED" && config && (await isDevnet(new MarketApi({ baseUrl: config.apiUrl })))) {
        failure = new CliError({ ...failure, message: failure.message, hint: DEVNET_UNAUTHORIZED_HINT });
      }
      out.error(failure);
      state.exitCode = failure.exit;
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      for (const release of releases.reverse()) {
        try {
          await release();
        } catch {
          // releasing is best effort: the command's outcome is already decided
        }
      }
    }
  };
}
