/**
 * Posters' allowances kept per chain head: one allowance read per poster per head block, and never the allowance of an older block once a newer head is read.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { Interface } from "ethers";
import { loadFixture, mine } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture } from "../../helpers/fixtures";
import { allowancesPerBlock, providerAllowanceSource, type AllowanceSource } from "../../../server/chain/allowances";
import { decodeAllowance, encodeAllowance } from "../../../server/chain/erc20Calls";

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
