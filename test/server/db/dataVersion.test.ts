import { expect } from "chai";
import { createTestDb, usingPostgres } from "../../helpers/db";
import { dataVersion, readDataVersion } from "../../../server/db/repositories/dataVersion";

/** A row any connection can write: the checkpoints table exists from the first migration. */
const write = (db: Awaited<ReturnType<typeof createTestDb>>["db"], n: number) =>
  db("checkpoints").insert({
    chain: "base",
    name: `version-test-${n}`,
    block_number: n,
    block_hash: "0x00",
    updated_at: n,
  });

describe("dataVersion (the key of the reads' caches)", () => {
  it("stays the same while nothing is written", async function () {
    // On PostgreSQL it is the server's snapshot: another database's writes (other suites) change it too.
    if (usingPostgres()) this.skip();
    const t = await createTestDb();
    try {
      const first = await readDataVersion(t.db);
      expect(await readDataVersion(t.db)).to.equal(first);
      expect(await dataVersion(t.db)).to.equal(first);
    } finally {
      await t.cleanup();
    }
  });

  it("changes after a write through the same pool", async () => {
    const t = await createTestDb();
    try {
      const before = await dataVersion(t.db);
      await write(t.db, 1);
      expect(await dataVersion(t.db)).to.not.equal(before);
    } finally {
      await t.cleanup();
    }
  });

  it("changes after a write committed by another connection (another process's indexer)", async () => {
    const t = await createTestDb();
    try {
      const other = t.reopen();
      const before = await dataVersion(t.db);
      await write(other, 2);
      expect(await dataVersion(t.db)).to.not.equal(before);
    } finally {
      await t.cleanup();
    }
  });

  it("answers a call made after a write with a read begun after it, even while an earlier read runs", async () => {
    const t = await createTestDb();
    try {
      const other = t.reopen();
      const before = await dataVersion(t.db);
      for (let i = 0; i < 20; i++) {
        const earlier = dataVersion(t.db); // may still be running when the write commits
        await write(other, 100 + i);
        const after = await dataVersion(t.db);
        expect(after, `round ${i}`).to.not.equal(before);
        await earlier;
        if (!usingPostgres()) expect(await dataVersion(t.db)).to.equal(after);
      }
    } finally {
      await t.cleanup();
    }
  });

  it("shares one read among the calls made in one turn of the event loop", async () => {
    const t = await createTestDb();
    try {
      let statements = 0;
      t.db.on("query", (q: { sql: string }) => {
        if (/data_version|pg_current_snapshot/.test(q.sql)) statements++;
      });
      const versions = await Promise.all(Array.from({ length: 10 }, () => dataVersion(t.db)));
      expect(statements).to.equal(1);
      expect(new Set(versions).size).to.equal(1);
      await dataVersion(t.db);
      expect(statements).to.equal(2);
    } finally {
      await t.cleanup();
    }
  });
});
