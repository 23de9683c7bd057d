/**
 * The CLI's progress display: a spinner line redrawn in place on a terminal, plain lines when stderr is a pipe or a
 * file, nothing with --json (stdout then holds only the result document).
 */
import { Writable } from "node:stream";
import { expect } from "chai";
import { Output } from "../../../client/cli/output";
import { CliError } from "../../../client/cli/errors";
import { preparedText } from "../../../client/cli/commands/posting";

function capture(isTTY: boolean) {
  const chunks = { stdout: "", stderr: "" };
  const stream = (name: "stdout" | "stderr") =>
    Object.assign(
      new Writable({
        write(chunk, _encoding, done) {
          chunks[name] += chunk.toString();
          done();
        },
      }),
      { isTTY },
    );
  return { streams: { stdout: stream("stdout"), stderr: stream("stderr") }, chunks };
}

/** Waits (polling) until `seen` holds: here, until the spinner's own timer has drawn what the test looks for. */
async function until(seen: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!seen()) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("market CLI: progress output", () => {
  it("on a terminal, a spinner redraws the step's line in place, then a check mark with the detail", async () => {
    const { streams, chunks } = capture(true);
    const out = new Output(false, streams);
    const value = await out.step(
      "posting the task",
      async (step) => {
        await until(() => chunks.stderr.includes("\r\x1b[K⠙ posting the task"), "redraw of the line");
        step.update("brief uploaded");
        await until(() => chunks.stderr.includes("posting the task: brief uploaded"), "redraw with the update");
        return 7;
      },
      (id) => `#${id}`,
    );
    expect(value).to.equal(7);
    expect(chunks.stderr).to.match(/^\r\x1b\[K⠋ posting the task/);
    expect(chunks.stderr).to.include("\r\x1b[K⠙ posting the task"); // redrawn, not a new line
    expect(chunks.stderr).to.include("posting the task: brief uploaded");
    expect(chunks.stderr.endsWith("\r\x1b[K✓ posting the task: #7\n")).to.equal(true);
    expect(chunks.stderr.split("\n")).to.have.length(2); // one finished line
    expect(chunks.stdout).to.equal("");
  });

  it("off a terminal, plain lines: the step, each update, then the outcome; a failure marks the step", async () => {
    const { streams, chunks } = capture(false);
    const out = new Output(false, streams);
    await out.step("posting the task", async (step) => step.update("brief uploaded"));
    await out
      .step("listing", async () => {
        throw new Error("refused");
      })
      .catch(() => undefined);
    expect(chunks.stderr).to.equal("… posting the task\n  brief uploaded\n✓ posting the task\n… listing\n✗ listing\n");
  });

  it("with --json, no progress at all, the result as one JSON document (bigints as strings), errors as { error }", async () => {
    const { streams, chunks } = capture(true);
    const out = new Output(true, streams);
    await out.step("posting", async (step) => step.update("uploaded"));
    out.result({ amount: 2_500_000n }, "human text");
    expect(chunks.stderr).to.equal("");
    expect(JSON.parse(chunks.stdout)).to.deep.equal({ amount: "2500000" });

    const failed = capture(false);
    new Output(true, failed.streams).error(new CliError({ code: "INVALID_AMOUNT", message: "bad", exit: 2 }));
    expect(JSON.parse(failed.chunks.stdout).error).to.include({ code: "INVALID_AMOUNT", exitCode: 2 });
    expect(JSON.parse(failed.chunks.stdout).error.hint).to.include("--amount");
  });

  it("says what preparing did to the briefs: public ones stored as written, private ones encrypted", () => {
    expect(preparedText(["public"])).to.equal("brief prepared (public: stored as written, readable by anyone)");
    expect(preparedText(["private"])).to.equal(
      "brief prepared (private: encrypted, the key wrapped to each agent that may take the task)",
    );
    expect(preparedText(["public", "public"])).to.match(/^briefs prepared \(public:/);
    expect(preparedText(["private", "public", "private"])).to.equal(
      "briefs prepared (2 private: encrypted, the key wrapped to each agent that may take the task)",
    );
  });
});
