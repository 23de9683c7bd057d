/**
 * Property of open-submission tasks (pull payments): whatever the committers, reveals, the poster's pick or contest,
 * the other submitters' contests and the judge's ruling or silence, and whichever submitters refuse payments, the
 * honest calls that remain (the phase's next call, the judge's ruling or the split of its silence, then every owed
 * account's withdraw to an address that receives) always end the task and leave the escrow holding nothing.
 * Knobs: PROPERTY_SEED, PROPERTY_RUNS (default 15).
 */
import { expect } from "chai";
import fc from "fast-check";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import { CATEGORY, DAY, OPEN_SALT, PHASE, STATUS, TASK_HASH, ZONE, deployEscrowFixture } from "../helpers/fixtures";

const RUNS = Number(process.env.PROPERTY_RUNS ?? 15);
const SEED = process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : Math.floor(Math.random() * 0x7fffffff);
const NATIVE = ethers.ZeroAddress;
const AMOUNT = ethers.parseEther("1");
const BOND = AMOUNT / 20n;

interface Scenario {
  /** For each of four would-be submitters (the last a contract): whether it commits, and whether it reveals. */
  commits: boolean[];
  reveals: boolean[];
  /** The poster in Selection: nothing, pick the n-th revealed submitter, or dispute. */
  poster: { kind: "silent" } | { kind: "pick"; index: number } | { kind: "dispute" };
  /** Another revealed submitter contests a pick. */
  contest: boolean;
  /** The judge of a dispute: rules for the n-th revealed submitter, refunds (-1), or stays silent (null). */
  judge: number | null;
  /** The contract submitter refuses payments after its reveal. */
  rejects: boolean;
}

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  commits: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
  reveals: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
  poster: fc.oneof(
    fc.constant({ kind: "silent" as const }),
    fc.record({ kind: fc.constant("pick" as const), index: fc.nat(3) }),
    fc.constant({ kind: "dispute" as const }),
  ),
  contest: fc.boolean(),
  judge: fc.oneof(fc.constant(null), fc.integer({ min: -1, max: 3 })),
  rejects: fc.boolean(),
});

async function openFixture() {
  const base = await deployEscrowFixture();
  await base.escrow.connect(base.admin).allowToken(NATIVE);
  const receiver = await ethers.deployContract("ReentrantReceiver");
  return { ...base, receiver, receiverAddress: await receiver.getAddress() };
}

describe("TaskEscrow", () => {
  describe("open-submission tasks (property)", () => {
    it("always end, by honest calls, with the escrow holding nothing", async function () {
      this.timeout(600_000);
      const details = await fc.check(
        fc.asyncProperty(scenarioArb, async (s) => {
          const f = await loadFixture(openFixture);
          const { escrow, poster, verifier, worker, stranger, others, receiver, receiverAddress } = f;
          const escrowAddress = await escrow.getAddress();
          const i = escrow.interface;
          await escrow
            .connect(poster)
            .createTaskOpen(TASK_HASH, NATIVE, AMOUNT, CATEGORY, ZONE, DAY, { value: AMOUNT });
          const id = 1n;
          const signers: (HardhatEthersSigner | null)[] = [worker, stranger, others[0], null];
          const addresses = [worker.address, stranger.address, others[0].address, receiverAddress];
          const evidence = addresses.map((a) => ethers.id(`delivery of ${a}`));
          const commitment = (k: number) =>
            ethers.keccak256(
              ethers.AbiCoder.defaultAbiCoder().encode(
                ["address", "uint256", "address", "bytes32", "bytes32"],
                [escrowAddress, id, addresses[k], evidence[k], OPEN_SALT],
              ),
            );
          const as = async (k: number, data: string, value = 0n) => {
            const signer = signers[k];
            if (signer) await signer.sendTransaction({ to: escrowAddress, data, value });
            else await receiver.execute(escrowAddress, data, { value });
          };
          for (let k = 0; k < 4; k++) {
            if (s.commits[k]) await as(k, i.encodeFunctionData("commitOpen", [id, commitment(k)]), BOND);
          }
          const starts = {
            reveal: await escrow.effectiveDeadline(id),
          };
          await time.increaseTo(starts.reveal);
          const revealed: number[] = [];
          for (let k = 0; k < 4; k++) {
            if (!s.commits[k] || !s.reveals[k]) continue;
            await as(k, i.encodeFunctionData("revealOpen", [id, evidence[k], OPEN_SALT]));
            revealed.push(k);
          }
          if (s.rejects) await receiver.setMode(1, NATIVE, "0x");
          await time.increaseTo(starts.reveal + DAY_N);
          // The poster in Selection.
          if (revealed.length > 0 && s.poster.kind === "pick") {
            const picked = revealed[s.poster.index % revealed.length];
            await escrow.connect(poster).selectWinner(id, addresses[picked]);
            const other = revealed.find((k) => k !== picked);
            if (s.contest && other !== undefined && revealed.length >= 2) {
              await as(other, i.encodeFunctionData("contestOpen", [id]));
            }
          } else if (revealed.length > 0 && s.poster.kind === "dispute") {
            await escrow.connect(poster).contestOpen(id);
          }
          // Honest calls until the task ends.
          for (let step = 0; step < 8; step++) {
            const task = await escrow.getTask(id);
            const status = Number(task.status);
            if (status === STATUS.Completed || status === STATUS.Cancelled) break;
            if (status === STATUS.Disputed) {
              if (s.judge === null) {
                await time.increaseTo(task.disputedAt + (await escrow.DISPUTE_WINDOW()));
                await escrow.connect(stranger).splitUnruled(id);
              } else {
                const winner =
                  s.judge < 0 || revealed.length === 0 ? NATIVE : addresses[revealed[s.judge % revealed.length]];
                await escrow.connect(verifier).judgeOpen(id, winner);
              }
              continue;
            }
            const phase = Number(await escrow.openPhase(id));
            const { chosen, chosenAt } = await escrow.openVerdictState(id);
            if (chosen !== NATIVE) {
              await time.increaseTo(chosenAt + (await escrow.OPEN_CONTEST_WINDOW()));
              await escrow.connect(stranger).releaseOpenDefault(id);
            } else if (revealed.length === 0) {
              if (phase === PHASE.Reveal && s.commits.some(Boolean)) await time.increase(DAY_N);
              await escrow.connect(poster).reclaimOpen(id);
            } else if (phase !== PHASE.Expired) {
              await time.increaseTo(starts.reveal + 4n * DAY_N);
            } else {
              await escrow.connect(stranger).releaseOpenDefault(id);
            }
          }
          const final = Number((await escrow.getTask(id)).status);
          expect([STATUS.Completed, STATUS.Cancelled], "the task ended").to.include(final);
          // Every owed account withdraws, the contract to an address that receives.
          for (const [k, account] of [poster.address, ...addresses].entries()) {
            if ((await escrow.creditOf(NATIVE, account)) === 0n) continue;
            if (k === 4) {
              await receiver.execute(escrowAddress, i.encodeFunctionData("withdraw", [NATIVE, stranger.address]));
            } else {
              const signer = [poster, worker, stranger, others[0]][k];
              await escrow.connect(signer).withdraw(NATIVE, account);
            }
          }
          expect(await ethers.provider.getBalance(escrowAddress), "native left").to.equal(0n);
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
      if (details.failed) {
        const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.error);
        throw new Error(
          `property failed (seed ${details.seed}, counterexample ${JSON.stringify(details.counterexample)}); ` +
            `replay with PROPERTY_SEED=${details.seed}\n${cause}`,
        );
      }
    });
  });
});

const DAY_N = BigInt(DAY);
