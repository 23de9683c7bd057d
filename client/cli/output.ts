/**
 * What the CLI prints. Human mode: progress of long operations on stderr (a spinner line on a TTY, plain lines
 * otherwise) and the result on stdout. `--json`: no progress, stdout carries exactly one JSON document, the result,
 * or `{ "error": { code, message, hint, status?, details?, exitCode } }` on failure.
 */
import type { Writable } from "node:stream";
import type { CliError } from "./errors";

export interface OutputStreams {
  stdout: Writable;
  stderr: Writable & { isTTY?: boolean };
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** The handle of one running step: `update` changes its text (a spinner line, or a plain line when not on a TTY). */
export interface Step {
  update(text: string): void;
}

export class Output {
  readonly json: boolean;
  private readonly tty: boolean;

  constructor(
    json: boolean,
    private readonly streams: OutputStreams = { stdout: process.stdout, stderr: process.stderr },
  ) {
    this.json = json;
    this.tty = Boolean(streams.stderr.isTTY);
  }

  /** A progress line (human mode only). */
  info(text: string): void {
    if (!this.json) this.streams.stderr.write(`${text}\n`);
  }

  /**
   * Runs one step of a long operation, showing its progress: `… label` while it runs (animated on a TTY),
   * `✓ label: detail` when done, `✗ label` when it fails (the error itself is printed by the caller).
   */
  async step<T>(label: string, run: (step: Step) => Promise<T>, detail?: (value: T) => string | undefined): Promise<T> {
    if (this.json) return run({ update: () => undefined });
    let text = label;
    let timer: NodeJS.Timeout | undefined;
    const stderr = this.streams.stderr;
    if (this.tty) {
      let frame = 0;
      const draw = () => stderr.write(`\r\x1b[K${FRAMES[frame++ % FRAMES.length]} ${text}`);
      draw();
      timer = setInterval(draw, 80);
    } else {
      stderr.write(`… ${label}\n`);
    }
    const update = (next: string) => {
      if (next === text) return;
      text = `${label}: ${next}`;
      if (!this.tty) stderr.write(`  ${next}\n`);
    };
    try {
      const value = await run({ update });
      const suffix = detail?.(value);
      if (timer) clearInterval(timer);
      stderr.write(`${this.tty ? "\r\x1b[K" : ""}✓ ${label}${suffix ? `: ${suffix}` : ""}\n`);
      return value;
    } catch (error) {
      if (timer) clearInterval(timer);
      stderr.write(`${this.tty ? "\r\x1b[K" : ""}✗ ${label}\n`);
      throw error;
    }
  }

  /** The command's result: `data` as JSON, or the human lines. */
  result(data: unknown, human: string | string[] | (() => string | string[])): void {
    if (this.json) {
      this.streams.stdout.write(JSON.stringify(data, jsonReplacer, 2) + "\n");
      return;
    }
    const text = typeof human === "function" ? human() : human;
    const lines = Array.isArray(text) ? text : [text];
    this.streams.stdout.write(lines.join("\n") + (lines.length ? "\n" : ""));
  }

  /** A failure: the code, the message and what to do (or the JSON error document). */
  error(error: CliError): void {
    if (this.json) {
      this.streams.stdout.write(JSON.stringify({ error: error.toJSON() }, jsonReplacer, 2) + "\n");
      return;
    }
    const lines = [`error ${error.code}: ${error.message}`];
    if (error.details !== undefined) lines.push(`  details: ${JSON.stringify(error.details, jsonReplacer)}`);
    if (error.hint) lines.push(`  what to do: ${error.hint}`);
    this.streams.stderr.write(lines.join("\n") + "\n");
  }
}

/** BigInts as decimal strings (amounts, ids), so JSON output never loses precision. */
export function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

/** Rows as aligned columns, for lists. */
export function table(rows: string[][]): string[] {
  if (rows.length === 0) return [];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => (row[i] ?? "").length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i])))
      .join("  ")
      .trimEnd(),
  );
}
