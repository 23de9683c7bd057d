/**
 * decodeEscrowLog reads the escrow's event words straight from the log's hex. For every event of the escrow's ABI
 * and several sets of values (each type's largest and smallest, empty and long strings, multi-byte text), its
 * arguments must be what ethers' generic decoder gives, in the indexer's stored form (decimal strings for integers,
 * lower-case hex, booleans, text).
 */
import { expect } from "chai";
import { ethers, type EventFragment, type Log, type ParamType } from "ethers";
import { decodeEscrowLog, escrowInterface } from "../../../server/chain/escrowLogs";

type Flavour = "max" | "zero" | "typical";

/** A value of `type` for `flavour`; `salt` varies the typical values between parameters. */
function valueOf(param: ParamType, flavour: Flavour, salt: number): unknown {
  const { type } = param;
  const bits = type === "uint" ? 256 : Number(type.replace(/^u?int/, "") || 256);
  if (type === "bool") return flavour === "max" || (flavour === "typical" && salt % 2 === 1);
  if (type === "address") {
    if (flavour === "max") return "0x" + "f".repeat(40);
    if (flavour === "zero") return ethers.ZeroAddress;
    return ethers.getAddress(ethers.id(`address ${salt}`).slice(0, 42));
  }
  if (type === "bytes32") {
    if (flavour === "max") return "0x" + "f".repeat(64);
    if (flavour === "zero") return ethers.ZeroHash;
    return ethers.id(`bytes32 ${salt}`);
  }
  if (type === "string") {
    if (flavour === "zero") return "";
    // Longer than a word, multi-byte characters; and one of exactly 32 bytes.
    return flavour === "max" ? "naïve ✓ 漢字 — ".repeat(5) : "x".repeat(31 + (salt % 3));
  }
  if (type.startsWith("uint")) {
    if (flavour === "max") return (1n << BigInt(bits)) - 1n;
    if (flavour === "zero") return 0n;
    return BigInt(salt * 1_000_003) % (1n << BigInt(Math.min(bits, 53)));
  }
  if (type.startsWith("int")) {
    if (flavour === "max") return (1n << BigInt(bits - 1)) - 1n;
    if (flavour === "zero") return -(1n << BigInt(bits - 1));
    return -BigInt(salt);
  }
  throw new Error(`no test value for ${type}`);
}

/** What the indexer stores for an ethers-decoded value. */
function stored(param: ParamType, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "string" && param.type !== "string") return value.toLowerCase();
  return value;
}

function logOf(fragment: EventFragment, values: unknown[]): Log {
  const { data, topics } = escrowInterface.encodeEventLog(fragment, values);
  return {
    blockNumber: 7,
    index: 3,
    blockHash: "0x" + "AB".repeat(32),
    transactionHash: "0x" + "Cd".repeat(32),
    transactionIndex: 1,
    address: ethers.ZeroAddress,
    topics,
    data,
  } as unknown as Log;
}

describe("decodeEscrowLog", () => {
  const fragments: EventFragment[] = [];
  escrowInterface.forEachEvent((f) => void fragments.push(f));

  it("knows every event of the escrow's ABI", () => {
    expect(fragments.length).to.be.greaterThan(40);
  });

  for (const flavour of ["max", "zero", "typical"] as const) {
    it(`decodes every event as ethers does, with ${flavour} values`, () => {
      for (const fragment of fragments) {
        const values = fragment.inputs.map((p, i) => valueOf(p, flavour, i + fragment.name.length));
        const log = logOf(fragment, values);
        const decoded = decodeEscrowLog(log, 1_700_000_000);
        expect(decoded, fragment.name).to.not.equal(undefined);
        const reference = escrowInterface.decodeEventLog(fragment, log.data, log.topics);
        const args = Object.fromEntries(fragment.inputs.map((p, i) => [p.name, stored(p, reference[i])]));
        expect(decoded!.args, fragment.name).to.deep.equal(args);
        expect(decoded).to.deep.include({
          eventName: fragment.name,
          blockNumber: 7,
          logIndex: 3,
          blockHash: "0x" + "ab".repeat(32),
          txHash: "0x" + "cd".repeat(32),
          txIndex: 1,
          blockTimestamp: 1_700_000_000,
          taskId: "taskId" in args ? Number(args.taskId) : null,
        });
      }
    });
  }

  it("reads upper-case hex as lower-case", () => {
    const fragment = escrowInterface.getEvent("TaskCreated")!;
    const values = fragment.inputs.map((p, i) => valueOf(p, "typical", i));
    const log = logOf(fragment, values);
    const upper = {
      ...log,
      data: "0x" + log.data.slice(2).toUpperCase(),
      topics: log.topics.map((t) => "0x" + t.slice(2).toUpperCase()),
    };
    expect(decodeEscrowLog(upper as unknown as Log, 1)!.args).to.deep.equal(decodeEscrowLog(log, 1)!.args);
  });

  it("skips a log of another contract's event and a log whose words do not fit the types", () => {
    const other = new ethers.Interface(["event Transfer(address indexed from, address indexed to, uint256 value)"]);
    const transfer = other.encodeEventLog("Transfer", [ethers.ZeroAddress, ethers.ZeroAddress, 1n]);
    expect(
      decodeEscrowLog(
        { ...logOf(escrowInterface.getEvent("Paused")!, [ethers.ZeroAddress]), ...transfer } as unknown as Log,
        1,
      ),
    ).to.equal(undefined);
    // A bool word of 2 is no encoding Solidity writes (ethers would read it as true): the log is skipped.
    const fragment = escrowInterface.getEvent("VerificationCompleted")!;
    const log = logOf(
      fragment,
      fragment.inputs.map((p, i) => valueOf(p, "zero", i)),
    );
    const boolAt = fragment.inputs.filter((p) => !p.indexed).findIndex((p) => p.type === "bool");
    const words = log.data.slice(2).match(/.{64}/g)!;
    words[boolAt] = "0".repeat(63) + "2";
    const dirty = { ...log, data: "0x" + words.join("") } as unknown as Log;
    expect(decodeEscrowLog(dirty, 1)).to.equal(undefined);
  });
});
