import { expect } from "chai";
import { Writable } from "node:stream";
import { createLogger } from "../../server/logger";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream: stream as unknown as { write(msg: string): void } };
}

describe("server/logger.ts (pino)", () => {
  it("writes one JSON line per entry: ISO time, level by name, msg, base, child and entry fields", () => {
    const { lines, stream } = capture();
    const logger = createLogger("info", { service: "api" }, stream).child({ component: "indexer" });
    logger.info("indexer started", { block: 12, amount: 10n ** 30n });
    logger.debug("not written below the level");
    expect(lines).to.have.length(1);
    const [line] = lines;
    expect(line).to.include({ level: "info", msg: "indexer started", service: "api", component: "indexer", block: 12 });
    expect(new Date(String(line.time)).toISOString()).to.equal(line.time);
    expect(String(line.amount)).to.match(/^1e\+?30$|^1000000000000000000000000000000$/);
  });

  it("serializes errors with their message, stack and cause", () => {
    const { lines, stream } = capture();
    createLogger("debug", {}, stream).error("send failed", {
      error: new Error("outer", { cause: new Error("inner") }),
    });
    const error = lines[0].error as { message: string; stack: string; type: string };
    expect(error.type).to.equal("Error");
    expect(error.message).to.contain("outer");
    expect(error.stack).to.contain("logger.test.ts");
    expect(JSON.stringify(error)).to.contain("inner");
  });

  it("never writes a credential under a redacted key", () => {
    const { lines, stream } = capture();
    createLogger("info", {}, stream).warn("config", {
      privateKey: "0xsecret",
      request: { authorization: "Bearer k", apiKey: "sk_live" },
    });
    const text = JSON.stringify(lines[0]);
    expect(text).not.to.contain("0xsecret");
    expect(text).not.to.contain("Bearer k");
    expect(text).not.to.contain("sk_live");
    expect(lines[0].privateKey).to.equal("[redacted]");
  });

  it("writes nothing when silent", () => {
    const { lines, stream } = capture();
    createLogger("silent", {}, stream).error("dropped");
    expect(lines).to.have.length(0);
  });
});
