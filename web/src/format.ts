/** Display helpers: token amounts, local times, short addresses, task states in words. */
import { formatUnits } from "ethers";

export function formatAmount(amount: string | null | undefined, decimals = 6, symbol = "USDC"): string {
  if (amount == null) return "—";
  const [whole, fraction = ""] = formatUnits(BigInt(amount), decimals).split(".");
  const trimmed = fraction.replace(/0+$/, "").slice(0, 2).padEnd(2, "0");
  return `${Number(whole).toLocaleString()}.${trimmed} ${symbol}`;
}

/** Unix seconds as a date and time in the viewer's time zone. */
export function formatTime(seconds: number | null | undefined): string {
  if (!seconds) return "—";
  return new Date(seconds * 1000).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function formatIso(iso: string | null | undefined): string {
  if (!iso) return "—";
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function shortAddress(address: string | null | undefined): string {
  if (!address) return "—";
  return `${address.slice(0, 6)}…${address.slice(-4)}`;
}

export const STATUS_LABEL: Record<string, string> = {
  open: "Open",
  assigning: "Assigning",
  assigned: "Working",
  submitted: "Submitted",
  verifying: "Verifying",
  verified: "Verified",
  completed: "Paid",
  cancelled: "Cancelled",
  disputed: "Disputed",
  expired: "Expired",
};

export const STATUS_COLOR: Record<string, string> = {
  open: "blue",
  assigning: "cyan",
  assigned: "indigo",
  submitted: "violet",
  verifying: "grape",
  verified: "teal",
  completed: "green",
  cancelled: "gray",
  disputed: "red",
  expired: "orange",
};

/** The escrow's own status numbers (ITaskEscrow.TaskStatus). */
export const ONCHAIN_STATUS = ["Funded", "Assigned", "Submitted", "Verified", "Completed", "Cancelled", "Disputed"];
