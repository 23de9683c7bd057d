/**
 * bench:api's statement counter (bench/lib/statements.ts): statements a request by their text, most frequent first,
 * and the distinct data versions read (each a miss of the caches keyed by it), on SQLite or PostgreSQL (DATABASE_URL).
 */
import { expect } from "chai";
import { countStatements } from "../../bench/lib/statements";
import { readDataVersion } from "../../server/db/repositories/dataVersion";
import { queryRows } from "../../server/db/repositories/util";
import { createTestDb, type TestDb } from "../helpers/db";

describe("bench:api's statement counter (bench/lib/statements.ts)", () => {
  let testDb: TestDb;

  beforeEach(async () => {
    testDb = await createTestDb();
  });
  afterEach(() => testDb.cleanup());

  it("counts statements by text a request, most frequent first, and the distinct data versions read", async () => {
    const { db } = testDb;
    await readDataVersion(db); // statements before the reset are not counted
    const counter = countStatements(db);
    counter.reset();
    try {
      await readDataVersion(db);
      await readDataVersion(db);
      await db("checkpoints").insert({ name: "a", block_number: 7, block_hash: "0x01", updated_at: 1 });
      await readDataVersion(db);
      for (let i = 0; i < 3; i++) await queryRows(db, `select "name" from "checkpoints" where "name" = ?`, ["a"]);
      const [total, first, second] = counter.report(10);
      // 3 version reads, 1 insert, 3 selects over 10 requests; the insert made a second version.
      expect(total).to.equal("0.700 statements a request (7 in all); 2 distinct data versions read");
      expect(first).to.match(/^ {2}0\.300: /);
      expect(second).to.match(/^ {2}0\.300: /);
    } finally {
      counter.close();
    }
    await readDataVersion(db);
    expect(counter.report(1)[0], "closed: nothing more counted").to.match(/^7\.000 statements/);
  });
});
