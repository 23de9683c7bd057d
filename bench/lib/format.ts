/** Number and time formatting for the benchmarks' reports. */
import { performance } from "node:perf_hooks";

export const now = () => performance.now();
export const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
export const seconds = (ms: number) => `${fmt(ms / 1000, 1)} s`;
