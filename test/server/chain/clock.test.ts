/**
 * The service's chain clock: a cached read for the hot paths, and a fresh read for refusals that rest on time
 * (`stillBefore`), so a cached value never refuses what the chain already allows.
 */
import { expect } from "chai";
import type { Provider } from "ethers";
import { chainClock, manualClock, type Clock } from "../../../server/chain/clock";
import { stillBefore, type TaskContext } from "../../../server/domain/marketplace/taskContext";
import type { Deps } from "../../../server/domain/deps";

/** A provider whose latest block time the test sets, counting the reads. */
function movingChain(start: number) {
  const chain = { time: start, reads: 0 };
  const provider = {
    getBlock: async () => {
      chain.reads++;
      return { timestamp: chain.time };
    },
  } as unknown as Provider;
  return { chain, provider };
}

describe("chain clock", () => {
  it("serves chain time from its cache, and chainNowFresh past it", async () => {
    const { chain, provider } = movingChain(1_000);
    const clock = chainClock(provider, 60_000);
    expect(await clock.chainNow()).to.equal(1_000);
    chain.time = 5_000;
    expect(await clock.chainNow()).to.equal(1_000); // cached
    expect(chain.reads).to.equal(1);
    expect(await clock.chainNowFresh()).to.equal(5_000);
    expect(await clock.chainNow()).to.equal(5_000); // the fresh read refreshed the cache
  });

  it("answers the wall clock without a chain, and a manual clock's time", async () => {
    const before = Math.floor(Date.now() / 1000);
    const value = await chainClock(undefined).chainNowFresh();
    expect(value).to.be.within(before, before + 2);
    expect(await manualClock(42).chainNowFresh()).to.equal(42);
  });

  describe("stillBefore", () => {
    const context = (now: number) => ({ now, chain: "base" }) as TaskContext;
    /** The service's clock on the posting chain (base), the chain of the task. */
    const depsOf = (clock: Clock) => ({ clock, config: { api: { postingChain: "base" } } }) as unknown as Deps;

    it("re-reads the chain before refusing: a stale cached time does not refuse what the chain allows", async () => {
      const { chain, provider } = movingChain(1_000);
      const deps = depsOf(chainClock(provider, 60_000));
      const ctx = context(await deps.clock.chainNow());
      chain.time = 2_000; // the chain moved past the deadline after the cached read
      expect(await stillBefore(deps, ctx, 1_500)).to.equal(false);
      expect(ctx.now).to.equal(2_000);
    });

    it("refuses while the chain itself is still before, and reads nothing when the cached time is past", async () => {
      const { chain, provider } = movingChain(1_000);
      const deps = depsOf(chainClock(provider, 60_000));
      expect(await stillBefore(deps, context(1_000), 1_500)).to.equal(true);
      const reads = chain.reads;
      expect(await stillBefore(deps, context(1_600), 1_500)).to.equal(false);
      expect(chain.reads).to.equal(reads);
    });
  });
});
