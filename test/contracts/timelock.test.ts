import { expect } from "chai";
import { ethers, upgrades } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { deployAll } from "../../scripts/deploy";
import { FEE_BPS } from "../helpers/fixtures";

const DELAY = 2 * 86_400;

/** The deploy script with its timelock option: a TimelockController (2 days, `proposer` proposes and executes) admin. */
async function timelockedFixture() {
  const [deployer, treasury, verifier, proposer, stranger] = await ethers.getSigners();
  const { escrow, agentFactory, timelock, book } = await deployAll({
    admin: proposer.address,
    treasury: treasury.address,
    verifier: verifier.address,
    feeBps: FEE_BPS,
    timelockDelay: DELAY,
    write: false,
  });
  const implementation = (await upgrades.prepareUpgrade(
    await escrow.getAddress(),
    await ethers.getContractFactory("TaskEscrowV2"),
    { kind: "uups" },
  )) as string;
  const call = escrow.interface.encodeFunctionData("upgradeToAndCall", [implementation, "0x"]);
  return { deployer, proposer, stranger, escrow, agentFactory, timelock: timelock!, book, implementation, call };
}

describe("deploy script: ADMIN_TIMELOCK_DELAY", () => {
  it("makes the timelock the escrow's admin and the factory's owner", async () => {
    const { escrow, agentFactory, timelock, book } = await loadFixture(timelockedFixture);
    const address = await timelock.getAddress();
    expect(await escrow.admin()).to.equal(address);
    expect(await agentFactory.owner()).to.equal(address);
    expect(book.admin).to.equal(address);
    expect(await timelock.getMinDelay()).to.equal(BigInt(DELAY));
  });

  it("an upgrade waits for the delay: scheduled, refused before it, executed after", async () => {
    const { proposer, escrow, timelock, implementation, call } = await loadFixture(timelockedFixture);
    const target = await escrow.getAddress();
    const salt = ethers.id("upgrade to V2");
    // The proposer cannot upgrade directly any more.
    await expect(escrow.connect(proposer).upgradeToAndCall(implementation, "0x")).to.be.revertedWithCustomError(
      escrow,
      "NotAdmin",
    );
    await timelock.connect(proposer).schedule(target, 0, call, ethers.ZeroHash, salt, DELAY);
    const execute = () => timelock.connect(proposer).execute(target, 0, call, ethers.ZeroHash, salt);
    await expect(execute()).to.be.revertedWithCustomError(timelock, "TimelockUnexpectedOperationState");
    const readyAt = await timelock.getTimestamp(await timelock.hashOperation(target, 0, call, ethers.ZeroHash, salt));
    await time.setNextBlockTimestamp(readyAt - 1n);
    await expect(execute()).to.be.revertedWithCustomError(timelock, "TimelockUnexpectedOperationState");
    await time.setNextBlockTimestamp(readyAt);
    await execute();
    expect(await upgrades.erc1967.getImplementationAddress(target)).to.equal(implementation);
  });

  it("refuses a schedule shorter than the delay and one by a stranger", async () => {
    const { proposer, stranger, escrow, timelock, call } = await loadFixture(timelockedFixture);
    const target = await escrow.getAddress();
    await expect(
      timelock.connect(proposer).schedule(target, 0, call, ethers.ZeroHash, ethers.ZeroHash, DELAY - 1),
    ).to.be.revertedWithCustomError(timelock, "TimelockInsufficientDelay");
    await expect(
      timelock.connect(stranger).schedule(target, 0, call, ethers.ZeroHash, ethers.ZeroHash, DELAY),
    ).to.be.revertedWithCustomError(timelock, "AccessControlUnauthorizedAccount");
  });

  it("refuses a delay that is not a positive number of seconds", async () => {
    await expect(deployAll({ timelockDelay: 0, write: false })).to.be.rejectedWith("ADMIN_TIMELOCK_DELAY");
  });
});
