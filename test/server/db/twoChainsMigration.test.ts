/**
 * Migration 014_two_chains on a database filled before it: the rows stay, belong to the posting chain the
 * migration is given, and the other chain may then store the same on-chain keys (SQLite, or PostgreSQL with
 * DATABASE_URL).
 */
import fs from "node:fs";
import { expect } from "chai";
import { createDb } from "../../../server/db/knex";
import { migrateLatest } from "../../../server/db/migrations";
import { getCheckpoint } from "../../../server/db/repositories/checkpoints";
import { countEvents } from "../../../server/db/repositories/escrowEvents";
import { freshDbOptions } from "../../helpers/db";

const event = (blockNumber: number) => ({
  block_number: blockNumber,
  log_index: 0,
  block_hash: `0x${"b".repeat(64)}`,
  tx_hash: `0x${"c".repeat(64)}`,
  tx_index: 0,
  block_timestamp: 1,
  event_name: "TaskCreated",
  task_id: 1,
  args: "{}",
});

describe("migration 014_two_chains", () => {
  it("keeps a database filled at 013 and gives its rows the posting chain; the other chain's ids are its own", async () => {
    const { options, dir } = freshDbOptions();
    const db = createDb(options);
    try {
      expect(await migrateLatest(db, { until: "013_open_verdicts" })).to.include("013_open_verdicts");
      await db("checkpoints").insert({ name: "escrow", block_number: 7, block_hash: "0x07", updated_at: 1 });
      await db("escrow_events").insert(event(7));
      await db("blocks").insert({ block_number: 7, block_hash: "0x07", parent_hash: "0x06", timestamp: 1 });

      expect(await migrateLatest(db, { postingChain: "arc" })).to.include("014_two_chains");
      // The old rows are arc's, the posting chain the database served.
      expect(await getCheckpoint(db, "arc", "escrow")).to.deep.equal({ blockNumber: 7, blockHash: "0x07" });
      expect(await getCheckpoint(db, "base", "escrow")).to.equal(undefined);
      expect(await countEvents(db, "arc")).to.equal(1);
      expect((await db("blocks")).map((b) => b.chain)).to.deep.equal(["arc"]);
      // Base stores the same block, log and checkpoint name beside them; arc's keys stay unique.
      await db("escrow_events").insert({ ...event(7), chain: "base" });
      await db("checkpoints").insert({
        chain: "base",
        name: "escrow",
        block_number: 3,
        block_hash: "0x03",
        updated_at: 1,
      });
      expect(await countEvents(db)).to.equal(2);
      let duplicate: unknown;
      await db("escrow_events")
        .insert({ ...event(7), chain: "arc" })
        .catch((error) => (duplicate = error));
      expect(duplicate, "a second arc row with the same key").to.be.instanceOf(Error);
      // A writer that names no chain writes the posting chain's rows (the column's default).
      await db("blocks").insert({ block_number: 8, block_hash: "0x08", parent_hash: "0x07", timestamp: 2 });
      expect((await db("blocks").where({ block_number: 8 }).first()).chain).to.equal("arc");
    } finally {
      if (options.pgSchema) await db.raw(`drop schema if exists "${options.pgSchema}" cascade`);
      await db.destroy();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
