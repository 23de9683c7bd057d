/**
 * What an account is owed by the escrow's pull payments: every Credited (winners, bond returns, forfeited bonds,
 * split halves) adds to it, every Withdrawn takes it to zero. Pure: the indexed events in chain order give the same
 * figures as the escrow's creditOf at the indexed block.
 */
import type { StoredEvent } from "./records";

export interface CreditBalance {
  token: string;
  /** What `withdraw(token, to)` would send now (creditOf), as a decimal string. */
  owed: string;
  /** Everything ever credited in this token. */
  credited: string;
  /** Everything ever withdrawn in this token. */
  withdrawn: string;
}

/** Folds `account`'s Credited and Withdrawn events (chain order) into one balance per token, by token address. */
export function foldCredits(events: readonly StoredEvent[], account: string): CreditBalance[] {
  const who = account.toLowerCase();
  const byToken = new Map<string, { owed: bigint; credited: bigint; withdrawn: bigint }>();
  for (const e of events) {
    if (e.eventName !== "Credited" && e.eventName !== "Withdrawn") continue;
    if (String(e.args.account).toLowerCase() !== who) continue;
    const token = String(e.args.token).toLowerCase();
    const entry = byToken.get(token) ?? { owed: 0n, credited: 0n, withdrawn: 0n };
    const amount = BigInt(String(e.args.amount));
    if (e.eventName === "Credited") {
      entry.owed += amount;
      entry.credited += amount;
    } else {
      // withdraw sends the whole credit: what remains is zero whatever the index saw before.
      entry.owed = 0n;
      entry.withdrawn += amount;
    }
    byToken.set(token, entry);
  }
  return [...byToken.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([token, v]) => ({
      token,
      owed: v.owed.toString(),
      credited: v.credited.toString(),
      withdrawn: v.withdrawn.toString(),
    }));
}
