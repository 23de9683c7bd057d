/**
 * The indexer's range-transaction writes are multi-row statements (server/db/repositories: market_events,
 * deploy_fee_payments, open_submissions, blocks), chunked below SQLite's bound-variable limit (32,766) and, as
 * unnest arrays, independent of PostgreSQL's 65,535 parameters (one statement for up to 10,000 rows): many rows go
 * in a few statements, with the same
 * rows, ids, skips and overwrites that one statement per row gave. On SQLite each case also runs through the
 * sqlite3 driver, whose raw statements answer RETURNING rows through another path than better-sqlite3's.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { createTestDb, usingPostgres } from "../../helpers/db";
import { createDb, type Db } from "../../../server/db/knex";
import { migrateLatest } from "../../../server/db/migrations";
import { insertMarketEvents, listEventsAfter, type NewMarketEvent } from "../../../server/db/repositories/marketEvents";
import { findDeployFeePayments, recordIndexedDeployFees } from "../../../server/db/repositories/deployFees";
import { insertOpenSubmissions, loadOpenSubmissions } from "../../../server/db/repositories/openSubmissions";
import { listBlocksDownFrom, saveBlocks } from "../../../server/db/repositories/blocks";
import { TASK_COLUMNS, insertTasks, upsertTasks } from "../../../server/db/repositories/tasks";
import { taskRecord } from "../../helpers/taskRecord";

const isPg = (db: Db) => db.client.config.client === "pg";
const hex = (bytes: number) => `0x${crypto.randomBytes(bytes).toString("hex")}`;

/** Runs `body` on a fresh database: the test database, then (on SQLite) one through the sqlite3 driver. */
function onEachDriver(title: string, body: (db: Db) => Promise<void>) {
  it(title, async () => {
    const testDb = await createTestDb();
    try {
      await body(testDb.db);
    } finally {
      await testDb.cleanup();
    }
    if (usingPostgres()) return;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "escrow-db-"));
    const db = createDb({ sqliteFile: path.join(dir, "test.sqlite"), sqliteDriver: "sqlite3" });
    try {
      await migrateLatest(db);
      await body(db);
    } finally {
      await db.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

/** Counts the INSERT statements into `table` that `run` sends. */
async function insertsInto(db: Db, table: string, run: () => Promise<unknown>): Promise<number> {
  let count = 0;
  // knex quotes with backticks on SQLite, the raw statements with double quotes.
  const pattern = new RegExp(`^insert into ["\x60]${table}["\x60]`, "i");
  const onQuery = (q: { sql: string }) => {
    if (pattern.test(q.sql.trim())) count++;
  };
  db.on("query", onQuery);
  try {
    await run();
  } finally {
    db.off("query", onQuery);
  }
  return count;
}

function event(n: number, chain: NewMarketEvent["chain"]): NewMarketEvent {
  return {
    ...(chain ? { chain } : {}),
    type: n % 2 ? "task.assigned" : "task.settled",
    taskId: n,
    taskHash: hex(32),
    poster: hex(20),
    worker: n % 3 ? hex(20) : null,
    target: null,
    toPoster: true,
    toWorker: n % 3 !== 0,
    toTarget: false,
    toExecutors: n % 5 === 0,
    onChainStatus: n % 7,
    txHash: hex(32),
    fields: { n, outcome: "paid" },
    atMs: 1_700_000_000_000 + n,
    source: `test:${n}`,
  };
}

describe("indexer writes: multi-row statements (server/db/repositories)", function () {
  this.timeout(120_000);

  onEachDriver(
    "market events: 1,000 in a few statements, ids in the order given, stored and in-batch duplicates skipped",
    async (db) => {
      // Stored already: sources 5 and 6.
      expect(await db.transaction((trx) => insertMarketEvents(trx, [event(5, "arc"), event(6, "base")]))).to.equal(2);
      const before = await listEventsAfter(db, 0, 10);
      // 1,000 events: the first 300 without a chain (the column's default), then 700 on arc, 5 and 6 among them, and
      // source 900 twice (the second copy skipped as a duplicate of the first).
      const events: NewMarketEvent[] = [];
      for (let n = 1; n <= 1000; n++) events.push(event(n, n <= 300 ? undefined : "arc"));
      events.splice(950, 0, { ...event(900, "arc"), type: "task.disputed" });
      let added = 0;
      const statements = await insertsInto(db, "market_events", async () => {
        added = await db.transaction((trx) => insertMarketEvents(trx, events));
      });
      expect(added).to.equal(998);
      // 300 without a chain and 701 with one: a statement each on PostgreSQL; on SQLite the 701 in two of <= 400 rows.
      expect(statements).to.equal(isPg(db) ? 2 : 3);

      const rows = await listEventsAfter(db, before[before.length - 1].id, 2000);
      expect(rows.map((r) => r.taskId)).to.deep.equal(
        Array.from({ length: 1000 }, (_, i) => i + 1).filter((n) => n !== 5 && n !== 6),
      );
      for (let i = 1; i < rows.length; i++) expect(rows[i].id).to.be.greaterThan(rows[i - 1].id);
      const given = new Map<number, NewMarketEvent>();
      for (const e of events) if (!given.has(e.taskId)) given.set(e.taskId, e);
      for (const row of rows) {
        const { source: _source, chain: _chain, ...expected } = given.get(row.taskId)!;
        expect(row, `event ${row.taskId}`).to.deep.equal({
          ...expected,
          id: row.id,
          chain: row.taskId <= 300 ? "base" : "arc",
        });
      }
      expect(rows.find((r) => r.taskId === 900)!.type, "the first copy of a source is kept").to.equal("task.settled");

      // The same events again add nothing.
      expect(await db.transaction((trx) => insertMarketEvents(trx, events))).to.equal(0);
    },
  );

  onEachDriver(
    "deploy fees: 7,000 indexed payments (70,000 values: over both databases' parameter limits as one VALUES list)",
    async (db) => {
      const payer = hex(20);
      const txHashes = Array.from({ length: 1000 }, () => hex(32));
      const payments = Array.from({ length: 7000 }, (_, i) => ({
        txHash: txHashes[i % 1000],
        logIndex: Math.floor(i / 1000),
        payer,
        nonce: i,
        blockNumber: 100 + (i % 1000),
        indexedAt: 1_700_000_000 + i,
      }));
      // One payment verified before the indexer saw it: left as it is.
      await db("deploy_fee_payments").insert({
        chain: "base",
        tx_hash: txHashes[0],
        log_index: 0,
        payer,
        amount: "5000000",
        nonce: 0,
        block_number: 100,
        verified_at: 1_600_000_000,
        indexed_at: null,
        spent_at: null,
      });
      const statements = await insertsInto(db, "deploy_fee_payments", () =>
        db.transaction((trx) => recordIndexedDeployFees(trx, "base", payments)),
      );
      expect(statements).to.equal(isPg(db) ? 1 : Math.ceil(7000 / 400));
      const count = await db("deploy_fee_payments").where({ chain: "base" }).count({ n: "*" }).first();
      expect(Number(count!.n)).to.equal(7000);
      const [verified, ...indexed] = await findDeployFeePayments(db, txHashes[0]);
      expect(verified).to.deep.include({ amount: "5000000", verifiedAt: 1_600_000_000, indexedAt: null });
      expect(
        indexed.map((p) => [p.logIndex, p.nonce, p.blockNumber, p.indexedAt, p.amount, p.verifiedAt]),
      ).to.deep.equal([1, 2, 3, 4, 5, 6].map((l) => [l, l * 1000, 100, 1_700_000_000 + l * 1000, null, null]));
      // Recorded again (a replayed range): nothing changes.
      await db.transaction((trx) => recordIndexedDeployFees(trx, "base", payments));
      expect(Number((await db("deploy_fee_payments").count({ n: "*" }).first())!.n)).to.equal(7000);
    },
  );

  onEachDriver("blocks and open submissions: many rows upserted, the newest values kept", async (db) => {
    const blocks = Array.from({ length: 1000 }, (_, i) => ({
      number: i + 1,
      hash: hex(32),
      parentHash: hex(32),
      timestamp: 1_700_000_000 + i,
    }));
    await db.transaction((trx) => saveBlocks(trx, "arc", blocks));
    // A reorged tail: blocks 901..1000 saved again with other hashes overwrite theirs.
    const reorged = blocks.slice(900).map((b) => ({ ...b, hash: hex(32) }));
    const statements = await insertsInto(db, "blocks", () => db.transaction((trx) => saveBlocks(trx, "arc", reorged)));
    expect(statements).to.equal(1);
    const stored = await listBlocksDownFrom(db, "arc", 1000, 1000);
    expect(stored).to.have.length(1000);
    expect(stored.slice().reverse()).to.deep.equal([...blocks.slice(0, 900), ...reorged]);
    expect(await listBlocksDownFrom(db, "base", 1000, 10)).to.deep.equal([]);

    const submitters = Array.from({ length: 3 }, () => hex(20));
    const submissions = Array.from({ length: 900 }, (_, i) => ({
      taskId: 1 + Math.floor(i / 3),
      submitter: submitters[i % 3],
      evidenceHash: hex(32),
      blockNumber: 10 + i,
    }));
    // The same submitter on task 1 twice in one call: the later evidence is kept.
    const again = { ...submissions[0], evidenceHash: hex(32), blockNumber: 5000 };
    await db.transaction((trx) => insertOpenSubmissions(trx, "base", [...submissions, again]));
    const loaded = await loadOpenSubmissions(
      db,
      "base",
      Array.from({ length: 300 }, (_, i) => i + 1),
    );
    expect(loaded.size).to.equal(300);
    expect(loaded.get(1)!.get(submitters[0])).to.equal(again.evidenceHash);
    expect(loaded.get(1)!.get(submitters[1])).to.equal(submissions[1].evidenceHash);
    expect(loaded.get(300)!.get(submitters[2])).to.equal(submissions[899].evidenceHash);
  });

  onEachDriver(
    "tasks: a bulk insert stores the values knex's insert stores (booleans, nulls, big numbers)",
    async (db) => {
      const record = taskRecord(1, {
        escalated: true,
        isOpen: false,
        heldReleased: true,
        openOutcome: null,
        payout: "115792089237316195423570985008687907853269984665640564039457584007913129639935",
        deadline: 2 ** 52 + 1,
      });
      await db.transaction((trx) => insertTasks(trx, "base", [record]));
      const [bulk] = await db("tasks").where({ task_id: 1 });
      // The same values through knex's builder, the booleans and the null as JavaScript values, as task 2.
      await db("tasks").insert({
        ...bulk,
        task_id: 2,
        escalated: true,
        is_open: false,
        held_released: true,
        open_outcome: null,
      });
      const [viaKnex] = await db("tasks").where({ task_id: 2 });
      expect(Object.keys(bulk)).to.include.members(TASK_COLUMNS);
      expect({ ...bulk, task_id: viaKnex.task_id }).to.deep.equal(viaKnex);
      expect(bulk.payout).to.equal(record.payout);
      expect(Number(bulk.deadline)).to.equal(record.deadline);
      // A task that has a row already: insertTasks refuses it (upsertTasks overwrites it).
      let refused = false;
      await db.transaction((trx) => insertTasks(trx, "base", [record])).catch(() => (refused = true));
      expect(refused).to.equal(true);
      await db.transaction((trx) => upsertTasks(trx, "base", [{ ...record, escalated: false }]));
      const [after] = await db("tasks").where({ task_id: 1 });
      expect(Boolean(Number(after.escalated))).to.equal(false);
    },
  );
});
