/**
 * Event wake-ups across processes through Redis pub/sub: two event hubs on one database (two API processes, each
 * with its own connection pool) whose slow poll is a minute long, so an event can reach the second one in time only
 * by its wake-up. An event written beside one hub reaches a stream on the other; an announcement without an id (a
 * standalone indexer's) wakes it too. Needs REDIS_URL (skipped without it: the poll is then the only path, tested
 * with the hub).
 */
import crypto from "node:crypto";
import { expect } from "chai";
import { createTestDb, type TestDb } from "../../helpers/db";
import { loadConfig } from "../../../server/config";
import { silentLogger } from "../../../server/logger";
import { EventHub } from "../../../server/domain/events/hub";
import { insertMarketEvents } from "../../../server/db/repositories/marketEvents";
import type { MarketEvent } from "../../../server/domain/schemas/events";
import { createRedisWake, wakeAcrossProcesses, type Wake } from "../../../server/pubsub/redisWake";
import type { Knex } from "knex";

const POSTER = `0x${"ab".repeat(20)}`;
const MINUTE = 60_000;

function hub(db: Knex): EventHub {
  const config = loadConfig({ NETWORK: "hardhat" }).push;
  return new EventHub({ db, logger: silentLogger, config: { ...config, pollMs: MINUTE }, wallNowMs: Date.now });
}

async function writeEvent(db: Knex, taskId: number): Promise<void> {
  await db.transaction((trx) =>
    insertMarketEvents(trx, [
      {
        type: "task.settled",
        taskId,
        taskHash: `0x${crypto.randomBytes(32).toString("hex")}`,
        poster: POSTER,
        worker: null,
        target: null,
        toPoster: true,
        toWorker: false,
        toTarget: false,
        toExecutors: false,
        onChainStatus: 5,
        txHash: null,
        fields: { outcome: "cancelled", refund: "1" },
        atMs: Date.now(),
        source: `test:${taskId}:${crypto.randomBytes(4).toString("hex")}`,
      },
    ]),
  );
}

/** Resolves with the first event `hub`'s stream for the poster gets. */
async function nextEvent(target: EventHub): Promise<MarketEvent> {
  return new Promise((resolve) => {
    void target.subscribe({ wallet: POSTER, executor: false }, undefined, {
      send: (event) => resolve(event),
      close: () => undefined,
    });
  });
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms),
    ),
  ]);
}

describe("Redis wake-ups of event hubs across processes", function () {
  this.timeout(60_000);
  const redisUrl = process.env.REDIS_URL;
  let testDb: TestDb;
  let hubs: EventHub[];
  let wakes: Wake[];
  let channel: string;

  before(function () {
    if (!redisUrl) {
      console.log("      (skipped: REDIS_URL is not set; CI's PostgreSQL + Redis pass runs it)");
      this.skip();
    }
  });

  beforeEach(async () => {
    testDb = await createTestDb();
    hubs = [hub(testDb.db), hub(testDb.reopen())];
    for (const h of hubs) await h.start();
    channel = `test:${crypto.randomBytes(6).toString("hex")}:events`;
    wakes = await Promise.all(
      hubs.map((h) => wakeAcrossProcesses(h, { redisUrl: redisUrl!, channel, logger: silentLogger })),
    );
  });

  afterEach(async () => {
    for (const wake of wakes ?? []) await wake.close();
    for (const h of hubs ?? []) await h.stop();
    await testDb?.cleanup();
  });

  it("hands an event written beside one process's hub to a stream on another at once, not at its poll", async () => {
    const [writer, reader] = hubs;
    const received = nextEvent(reader);
    await new Promise((resolve) => setTimeout(resolve, 50)); // the stream is live
    await writeEvent(testDb.db, 7);
    writer.notify(); // what the listing and the in-process indexer do after writing
    const event = await within(received, 10_000, "the other process's stream receiving the event");
    expect(event).to.include({ type: "task.settled", onChainTaskId: "7", role: "poster" });
    expect(reader.latest()).to.equal(writer.latest());
  });

  it("wakes the hubs on an announcement without an id (a standalone indexer's)", async () => {
    const indexerWake = await createRedisWake({ redisUrl: redisUrl!, channel, logger: silentLogger });
    try {
      const received = nextEvent(hubs[1]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await writeEvent(testDb.reopen(), 8);
      // The publisher's connection may still be opening: announce until the event arrives, as ranges keep coming.
      const timer = setInterval(() => indexerWake.announce(), 100);
      try {
        expect(await within(received, 10_000, "the hub hearing the indexer")).to.include({ onChainTaskId: "8" });
      } finally {
        clearInterval(timer);
      }
    } finally {
      await indexerWake.close();
    }
  });
});
