/**
 * The compact task record (docs/contracts.md, "Storage packing"): a task's poster and worker as account ids, its token
 * as an allowlist index and its amount share slot 0 with the times and the status, so creation writes two fresh slots
 * and assignment none. These tests read the record's storage to show which form a task took, and check that every view
 * and every payment is the same in both forms.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import type { TaskEscrow } from "../../typechain-types";
import {
  CATEGORY,
  DAY,
  EVIDENCE_HASH,
  STATUS,
  TASK_HASH,
  USDC,
  ZONE,
  deployEscrowFixture,
  getTaskView,
} from "../helpers/fixtures";

/** The ERC-7201 slot of the escrow's namespace. */
const NAMESPACE =
  BigInt(
    ethers.keccak256(
      ethers.AbiCoder.defaultAbiCoder().encode(
        ["uint256"],
        [BigInt(ethers.keccak256(ethers.toUtf8Bytes("marketplace.storage.TaskEscrow"))) - 1n],
      ),
    ),
  ) & ~0xffn;
/** `tasks` is EscrowStorage's slot 11 (after the 8 slots of globals, `pauses`, `allowedTokens`, `minRatedAmount`). */
const TASKS_SLOT = NAMESPACE + 11n;
const COMPACT = 0x20n;
/** The smallest amount a compact record cannot hold. */
const BEYOND_COMPACT = 1n << 80n;

/** Slot `offset` of task `id`'s record. */
async function taskSlot(escrow: TaskEscrow, id: bigint, offset: bigint): Promise<bigint> {
  const base = BigInt(
    ethers.keccak256(ethers.AbiCoder.defaultAbiCoder().encode(["uint256", "uint256"], [id, TASKS_SLOT])),
  );
  return BigInt(await ethers.provider.getStorage(await escrow.getAddress(), base + offset));
}

/** The fields of task `id`'s slot 0 when compact (the submission byte's COMPACT bit says whether it is). */
async function compactRecord(escrow: TaskEscrow, id: bigint) {
  const word = await taskSlot(escrow, id, 0n);
  const mask = (bits: bigint) => (1n << bits) - 1n;
  return {
    compact: ((word >> 248n) & COMPACT) !== 0n,
    posterId: word & mask(32n),
    workerId: (word >> 32n) & mask(32n),
    tokenIndex: (word >> 64n) & mask(16n),
    amount: (word >> 80n) & mask(80n),
  };
}

async function compactFixture() {
  const base = await deployEscrowFixture();
  const token = await base.usdc.getAddress();
  return { ...base, token };
}

describe("TaskEscrow compact task record", () => {
  it("writes a task in slot 0 and the hash only: slots 1 and 2 stay empty, the views read every field", async () => {
    const { escrow, token, poster } = await loadFixture(compactFixture);
    const id = await escrow.nextTaskId();
    await escrow.connect(poster).createTask(TASK_HASH, token, USDC(100), CATEGORY, ZONE, DAY);
    const record = await compactRecord(escrow, id);
    expect(record.compact).to.equal(true);
    expect(record.posterId).to.not.equal(0n);
    expect(record.workerId).to.equal(0n);
    expect(record.tokenIndex).to.not.equal(0n);
    expect(record.amount).to.equal(USDC(100));
    expect(await taskSlot(escrow, id, 1n)).to.equal(0n);
    expect(await taskSlot(escrow, id, 2n)).to.equal(0n);
    const task = await escrow.getTask(id);
    expect([task.poster, task.worker, task.token, task.amount, task.submissionAttempts]).to.deep.equal([
      poster.address,
      ethers.ZeroAddress,
      token,
      USDC(100),
      0n,
    ]);
  });

  it("records the worker's account id at assignment and keeps slot 2 empty until a failed verdict", async () => {
    const { escrow, token, poster, verifier, worker } = await loadFixture(compactFixture);
    const id = await escrow.nextTaskId();
    await escrow.connect(poster).createTask(TASK_HASH, token, USDC(100), CATEGORY, ZONE, DAY);
    await escrow.connect(verifier).marketplaceAssign(id, worker.address);
    const record = await compactRecord(escrow, id);
    expect(record.workerId).to.not.equal(0n);
    expect(record.workerId).to.not.equal(record.posterId);
    expect((await escrow.getTask(id)).worker).to.equal(worker.address);
    expect(await taskSlot(escrow, id, 2n)).to.equal(0n);
    await escrow.connect(worker).submitEvidence(id, EVIDENCE_HASH);
    await escrow.connect(verifier).completeVerification(id, false);
    const failedAt = await escrow.failedVerdictAt(id);
    expect(failedAt).to.not.equal(0n);
    expect(await taskSlot(escrow, id, 2n)).to.not.equal(0n);
    const task = await escrow.getTask(id);
    expect([task.status, task.worker, task.submissionAttempts]).to.deep.equal([STATUS.Verified, worker.address, 1n]);
  });

  it("gives an account one id, whether it first works or first posts", async () => {
    const { escrow, token, poster, verifier, worker } = await loadFixture(compactFixture);
    const first = await escrow.nextTaskId();
    await escrow.connect(poster).createTask(TASK_HASH, token, USDC(100), CATEGORY, ZONE, DAY);
    await escrow.connect(verifier).marketplaceAssign(first, worker.address);
    // The worker posts, the poster works for it.
    await escrow.connect(worker).createTask(TASK_HASH, token, USDC(5), CATEGORY, ZONE, DAY);
    await escrow.connect(verifier).marketplaceAssign(first + 1n, poster.address);
    const a = await compactRecord(escrow, first);
    const b = await compactRecord(escrow, first + 1n);
    expect([b.posterId, b.workerId]).to.deep.equal([a.workerId, a.posterId]);
    const task = await escrow.getTask(first + 1n);
    expect([task.poster, task.worker]).to.deep.equal([worker.address, poster.address]);
  });

  it("refuses to assign a compact task to its poster", async () => {
    const { escrow, token, poster, verifier } = await loadFixture(compactFixture);
    const id = await escrow.nextTaskId();
    await escrow.connect(poster).createTask(TASK_HASH, token, USDC(100), CATEGORY, ZONE, DAY);
    await expect(escrow.connect(verifier).marketplaceAssign(id, poster.address)).to.be.revertedWithCustomError(
      escrow,
      "SelfAssignment",
    );
  });

  describe("an amount of 2^80 or more", () => {
    async function largeTaskFixture() {
      const base = await compactFixture();
      const { escrow, usdc, token, poster } = base;
      await usdc.mint(poster.address, BEYOND_COMPACT * 2n);
      const id = await escrow.nextTaskId();
      await escrow.connect(poster).createTask(TASK_HASH, token, BEYOND_COMPACT, CATEGORY, ZONE, DAY);
      return { ...base, id };
    }

    it("takes the full record, which the views read the same", async () => {
      const { escrow, token, poster, id } = await loadFixture(largeTaskFixture);
      expect((await compactRecord(escrow, id)).compact).to.equal(false);
      expect(await taskSlot(escrow, id, 1n)).to.not.equal(0n);
      const task = await escrow.getTask(id);
      expect([task.poster, task.token, task.amount]).to.deep.equal([poster.address, token, BEYOND_COMPACT]);
    });

    it("refuses its poster as worker and pays its worker as a compact task's", async () => {
      const { escrow, usdc, poster, verifier, worker, treasury, id } = await loadFixture(largeTaskFixture);
      await expect(escrow.connect(poster).assignWorker(id, poster.address)).to.be.revertedWithCustomError(
        escrow,
        "SelfAssignment",
      );
      await escrow.connect(poster).assignWorker(id, worker.address);
      expect((await escrow.getTask(id)).worker).to.equal(worker.address);
      await escrow.connect(worker).submitEvidence(id, EVIDENCE_HASH);
      const fee = (BEYOND_COMPACT * (await escrow.feeBps())) / (await escrow.BPS_DENOMINATOR());
      await expect(escrow.connect(verifier).completeVerification(id, true)).to.changeTokenBalances(
        usdc,
        [escrow, worker, treasury],
        [-BEYOND_COMPACT, BEYOND_COMPACT - fee, fee],
      );
    });

    it("reads like a compact task of the same terms in every getTask field but the amount", async () => {
      const { escrow, token, poster, id } = await loadFixture(largeTaskFixture);
      const small = await escrow.nextTaskId();
      await escrow.connect(poster).createTask(TASK_HASH, token, USDC(1), CATEGORY, ZONE, DAY);
      const large = getTaskView(await escrow.getTask(id));
      const compact = getTaskView(await escrow.getTask(small));
      expect({ ...compact, amount: 0n, createdAt: 0n, deadline: 0n }).to.deep.equal({
        ...large,
        amount: 0n,
        createdAt: 0n,
        deadline: 0n,
      });
    });
  });

  describe("token allowlist indexes", () => {
    it("refuses new tasks in a disallowed token while its tasks settle in it", async () => {
      const { escrow, usdc, token, admin, poster, verifier, worker } = await loadFixture(compactFixture);
      const id = await escrow.nextTaskId();
      await escrow.connect(poster).createTask(TASK_HASH, token, USDC(100), CATEGORY, ZONE, DAY);
      await escrow.connect(admin).disallowToken(token);
      await expect(
        escrow.connect(poster).createTask(TASK_HASH, token, USDC(100), CATEGORY, ZONE, DAY),
      ).to.be.revertedWithCustomError(escrow, "TokenNotAllowed");
      await escrow.connect(verifier).marketplaceAssign(id, worker.address);
      await escrow.connect(worker).submitEvidence(id, EVIDENCE_HASH);
      await expect(escrow.connect(verifier).completeVerification(id, true)).to.changeTokenBalance(
        usdc,
        escrow,
        -USDC(100),
      );
    });

    it("gives a token allowed again a new index; tasks of either index read the token", async () => {
      const { escrow, token, admin, poster } = await loadFixture(compactFixture);
      const first = await escrow.nextTaskId();
      await escrow.connect(poster).createTask(TASK_HASH, token, USDC(1), CATEGORY, ZONE, DAY);
      await escrow.connect(admin).disallowToken(token);
      await escrow.connect(admin).allowToken(token);
      await escrow.connect(poster).createTask(TASK_HASH, token, USDC(1), CATEGORY, ZONE, DAY);
      const [a, b] = [await compactRecord(escrow, first), await compactRecord(escrow, first + 1n)];
      expect(b.tokenIndex).to.not.equal(a.tokenIndex);
      expect((await escrow.getTask(first)).token).to.equal(token);
      expect((await escrow.getTask(first + 1n)).token).to.equal(token);
    });

    it("keeps the index of a token allowed twice", async () => {
      const { escrow, admin, poster } = await loadFixture(compactFixture);
      await escrow.connect(admin).allowToken(ethers.ZeroAddress);
      await escrow.connect(admin).allowToken(ethers.ZeroAddress);
      const id = await escrow.nextTaskId();
      await escrow.connect(poster).createTask(TASK_HASH, ethers.ZeroAddress, 5n, CATEGORY, ZONE, DAY, { value: 5n });
      await escrow.connect(poster).createTask(TASK_HASH, ethers.ZeroAddress, 5n, CATEGORY, ZONE, DAY, { value: 5n });
      const [a, b] = [await compactRecord(escrow, id), await compactRecord(escrow, id + 1n)];
      expect(a.tokenIndex).to.equal(b.tokenIndex);
      expect((await escrow.getTask(id)).token).to.equal(ethers.ZeroAddress);
    });
  });
});
