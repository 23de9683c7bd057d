/**
 * server/escrow/rules.ts against the contract's own views: random pause histories (pauses, resumes, moved pause
 * starts) and tasks created between them are played on the in-process chain, indexed, and the service's effective
 * deadlines, paused seconds, windows and paused flag must equal TaskEscrow's at every step.
 */
import { expect } from "chai";
import fc from "fast-check";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture, HOUR, DAY, USDC, CATEGORY, ZONE } from "../../helpers/fixtures";
import { createTestDb } from "../../helpers/db";
import { makeIndexer, syncToHead } from "../../helpers/indexer";
import { loadPausePeriods } from "../../../server/db/repositories/pausePeriods";
import { loadConfigValues } from "../../../server/db/repositories/escrowConfig";
import { findTaskById } from "../../../server/db/repositories/tasks";
import {
  APPEAL_WINDOW_SECONDS,
  DISPUTE_WINDOW_SECONDS,
  ESCALATION_GRACE_SECONDS,
  MAX_DURATION,
  MAX_FEE_BPS,
  MAX_SUBMISSIONS,
  MIN_DURATION,
  OPEN_BOND_BPS,
  OPEN_REVEAL_WINDOW_SECONDS,
  OPEN_SELECTION_WINDOW_SECONDS,
  effectiveDeadline,
  escrowPaused,
  pausedSecondsSince,
  windowEnd,
} from "../../../server/escrow/rules";

type Step =
  | { kind: "create"; duration: number }
  | { kind: "wait"; seconds: number }
  | { kind: "pause" }
  | { kind: "resume" }
  | { kind: "moveStart"; back: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("create" as const), duration: fc.integer({ min: HOUR, max: 30 * DAY }) }),
  fc.record({ kind: fc.constant("wait" as const), seconds: fc.integer({ min: 1, max: 5 * DAY }) }),
  fc.record({ kind: fc.constant("pause" as const) }),
  fc.record({ kind: fc.constant("resume" as const) }),
  fc.record({ kind: fc.constant("moveStart" as const), back: fc.integer({ min: 0, max: 2 * DAY }) }),
);

describe("server/escrow/rules.ts mirrors TaskEscrow", () => {
  it("has the escrow's constants", async () => {
    const { escrow } = await loadFixture(deployEscrowFixture);
    expect(MIN_DURATION).to.equal(Number(await escrow.MIN_DURATION()));
    expect(MAX_DURATION).to.equal(Number(await escrow.MAX_DURATION()));
    expect(MAX_SUBMISSIONS).to.equal(Number(await escrow.MAX_SUBMISSIONS()));
    expect(APPEAL_WINDOW_SECONDS).to.equal(Number(await escrow.APPEAL_WINDOW()));
    expect(DISPUTE_WINDOW_SECONDS).to.equal(Number(await escrow.DISPUTE_WINDOW()));
    expect(OPEN_REVEAL_WINDOW_SECONDS).to.equal(Number(await escrow.OPEN_REVEAL_WINDOW()));
    expect(OPEN_SELECTION_WINDOW_SECONDS).to.equal(Number(await escrow.OPEN_SELECTION_WINDOW()));
    expect(OPEN_BOND_BPS).to.equal(Number(await escrow.OPEN_BOND_BPS()));
    expect(MAX_FEE_BPS).to.equal(Number(await escrow.MAX_FEE_BPS()));
    expect(ESCALATION_GRACE_SECONDS).to.equal(Number(await escrow.ESCALATION_GRACE()));
  });

  it("computes effective deadlines, paused seconds, windows and the paused flag as the escrow does", async function () {
    this.timeout(240_000);
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 12 }), async (steps) => {
        const { escrow, usdc, poster, admin, book } = await loadFixture(deployEscrowFixture);
        const testDb = await createTestDb();
        try {
          const indexer = makeIndexer(testDb, book.escrow.proxy, book.startBlock);
          const starts: number[] = [];
          for (const s of steps) {
            const paused = await escrow.paused();
            if (s.kind === "create" && !paused) {
              const hash = ethers.hexlify(ethers.randomBytes(32));
              await escrow
                .connect(poster)
                .createTask(hash, await usdc.getAddress(), USDC(1), CATEGORY, ZONE, s.duration);
            } else if (s.kind === "wait") {
              await time.increase(s.seconds);
            } else if (s.kind === "pause" && !paused) {
              await escrow.connect(admin).pause();
            } else if (s.kind === "resume" && paused) {
              await escrow.connect(admin).unpause();
            } else if (s.kind === "moveStart" && paused) {
              const start = Number(await escrow.pauseStartedAt()) - s.back;
              // A start the escrow refuses is a refusal here too: only accepted moves are compared.
              await escrow
                .connect(admin)
                .recordPauseStart(start)
                .catch(() => undefined);
            }
            starts.push(await time.latest());
          }
          await syncToHead(indexer);
          const now = await time.latest();
          const pauses = await loadPausePeriods(testDb.db, "base");
          const flag = (await loadConfigValues(testDb.db, "base")).paused?.value;
          expect(escrowPaused(pauses, flag)).to.equal(await escrow.paused());
          expect(escrowPaused(pauses)).to.equal(await escrow.paused());
          for (const since of [0, ...starts]) {
            expect(pausedSecondsSince(pauses, since, now), `paused since ${since}`).to.equal(
              Number(await escrow.pausedSecondsSince(since)),
            );
          }
          const count = Number(await escrow.nextTaskId()) - 1;
          for (let id = 1; id <= count; id++) {
            const task = (await findTaskById(testDb.db, id))!;
            expect(effectiveDeadline(task, pauses, now), `task ${id}`).to.equal(
              Number(await escrow.effectiveDeadline(id)),
            );
            expect(windowEnd(pauses, task.createdAt, DISPUTE_WINDOW_SECONDS, now)).to.equal(
              task.createdAt + DISPUTE_WINDOW_SECONDS + Number(await escrow.pausedSecondsSince(task.createdAt)),
            );
          }
        } finally {
          await testDb.cleanup();
        }
      }),
      { numRuns: 25 },
    );
  });
});
