/**
 * Human formatting of the service's records: amounts in the token's units, times, task lines.
 */
import { formatUnits } from "ethers";

/** The token's display: 6 decimals and USDC unless the settlement record says otherwise. */
export interface TokenDisplay {
  symbol: string;
  decimals: number;
}

export const USDC_DISPLAY: TokenDisplay = { symbol: "USDC", decimals: 6 };

/** `1000000` -> `1 USDC`, `2500000` -> `2.5 USDC` (no trailing `.0`). */
export function amountText(raw: string | bigint | null | undefined, token: TokenDisplay = USDC_DISPLAY): string {
  if (raw === null || raw === undefined) return "-";
  return `${formatUnits(BigInt(raw), token.decimals).replace(/\.0$/, "")} ${token.symbol}`;
}

export function timeText(unixSeconds: number | null | undefined): string {
  if (!unixSeconds) return "-";
  return new Date(unixSeconds * 1000).toISOString().replace(".000Z", "Z");
}

export function shortHash(hash: string): string {
  return hash.length > 14 ? `${hash.slice(0, 10)}…${hash.slice(-4)}` : hash;
}

/** The marketplace states after which nothing changes any more. */
export const FINAL_STATES = new Set(["completed", "cancelled"]);

/** What a final state means for the money. */
export function outcomeOf(status: string): "paid" | "refunded" | undefined {
  if (status === "completed") return "paid";
  if (status === "cancelled") return "refunded";
  return undefined;
}
