import type { ChainName } from "../../escrow/records";
import type { PausePeriod } from "../../escrow/records";
import { queryRows, type Queryable } from "./util";

/** Pause periods seen in the escrow's events; deadlines shift by the time spent paused. */
export async function loadPausePeriods(db: Queryable, chain: ChainName): Promise<PausePeriod[]> {
  const rows = await queryRows(db, `select * from "pause_periods" where "chain" = ? order by "seq"`, [chain]);
  return rows.map((r) => ({
    seq: Number(r.seq),
    startedAt: Number(r.started_at),
    endedAt: r.ended_at === null ? null : Number(r.ended_at),
    startedBlock: Number(r.started_block),
  }));
}

export async function replacePausePeriods(
  db: Queryable,
  chain: ChainName,
  pauses: readonly PausePeriod[],
): Promise<void> {
  await db("pause_periods").where({ chain }).delete();
  const rows = pauses.map((p) => ({
    chain,
    seq: p.seq,
    started_at: p.startedAt,
    ended_at: p.endedAt,
    started_block: p.startedBlock,
  }));
  if (rows.length) await db("pause_periods").insert(rows);
}
