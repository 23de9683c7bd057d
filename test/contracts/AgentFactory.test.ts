import { expect } from "chai";
import { ethers, upgrades } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture, USDC } from "../helpers/fixtures";

/** The deploy fixture plus the current fee, with `poster` and `worker` approving the factory. */
async function factoryFixture() {
  const base = await deployEscrowFixture();
  const { agentFactory, usdc, poster, worker } = base;
  const factoryAddress = await agentFactory.getAddress();
  for (const account of [poster, worker]) {
    await usdc.connect(account).approve(factoryAddress, ethers.MaxUint256);
  }
  const fee = await agentFactory.deployFee();
  return { ...base, factoryAddress, fee };
}

/** The factory after `admin` proposed `stranger` as the next owner. */
async function pendingOwnerFixture() {
  const base = await factoryFixture();
  await base.agentFactory.connect(base.admin).transferOwnership(base.stranger.address);
  return base;
}

describe("AgentFactory", () => {
  describe("#initialize", () => {
    it("sets the owner, token, treasury and fee", async () => {
      const { agentFactory, usdc, admin, treasury, fee } = await loadFixture(factoryFixture);
      expect(await agentFactory.owner()).to.equal(admin.address);
      expect(await agentFactory.pendingOwner()).to.equal(ethers.ZeroAddress);
      expect(await agentFactory.usdc()).to.equal(await usdc.getAddress());
      expect(await agentFactory.treasury()).to.equal(treasury.address);
      expect(await agentFactory.deployFee()).to.equal(fee);
      expect(await agentFactory.nonce()).to.equal(0n);
    });

    it("emits TreasuryUpdated and DeployFeeUpdated from zero", async () => {
      const { usdc, admin, treasury, fee } = await loadFixture(factoryFixture);
      const proxy = await upgrades.deployProxy(
        await ethers.getContractFactory("AgentFactory"),
        [admin.address, await usdc.getAddress(), treasury.address, fee],
        { kind: "uups" },
      );
      const deployment = proxy.deploymentTransaction()!;
      await expect(deployment).to.emit(proxy, "TreasuryUpdated").withArgs(ethers.ZeroAddress, treasury.address);
      await expect(deployment).to.emit(proxy, "DeployFeeUpdated").withArgs(0n, fee);
    });

    it("reverts when the token is the zero address", async () => {
      const { agentFactory, admin, treasury, fee } = await loadFixture(factoryFixture);
      await expect(
        upgrades.deployProxy(
          await ethers.getContractFactory("AgentFactory"),
          [admin.address, ethers.ZeroAddress, treasury.address, fee],
          { kind: "uups" },
        ),
      ).to.be.revertedWithCustomError(agentFactory, "ZeroAddress");
    });

    it("reverts when the treasury is the zero address", async () => {
      const { agentFactory, usdc, admin, fee } = await loadFixture(factoryFixture);
      await expect(
        upgrades.deployProxy(
          await ethers.getContractFactory("AgentFactory"),
          [admin.address, await usdc.getAddress(), ethers.ZeroAddress, fee],
          { kind: "uups" },
        ),
      ).to.be.revertedWithCustomError(agentFactory, "ZeroAddress");
    });

    it("reverts when the owner is the zero address", async () => {
      const { agentFactory, usdc, treasury, fee } = await loadFixture(factoryFixture);
      await expect(
        upgrades.deployProxy(
          await ethers.getContractFactory("AgentFactory"),
          [ethers.ZeroAddress, await usdc.getAddress(), treasury.address, fee],
          { kind: "uups" },
        ),
      )
        .to.be.revertedWithCustomError(agentFactory, "OwnableInvalidOwner")
        .withArgs(ethers.ZeroAddress);
    });

    it("reverts when called again on the proxy", async () => {
      const { agentFactory, usdc, admin, treasury, fee } = await loadFixture(factoryFixture);
      await expect(
        agentFactory.initialize(admin.address, await usdc.getAddress(), treasury.address, fee),
      ).to.be.revertedWithCustomError(agentFactory, "InvalidInitialization");
    });

    it("reverts when called on the implementation", async () => {
      const { book, usdc, stranger, fee } = await loadFixture(factoryFixture);
      const implementation = await ethers.getContractAt("AgentFactory", book.agentFactory.implementation);
      await expect(
        implementation.connect(stranger).initialize(stranger.address, await usdc.getAddress(), stranger.address, fee),
      ).to.be.revertedWithCustomError(implementation, "InvalidInitialization");
    });
  });

  describe("#deployAgent", () => {
    it("reverts when the amount is not zero", async () => {
      const { agentFactory, poster } = await loadFixture(factoryFixture);
      await expect(agentFactory.connect(poster).deployAgent(USDC(1))).to.be.revertedWithCustomError(
        agentFactory,
        "AgentFundingNotSupported",
      );
    });

    it("reverts when the fee is not set", async () => {
      const { agentFactory, admin, poster } = await loadFixture(factoryFixture);
      await agentFactory.connect(admin).setDeployFee(0n);
      await expect(agentFactory.connect(poster).deployAgent(0n)).to.be.revertedWith("AgentFactory: deploy fee not set");
    });

    it("reverts when the caller has not approved the fee", async () => {
      const { agentFactory, usdc, stranger, factoryAddress, fee } = await loadFixture(factoryFixture);
      await expect(agentFactory.connect(stranger).deployAgent(0n))
        .to.be.revertedWithCustomError(usdc, "ERC20InsufficientAllowance")
        .withArgs(factoryAddress, 0n, fee);
    });

    it("reverts when the caller cannot pay the fee", async () => {
      const { agentFactory, usdc, verifierAgent, factoryAddress, fee } = await loadFixture(factoryFixture);
      await usdc.connect(verifierAgent).approve(factoryAddress, fee);
      await expect(agentFactory.connect(verifierAgent).deployAgent(0n))
        .to.be.revertedWithCustomError(usdc, "ERC20InsufficientBalance")
        .withArgs(verifierAgent.address, 0n, fee);
    });

    it("moves the fee from the caller to the treasury", async () => {
      const { agentFactory, usdc, poster, treasury, fee } = await loadFixture(factoryFixture);
      await expect(agentFactory.connect(poster).deployAgent(0n)).to.changeTokenBalances(
        usdc,
        [poster, treasury, agentFactory],
        [-fee, fee, 0n],
      );
    });

    it("charges the fee in force at the time of the call", async () => {
      const { agentFactory, usdc, admin, poster, treasury, fee } = await loadFixture(factoryFixture);
      const newFee = fee * 2n;
      await agentFactory.connect(admin).setDeployFee(newFee);
      await expect(agentFactory.connect(poster).deployAgent(0n)).to.changeTokenBalances(
        usdc,
        [poster, treasury],
        [-newFee, newFee],
      );
    });

    it("increments the nonce and returns it", async () => {
      const { agentFactory, poster } = await loadFixture(factoryFixture);
      const before = await agentFactory.nonce();
      expect(await agentFactory.connect(poster).deployAgent.staticCall(0n)).to.equal(before + 1n);
      await agentFactory.connect(poster).deployAgent(0n);
      expect(await agentFactory.nonce()).to.equal(before + 1n);
    });

    it("counts payments from 1 across callers", async () => {
      const { agentFactory, poster, worker } = await loadFixture(factoryFixture);
      const first = (await time.latest()) + 10;
      await time.setNextBlockTimestamp(first);
      await expect(agentFactory.connect(poster).deployAgent(0n))
        .to.emit(agentFactory, "AgentDeployed")
        .withArgs(poster.address, 0n, 1n, first);
      await time.setNextBlockTimestamp(first + 1);
      await expect(agentFactory.connect(worker).deployAgent(0n))
        .to.emit(agentFactory, "AgentDeployed")
        .withArgs(worker.address, 0n, 2n, first + 1);
      expect(await agentFactory.nonce()).to.equal(2n);
    });

    it("emits AgentDeployed with the caller, zero, the nonce and the block timestamp", async () => {
      const { agentFactory, poster } = await loadFixture(factoryFixture);
      const timestamp = (await time.latest()) + 1000;
      await time.setNextBlockTimestamp(timestamp);
      await expect(agentFactory.connect(poster).deployAgent(0n))
        .to.emit(agentFactory, "AgentDeployed")
        .withArgs(poster.address, 0n, 1n, timestamp);
    });
  });

  describe("#getTotalCost", () => {
    it("returns the fee when the amount is zero", async () => {
      const { agentFactory, fee } = await loadFixture(factoryFixture);
      expect(await agentFactory.getTotalCost(0n)).to.equal(fee);
    });

    it("returns the fee plus the amount", async () => {
      const { agentFactory, fee } = await loadFixture(factoryFixture);
      expect(await agentFactory.getTotalCost(USDC(5))).to.equal(fee + USDC(5));
    });

    it("follows a fee change", async () => {
      const { agentFactory, admin, fee } = await loadFixture(factoryFixture);
      await agentFactory.connect(admin).setDeployFee(fee * 3n);
      expect(await agentFactory.getTotalCost(0n)).to.equal(fee * 3n);
    });
  });

  describe("#setTreasury", () => {
    it("reverts when the caller is not the owner", async () => {
      const { agentFactory, stranger } = await loadFixture(factoryFixture);
      await expect(agentFactory.connect(stranger).setTreasury(stranger.address))
        .to.be.revertedWithCustomError(agentFactory, "OwnableUnauthorizedAccount")
        .withArgs(stranger.address);
    });

    it("reverts when the treasury is the zero address", async () => {
      const { agentFactory, admin } = await loadFixture(factoryFixture);
      await expect(agentFactory.connect(admin).setTreasury(ethers.ZeroAddress)).to.be.revertedWithCustomError(
        agentFactory,
        "ZeroAddress",
      );
    });

    it("emits TreasuryUpdated and sets the treasury", async () => {
      const { agentFactory, admin, treasury, stranger } = await loadFixture(factoryFixture);
      await expect(agentFactory.connect(admin).setTreasury(stranger.address))
        .to.emit(agentFactory, "TreasuryUpdated")
        .withArgs(treasury.address, stranger.address);
      expect(await agentFactory.treasury()).to.equal(stranger.address);
    });

    it("sends later fees to the new treasury", async () => {
      const { agentFactory, usdc, admin, poster, treasury, stranger, fee } = await loadFixture(factoryFixture);
      await agentFactory.connect(admin).setTreasury(stranger.address);
      await expect(agentFactory.connect(poster).deployAgent(0n)).to.changeTokenBalances(
        usdc,
        [poster, stranger, treasury],
        [-fee, fee, 0n],
      );
    });
  });

  describe("#setDeployFee", () => {
    it("reverts when the caller is not the owner", async () => {
      const { agentFactory, stranger } = await loadFixture(factoryFixture);
      await expect(agentFactory.connect(stranger).setDeployFee(USDC(2)))
        .to.be.revertedWithCustomError(agentFactory, "OwnableUnauthorizedAccount")
        .withArgs(stranger.address);
    });

    it("emits DeployFeeUpdated and sets the fee", async () => {
      const { agentFactory, admin, fee } = await loadFixture(factoryFixture);
      await expect(agentFactory.connect(admin).setDeployFee(USDC(2)))
        .to.emit(agentFactory, "DeployFeeUpdated")
        .withArgs(fee, USDC(2));
      expect(await agentFactory.deployFee()).to.equal(USDC(2));
    });

    it("accepts zero, which turns deployAgent off", async () => {
      const { agentFactory, admin, fee } = await loadFixture(factoryFixture);
      await expect(agentFactory.connect(admin).setDeployFee(0n))
        .to.emit(agentFactory, "DeployFeeUpdated")
        .withArgs(fee, 0n);
      expect(await agentFactory.deployFee()).to.equal(0n);
    });
  });

  describe("#emergencyWithdraw", () => {
    it("reverts when the caller is not the owner", async () => {
      const { agentFactory, stranger } = await loadFixture(factoryFixture);
      await expect(agentFactory.connect(stranger).emergencyWithdraw(USDC(1)))
        .to.be.revertedWithCustomError(agentFactory, "OwnableUnauthorizedAccount")
        .withArgs(stranger.address);
    });

    it("reverts when the factory holds less than the amount", async () => {
      const { agentFactory, usdc, admin, factoryAddress } = await loadFixture(factoryFixture);
      await usdc.mint(factoryAddress, USDC(3));
      await expect(agentFactory.connect(admin).emergencyWithdraw(USDC(4)))
        .to.be.revertedWithCustomError(usdc, "ERC20InsufficientBalance")
        .withArgs(factoryAddress, USDC(3), USDC(4));
    });

    it("sends the tokens to the owner", async () => {
      const { agentFactory, usdc, admin, factoryAddress } = await loadFixture(factoryFixture);
      await usdc.mint(factoryAddress, USDC(3));
      await expect(agentFactory.connect(admin).emergencyWithdraw(USDC(3))).to.changeTokenBalances(
        usdc,
        [agentFactory, admin],
        [-USDC(3), USDC(3)],
      );
    });

    it("emits EmergencyWithdrawal with the owner and the amount", async () => {
      const { agentFactory, usdc, admin, factoryAddress } = await loadFixture(factoryFixture);
      await usdc.mint(factoryAddress, USDC(3));
      await expect(agentFactory.connect(admin).emergencyWithdraw(USDC(2)))
        .to.emit(agentFactory, "EmergencyWithdrawal")
        .withArgs(admin.address, USDC(2));
    });
  });

  describe("#transferOwnership", () => {
    it("reverts when the caller is not the owner", async () => {
      const { agentFactory, stranger } = await loadFixture(factoryFixture);
      await expect(agentFactory.connect(stranger).transferOwnership(stranger.address))
        .to.be.revertedWithCustomError(agentFactory, "OwnableUnauthorizedAccount")
        .withArgs(stranger.address);
    });

    it("records the pending owner and keeps the current owner", async () => {
      const { agentFactory, admin, stranger } = await loadFixture(factoryFixture);
      await expect(agentFactory.connect(admin).transferOwnership(stranger.address))
        .to.emit(agentFactory, "OwnershipTransferStarted")
        .withArgs(admin.address, stranger.address);
      expect(await agentFactory.pendingOwner()).to.equal(stranger.address);
      expect(await agentFactory.owner()).to.equal(admin.address);
    });

    it("leaves the owner's powers with the current owner until acceptance", async () => {
      const { agentFactory, admin, stranger } = await loadFixture(pendingOwnerFixture);
      await expect(agentFactory.connect(stranger).setDeployFee(USDC(2)))
        .to.be.revertedWithCustomError(agentFactory, "OwnableUnauthorizedAccount")
        .withArgs(stranger.address);
      await expect(agentFactory.connect(admin).setDeployFee(USDC(2))).to.emit(agentFactory, "DeployFeeUpdated");
    });
  });

  describe("#acceptOwnership", () => {
    it("reverts when the caller is not the pending owner", async () => {
      const { agentFactory, poster } = await loadFixture(pendingOwnerFixture);
      await expect(agentFactory.connect(poster).acceptOwnership())
        .to.be.revertedWithCustomError(agentFactory, "OwnableUnauthorizedAccount")
        .withArgs(poster.address);
    });

    it("reverts when the current owner accepts its own transfer", async () => {
      const { agentFactory, admin } = await loadFixture(pendingOwnerFixture);
      await expect(agentFactory.connect(admin).acceptOwnership())
        .to.be.revertedWithCustomError(agentFactory, "OwnableUnauthorizedAccount")
        .withArgs(admin.address);
    });

    it("makes the pending owner the owner and clears the pending owner", async () => {
      const { agentFactory, admin, stranger } = await loadFixture(pendingOwnerFixture);
      await expect(agentFactory.connect(stranger).acceptOwnership())
        .to.emit(agentFactory, "OwnershipTransferred")
        .withArgs(admin.address, stranger.address);
      expect(await agentFactory.owner()).to.equal(stranger.address);
      expect(await agentFactory.pendingOwner()).to.equal(ethers.ZeroAddress);
    });

    it("takes the owner's powers from the previous owner", async () => {
      const { agentFactory, admin, stranger } = await loadFixture(pendingOwnerFixture);
      await agentFactory.connect(stranger).acceptOwnership();
      await expect(agentFactory.connect(admin).setDeployFee(USDC(2)))
        .to.be.revertedWithCustomError(agentFactory, "OwnableUnauthorizedAccount")
        .withArgs(admin.address);
      await expect(agentFactory.connect(stranger).setDeployFee(USDC(2))).to.emit(agentFactory, "DeployFeeUpdated");
    });
  });

  describe("#upgradeToAndCall", () => {
    it("reverts when the caller is not the owner", async () => {
      const { agentFactory, stranger } = await loadFixture(factoryFixture);
      const next = await (await ethers.getContractFactory("AgentFactory")).deploy();
      await expect(agentFactory.connect(stranger).upgradeToAndCall(await next.getAddress(), "0x"))
        .to.be.revertedWithCustomError(agentFactory, "OwnableUnauthorizedAccount")
        .withArgs(stranger.address);
    });

    it("reverts when called on the implementation", async () => {
      const { book, admin } = await loadFixture(factoryFixture);
      const implementation = await ethers.getContractAt("AgentFactory", book.agentFactory.implementation);
      const next = await (await ethers.getContractFactory("AgentFactory")).deploy();
      await expect(
        implementation.connect(admin).upgradeToAndCall(await next.getAddress(), "0x"),
      ).to.be.revertedWithCustomError(implementation, "UUPSUnauthorizedCallContext");
    });

    it("upgrades when the owner calls it", async () => {
      const { agentFactory, admin, factoryAddress } = await loadFixture(factoryFixture);
      const next = await (await ethers.getContractFactory("AgentFactory")).deploy();
      const nextAddress = await next.getAddress();
      await expect(agentFactory.connect(admin).upgradeToAndCall(nextAddress, "0x"))
        .to.emit(agentFactory, "Upgraded")
        .withArgs(nextAddress);
      expect(await upgrades.erc1967.getImplementationAddress(factoryAddress)).to.equal(nextAddress);
    });
  });
});
