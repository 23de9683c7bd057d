import { expect } from "chai";
import { marketFacts, taskKey } from "../../../server/domain/projection";
import { manualClock } from "../../../server/chain/clock";
import type { Deps } from "../../../server/domain/deps";
import type { AssignmentRecord } from "../../../server/db/repositories/assignments";
import { TASK_STATUS, ZERO_ADDRESS } from "../../../server/escrow/records";
import { taskRecord } from "../../helpers/taskRecord";

const NOW = 1_800_000_000;
const AGENT = `0x${"c".repeat(40)}`;

/** A task of status `status` created a minute ago, with a day to run. */
const task = (taskId: number, status: number, worker = ZERO_ADDRESS) =>
  taskRecord(taskId, { status, worker, createdAt: NOW - 60, deadline: NOW + 86_400 });

const accepted = (taskId: number): AssignmentRecord => ({
  chain: "base",
  taskId,
  agent: AGENT,
  via: "accept",
  intentId: null,
  acceptedAt: NOW - 10,
});

/** Deps without a database: a read through it fails the test. */
const deps = {
  db: () => {
    throw new Error("marketFacts read the database although it was given the assignments");
  },
  clock: manualClock(NOW),
  config: { marketplace: { acceptLockSeconds: 600 }, api: { postingChain: "base" } },
} as unknown as Deps;

describe("marketFacts (server/domain/projection.ts)", () => {
  it("takes the assignments a caller already read instead of querying them", async () => {
    const funded = task(1, TASK_STATUS.Funded);
    const facts = await marketFacts(deps, [funded], new Map([[taskKey("base", 1), accepted(1)]]));
    expect([...facts.assignments.keys()]).to.deep.equal(["base:1"]);
    expect((await marketFacts(deps, [funded], new Map())).assignments.size).to.equal(0);
  });

  it("lets only a Funded task's assignment hold, as when it queries the Funded tasks' assignments itself", async () => {
    const assigned = task(2, TASK_STATUS.Assigned, AGENT);
    const submitted = task(3, TASK_STATUS.Submitted, AGENT);
    const facts = await marketFacts(
      deps,
      [assigned, submitted],
      new Map([
        [taskKey("base", 2), accepted(2)],
        [taskKey("base", 3), accepted(3)],
      ]),
    );
    expect(facts.assignments.size).to.equal(0);
  });
});
