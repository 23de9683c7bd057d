/**
 * The open-task query filters on the effective deadline in SQL (db/repositories/tasks.ts effectiveDeadlineSql); the
 * rule's one home is escrow/rules.ts effectiveDeadline. For any pause history (ended pauses and a running one, before,
 * across and after a task's creation), the SQL answers what the rule answers.
 */
import { expect } from "chai";
import fc from "fast-check";
import { createTestDb } from "../../helpers/db";
import { effectiveDeadlineSql } from "../../../server/db/repositories/tasks";
import { effectiveDeadline } from "../../../server/escrow/rules";
import type { PausePeriod } from "../../../server/escrow/records";

/** Pauses that never overlap, oldest first; the newest may still be running. */
const pauseHistory = fc
  .record({
    gaps: fc.array(fc.record({ gap: fc.integer({ min: 1, max: 500 }), length: fc.integer({ min: 1, max: 500 }) }), {
      maxLength: 6,
    }),
    lastRunning: fc.boolean(),
  })
  .map(({ gaps, lastRunning }) => {
    const pauses: PausePeriod[] = [];
    let at = 1_000;
    gaps.forEach(({ gap, length }, i) => {
      const startedAt = at + gap;
      const running = lastRunning && i === gaps.length - 1;
      pauses.push({ seq: i + 1, startedAt, endedAt: running ? null : startedAt + length, startedBlock: i + 1 });
      at = startedAt + length;
    });
    return { pauses, end: at };
  });

describe("effective deadline in SQL", () => {
  it("equals escrow/rules.ts effectiveDeadline for any pause history", async () => {
    const { db, cleanup } = await createTestDb();
    try {
      await fc.assert(
        fc.asyncProperty(
          pauseHistory,
          fc.integer({ min: 900, max: 4_500 }),
          fc.integer({ min: 1, max: 2_000 }),
          fc.integer({ min: 0, max: 1_000 }),
          async ({ pauses, end }, createdAt, term, after) => {
            const now = Math.max(end, createdAt) + after;
            const task = { createdAt, deadline: createdAt + term };
            await db("pause_periods").delete();
            for (const p of pauses) {
              await db("pause_periods").insert({
                seq: p.seq,
                started_at: p.startedAt,
                ended_at: p.endedAt,
                started_block: p.startedBlock,
              });
            }
            const row = (await db
              .select(db.raw("? as d", [effectiveDeadlineSql(db, now)]))
              .from(
                db.raw(
                  "(select cast(? as bigint) as deadline, cast(? as bigint) as created_at, 'base' as chain) as tasks",
                  [task.deadline, task.createdAt],
                ),
              )
              .first()) as { d: number | string };
            expect(Number(row.d)).to.equal(effectiveDeadline(task, pauses, now));
          },
        ),
        { numRuns: 60 },
      );
    } finally {
      await cleanup();
    }
  });
});
