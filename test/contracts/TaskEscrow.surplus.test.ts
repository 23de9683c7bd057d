import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import {
  CATEGORY,
  DAY,
  EVIDENCE_HASH,
  TASK_HASH,
  USDC,
  ZONE,
  commitOpen,
  deployEscrowFixture,
  submittedTaskFixture,
} from "../helpers/fixtures";

/** Tokens sent straight to the escrow (not through a task). */
const DONATION = USDC(7);

/**
 * Four USDC tasks of 100: 1 Submitted, 2 Funded, 3 Completed, 4 an open task with one commitment (bond 5); then
 * `stranger` sends DONATION to the escrow directly.
 */
async function donatedFixture() {
  const base = await submittedTaskFixture();
  const { escrow, usdc, poster, verifier, worker, stranger } = base;
  const token = await usdc.getAddress();
  const amount = USDC(100);
  await escrow.connect(poster).createTask(TASK_HASH, token, amount, CATEGORY, ZONE, DAY);
  await escrow.connect(poster).createTask(TASK_HASH, token, amount, CATEGORY, ZONE, DAY);
  await escrow.connect(verifier).marketplaceAssign(3n, worker.address);
  await escrow.connect(worker).submitEvidence(3n, EVIDENCE_HASH);
  await escrow.connect(verifier).completeVerification(3n, true);
  await escrow.connect(poster).createTaskOpen(TASK_HASH, token, amount, CATEGORY, ZONE, DAY);
  await commitOpen(escrow, worker, 4n, EVIDENCE_HASH);
  await usdc.connect(stranger).transfer(await escrow.getAddress(), DONATION);
  const bond = amount / 20n;
  return { ...base, token, amount, bond, held: 3n * amount + bond };
}

describe("TaskEscrow", () => {
  describe("#sweepSurplus", () => {
    it("sends exactly the tokens sent to the escrow directly, and emits SurplusSwept", async () => {
      const { escrow, usdc, admin, treasury, token } = await loadFixture(donatedFixture);
      const tx = escrow.connect(admin).sweepSurplus(token, treasury.address);
      await expect(tx).to.emit(escrow, "SurplusSwept").withArgs(token, treasury.address, DONATION);
      await expect(tx).to.changeTokenBalances(usdc, [escrow, treasury], [-DONATION, DONATION]);
    });

    it("leaves the escrow holding exactly the unsettled rewards and the bonds", async () => {
      const { escrow, usdc, admin, treasury, token, held } = await loadFixture(donatedFixture);
      await escrow.connect(admin).sweepSurplus(token, treasury.address);
      expect(await usdc.balanceOf(await escrow.getAddress())).to.equal(held);
    });

    it("returns the amount swept", async () => {
      const { escrow, admin, treasury, token } = await loadFixture(donatedFixture);
      expect(await escrow.connect(admin).sweepSurplus.staticCall(token, treasury.address)).to.equal(DONATION);
    });

    it("never takes a task's funds: a second sweep finds nothing", async () => {
      const { escrow, admin, treasury, token } = await loadFixture(donatedFixture);
      await escrow.connect(admin).sweepSurplus(token, treasury.address);
      await expect(escrow.connect(admin).sweepSurplus(token, treasury.address)).to.be.revertedWithCustomError(
        escrow,
        "NoSurplus",
      );
    });

    it("lets every task settle in full after a sweep", async () => {
      const { escrow, usdc, admin, treasury, verifier, poster, token, amount } = await loadFixture(donatedFixture);
      await escrow.connect(admin).sweepSurplus(token, treasury.address);
      await escrow.connect(verifier).completeVerification(1n, true);
      await escrow.connect(poster).cancelTask(2n);
      await time.increaseTo(await escrow.effectiveDeadline(4n));
      await time.increase(DAY);
      await escrow.connect(poster).reclaimOpen(4n);
      // The forfeited bond is owed to the poster until it withdraws it.
      await escrow.connect(poster).withdraw(token, poster.address);
      expect(await usdc.balanceOf(await escrow.getAddress())).to.equal(0n);
      expect((await escrow.getTask(2n)).amount).to.equal(amount);
    });

    it("reverts NoSurplus for a token the escrow holds only for its tasks", async () => {
      const { escrow, admin, treasury, usdc } = await loadFixture(submittedTaskFixture);
      await expect(
        escrow.connect(admin).sweepSurplus(await usdc.getAddress(), treasury.address),
      ).to.be.revertedWithCustomError(escrow, "NoSurplus");
    });

    it("reverts NoSurplus for the native currency held by a native task", async () => {
      const { escrow, admin, poster, treasury } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).allowToken(ethers.ZeroAddress);
      const amount = ethers.parseEther("1");
      await escrow
        .connect(poster)
        .createTask(TASK_HASH, ethers.ZeroAddress, amount, CATEGORY, ZONE, DAY, { value: amount });
      await expect(
        escrow.connect(admin).sweepSurplus(ethers.ZeroAddress, treasury.address),
      ).to.be.revertedWithCustomError(escrow, "NoSurplus");
    });

    it("reverts when the recipient is the zero address", async () => {
      const { escrow, admin, token } = await loadFixture(donatedFixture);
      await expect(escrow.connect(admin).sweepSurplus(token, ethers.ZeroAddress)).to.be.revertedWithCustomError(
        escrow,
        "ZeroAddress",
      );
    });

    it("reverts when the caller is not the admin", async () => {
      const { escrow, stranger, token } = await loadFixture(donatedFixture);
      await expect(escrow.connect(stranger).sweepSurplus(token, stranger.address)).to.be.revertedWithCustomError(
        escrow,
        "NotAdmin",
      );
    });
  });

  describe("#reconcileHeld", () => {
    it("counts the unsettled tasks it passes, so that the sweep does not rescan them, and stays exact", async () => {
      const { escrow, usdc, admin, treasury, token, held } = await loadFixture(donatedFixture);
      await expect(escrow.connect(admin).reconcileHeld(100n)).to.emit(escrow, "HeldReconciled").withArgs(5n);
      await expect(escrow.connect(admin).sweepSurplus(token, treasury.address)).to.changeTokenBalance(
        usdc,
        treasury,
        DONATION,
      );
      expect(await usdc.balanceOf(await escrow.getAddress())).to.equal(held);
    });

    it("stops after maxTasks and resumes where it stopped", async () => {
      const { escrow, admin } = await loadFixture(donatedFixture);
      expect(await escrow.connect(admin).reconcileHeld.staticCall(2n)).to.equal(3n);
      await escrow.connect(admin).reconcileHeld(2n);
      await expect(escrow.connect(admin).reconcileHeld(1n)).to.emit(escrow, "HeldReconciled").withArgs(4n);
      await expect(escrow.connect(admin).reconcileHeld(0n)).to.emit(escrow, "HeldReconciled").withArgs(4n);
    });

    it("keeps counting a counted task that settled since: the sweep takes less, never a task's funds", async () => {
      const { escrow, usdc, admin, treasury, poster, token, amount } = await loadFixture(donatedFixture);
      await escrow.connect(admin).reconcileHeld(100n);
      await escrow.connect(poster).cancelTask(2n);
      // Task 2's reward left with the refund but still counts: the escrow looks short by it, nothing to sweep.
      expect(amount).to.be.greaterThan(DONATION);
      await expect(escrow.connect(admin).sweepSurplus(token, treasury.address)).to.be.revertedWithCustomError(
        escrow,
        "NoSurplus",
      );
      await escrow.connect(admin).releaseSettled([2n]);
      await expect(escrow.connect(admin).sweepSurplus(token, treasury.address)).to.changeTokenBalance(
        usdc,
        treasury,
        DONATION,
      );
    });

    it("reverts when the caller is not the admin", async () => {
      const { escrow, stranger } = await loadFixture(donatedFixture);
      await expect(escrow.connect(stranger).reconcileHeld(1n)).to.be.revertedWithCustomError(escrow, "NotAdmin");
    });
  });

  describe("#releaseSettled", () => {
    it("skips tasks still unsettled and tasks never counted", async () => {
      const { escrow, usdc, admin, treasury, verifier, token } = await loadFixture(donatedFixture);
      await escrow.connect(admin).reconcileHeld(2n); // counts task 1 (Submitted) and task 2 (Funded)
      await escrow.connect(verifier).completeVerification(1n, true);
      // Task 2 is unsettled, task 4 was never counted (the sweep scans it), task 1 settled: only task 1 is released.
      await escrow.connect(admin).releaseSettled([2n, 4n, 1n, 1n]);
      await expect(escrow.connect(admin).sweepSurplus(token, treasury.address)).to.changeTokenBalance(
        usdc,
        treasury,
        DONATION,
      );
    });

    it("reverts when the caller is not the admin", async () => {
      const { escrow, stranger } = await loadFixture(donatedFixture);
      await expect(escrow.connect(stranger).releaseSettled([1n])).to.be.revertedWithCustomError(escrow, "NotAdmin");
    });
  });
});
