/**
 * Posters' allowances kept per chain head: a head read shared only with callers that asked before it started, one
 * allowance read per poster per head block, and never the allowance of an older block once a newer head is read.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { Interface } from "ethers";
import { loadFixture, mine } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture } from "../../helpers/fixtures";
import { allowancesPerBlock, providerAllowanceSource, type AllowanceSource } from "../../../server/chain/allowances";
import { decodeAllowance, encodeAllowance } from "../../../server/chain/erc20Calls";
import { freshShared } from "../../../server/chain/head";

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

/** A chain whose head and allowances the test sets, counting the reads of each. */
function fakeChain() {
  const chain = { head: 10, allowances: new Map<string, bigint>(), headReads: 0, allowanceReads: [] as string[] };
  const source: AllowanceSource = {
    head: async () => {
      chain.headReads++;
      return chain.head;
    },
    readAt: async (owner, block) => {
      chain.allowanceReads.push(`${owner}@${block}`);
      return chain.allowances.get(owner) ?? 0n;
    },
  };
  return { chain, source };
}

const OWNER = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const SPENDER = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

describe("chain head and allowances", () => {
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
      const head = freshShared(async () => {
        starts.push(performance.now());
        return ++value;
      }, 30);
      expect(await head()).to.equal(1);
      // The first read is over: callers now wait for the interval, then share one read started after they asked.
      const later = [head(), head(), head()];
      expect(await Promise.all(later)).to.deep.equal([2, 2, 2]);
      expect(starts).to.have.length(2);
      expect(starts[1] - starts[0]).to.be.at.least(29);
    });
  });

  describe("allowancesPerBlock", () => {
    it("reads a poster's allowance once per head block, for any number of builds within it", async () => {
      const { chain, source } = fakeChain();
      chain.allowances.set(OWNER, 5n);
      const allowanceOf = allowancesPerBlock(source);
      const answers = await Promise.all([1, 2, 3, 4].map(() => allowanceOf(OWNER)));
      expect(answers).to.deep.equal([5n, 5n, 5n, 5n]);
      expect(await allowanceOf(OWNER.toUpperCase().replace("0X", "0x"))).to.equal(5n);
      expect(chain.allowanceReads).to.deep.equal([`${OWNER}@10`]);
      expect(chain.headReads).to.equal(5); // every call reads the head
    });

    it("answers the lowered allowance in the first call that reads a newer head", async () => {
      const { chain, source } = fakeChain();
      chain.allowances.set(OWNER, 5_000_000n);
      const allowanceOf = allowancesPerBlock(source);
      expect(await allowanceOf(OWNER)).to.equal(5_000_000n);
      // The block that spends or lowers the allowance.
      chain.head = 11;
      chain.allowances.set(OWNER, 0n);
      expect(await allowanceOf(OWNER)).to.equal(0n);
      expect(chain.allowanceReads).to.deep.equal([`${OWNER}@10`, `${OWNER}@11`]);
    });

    it("reads each poster of a block on its own, and keeps no failed read", async () => {
      const { chain, source } = fakeChain();
      const other = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";
      chain.allowances.set(OWNER, 1n);
      chain.allowances.set(other, 2n);
      let failNext = true;
      const allowanceOf = allowancesPerBlock({
        head: source.head,
        readAt: (owner, block) => {
          if (failNext) {
            failNext = false;
            return Promise.reject(new Error("timeout"));
          }
          return source.readAt(owner, block);
        },
      });
      await expect(allowanceOf(OWNER)).to.be.rejectedWith("timeout");
      expect(await allowanceOf(OWNER)).to.equal(1n);
      expect(await allowanceOf(other)).to.equal(2n);
      expect(chain.allowanceReads).to.deep.equal([`${OWNER}@10`, `${other}@10`]);
    });
  });

  describe("on the chain", () => {
    it("reads the allowance at the head block, and the lowered one in the block after an approve lowered it", async () => {
      const { usdc, escrow, poster } = await loadFixture(deployEscrowFixture);
      const escrowAddress = await escrow.getAddress();
      const allowanceOf = allowancesPerBlock(
        providerAllowanceSource(ethers.provider, await usdc.getAddress(), escrowAddress),
      );
      const owner = poster.address.toLowerCase();
      expect(await allowanceOf(owner)).to.equal(await usdc.allowance(poster.address, escrowAddress));
      await (await usdc.connect(poster).approve(escrowAddress, 3n)).wait();
      expect(await allowanceOf(owner)).to.equal(3n);
      await mine(1); // an empty block: read again, same value
      expect(await allowanceOf(owner)).to.equal(3n);
      await (await usdc.connect(poster).approve(escrowAddress, 0n)).wait();
      expect(await allowanceOf(owner)).to.equal(0n);
    });

    it("fails, instead of answering an allowance, when the address is not a token", async () => {
      const { escrow, poster } = await loadFixture(deployEscrowFixture);
      const allowanceOf = allowancesPerBlock(
        providerAllowanceSource(ethers.provider, poster.address, await escrow.getAddress()),
      );
      await expect(allowanceOf(poster.address)).to.be.rejectedWith("not one uint256 word");
    });
  });

  describe("allowance calldata", () => {
    const erc20 = new Interface(["function allowance(address owner, address spender) view returns (uint256)"]);

    it("is what ethers encodes, for a lowercase owner and any plain spender, and for a checksummed owner", () => {
      for (const [owner, spender] of [
        [OWNER, SPENDER],
        [OWNER, SPENDER.toLowerCase()],
        [ethers.getAddress(OWNER), SPENDER],
      ]) {
        expect(encodeAllowance(owner, spender)).to.equal(erc20.encodeFunctionData("allowance", [owner, spender]));
      }
    });

    it("refuses a malformed owner as ethers does", () => {
      expect(() => encodeAllowance("0x1234", SPENDER)).to.throw();
    });

    it("decodes one uint256 word and refuses anything else", () => {
      expect(decodeAllowance(`0x${"0".repeat(63)}7`)).to.equal(7n);
      expect(() => decodeAllowance("0x")).to.throw("not one uint256 word");
    });
  });
});
