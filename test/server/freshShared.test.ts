/**
 * freshShared: one read shared by concurrent callers, never answering a read that started before the caller asked;
 * started at once (the chain head) or in the loop's check phase (the data version).
 */
import { expect } from "chai";
import { freshShared } from "../../server/freshShared";

/** A promise settled by hand. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every settled promise's callbacks run. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A read whose calls the test settles one by one, in order. */
function manualReads<T>() {
  const calls: ReturnType<typeof deferred<T>>[] = [];
  const read = () => {
    const call = deferred<T>();
    calls.push(call);
    return call.promise;
  };
  return { calls, read };
}

describe("freshShared", () => {
  it("shares a read between callers that asked while it was queued, never one that started before they asked", async () => {
    const { calls, read } = manualReads<number>();
    const head = freshShared(read);
    const first = head();
    expect(calls).to.have.length(1);
    // Two callers while the first read runs: they wait for a second read, not the first's answer.
    const second = head();
    const third = head();
    expect(calls).to.have.length(1);
    calls[0].resolve(1);
    expect(await first).to.equal(1);
    await flush();
    expect(calls).to.have.length(2);
    calls[1].resolve(2);
    expect([await second, await third]).to.deep.equal([2, 2]);
  });

  it("starts a new read for a caller after the last one settled", async () => {
    const { calls, read } = manualReads<number>();
    const head = freshShared(read);
    const first = head();
    calls[0].resolve(1);
    await first;
    const later = head();
    expect(calls).to.have.length(2);
    calls[1].resolve(5);
    expect(await later).to.equal(5);
  });

  it("fails the callers of a failed read only; queued callers get the next read", async () => {
    const { calls, read } = manualReads<number>();
    const head = freshShared(read);
    const failing = head();
    const queued = head();
    calls[0].reject(new Error("node down"));
    await expect(failing).to.be.rejectedWith("node down");
    await flush();
    calls[1].resolve(7);
    expect(await queued).to.equal(7);
  });

  it("starts reads at least the interval apart, serving every caller that asked meanwhile with the later read", async () => {
    const starts: number[] = [];
    let value = 0;
    const head = freshShared(
      async () => {
        starts.push(performance.now());
        return ++value;
      },
      { minIntervalMs: 30 },
    );
    expect(await head()).to.equal(1);
    // The first read is over: callers now wait for the interval, then share one read started after they asked.
    const later = [head(), head(), head()];
    expect(await Promise.all(later)).to.deep.equal([2, 2, 2]);
    expect(starts).to.have.length(2);
    expect(starts[1] - starts[0]).to.be.at.least(29);
  });

  describe("started in the loop's check phase", () => {
    /** The read's start is queued in the check phase after the callers' promise callbacks: wait one phase more. */
    const afterCheckPhase = async () => {
      await flush();
      await flush();
    };

    it("shares one read among every caller of this turn, even when none was running", async () => {
      const { calls, read } = manualReads<number>();
      const version = freshShared(read, { start: "loopTurn" });
      const callers = [version(), version(), version()];
      expect(calls).to.have.length(0); // nothing starts inside the callers' turn
      await afterCheckPhase();
      expect(calls).to.have.length(1);
      calls[0].resolve(4);
      expect(await Promise.all(callers)).to.deep.equal([4, 4, 4]);
    });

    it("gives a caller who asked while a read ran the next read, started after the running one settled", async () => {
      const { calls, read } = manualReads<number>();
      const version = freshShared(read, { start: "loopTurn" });
      const first = version();
      await afterCheckPhase();
      const second = version();
      await afterCheckPhase();
      expect(calls).to.have.length(1); // the second waits for the first to settle
      calls[0].resolve(1);
      expect(await first).to.equal(1);
      await afterCheckPhase();
      expect(calls).to.have.length(2);
      calls[1].resolve(2);
      expect(await second).to.equal(2);
    });

    it("fails only the callers of a failed read; the next caller starts a new read", async () => {
      const { calls, read } = manualReads<number>();
      const version = freshShared(read, { start: "loopTurn" });
      const failing = version();
      await afterCheckPhase();
      calls[0].reject(new Error("database gone"));
      await expect(failing).to.be.rejectedWith("database gone");
      const again = version();
      await afterCheckPhase();
      calls[1].resolve(9);
      expect(await again).to.equal(9);
    });
  });
});
