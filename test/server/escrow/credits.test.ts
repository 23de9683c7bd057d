/** What an account is owed, folded from the escrow's Credited and Withdrawn events (server/escrow/credits.ts). */
import { expect } from "chai";
import { foldCredits } from "../../../server/escrow/credits";
import type { StoredEvent } from "../../../server/escrow/records";

const ME = "0x00000000000000000000000000000000000000a1";
const OTHER = "0x00000000000000000000000000000000000000b1";
const USDC = "0x00000000000000000000000000000000000000c1";
const NATIVE = "0x0000000000000000000000000000000000000000";

let logIndex = 0;
const event = (eventName: string, args: Record<string, string>): StoredEvent => ({
  blockNumber: 1,
  logIndex: logIndex++,
  blockHash: `0x${"00".repeat(32)}`,
  txHash: `0x${"ab".repeat(32)}`,
  txIndex: 0,
  blockTimestamp: 1_700_000_000,
  eventName,
  taskId: null,
  args,
});

describe("server/escrow/credits.ts", () => {
  it("adds credits per token, empties one at its withdrawal, and ignores other accounts", () => {
    const events = [
      event("Credited", { token: USDC, account: ME, amount: "45" }),
      event("Credited", { token: USDC, account: OTHER, amount: "50" }),
      event("Credited", { token: NATIVE, account: ME, amount: "7" }),
      event("Credited", { token: USDC, account: ME, amount: "5" }),
      event("Withdrawn", { token: USDC, account: ME, to: OTHER, amount: "50" }),
      event("Credited", { token: USDC, account: ME, amount: "3" }),
    ];
    expect(foldCredits(events, ME.toUpperCase().replace("0X", "0x"))).to.deep.equal([
      { token: NATIVE, owed: "7", credited: "7", withdrawn: "0" },
      { token: USDC, owed: "3", credited: "53", withdrawn: "50" },
    ]);
    expect(foldCredits(events, OTHER)).to.deep.equal([{ token: USDC, owed: "50", credited: "50", withdrawn: "0" }]);
  });
});
