import { expect } from "chai";
import { createTestDb, usingPostgres, type TestDb } from "../../helpers/db";
import { bulkInsert, inIds, queryArrays, queryRows } from "../../../server/db/repositories/util";
import { saveBlocks } from "../../../server/db/repositories/blocks";

/** Rows of the checkpoints table (a small table every migrated database has). */
const CHECKPOINT = `select "name", "block_number" from "checkpoints" where "name" = ?`;

describe("queryRows (server/db/repositories/util.ts)", () => {
  let testDb: TestDb;

  beforeEach(async () => {
    testDb = await createTestDb();
    await testDb.db("checkpoints").insert({ name: "a", block_number: 7, block_hash: "0x01", updated_at: 1 });
  });
  afterEach(() => testDb.cleanup());

  it("answers what knex answers, booleans bound as SQLite's 0 and 1, and reports the query", async () => {
    const { db } = testDb;
    const seen: string[] = [];
    const onQuery = (q: { sql: string }) => seen.push(q.sql);
    db.on("query", onQuery);
    try {
      expect(await queryRows(db, CHECKPOINT, ["a"])).to.deep.equal([{ name: "a", block_number: 7 }]);
      expect(await queryRows(db, CHECKPOINT, ["b"])).to.deep.equal([]);
      const [row] = await queryRows(db, `select ? as "yes", ? as "no"`, [true, false]);
      expect([1, true, "true"], String(row.yes)).to.include(row.yes);
      expect([0, false, "false"], String(row.no)).to.include(row.no);
    } finally {
      db.off("query", onQuery);
    }
    expect(seen.some((sql) => sql.includes(`from "checkpoints" where "name" =`))).to.equal(true);
  });

  it("answers the rows a write returns, and writes them", async () => {
    const { db } = testDb;
    const rows = await queryRows(
      db,
      `update "checkpoints" set "block_number" = "block_number" + ? where "name" = ? returning "name", "block_number"`,
      [5, "a"],
    );
    expect(rows).to.deep.equal([{ name: "a", block_number: 12 }]);
    expect(await queryRows(db, CHECKPOINT, ["a"])).to.deep.equal([{ name: "a", block_number: 12 }]);
  });

  it("waits for a transaction holding SQLite's one connection instead of reading its uncommitted rows", async function () {
    if (usingPostgres()) this.skip(); // PostgreSQL reads on another connection of its pool
    const { db } = testDb;
    const trx = await db.transaction();
    await trx("checkpoints").where({ name: "a" }).update({ block_number: 8 });
    let answered: unknown[] | undefined;
    const read = queryRows(db, CHECKPOINT, ["a"]).then((rows) => (answered = rows));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(answered, "read while the transaction held the connection").to.equal(undefined);
    await trx.commit();
    await read;
    expect(answered).to.deep.equal([{ name: "a", block_number: 8 }]);
  });

  it("queryArrays answers each row's values in the order selected, also for a statement queryRows ran before", async () => {
    const { db } = testDb;
    await db("checkpoints").insert({ name: "b", block_number: 9, block_hash: "0x02", updated_at: 2 });
    const sql = `select "block_number", "name" from "checkpoints" order by "name"`;
    expect(await queryRows(db, sql)).to.deep.equal([
      { block_number: 7, name: "a" },
      { block_number: 9, name: "b" },
    ]);
    expect(await queryArrays(db, sql)).to.deep.equal([
      [7, "a"],
      [9, "b"],
    ]);
    // The same text again as keyed rows: the shared prepared statement answers the shape asked for.
    expect(await queryRows(db, sql)).to.deep.equal([
      { block_number: 7, name: "a" },
      { block_number: 9, name: "b" },
    ]);
  });

  it("queryArrays answers the same values through knex, while a transaction holds SQLite's one connection", async () => {
    const { db } = testDb;
    const trx = await db.transaction();
    try {
      const sql = `select "name", "block_number" from "checkpoints" where "name" = ?`;
      expect(await queryArrays(trx, sql, ["a"])).to.deep.equal([["a", 7]]);
    } finally {
      await trx.rollback();
    }
  });

  it("on PostgreSQL, queryArrays prepares a statement once per connection and runs it again without its text", async function () {
    if (!usingPostgres()) this.skip(); // better-sqlite3's statements are prepared by knex.ts
    const { db } = testDb;
    const sql = `select "name", "block_number" from "checkpoints" where "name" = ?`;
    // A transaction holds one connection of the pool: both runs are its.
    const prepared = await db.transaction(async (trx) => {
      expect(await queryArrays(trx, sql, ["a"])).to.deep.equal([["a", 7]]);
      expect(await queryArrays(trx, sql, ["b"])).to.deep.equal([]);
      const rows = await trx.raw(`select "statement" from pg_prepared_statements where not "from_sql"`);
      return rows.rows.map((r: { statement: string }) => r.statement);
    });
    expect(prepared).to.deep.equal([sql.replace("?", "$1")]);
  });

  it("inside a transaction, writes and reads run as its statements, reported with its id, and roll back with it", async () => {
    const { db } = testDb;
    const seen: { sql: string; __knexTxId?: string }[] = [];
    const onQuery = (q: { sql: string; __knexTxId?: string }) => seen.push(q);
    db.on("query", onQuery);
    const trx = await db.transaction();
    try {
      await bulkInsert(
        trx,
        "checkpoints",
        ["name", "block_number", "block_hash", "updated_at"],
        [["b", 9, "0x02", 2]],
        `on conflict ("chain", "name") do nothing`,
      );
      const written = await queryRows(trx, CHECKPOINT, ["b"]);
      expect(written).to.deep.equal([{ name: "b", block_number: 9 }]);
    } finally {
      await trx.rollback();
      db.off("query", onQuery);
    }
    expect(await queryRows(db, CHECKPOINT, ["b"])).to.deep.equal([]);
    const insert = seen.find((q) => q.sql.startsWith(`insert into "checkpoints"`));
    // PostgreSQL's driver reports the statement with its positional placeholders ($1).
    const read = seen.find((q) => q.sql.replace(/\$\d+/g, "?") === CHECKPOINT);
    expect(read, "the read reported to knex's query listeners").to.not.equal(undefined);
    expect(insert?.__knexTxId, "the insert's transaction").to.be.a("string");
    expect(read?.__knexTxId, "the read's transaction").to.equal(insert?.__knexTxId);
  });

  it("inIds selects thousands of ids in one statement with one binding", async () => {
    const { db } = testDb;
    const blocks = Array.from({ length: 1200 }, (_, i) => ({
      number: i + 1,
      hash: `0x${(i + 1).toString(16)}`,
      parentHash: "0x00",
      timestamp: i,
    }));
    await db.transaction((trx) => saveBlocks(trx, "base", blocks));
    const wanted = [...Array.from({ length: 1100 }, (_, i) => 2 * i + 1).filter((n) => n <= 1200), 5000];
    const ids = inIds(db, "block_number", wanted);
    let statements = 0;
    const onQuery = () => statements++;
    db.on("query", onQuery);
    const rows = await queryRows(db, `select "block_number" from "blocks" where "chain" = ? and ${ids.sql}`, [
      "base",
      ids.binding,
    ]).finally(() => db.off("query", onQuery));
    expect(statements).to.equal(1);
    expect(rows.map((r) => Number(r.block_number)).sort((a, b) => a - b)).to.deep.equal(
      wanted.filter((n) => n <= 1200),
    );
  });
});
