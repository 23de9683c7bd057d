import { expect } from "chai";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { submittedTaskFixture, STATUS, USDC } from "../helpers/fixtures";

describe("smoke", () => {
  it("pays a verified task", async () => {
    const { escrow, verifier, worker, treasury, usdc, taskId } = await loadFixture(submittedTaskFixture);
    await expect(escrow.connect(verifier).completeVerification(taskId, true)).to.changeTokenBalances(
      usdc,
      [worker, treasury],
      [USDC(90), USDC(10)],
    );
    expect((await escrow.getTask(taskId)).status).to.equal(STATUS.Completed);
  });
});
