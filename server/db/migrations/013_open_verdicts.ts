import type { Migration } from "./migration";

/**
 * The endings of open-submission tasks and the held count, on the task projection:
 * - open_pick, open_picked_at: the poster's pick among several revealed submissions (OpenWinnerProposed), paid once
 *   the contest window passes uncontested; the zero address and 0 while none;
 * - open_outcome: how an open task's winner was decided: "picked" (the poster), "judged" (the judge's OpenJudged; a
 *   refund when no worker is set), "default" (OpenDefaultReleased: the poster let the selection window pass); null
 *   while undecided;
 * - held_released: releaseSettled took the settled task out of the escrow's held count (HeldReleased).
 * Rows written before this migration get the defaults; a re-index from the events fills them.
 */
export const openVerdicts: Migration = {
  name: "013_open_verdicts",
  async up(db) {
    await db.schema.alterTable("tasks", (t) => {
      t.string("open_pick", 42).notNullable().defaultTo("0x0000000000000000000000000000000000000000");
      t.bigInteger("open_picked_at").notNullable().defaultTo(0);
      t.string("open_outcome", 16).nullable();
      t.boolean("held_released").notNullable().defaultTo(false);
    });
  },
  async down(db) {
    await db.schema.alterTable("tasks", (t) => {
      t.dropColumn("held_released");
      t.dropColumn("open_outcome");
      t.dropColumn("open_picked_at");
      t.dropColumn("open_pick");
    });
  },
};
