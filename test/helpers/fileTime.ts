/** One test file's times as test/helpers/fileTimes.ts records them and scripts/testTimes.ts reads them. */
export interface FileTime {
  file: string;
  /** Wall time, first top-level suite start to last top-level suite end. */
  ms: number;
  /** CPU time (user + system) of this process and its reaped children over the same span; null without /proc. */
  cpuMs: number | null;
  passed: number;
  failed: number;
  pending: number;
}
