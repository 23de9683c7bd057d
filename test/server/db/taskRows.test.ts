import { expect } from "chai";
import { ethers } from "ethers";
import { createTestDb, usingPostgres, type TestDb } from "../../helpers/db";
import { findTaskRows } from "../../../server/db/repositories/taskRows";
import { TASK_COLUMNS, findTaskById, upsertTasks } from "../../../server/db/repositories/tasks";
import {
  LISTING_COLUMNS,
  findListingByHash,
  findListingByTaskId,
  insertListing,
  type ListingRecord,
} from "../../../server/db/repositories/listings";
import { ASSIGNMENT_COLUMNS, findAssignment, insertAssignment } from "../../../server/db/repositories/assignments";
import { TASK_STATUS, ZERO_ADDRESS } from "../../../server/escrow/records";
import { taskRecord } from "../../helpers/taskRecord";

const POSTER = `0x${"b".repeat(40)}`;
const WORKER = `0x${"c".repeat(40)}`;

function listing(taskId: number, overrides: Partial<ListingRecord> = {}): ListingRecord {
  return {
    taskId,
    taskHash: ethers.id(`brief ${taskId}`),
    chain: "base",
    poster: POSTER,
    txHash: ethers.id(`tx ${taskId}`),
    privacy: "private",
    verificationMode: "auto",
    verificationCriteria: { keywords: ["a", "b"] },
    verifierAddress: null,
    rootHash: ethers.id(`root ${taskId}`),
    wrappedKeys: { [WORKER]: "wrapped" },
    targetExecutor: WORKER,
    serviceId: 3,
    serviceTerms: { serviceId: 3, name: "summary", priceRaw: "5000000", token: ZERO_ADDRESS, agent: WORKER },
    publicBrief: null,
    custodyWrappedKey: "custody",
    token: `0x${"d".repeat(40)}`,
    amount: "5000000",
    deadline: 1_800_086_400,
    listedAt: 1_800_000_001,
    capabilities: [],
    ...overrides,
  };
}

describe("findTaskRows (server/db/repositories/taskRows.ts)", () => {
  let testDb: TestDb;

  beforeEach(async () => {
    testDb = await createTestDb();
  });
  afterEach(() => testDb.cleanup());

  it("names every column of the three tables it joins (a new column must be added to its list)", async () => {
    const { db } = testDb;
    for (const [table, columns] of [
      ["tasks", TASK_COLUMNS],
      ["listings", LISTING_COLUMNS],
      ["task_assignments", ASSIGNMENT_COLUMNS],
    ] as const) {
      expect([...columns].sort(), table).to.deep.equal(Object.keys(await db(table).columnInfo()).sort());
    }
  });

  it("answers what the three separate reads answer: task, listing with sorted capabilities, assignment", async () => {
    const { db } = testDb;
    await upsertTasks(db, "base", [
      taskRecord(1),
      taskRecord(2, { status: TASK_STATUS.Completed, worker: WORKER, feePaid: "500000", payout: "4500000" }),
    ]);
    await db.transaction(async (trx) => {
      await insertListing(trx, listing(1, { capabilities: ["web", "summarise", "code"] }));
      await insertListing(trx, listing(2, { privacy: "public", wrappedKeys: null, serviceTerms: null }));
    });
    await insertAssignment(db, {
      chain: "base",
      taskId: 1,
      agent: WORKER,
      via: "accept",
      intentId: 7,
      acceptedAt: 1_800_000_005,
    });

    for (const id of [1, 2]) {
      const rows = await findTaskRows(db, { taskId: id });
      expect(rows.task, `task ${id}`).to.deep.equal(await findTaskById(db, id));
      expect(rows.listing, `listing ${id}`).to.deep.equal(await findListingByTaskId(db, id));
      expect(rows.assignment, `assignment ${id}`).to.deep.equal(await findAssignment(db, id, "base"));
    }
    const first = await findTaskRows(db, { taskId: 1 });
    expect(first.listing?.capabilities).to.deep.equal(["code", "summarise", "web"]);
    expect(first.assignment).to.deep.equal({
      chain: "base",
      taskId: 1,
      agent: WORKER,
      via: "accept",
      intentId: 7,
      acceptedAt: 1_800_000_005,
    });
    expect((await findTaskRows(db, { taskId: 2 })).assignment).to.equal(undefined);
  });

  it("finds a listed task by its hash, in any case, and nothing for a hash nobody listed", async () => {
    const { db } = testDb;
    await upsertTasks(db, "base", [taskRecord(1), taskRecord(2)]);
    await insertListing(db, listing(1, { capabilities: ["web"] }));
    const hash = ethers.id("brief 1");
    const byHash = await findTaskRows(db, { taskHash: hash.toUpperCase().replace("0X", "0x") });
    expect(byHash).to.deep.equal(await findTaskRows(db, { taskId: 1 }));
    expect(byHash.listing).to.deep.equal(await findListingByHash(db, hash));
    // Task 2 is funded but not listed: by hash it is the indexer's (findTasksByHash), not this read's.
    expect(await findTaskRows(db, { taskHash: ethers.id("brief 2") })).to.deep.equal({
      task: undefined,
      listing: undefined,
      assignment: undefined,
    });
  });

  it("answers a listing whose task is not indexed yet, a task never listed, and an unknown id", async () => {
    const { db } = testDb;
    await upsertTasks(db, "base", [taskRecord(2)]);
    await insertListing(db, listing(1));
    const listedOnly = await findTaskRows(db, { taskId: 1 });
    expect(listedOnly.task).to.equal(undefined);
    expect(listedOnly.listing).to.deep.equal(await findListingByTaskId(db, 1));
    const taskOnly = await findTaskRows(db, { taskId: 2 });
    expect(taskOnly.task).to.deep.equal(await findTaskById(db, 2));
    expect(taskOnly.listing).to.equal(undefined);
    expect(await findTaskRows(db, { taskId: 3 })).to.deep.equal({
      task: undefined,
      listing: undefined,
      assignment: undefined,
    });
  });
  it("on PostgreSQL, reads each table through an index for the statements it sends, by id and by hash", async function () {
    if (!usingPostgres()) this.skip(); // SQLite's plans: docs/performance.md, item 7
    const { db } = testDb;
    const sent: { sql: string; bindings: unknown[] }[] = [];
    const onQuery = (q: { sql: string; bindings: unknown[] }) => sent.push(q);
    db.on("query", onQuery);
    try {
      await findTaskRows(db, { taskId: 1 });
      await findTaskRows(db, { taskHash: ethers.id("brief 1") });
    } finally {
      db.off("query", onQuery);
    }
    expect(sent).to.have.length(2);
    for (const [i, { sql, bindings }] of sent.entries()) {
      // With sequential scans priced out, a plan still holds one only where no index can answer the condition (a
      // cast on the column's side, a type the index does not hold): what a table of many tasks would then scan.
      const plan = await db.transaction(async (trx) => {
        await trx.raw("set local enable_seqscan = off");
        const explained = await trx.raw(`explain (format json) ${sql.replace(/\$\d+/g, "?")}`, bindings as string[]);
        return JSON.stringify(explained.rows[0]["QUERY PLAN"]);
      });
      const label = i === 0 ? "by id" : "by hash";
      expect(plan, label).to.not.include("Seq Scan");
      for (const index of ["tasks_pkey", "listing_capabilities_pkey", "task_assignments_pkey"]) {
        expect(plan, `${label}: ${index}`).to.include(`"Index Name":"${index}"`);
      }
      expect(plan, `${label}: listings`).to.match(/"Relation Name":"listings"/);
    }
  });
});
