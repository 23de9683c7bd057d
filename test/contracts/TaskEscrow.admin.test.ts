import { expect } from "chai";
import { ethers, upgrades } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import type { TaskEscrow } from "../../typechain-types";
import {
  CATEGORY,
  DAY,
  FEE_BPS,
  TASK_HASH,
  USDC,
  ZONE,
  deployEscrowFixture,
  fundedTaskFixture,
  submittedTaskFixture,
} from "../helpers/fixtures";

/** Deploys a fresh escrow proxy with the given initializer arguments (the fixture's escrow is already initialized). */
async function deployEscrowProxy(args: [string, string, string, bigint | number, string[]]) {
  const factory = await ethers.getContractFactory("TaskEscrow");
  return (await upgrades.deployProxy(factory, args, { kind: "uups" })) as unknown as TaskEscrow;
}

/** Every admin-only setter, called with arguments it would accept from the admin. */
type AdminCall = (escrow: TaskEscrow, addresses: { stranger: string; token: string }) => Promise<unknown>;
const ADMIN_SETTERS: Array<[string, AdminCall]> = [
  ["setFeeBps", (escrow) => escrow.setFeeBps(0)],
  ["setTreasury", (escrow, { stranger }) => escrow.setTreasury(stranger)],
  ["setVerifier", (escrow, { stranger }) => escrow.setVerifier(stranger)],
  ["allowToken", (escrow, { token }) => escrow.allowToken(token)],
  ["disallowToken", (escrow, { token }) => escrow.disallowToken(token)],
  ["setReputationContract", (escrow) => escrow.setReputationContract(ethers.ZeroAddress)],
  ["setTaskRegistry", (escrow) => escrow.setTaskRegistry(ethers.ZeroAddress)],
  ["setTeeSigner", (escrow, { stranger }) => escrow.setTeeSigner(stranger)],
  ["setMinRatedAmount", (escrow, { token }) => escrow.setMinRatedAmount(token, USDC(1))],
  ["proposeAdmin", (escrow, { stranger }) => escrow.proposeAdmin(stranger)],
];

describe("TaskEscrow", () => {
  describe("#initialize", () => {
    it("reverts when called on the implementation", async () => {
      const { escrow, admin, treasury, verifier, usdc } = await loadFixture(deployEscrowFixture);
      const implementation = await ethers.getContractAt(
        "TaskEscrow",
        await upgrades.erc1967.getImplementationAddress(await escrow.getAddress()),
      );
      await expect(
        implementation.initialize(admin.address, treasury.address, verifier.address, FEE_BPS, [
          await usdc.getAddress(),
        ]),
      ).to.be.revertedWithCustomError(implementation, "InvalidInitialization");
    });

    it("reverts when called again on the proxy", async () => {
      const { escrow, stranger, usdc } = await loadFixture(deployEscrowFixture);
      await expect(
        escrow
          .connect(stranger)
          .initialize(stranger.address, stranger.address, stranger.address, 0, [await usdc.getAddress()]),
      ).to.be.revertedWithCustomError(escrow, "InvalidInitialization");
    });

    it("reverts when the admin is the zero address", async () => {
      const { escrow, treasury, verifier, usdc } = await loadFixture(deployEscrowFixture);
      await expect(
        deployEscrowProxy([ethers.ZeroAddress, treasury.address, verifier.address, FEE_BPS, [await usdc.getAddress()]]),
      ).to.be.revertedWithCustomError(escrow, "ZeroAddress");
    });

    it("reverts when the treasury is the zero address", async () => {
      const { escrow, admin, verifier, usdc } = await loadFixture(deployEscrowFixture);
      await expect(
        deployEscrowProxy([admin.address, ethers.ZeroAddress, verifier.address, FEE_BPS, [await usdc.getAddress()]]),
      ).to.be.revertedWithCustomError(escrow, "ZeroAddress");
    });

    it("reverts when the verifier is the zero address", async () => {
      const { escrow, admin, treasury, usdc } = await loadFixture(deployEscrowFixture);
      await expect(
        deployEscrowProxy([admin.address, treasury.address, ethers.ZeroAddress, FEE_BPS, [await usdc.getAddress()]]),
      ).to.be.revertedWithCustomError(escrow, "ZeroAddress");
    });

    it("reverts when the fee exceeds MAX_FEE_BPS", async () => {
      const { escrow, admin, treasury, verifier, usdc } = await loadFixture(deployEscrowFixture);
      const maxFeeBps = await escrow.MAX_FEE_BPS();
      await expect(
        deployEscrowProxy([
          admin.address,
          treasury.address,
          verifier.address,
          maxFeeBps + 1n,
          [await usdc.getAddress()],
        ]),
      ).to.be.revertedWithCustomError(escrow, "FeeExceedsMax");
    });

    it("accepts a fee of exactly MAX_FEE_BPS", async () => {
      const { escrow, admin, treasury, verifier, usdc } = await loadFixture(deployEscrowFixture);
      const maxFeeBps = await escrow.MAX_FEE_BPS();
      const fresh = await deployEscrowProxy([
        admin.address,
        treasury.address,
        verifier.address,
        maxFeeBps,
        [await usdc.getAddress()],
      ]);
      expect(await fresh.feeBps()).to.equal(maxFeeBps);
    });

    it("sets the roles, the fee, the allowlist and the first task id", async () => {
      const { escrow, admin, treasury, verifier, usdc } = await loadFixture(deployEscrowFixture);
      expect(await escrow.admin()).to.equal(admin.address);
      expect(await escrow.pendingAdmin()).to.equal(ethers.ZeroAddress);
      expect(await escrow.treasury()).to.equal(treasury.address);
      expect(await escrow.verifier()).to.equal(verifier.address);
      expect(await escrow.feeBps()).to.equal(FEE_BPS);
      expect(await escrow.isTokenAllowed(await usdc.getAddress())).to.equal(true);
      expect(await escrow.isTokenAllowed(ethers.ZeroAddress)).to.equal(false);
      expect(await escrow.nextTaskId()).to.equal(1n);
    });

    it("leaves the hooks, the TEE signer, the rating minimum and the pause unset", async () => {
      const { escrow, usdc } = await loadFixture(deployEscrowFixture);
      expect(await escrow.reputationContract()).to.equal(ethers.ZeroAddress);
      expect(await escrow.taskRegistry()).to.equal(ethers.ZeroAddress);
      expect(await escrow.teeSigner()).to.equal(ethers.ZeroAddress);
      expect(await escrow.minRatedAmount(await usdc.getAddress())).to.equal(0n);
      expect(await escrow.paused()).to.equal(false);
      expect(await escrow.totalPausedSeconds()).to.equal(0n);
      expect(await escrow.pauseStartedAt()).to.equal(0n);
    });

    it("emits the configuration events of the initial admin, treasury, verifier, fee and tokens", async () => {
      const { admin, treasury, verifier, usdc } = await loadFixture(deployEscrowFixture);
      const token = await usdc.getAddress();
      const fresh = await deployEscrowProxy([admin.address, treasury.address, verifier.address, FEE_BPS, [token]]);
      const deployment = fresh.deploymentTransaction()!;
      await expect(deployment).to.emit(fresh, "AdminTransferCompleted").withArgs(ethers.ZeroAddress, admin.address);
      await expect(deployment).to.emit(fresh, "TreasuryUpdated").withArgs(ethers.ZeroAddress, treasury.address);
      await expect(deployment).to.emit(fresh, "VerifierUpdated").withArgs(ethers.ZeroAddress, verifier.address);
      await expect(deployment).to.emit(fresh, "FeeBpsUpdated").withArgs(0, FEE_BPS);
      await expect(deployment).to.emit(fresh, "TokenAllowed").withArgs(token);
    });
  });

  describe("admin-only setters", () => {
    for (const [name, call] of ADMIN_SETTERS) {
      it(`#${name} reverts when the caller is not the admin`, async () => {
        const { escrow, stranger, usdc } = await loadFixture(deployEscrowFixture);
        await expect(
          call(escrow.connect(stranger), { stranger: stranger.address, token: await usdc.getAddress() }),
        ).to.be.revertedWithCustomError(escrow, "NotAdmin");
      });
    }
  });

  describe("#setFeeBps", () => {
    it("emits FeeBpsUpdated with the previous and the new fee", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      const newFeeBps = FEE_BPS / 2;
      await expect(escrow.connect(admin).setFeeBps(newFeeBps))
        .to.emit(escrow, "FeeBpsUpdated")
        .withArgs(FEE_BPS, newFeeBps);
      expect(await escrow.feeBps()).to.equal(newFeeBps);
    });

    it("accepts exactly MAX_FEE_BPS", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      const maxFeeBps = await escrow.MAX_FEE_BPS();
      await expect(escrow.connect(admin).setFeeBps(maxFeeBps))
        .to.emit(escrow, "FeeBpsUpdated")
        .withArgs(FEE_BPS, maxFeeBps);
      expect(await escrow.feeBps()).to.equal(maxFeeBps);
    });

    it("reverts when the fee exceeds MAX_FEE_BPS", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      const maxFeeBps = await escrow.MAX_FEE_BPS();
      await expect(escrow.connect(admin).setFeeBps(maxFeeBps + 1n)).to.be.revertedWithCustomError(
        escrow,
        "FeeExceedsMax",
      );
    });

    it("accepts a zero fee, paying the worker the whole reward", async () => {
      const { escrow, admin, verifier, worker, treasury, usdc, taskId, amount } =
        await loadFixture(submittedTaskFixture);
      await escrow.connect(admin).setFeeBps(0);
      await expect(escrow.connect(verifier).completeVerification(taskId, true)).to.changeTokenBalances(
        usdc,
        [worker, treasury],
        [amount, 0],
      );
    });
  });

  describe("#setTreasury", () => {
    it("emits TreasuryUpdated with the previous and the new treasury", async () => {
      const { escrow, admin, treasury, stranger } = await loadFixture(deployEscrowFixture);
      await expect(escrow.connect(admin).setTreasury(stranger.address))
        .to.emit(escrow, "TreasuryUpdated")
        .withArgs(treasury.address, stranger.address);
      expect(await escrow.treasury()).to.equal(stranger.address);
    });

    it("reverts when the treasury is the zero address", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      await expect(escrow.connect(admin).setTreasury(ethers.ZeroAddress)).to.be.revertedWithCustomError(
        escrow,
        "ZeroAddress",
      );
    });

    it("sends the fee of the next payout to the new treasury", async () => {
      const { escrow, admin, verifier, treasury, stranger, usdc, taskId, amount } =
        await loadFixture(submittedTaskFixture);
      await escrow.connect(admin).setTreasury(stranger.address);
      const fee = (amount * BigInt(FEE_BPS)) / (await escrow.BPS_DENOMINATOR());
      await expect(escrow.connect(verifier).completeVerification(taskId, true)).to.changeTokenBalances(
        usdc,
        [stranger, treasury],
        [fee, 0],
      );
    });
  });

  describe("#setVerifier", () => {
    it("emits VerifierUpdated with the previous and the new verifier", async () => {
      const { escrow, admin, verifier, stranger } = await loadFixture(deployEscrowFixture);
      await expect(escrow.connect(admin).setVerifier(stranger.address))
        .to.emit(escrow, "VerifierUpdated")
        .withArgs(verifier.address, stranger.address);
      expect(await escrow.verifier()).to.equal(stranger.address);
    });

    it("reverts when the verifier is the zero address", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      await expect(escrow.connect(admin).setVerifier(ethers.ZeroAddress)).to.be.revertedWithCustomError(
        escrow,
        "ZeroAddress",
      );
    });

    it("lets the new verifier assign workers", async () => {
      const { escrow, admin, stranger, worker, taskId } = await loadFixture(fundedTaskFixture);
      await escrow.connect(admin).setVerifier(stranger.address);
      await expect(escrow.connect(stranger).marketplaceAssign(taskId, worker.address))
        .to.emit(escrow, "WorkerAssigned")
        .withArgs(taskId, worker.address);
    });

    describe("to the worker of a task in flight", () => {
      it("leaves the task judgeable: the admin judges it in the verifier's place", async () => {
        const { escrow, admin, worker, taskId, usdc, amount } = await loadFixture(submittedTaskFixture);
        await escrow.connect(admin).setVerifier(worker.address);
        const fee = (amount * BigInt(FEE_BPS)) / 10_000n;
        const tx = escrow.connect(admin).completeVerification(taskId, true);
        await expect(tx)
          .to.emit(escrow, "TaskCompleted")
          .withArgs(taskId, amount - fee, fee);
        await expect(tx).to.changeTokenBalance(usdc, worker, amount - fee);
      });

      it("still refuses the worker as its own judge", async () => {
        const { escrow, admin, worker, taskId } = await loadFixture(submittedTaskFixture);
        await escrow.connect(admin).setVerifier(worker.address);
        await expect(escrow.connect(worker).completeVerification(taskId, true)).to.be.revertedWithCustomError(
          escrow,
          "NotVerifier",
        );
      });

      it("gives the admin no verdict on tasks its verifier can judge", async () => {
        const { escrow, admin, taskId } = await loadFixture(submittedTaskFixture);
        await expect(escrow.connect(admin).completeVerification(taskId, true)).to.be.revertedWithCustomError(
          escrow,
          "NotVerifier",
        );
      });

      it("lets the new verifier judge the tasks of other workers", async () => {
        const { escrow, admin, stranger, taskId } = await loadFixture(submittedTaskFixture);
        await escrow.connect(admin).setVerifier(stranger.address);
        await expect(escrow.connect(stranger).completeVerification(taskId, false))
          .to.emit(escrow, "VerificationCompleted")
          .withArgs(taskId, false);
      });
    });

    it("takes the rights of the previous verifier", async () => {
      const { escrow, admin, verifier, stranger, worker, taskId } = await loadFixture(fundedTaskFixture);
      await escrow.connect(admin).setVerifier(stranger.address);
      await expect(escrow.connect(verifier).marketplaceAssign(taskId, worker.address)).to.be.revertedWithCustomError(
        escrow,
        "NotVerifier",
      );
    });
  });

  describe("#allowToken", () => {
    it("emits TokenAllowed and lets tasks be funded in the token", async () => {
      const { escrow, admin, poster } = await loadFixture(deployEscrowFixture);
      const other = await (await ethers.getContractFactory("MockUSDC")).deploy();
      const token = await other.getAddress();
      const amount = USDC(100);
      await other.mint(poster.address, amount);
      await other.connect(poster).approve(await escrow.getAddress(), amount);

      await expect(escrow.connect(admin).allowToken(token)).to.emit(escrow, "TokenAllowed").withArgs(token);
      expect(await escrow.isTokenAllowed(token)).to.equal(true);
      await expect(
        escrow.connect(poster).createTask(TASK_HASH, token, amount, CATEGORY, ZONE, DAY),
      ).to.changeTokenBalances(other, [poster, escrow], [-amount, amount]);
    });

    it("allows the native currency as the zero address", async () => {
      const { escrow, admin, poster } = await loadFixture(deployEscrowFixture);
      const amount = ethers.parseEther("1");
      await expect(escrow.connect(admin).allowToken(ethers.ZeroAddress))
        .to.emit(escrow, "TokenAllowed")
        .withArgs(ethers.ZeroAddress);
      await expect(
        escrow
          .connect(poster)
          .createTask(TASK_HASH, ethers.ZeroAddress, amount, CATEGORY, ZONE, DAY, { value: amount }),
      ).to.changeEtherBalances([poster, escrow], [-amount, amount]);
    });
  });

  describe("#disallowToken", () => {
    it("emits TokenDisallowed and refuses new tasks in the token", async () => {
      const { escrow, admin, poster, usdc } = await loadFixture(deployEscrowFixture);
      const token = await usdc.getAddress();
      await expect(escrow.connect(admin).disallowToken(token)).to.emit(escrow, "TokenDisallowed").withArgs(token);
      expect(await escrow.isTokenAllowed(token)).to.equal(false);
      await expect(
        escrow.connect(poster).createTask(TASK_HASH, token, USDC(100), CATEGORY, ZONE, DAY),
      ).to.be.revertedWithCustomError(escrow, "TokenNotAllowed");
    });

    it("still pays out an existing task in the token", async () => {
      const { escrow, admin, verifier, worker, treasury, usdc, taskId, amount } =
        await loadFixture(submittedTaskFixture);
      await escrow.connect(admin).disallowToken(await usdc.getAddress());
      const fee = (amount * BigInt(FEE_BPS)) / (await escrow.BPS_DENOMINATOR());
      await expect(escrow.connect(verifier).completeVerification(taskId, true)).to.changeTokenBalances(
        usdc,
        [worker, treasury],
        [amount - fee, fee],
      );
    });

    it("still refunds an existing task in the token", async () => {
      const { escrow, admin, poster, usdc, taskId, amount } = await loadFixture(fundedTaskFixture);
      await escrow.connect(admin).disallowToken(await usdc.getAddress());
      await expect(escrow.connect(poster).cancelTask(taskId)).to.changeTokenBalances(
        usdc,
        [poster, escrow],
        [amount, -amount],
      );
    });
  });

  describe("#setReputationContract", () => {
    it("emits ReputationContractUpdated with the previous and the new contract", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      const reputation = await (await ethers.getContractFactory("WorkerReputation")).deploy(await escrow.getAddress());
      const reputationAddress = await reputation.getAddress();
      await expect(escrow.connect(admin).setReputationContract(reputationAddress))
        .to.emit(escrow, "ReputationContractUpdated")
        .withArgs(ethers.ZeroAddress, reputationAddress);
      expect(await escrow.reputationContract()).to.equal(reputationAddress);
    });

    it("unsets the contract with the zero address", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      const reputation = await (await ethers.getContractFactory("WorkerReputation")).deploy(await escrow.getAddress());
      const reputationAddress = await reputation.getAddress();
      await escrow.connect(admin).setReputationContract(reputationAddress);
      await expect(escrow.connect(admin).setReputationContract(ethers.ZeroAddress))
        .to.emit(escrow, "ReputationContractUpdated")
        .withArgs(reputationAddress, ethers.ZeroAddress);
      expect(await escrow.reputationContract()).to.equal(ethers.ZeroAddress);
    });
  });

  describe("#setTaskRegistry", () => {
    it("emits TaskRegistryUpdated with the previous and the new registry", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      const registry = await (await ethers.getContractFactory("MockTaskRegistry")).deploy();
      const registryAddress = await registry.getAddress();
      await expect(escrow.connect(admin).setTaskRegistry(registryAddress))
        .to.emit(escrow, "TaskRegistryUpdated")
        .withArgs(ethers.ZeroAddress, registryAddress);
      expect(await escrow.taskRegistry()).to.equal(registryAddress);
    });

    it("unsets the registry with the zero address", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      const registry = await (await ethers.getContractFactory("MockTaskRegistry")).deploy();
      const registryAddress = await registry.getAddress();
      await escrow.connect(admin).setTaskRegistry(registryAddress);
      await expect(escrow.connect(admin).setTaskRegistry(ethers.ZeroAddress))
        .to.emit(escrow, "TaskRegistryUpdated")
        .withArgs(registryAddress, ethers.ZeroAddress);
      expect(await escrow.taskRegistry()).to.equal(ethers.ZeroAddress);
    });
  });

  describe("#setTeeSigner", () => {
    it("emits TeeSignerUpdated with the previous and the new signer", async () => {
      const { escrow, admin, stranger } = await loadFixture(deployEscrowFixture);
      await expect(escrow.connect(admin).setTeeSigner(stranger.address))
        .to.emit(escrow, "TeeSignerUpdated")
        .withArgs(ethers.ZeroAddress, stranger.address);
      expect(await escrow.teeSigner()).to.equal(stranger.address);
    });

    it("unsets the signer with the zero address", async () => {
      const { escrow, admin, stranger } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).setTeeSigner(stranger.address);
      await expect(escrow.connect(admin).setTeeSigner(ethers.ZeroAddress))
        .to.emit(escrow, "TeeSignerUpdated")
        .withArgs(stranger.address, ethers.ZeroAddress);
      expect(await escrow.teeSigner()).to.equal(ethers.ZeroAddress);
    });
  });

  describe("#setMinRatedAmount", () => {
    it("emits MinRatedAmountUpdated with the token and the amount", async () => {
      const { escrow, admin, usdc } = await loadFixture(deployEscrowFixture);
      const token = await usdc.getAddress();
      const minimum = USDC(5);
      await expect(escrow.connect(admin).setMinRatedAmount(token, minimum))
        .to.emit(escrow, "MinRatedAmountUpdated")
        .withArgs(token, minimum);
      expect(await escrow.minRatedAmount(token)).to.equal(minimum);
    });

    it("keeps one minimum per token", async () => {
      const { escrow, admin, usdc } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).setMinRatedAmount(await usdc.getAddress(), USDC(5));
      expect(await escrow.minRatedAmount(ethers.ZeroAddress)).to.equal(0n);
    });
  });

  describe("#proposeAdmin", () => {
    it("reverts when the proposed admin is the zero address", async () => {
      const { escrow, admin } = await loadFixture(deployEscrowFixture);
      await expect(escrow.connect(admin).proposeAdmin(ethers.ZeroAddress)).to.be.revertedWithCustomError(
        escrow,
        "ZeroAddress",
      );
    });

    it("emits AdminTransferProposed and records the pending admin", async () => {
      const { escrow, admin, stranger } = await loadFixture(deployEscrowFixture);
      await expect(escrow.connect(admin).proposeAdmin(stranger.address))
        .to.emit(escrow, "AdminTransferProposed")
        .withArgs(admin.address, stranger.address);
      expect(await escrow.pendingAdmin()).to.equal(stranger.address);
    });

    it("leaves the admin in place until the proposal is accepted", async () => {
      const { escrow, admin, stranger } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).proposeAdmin(stranger.address);
      expect(await escrow.admin()).to.equal(admin.address);
      await expect(escrow.connect(stranger).setFeeBps(0)).to.be.revertedWithCustomError(escrow, "NotAdmin");
    });

    it("replaces an earlier proposal", async () => {
      const { escrow, admin, stranger, others } = await loadFixture(deployEscrowFixture);
      const [second] = others;
      await escrow.connect(admin).proposeAdmin(stranger.address);
      await escrow.connect(admin).proposeAdmin(second.address);
      expect(await escrow.pendingAdmin()).to.equal(second.address);
      await expect(escrow.connect(stranger).acceptAdmin()).to.be.revertedWithCustomError(escrow, "NotPendingAdmin");
    });
  });

  describe("#acceptAdmin", () => {
    it("reverts when nobody was proposed", async () => {
      const { escrow, stranger } = await loadFixture(deployEscrowFixture);
      await expect(escrow.connect(stranger).acceptAdmin()).to.be.revertedWithCustomError(escrow, "NotPendingAdmin");
    });

    it("reverts when the caller is not the proposed admin", async () => {
      const { escrow, admin, stranger } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).proposeAdmin(stranger.address);
      await expect(escrow.connect(admin).acceptAdmin()).to.be.revertedWithCustomError(escrow, "NotPendingAdmin");
    });

    it("emits AdminTransferCompleted and clears the pending admin", async () => {
      const { escrow, admin, stranger } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).proposeAdmin(stranger.address);
      await expect(escrow.connect(stranger).acceptAdmin())
        .to.emit(escrow, "AdminTransferCompleted")
        .withArgs(admin.address, stranger.address);
      expect(await escrow.admin()).to.equal(stranger.address);
      expect(await escrow.pendingAdmin()).to.equal(ethers.ZeroAddress);
    });

    it("takes the admin rights of the previous admin", async () => {
      const { escrow, admin, stranger } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).proposeAdmin(stranger.address);
      await escrow.connect(stranger).acceptAdmin();
      await expect(escrow.connect(admin).setFeeBps(0)).to.be.revertedWithCustomError(escrow, "NotAdmin");
    });

    it("gives the admin rights to the new admin", async () => {
      const { escrow, admin, stranger } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).proposeAdmin(stranger.address);
      await escrow.connect(stranger).acceptAdmin();
      await expect(escrow.connect(stranger).setFeeBps(0)).to.emit(escrow, "FeeBpsUpdated").withArgs(FEE_BPS, 0);
    });

    it("reverts when the proposal was already accepted", async () => {
      const { escrow, admin, stranger } = await loadFixture(deployEscrowFixture);
      await escrow.connect(admin).proposeAdmin(stranger.address);
      await escrow.connect(stranger).acceptAdmin();
      await expect(escrow.connect(stranger).acceptAdmin()).to.be.revertedWithCustomError(escrow, "NotPendingAdmin");
    });
  });
});
