import { expect } from "chai";
import fc from "fast-check";
import { ethers } from "ethers";
import { encodeCreateTask, encodeCreateTaskWithEthers, type TaskCall } from "../../../server/chain/escrowCalls";

const hex = (bytes: number) =>
  fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => `0x${Buffer.from(b).toString("hex")}`);
const address = hex(20);

function both(
  token: string,
  task: TaskCall,
): { fast?: string; reference?: string; fastError?: unknown; error?: unknown } {
  const out: { fast?: string; reference?: string; fastError?: unknown; error?: unknown } = {};
  try {
    out.reference = encodeCreateTaskWithEthers(token, task);
  } catch (error) {
    out.error = error;
  }
  try {
    out.fast = encodeCreateTask(token, task);
  } catch (error) {
    out.fastError = error;
  }
  return out;
}

describe("createTask calldata", () => {
  it("is byte for byte what ethers' AbiCoder encodes, with and without a verifier agent", () => {
    fc.assert(
      fc.property(
        hex(32),
        fc.oneof(
          address,
          address.map((a) => ethers.getAddress(a)),
        ),
        fc.bigInt({ min: 1n, max: (1n << 256n) - 1n }),
        fc.oneof(
          fc.string({ maxLength: 100 }),
          fc.fullUnicodeString({ maxLength: 40 }),
          fc.constantFrom("global", "x".repeat(32), "y".repeat(33)),
        ),
        fc.integer({ min: 3600, max: 7_776_000 }),
        fc.option(address, { nil: undefined }),
        (taskHash, token, amount, locationZone, duration, verifierAgent) => {
          const r = both(token, { taskHash, amount, locationZone, duration, verifierAgent });
          expect(r.error).to.equal(undefined);
          expect(r.fast).to.equal(r.reference);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("refuses what ethers refuses: a bad checksum, a value out of range, a lone surrogate", () => {
    const task: TaskCall = { taskHash: `0x${"ab".repeat(32)}`, amount: 5n, locationZone: "global", duration: 86_400 };
    const good = ethers.getAddress(`0x${"ab".repeat(20)}`);
    const badChecksum =
      good.slice(0, 3) +
      (good[3] === good[3].toUpperCase() ? good[3].toLowerCase() : good[3].toUpperCase()) +
      good.slice(4);
    for (const [token, t] of [
      [badChecksum, task],
      [good, { ...task, amount: 1n << 256n }],
      [good, { ...task, amount: -1n }],
      [good, { ...task, locationZone: "\uD800" }],
    ] as const) {
      const r = both(token, t);
      expect(
        r.error,
        JSON.stringify(t, (_, v) => (typeof v === "bigint" ? String(v) : v)),
      ).to.not.equal(undefined);
      expect(r.fastError).to.not.equal(undefined);
    }
  });
});
