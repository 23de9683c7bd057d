import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import hre, { artifacts, ethers, upgrades } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type {
  AgentFactory,
  AgentFactoryV2,
  TaskEscrow,
  TaskEscrowBeforeCompact,
  TaskEscrowPrevious,
  TaskEscrowV2,
} from "../../typechain-types";
import type { AddressBook } from "../../scripts/deploy";
import { upgradeContract } from "../../scripts/upgrade";
import {
  CATEGORY,
  DAY,
  deployEscrowFixture,
  EVIDENCE_HASH,
  FEE_BPS,
  OPEN_SALT,
  PHASE,
  commitOpen,
  openPhaseStarts,
  HOUR,
  STATUS,
  TASK_HASH,
  USDC,
  ZONE,
  getTaskView,
} from "../helpers/fixtures";

/** ERC-7201 slot of the V2 mocks' namespaces: the tests read the new value straight from the proxy's storage. */
function erc7201Slot(namespace: string): string {
  const inner = BigInt(ethers.keccak256(ethers.toUtf8Bytes(namespace))) - 1n;
  const outer = BigInt(ethers.keccak256(ethers.AbiCoder.defaultAbiCoder().encode(["uint256"], [inner])));
  return ethers.toBeHex(outer & ~0xffn, 32);
}
const ESCROW_V2_SLOT = erc7201Slot("marketplace.storage.TaskEscrowV2");
const FACTORY_V2_SLOT = erc7201Slot("marketplace.storage.AgentFactoryV2");
const RELEASE_TAG = ethers.encodeBytes32String("release-2");
const INCOMPATIBLE_LAYOUT = /New storage layout is incompatible/;
const LONG_ZONE = "zone/".repeat(20);

/** Ids of the tasks created by `populatedEscrowFixture`, in creation order. */
const TASK = {
  escalated: 1n, // submitted, never judged, timeout claimed: Disputed and escalated
  funded: 2n,
  assigned: 3n,
  submitted: 4n,
  failedVerdict: 5n,
  completed: 6n,
  cancelled: 7n,
  disputed: 8n, // raised by the poster
  agentVerified: 9n, // Assigned, judged by its own verifier agent
  open: 10n, // open submission with one submission
  native: 11n, // native currency, empty category, long zone
} as const;

/** Statuses of the tasks created by `populatedEscrowFixture`, in id order. */
const POPULATED_STATUSES = [
  STATUS.Disputed,
  STATUS.Funded,
  STATUS.Assigned,
  STATUS.Submitted,
  STATUS.Verified,
  STATUS.Completed,
  STATUS.Cancelled,
  STATUS.Disputed,
  STATUS.Assigned,
  STATUS.Funded,
  STATUS.Funded,
];

type EscrowBase = Awaited<ReturnType<typeof deployEscrowFixture>>;

/**
 * Fills `escrow` with tasks in every status (plus an escalated, an agent-verified, an open and a native task) and moves
 * every configuration value away from its default: fee, TEE signer, min rated amount, pending admin, a pause. The open
 * task gets one submission from `stranger` through `submitOpen` (which differs between implementations).
 */
async function populate(
  base: EscrowBase,
  escrow: TaskEscrow,
  submitOpen: (taskId: bigint) => Promise<unknown>,
): Promise<void> {
  const { usdc, admin, verifier, poster, worker, verifierAgent, others } = base;
  const token = await usdc.getAddress();
  const amount = USDC(100);
  const create = (duration: number = DAY) =>
    escrow.connect(poster).createTask(TASK_HASH, token, amount, CATEGORY, ZONE, duration);
  const assign = (id: bigint) => escrow.connect(verifier).marketplaceAssign(id, worker.address);
  const submit = (id: bigint) => escrow.connect(worker).submitEvidence(id, EVIDENCE_HASH);

  // The shortest task, submitted and left unjudged past its deadline: escalated.
  await create(Number(await escrow.MIN_DURATION()));
  await assign(TASK.escalated);
  await submit(TASK.escalated);
  await time.increase(HOUR);
  await escrow.connect(poster).claimTimeout(TASK.escalated);
  // One task per status.
  await create(); // funded
  await create();
  await assign(TASK.assigned);
  await create();
  await assign(TASK.submitted);
  await submit(TASK.submitted);
  await create();
  await assign(TASK.failedVerdict);
  await submit(TASK.failedVerdict);
  await escrow.connect(verifier).completeVerification(TASK.failedVerdict, false);
  await create();
  await assign(TASK.completed);
  await submit(TASK.completed);
  await escrow.connect(verifier).completeVerification(TASK.completed, true);
  await create();
  await escrow.connect(poster).cancelTask(TASK.cancelled);
  await create();
  await assign(TASK.disputed);
  await submit(TASK.disputed);
  await escrow.connect(poster).raiseDispute(TASK.disputed);
  // Its own verifier agent.
  await escrow
    .connect(poster)
    .createTaskWithVerifier(TASK_HASH, token, amount, CATEGORY, ZONE, DAY, verifierAgent.address);
  await assign(TASK.agentVerified);
  // Open submission, one submission.
  await escrow.connect(poster).createTaskOpen(TASK_HASH, token, amount, CATEGORY, ZONE, DAY);
  await submitOpen(TASK.open);
  // Native currency.
  await escrow.connect(admin).allowToken(ethers.ZeroAddress);
  await escrow.connect(poster).createTask(TASK_HASH, ethers.ZeroAddress, amount, "", LONG_ZONE, DAY, { value: amount });
  expect(await escrow.nextTaskId()).to.equal(TASK.native + 1n);

  // Configuration away from the defaults, and one finished pause.
  await escrow.connect(admin).setFeeBps(await escrow.MAX_FEE_BPS());
  await escrow.connect(admin).setTeeSigner(others[0].address);
  await escrow.connect(admin).setMinRatedAmount(token, USDC(10));
  await escrow.connect(admin).pause();
  await time.increase(HOUR);
  await escrow.connect(admin).unpause();
  await escrow.connect(admin).proposeAdmin(others[1].address);
}

/** The deployment of the fixtures (the current TaskEscrow), populated; the open task got a commitment. */
async function populatedEscrowFixture() {
  const base = await deployEscrowFixture();
  await populate(base, base.escrow, (taskId) => commitOpen(base.escrow, base.stranger, taskId, EVIDENCE_HASH));
  return { ...base, amount: USDC(100) };
}

/**
 * A proxy of TaskEscrowPrevious (the implementation of commit 04d4f47, before commit-reveal), initialized as the
 * deploy script initializes the escrow, and populated; the open task got a plain submission (its old submitOpen).
 */
async function previousEscrowFixture() {
  const base = await deployEscrowFixture();
  const { usdc, admin, treasury, verifier, poster, worker, stranger, others } = base;
  const previous = (await upgrades.deployProxy(
    await ethers.getContractFactory("TaskEscrowPrevious", admin),
    [admin.address, treasury.address, verifier.address, FEE_BPS, [await usdc.getAddress()]],
    { kind: "uups" },
  )) as unknown as TaskEscrowPrevious;
  const address = await previous.getAddress();
  for (const account of [poster, worker, stranger, ...others.slice(0, 6)]) {
    await usdc.connect(account).approve(address, ethers.MaxUint256);
  }
  await populate(base, previous as unknown as TaskEscrow, (taskId) =>
    previous.connect(stranger).submitOpen(taskId, EVIDENCE_HASH),
  );
  return { ...base, previous, amount: USDC(100) };
}

/** The previous implementation's populated proxy upgraded to the current TaskEscrow, and its state read before. */
async function upgradedFromPreviousFixture() {
  const base = await previousEscrowFixture();
  const { previous, admin, stranger } = base;
  const before = await readEscrowState(previous as unknown as TaskEscrow, stranger.address);
  const previousImplementation = await upgrades.erc1967.getImplementationAddress(await previous.getAddress());
  const upgraded = (await upgrades.upgradeProxy(previous, await ethers.getContractFactory("TaskEscrow", admin), {
    kind: "uups",
  })) as unknown as TaskEscrow;
  return { ...base, upgraded, before, previousImplementation };
}

/**
 * A proxy of TaskEscrowBeforeCompact (the implementation of commit 1160915, before the compact task record),
 * initialized as the deploy script initializes the escrow, and populated; the open task got a commitment.
 */
async function beforeCompactEscrowFixture() {
  const base = await deployEscrowFixture();
  const { usdc, admin, treasury, verifier, poster, worker, stranger, others } = base;
  const old = (await upgrades.deployProxy(
    await ethers.getContractFactory("TaskEscrowBeforeCompact", admin),
    [admin.address, treasury.address, verifier.address, FEE_BPS, [await usdc.getAddress()]],
    { kind: "uups" },
  )) as unknown as TaskEscrowBeforeCompact;
  const address = await old.getAddress();
  for (const account of [poster, worker, stranger, ...others.slice(0, 6)]) {
    await usdc.connect(account).approve(address, ethers.MaxUint256);
  }
  const escrow = old as unknown as TaskEscrow;
  await populate(base, escrow, (taskId) => commitOpen(escrow, stranger, taskId, EVIDENCE_HASH));
  return { ...base, old: escrow, amount: USDC(100) };
}

/** TaskEscrowBeforeCompact's populated proxy upgraded to the current TaskEscrow, and its state read before. */
async function upgradedFromBeforeCompactFixture() {
  const base = await beforeCompactEscrowFixture();
  const { old, admin, stranger } = base;
  const before = await readEscrowState(old, stranger.address);
  const upgraded = (await upgrades.upgradeProxy(old, await ethers.getContractFactory("TaskEscrow", admin), {
    kind: "uups",
  })) as unknown as TaskEscrow;
  return { ...base, upgraded, before };
}

/** Slot `offset` of task `id`'s record in the escrow's namespace (slot 1, token and amount, is empty when compact). */
async function taskSlot(escrow: TaskEscrow, id: bigint, offset: bigint): Promise<bigint> {
  const namespace = BigInt(erc7201Slot("marketplace.storage.TaskEscrow"));
  // `tasks` is EscrowStorage's slot 11 (after the 8 slots of globals, `pauses`, `allowedTokens` and `minRatedAmount`).
  const mappingSlot = namespace + 11n;
  const base = BigInt(
    ethers.keccak256(ethers.AbiCoder.defaultAbiCoder().encode(["uint256", "uint256"], [id, mappingSlot])),
  );
  return BigInt(await ethers.provider.getStorage(await escrow.getAddress(), base + offset));
}

/** The populated escrow upgraded to TaskEscrowV2 with the plugin, and the state read just before. */
async function upgradedEscrowFixture() {
  const base = await populatedEscrowFixture();
  const { escrow, admin, stranger } = base;
  const before = await readEscrowState(escrow, stranger.address);
  const previousImplementation = await upgrades.erc1967.getImplementationAddress(await escrow.getAddress());
  const escrowV2 = (await upgrades.upgradeProxy(escrow, await ethers.getContractFactory("TaskEscrowV2", admin), {
    kind: "uups",
  })) as unknown as TaskEscrowV2;
  return { ...base, escrowV2, before, previousImplementation };
}

/** Every task's getTask fields and per-task views, every configuration view and the escrow's balances. */
async function readEscrowState(escrow: TaskEscrow, openSubmitter: string) {
  const escrowAddress = await escrow.getAddress();
  const usdc = await ethers.getContractAt("MockUSDC", (await escrow.getTask(TASK.funded)).token);
  const nextTaskId = await escrow.nextTaskId();
  const tasks = [];
  for (let id = 1n; id < nextTaskId; id++) {
    const t = await escrow.getTask(id);
    tasks.push({
      id,
      ...getTaskView(t),
      effectiveDeadline: await escrow.effectiveDeadline(id),
      taskVerifier: await escrow.taskVerifier(id),
      failedVerdictAt: await escrow.failedVerdictAt(id),
      isEscalated: await escrow.isEscalated(id),
      isOpenTask: await escrow.isOpenTask(id),
      openSubmissionCount: await escrow.openSubmissionCount(id),
      openSubmission: await escrow.openSubmission(id, openSubmitter),
    });
  }
  const token = await usdc.getAddress();
  const config = {
    nextTaskId,
    admin: await escrow.admin(),
    pendingAdmin: await escrow.pendingAdmin(),
    treasury: await escrow.treasury(),
    verifier: await escrow.verifier(),
    feeBps: await escrow.feeBps(),
    tokenAllowed: await escrow.isTokenAllowed(token),
    nativeAllowed: await escrow.isTokenAllowed(ethers.ZeroAddress),
    reputationContract: await escrow.reputationContract(),
    taskRegistry: await escrow.taskRegistry(),
    teeSigner: await escrow.teeSigner(),
    minRatedAmount: await escrow.minRatedAmount(token),
    totalPausedSeconds: await escrow.totalPausedSeconds(),
    pauseStartedAt: await escrow.pauseStartedAt(),
    paused: await escrow.paused(),
  };
  const balances = {
    token: await usdc.balanceOf(escrowAddress),
    native: await ethers.provider.getBalance(escrowAddress),
  };
  return { tasks, config, balances };
}

/** The deploy fixture with the factory used once, its ownership transfer proposed, and its fee changed. */
async function usedFactoryFixture() {
  const base = await deployEscrowFixture();
  const { agentFactory, usdc, admin, poster, stranger } = base;
  await usdc.connect(poster).approve(await agentFactory.getAddress(), ethers.MaxUint256);
  await agentFactory.connect(poster).deployAgent(0n);
  await agentFactory.connect(admin).setDeployFee((await agentFactory.deployFee()) * 2n);
  await agentFactory.connect(admin).transferOwnership(stranger.address);
  return base;
}

async function readFactoryState(agentFactory: AgentFactory) {
  return {
    owner: await agentFactory.owner(),
    pendingOwner: await agentFactory.pendingOwner(),
    usdc: await agentFactory.usdc(),
    treasury: await agentFactory.treasury(),
    deployFee: await agentFactory.deployFee(),
    nonce: await agentFactory.nonce(),
    totalCost: await agentFactory.getTotalCost(0n),
  };
}

/** Temporary address-book directories, removed after the suite. */
const temporaryDirectories: string[] = [];

/** Writes `book` to a fresh temporary file and returns its path. */
function writeTemporaryBook(book: AddressBook): string {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "upgrade-test-"));
  temporaryDirectories.push(directory);
  const file = path.join(directory, "hardhat.json");
  fs.writeFileSync(file, JSON.stringify(book, null, 2) + "\n");
  return file;
}

function readBook(file: string): AddressBook {
  return JSON.parse(fs.readFileSync(file, "utf8")) as AddressBook;
}

describe("upgrades", () => {
  after(() => {
    for (const directory of temporaryDirectories) fs.rmSync(directory, { recursive: true, force: true });
  });

  describe("TaskEscrow", () => {
    describe("room to grow", () => {
      const LIMIT = 24_576; // EIP-170
      const deployedSize = async (name: string) =>
        ((await artifacts.readArtifact(name)).deployedBytecode.length - 2) / 2;

      // `hardhat coverage` instruments the code (about three times its size): sizes are measured on the real build only.
      const underCoverage = () =>
        (hre as unknown as { __SOLIDITY_COVERAGE_RUNNING?: boolean }).__SOLIDITY_COVERAGE_RUNNING === true;

      it("keeps at least 2,000 bytes of the deployed-code limit free in the implementation", async function () {
        if (underCoverage()) this.skip();
        expect(await deployedSize("TaskEscrow")).to.be.at.most(LIMIT - 2_000);
      });

      it("gives the module, called directly, nothing to act on: it has no admin and no task", async () => {
        const { escrow, admin, worker } = await loadFixture(deployEscrowFixture);
        const module = await ethers.getContractAt("TaskEscrowModule", await escrow.MODULE());
        await expect(module.connect(admin).pause()).to.be.revertedWithCustomError(escrow, "NotAdmin");
        await expect(
          module.connect(admin).sweepSurplus(ethers.ZeroAddress, admin.address),
        ).to.be.revertedWithCustomError(escrow, "NotAdmin");
        await expect(module.connect(worker).commitOpen(1n, EVIDENCE_HASH)).to.be.revertedWithCustomError(
          escrow,
          "NotOpenTask",
        );
      });

      it("keeps its module and the test V2 under the limit", async function () {
        if (underCoverage()) this.skip();
        expect(await deployedSize("TaskEscrowModule")).to.be.at.most(LIMIT);
        expect(await deployedSize("TaskEscrowV2")).to.be.at.most(LIMIT);
      });
    });

    describe("#upgradeProxy from the previous implementation (commit 04d4f47) to the current one", () => {
      it("starts from tasks in every status", async () => {
        const { before } = await loadFixture(upgradedFromPreviousFixture);
        expect(before.tasks.map((t) => Number(t.status))).to.deep.equal(POPULATED_STATUSES);
      });

      it("keeps every task field by field", async () => {
        const { upgraded, stranger, before } = await loadFixture(upgradedFromPreviousFixture);
        const after = await readEscrowState(upgraded, stranger.address);
        expect(after.tasks).to.have.lengthOf(POPULATED_STATUSES.length);
        for (const [index, task] of after.tasks.entries()) {
          expect(task, `task ${task.id}`).to.deep.equal(before.tasks[index]);
        }
      });

      it("keeps every configuration view and the balances", async () => {
        const { upgraded, stranger, before } = await loadFixture(upgradedFromPreviousFixture);
        const after = await readEscrowState(upgraded, stranger.address);
        expect(after.config).to.deep.equal(before.config);
        expect(after.balances).to.deep.equal(before.balances);
      });

      it("points the proxy at the new implementation, which brings its module", async () => {
        const { upgraded, previousImplementation } = await loadFixture(upgradedFromPreviousFixture);
        const implementation = await upgrades.erc1967.getImplementationAddress(await upgraded.getAddress());
        expect(implementation).to.not.equal(previousImplementation);
        const module = await upgraded.MODULE();
        expect(await ethers.provider.getCode(module)).to.not.equal("0x");
      });

      it("pays out a task submitted before the upgrade, judged by the marketplace verifier", async () => {
        const { upgraded, usdc, verifier, worker, treasury, amount } = await loadFixture(upgradedFromPreviousFixture);
        const fee = (amount * (await upgraded.feeBps())) / (await upgraded.BPS_DENOMINATOR());
        await expect(upgraded.connect(verifier).completeVerification(TASK.submitted, true)).to.changeTokenBalances(
          usdc,
          [upgraded, worker, treasury],
          [-amount, amount - fee, fee],
        );
      });

      it("keeps the verifier agent of a task assigned before the upgrade as its only judge", async () => {
        const { upgraded, verifier, verifierAgent, worker } = await loadFixture(upgradedFromPreviousFixture);
        await upgraded.connect(worker).submitEvidence(TASK.agentVerified, EVIDENCE_HASH);
        await expect(
          upgraded.connect(verifier).completeVerification(TASK.agentVerified, true),
        ).to.be.revertedWithCustomError(upgraded, "NotVerifier");
        await expect(upgraded.connect(verifierAgent).completeVerification(TASK.agentVerified, true)).to.emit(
          upgraded,
          "TaskCompleted",
        );
      });

      it("continues the submission count of a task failed before the upgrade", async () => {
        const { upgraded, worker } = await loadFixture(upgradedFromPreviousFixture);
        await expect(upgraded.connect(worker).submitEvidence(TASK.failedVerdict, EVIDENCE_HASH))
          .to.emit(upgraded, "EvidenceSubmitted")
          .withArgs(TASK.failedVerdict, worker.address, EVIDENCE_HASH, 2);
        expect((await upgraded.getTask(TASK.failedVerdict)).submissionAttempts).to.equal(2n);
      });

      it("keeps a plain open submission made before the upgrade selectable, and its old reclaim rule", async () => {
        const { upgraded, poster, stranger } = await loadFixture(upgradedFromPreviousFixture);
        const starts = await openPhaseStarts(upgraded, TASK.open);
        await time.increaseTo(starts.selection);
        await expect(upgraded.connect(poster).reclaimOpen(TASK.open))
          .to.be.revertedWithCustomError(upgraded, "WrongPhase")
          .withArgs(PHASE.Selection, PHASE.Expired);
        await expect(upgraded.connect(poster).selectWinner(TASK.open, stranger.address))
          .to.emit(upgraded, "WinnerSelected")
          .withArgs(TASK.open, stranger.address);
        expect((await upgraded.getTask(TASK.open)).evidenceHash).to.equal(EVIDENCE_HASH);
      });

      it("refuses a commitment from a plain submitter of before the upgrade, which could never reveal it", async () => {
        const { upgraded, stranger, others } = await loadFixture(upgradedFromPreviousFixture);
        expect(await upgraded.openPhase(TASK.open)).to.equal(PHASE.Submission);
        const commit = (signer: typeof stranger) =>
          commitOpen(upgraded, signer, TASK.open, EVIDENCE_HASH, { salt: ethers.id("legacy") });
        await expect(commit(stranger)).to.be.revertedWithCustomError(upgraded, "AlreadySubmitted");
        await expect(commit(others[5])).to.emit(upgraded, "OpenSubmissionCommitted");
      });

      it("gives a task of before the upgrade the reveal day: its selection starts OPEN_REVEAL_WINDOW after the deadline", async () => {
        const { upgraded, poster, stranger } = await loadFixture(upgradedFromPreviousFixture);
        const deadline = await upgraded.effectiveDeadline(TASK.open);
        await time.increaseTo(deadline);
        expect(await upgraded.openPhase(TASK.open)).to.equal(PHASE.Reveal);
        await expect(upgraded.connect(poster).selectWinner(TASK.open, stranger.address))
          .to.be.revertedWithCustomError(upgraded, "WrongPhase")
          .withArgs(PHASE.Reveal, PHASE.Selection);
        await time.increaseTo(deadline + (await upgraded.OPEN_REVEAL_WINDOW()));
        // A plain submission is paid at once when picked (it was made under the rule without contest).
        await expect(upgraded.connect(poster).selectWinner(TASK.open, stranger.address)).to.emit(
          upgraded,
          "WinnerSelected",
        );
      });

      it("refunds a plain open submission's task once expired, as before the upgrade", async () => {
        const { upgraded, poster, amount } = await loadFixture(upgradedFromPreviousFixture);
        await time.increaseTo((await openPhaseStarts(upgraded, TASK.open)).expired);
        await expect(upgraded.connect(poster).reclaimOpen(TASK.open))
          .to.emit(upgraded, "DeadlineExpired")
          .withArgs(TASK.open, amount);
      });

      it("sweeps exactly what was sent to the escrow directly, counting the tasks made before the upgrade", async () => {
        const { upgraded, usdc, admin, stranger, treasury } = await loadFixture(upgradedFromPreviousFixture);
        await usdc.connect(stranger).transfer(await upgraded.getAddress(), USDC(3));
        const token = await usdc.getAddress();
        await expect(upgraded.connect(admin).sweepSurplus(token, treasury.address)).to.changeTokenBalance(
          usdc,
          treasury,
          USDC(3),
        );
        await expect(upgraded.connect(admin).sweepSurplus(token, treasury.address)).to.be.revertedWithCustomError(
          upgraded,
          "NoSurplus",
        );
      });

      it("reads the default labels stored by a task made before the upgrade and those a new task only flags", async () => {
        const { upgraded, usdc, poster } = await loadFixture(upgradedFromPreviousFixture);
        const id = await upgraded.nextTaskId();
        await upgraded.connect(poster).createTask(TASK_HASH, await usdc.getAddress(), USDC(10), CATEGORY, ZONE, DAY);
        for (const taskId of [TASK.funded, id]) {
          const task = await upgraded.getTask(taskId);
          expect([task.category, task.locationZone, task.submissionAttempts], `task ${taskId}`).to.deep.equal([
            "general",
            "global",
            0n,
          ]);
        }
      });

      it("runs the new open-submission rules for tasks created after the upgrade", async () => {
        const { upgraded, usdc, poster, worker } = await loadFixture(upgradedFromPreviousFixture);
        const id = await upgraded.nextTaskId();
        await upgraded
          .connect(poster)
          .createTaskOpen(TASK_HASH, await usdc.getAddress(), USDC(10), CATEGORY, ZONE, DAY);
        await usdc.connect(worker).approve(await upgraded.getAddress(), ethers.MaxUint256);
        await commitOpen(upgraded, worker, id, EVIDENCE_HASH);
        await time.increaseTo((await openPhaseStarts(upgraded, id)).reveal);
        await expect(upgraded.connect(worker).revealOpen(id, EVIDENCE_HASH, OPEN_SALT))
          .to.emit(upgraded, "OpenSubmission")
          .withArgs(id, worker.address, EVIDENCE_HASH);
      });
    });

    describe("#upgradeProxy from the implementation before the compact record (commit 1160915)", () => {
      it("passes the upgrades plugin's storage-layout validation", async () => {
        const { old } = await loadFixture(beforeCompactEscrowFixture);
        await expect(upgrades.validateUpgrade(old, await ethers.getContractFactory("TaskEscrow"))).to.be.fulfilled;
      });

      it("starts from tasks in every status, all in the full record", async () => {
        const { before, upgraded } = await loadFixture(upgradedFromBeforeCompactFixture);
        expect(before.tasks.map((t) => Number(t.status))).to.deep.equal(POPULATED_STATUSES);
        for (const task of before.tasks) {
          expect(await taskSlot(upgraded, task.id, 1n), `task ${task.id}`).to.not.equal(0n);
        }
      });

      it("keeps every task field by field, every configuration view and the balances", async () => {
        const { upgraded, stranger, before } = await loadFixture(upgradedFromBeforeCompactFixture);
        const after = await readEscrowState(upgraded, stranger.address);
        expect(after.tasks).to.have.lengthOf(POPULATED_STATUSES.length);
        for (const [index, task] of after.tasks.entries()) {
          expect(task, `task ${task.id}`).to.deep.equal(before.tasks[index]);
        }
        expect(after.config).to.deep.equal(before.config);
        expect(after.balances).to.deep.equal(before.balances);
      });

      it("pays out the submitted task and refunds it after a failed verdict and the appeal window", async () => {
        const { upgraded, usdc, verifier, worker, poster, treasury, amount } = await loadFixture(
          upgradedFromBeforeCompactFixture,
        );
        const fee = (amount * (await upgraded.feeBps())) / (await upgraded.BPS_DENOMINATOR());
        await expect(upgraded.connect(verifier).completeVerification(TASK.submitted, true)).to.changeTokenBalances(
          usdc,
          [upgraded, worker, treasury],
          [-amount, amount - fee, fee],
        );
        await time.increase(DAY + Number(await upgraded.APPEAL_WINDOW()));
        await expect(upgraded.connect(poster).claimTimeout(TASK.failedVerdict))
          .to.emit(upgraded, "DeadlineExpired")
          .withArgs(TASK.failedVerdict, amount);
        expect((await upgraded.getTask(TASK.failedVerdict)).status).to.equal(STATUS.Cancelled);
      });

      it("takes the failed task's appeal and pays it when the admin rules for the worker", async () => {
        const { upgraded, usdc, admin, worker, amount } = await loadFixture(upgradedFromBeforeCompactFixture);
        await upgraded.connect(worker).raiseDispute(TASK.failedVerdict);
        const fee = (amount * (await upgraded.feeBps())) / (await upgraded.BPS_DENOMINATOR());
        await expect(upgraded.connect(admin).resolveDispute(TASK.failedVerdict, true)).to.changeTokenBalance(
          usdc,
          worker,
          amount - fee,
        );
      });

      it("refunds the funded task on cancel and the assigned one on timeout", async () => {
        const { upgraded, usdc, poster, amount } = await loadFixture(upgradedFromBeforeCompactFixture);
        await expect(upgraded.connect(poster).cancelTask(TASK.funded)).to.changeTokenBalance(usdc, poster, amount);
        await time.increase(DAY + HOUR);
        await expect(upgraded.connect(poster).claimTimeout(TASK.assigned)).to.changeTokenBalance(usdc, poster, amount);
      });

      it("refunds the disputed task when the admin rules for the poster", async () => {
        const { upgraded, usdc, admin, poster, amount } = await loadFixture(upgradedFromBeforeCompactFixture);
        await expect(upgraded.connect(admin).resolveDispute(TASK.disputed, false)).to.changeTokenBalance(
          usdc,
          poster,
          amount,
        );
      });

      it("splits the disputed task nobody ruled on, and releases the escalated one to its worker", async () => {
        const { upgraded, poster, worker } = await loadFixture(upgradedFromBeforeCompactFixture);
        await time.increase(Number(await upgraded.DISPUTE_WINDOW()));
        await expect(upgraded.connect(poster).claimTimeout(TASK.disputed)).to.emit(upgraded, "UnruledSplit");
        expect(await upgraded.creditOf((await upgraded.getTask(TASK.disputed)).token, poster.address)).to.equal(
          USDC(50),
        );
        await expect(upgraded.connect(worker).releaseUnjudgedWork(TASK.escalated)).to.emit(
          upgraded,
          "UnjudgedWorkReleased",
        );
        expect((await upgraded.getTask(TASK.escalated)).status).to.equal(STATUS.Completed);
      });

      it("lets only the verifier agent judge its task, and pays the open task's revealed submission", async () => {
        const { upgraded, verifier, verifierAgent, worker, poster, stranger } = await loadFixture(
          upgradedFromBeforeCompactFixture,
        );
        await upgraded.connect(worker).submitEvidence(TASK.agentVerified, EVIDENCE_HASH);
        await expect(
          upgraded.connect(verifier).completeVerification(TASK.agentVerified, true),
        ).to.be.revertedWithCustomError(upgraded, "NotVerifier");
        await expect(upgraded.connect(verifierAgent).completeVerification(TASK.agentVerified, true)).to.emit(
          upgraded,
          "TaskCompleted",
        );
        const starts = await openPhaseStarts(upgraded, TASK.open);
        await time.increaseTo(starts.reveal);
        await upgraded.connect(stranger).revealOpen(TASK.open, EVIDENCE_HASH, OPEN_SALT);
        await time.increaseTo(starts.selection);
        await expect(upgraded.connect(poster).selectWinner(TASK.open, stranger.address))
          .to.emit(upgraded, "WinnerSelected")
          .withArgs(TASK.open, stranger.address);
      });

      it("refunds the native task in the native currency", async () => {
        const { upgraded, poster, amount } = await loadFixture(upgradedFromBeforeCompactFixture);
        await expect(upgraded.connect(poster).cancelTask(TASK.native)).to.changeEtherBalance(poster, amount);
      });

      it("writes new tasks in the compact record beside the old ones and counts both in the surplus sweep", async () => {
        const { upgraded, usdc, admin, poster, verifier, worker, stranger, treasury, amount, before } =
          await loadFixture(upgradedFromBeforeCompactFixture);
        const token = await usdc.getAddress();
        const id = await upgraded.nextTaskId();
        // USDC and the native currency were allowed before the upgrade: their first new task indexes them.
        await upgraded.connect(poster).createTask(TASK_HASH, token, amount, CATEGORY, ZONE, DAY);
        await upgraded.connect(poster).createTask(TASK_HASH, ethers.ZeroAddress, amount, CATEGORY, ZONE, DAY, {
          value: amount,
        });
        for (const taskId of [id, id + 1n]) {
          expect(await taskSlot(upgraded, taskId, 1n), `task ${taskId}`).to.equal(0n);
        }
        expect((await upgraded.getTask(id + 1n)).token).to.equal(ethers.ZeroAddress);
        await upgraded.connect(verifier).marketplaceAssign(id, worker.address);
        expect((await upgraded.getTask(id)).worker).to.equal(worker.address);
        // The old tasks read as before the upgrade.
        const after = await readEscrowState(upgraded, stranger.address);
        expect(after.tasks.slice(0, before.tasks.length)).to.deep.equal(before.tasks);
        // Nothing but what was sent directly is surplus, in either currency.
        await usdc.connect(stranger).transfer(await upgraded.getAddress(), USDC(3));
        await expect(upgraded.connect(admin).sweepSurplus(token, treasury.address)).to.changeTokenBalance(
          usdc,
          treasury,
          USDC(3),
        );
        await expect(
          upgraded.connect(admin).sweepSurplus(ethers.ZeroAddress, treasury.address),
        ).to.be.revertedWithCustomError(upgraded, "NoSurplus");
      });
    });

    describe("#upgradeProxy to TaskEscrowV2", () => {
      it("starts from tasks in every status", async () => {
        const { before } = await loadFixture(upgradedEscrowFixture);
        expect(before.tasks.map((t) => Number(t.status))).to.deep.equal(POPULATED_STATUSES);
      });

      it("keeps every task field by field", async () => {
        const { escrowV2, stranger, before } = await loadFixture(upgradedEscrowFixture);
        const after = await readEscrowState(escrowV2 as unknown as TaskEscrow, stranger.address);
        expect(after.tasks).to.have.lengthOf(POPULATED_STATUSES.length);
        for (const [index, task] of after.tasks.entries()) {
          expect(task, `task ${task.id}`).to.deep.equal(before.tasks[index]);
        }
      });

      it("keeps every configuration view", async () => {
        const { escrowV2, stranger, before } = await loadFixture(upgradedEscrowFixture);
        const after = await readEscrowState(escrowV2 as unknown as TaskEscrow, stranger.address);
        expect(after.config).to.deep.equal(before.config);
      });

      it("keeps the escrow's token and native balances", async () => {
        const { escrowV2, stranger, before } = await loadFixture(upgradedEscrowFixture);
        const after = await readEscrowState(escrowV2 as unknown as TaskEscrow, stranger.address);
        expect(after.balances).to.deep.equal(before.balances);
      });

      it("keeps the proxy address and points it at a new implementation", async () => {
        const { escrow, escrowV2, previousImplementation } = await loadFixture(upgradedEscrowFixture);
        const proxy = await escrow.getAddress();
        expect(await escrowV2.getAddress()).to.equal(proxy);
        expect(await upgrades.erc1967.getImplementationAddress(proxy)).to.not.equal(previousImplementation);
      });

      it("serves version 2", async () => {
        const { escrowV2 } = await loadFixture(upgradedEscrowFixture);
        expect(await escrowV2.version()).to.equal("2");
      });

      it("stores the new value in its own namespaced slot without touching the tasks", async () => {
        const { escrowV2, admin, stranger, before } = await loadFixture(upgradedEscrowFixture);
        await expect(escrowV2.connect(admin).setReleaseTag(RELEASE_TAG))
          .to.emit(escrowV2, "ReleaseTagSet")
          .withArgs(RELEASE_TAG);
        expect(await escrowV2.releaseTag()).to.equal(RELEASE_TAG);
        expect(await ethers.provider.getStorage(await escrowV2.getAddress(), ESCROW_V2_SLOT)).to.equal(RELEASE_TAG);
        expect(await readEscrowState(escrowV2 as unknown as TaskEscrow, stranger.address)).to.deep.equal(before);
      });

      it("keeps the admin check on the new function", async () => {
        const { escrowV2, stranger } = await loadFixture(upgradedEscrowFixture);
        await expect(escrowV2.connect(stranger).setReleaseTag(RELEASE_TAG)).to.be.revertedWithCustomError(
          escrowV2,
          "NotAdmin",
        );
      });

      it("pays out a task submitted before the upgrade", async () => {
        const { escrowV2, usdc, verifier, worker, treasury, amount } = await loadFixture(upgradedEscrowFixture);
        const fee = (amount * (await escrowV2.feeBps())) / (await escrowV2.BPS_DENOMINATOR());
        await expect(escrowV2.connect(verifier).completeVerification(TASK.submitted, true)).to.changeTokenBalances(
          usdc,
          [escrowV2, worker, treasury],
          [-amount, amount - fee, fee],
        );
      });

      it("refunds a task funded before the upgrade", async () => {
        const { escrowV2, usdc, poster, amount } = await loadFixture(upgradedEscrowFixture);
        await expect(escrowV2.connect(poster).cancelTask(TASK.funded)).to.changeTokenBalances(
          usdc,
          [escrowV2, poster],
          [-amount, amount],
        );
      });

      it("continues the task ids", async () => {
        const { escrowV2, usdc, poster, before, amount } = await loadFixture(upgradedEscrowFixture);
        const token = await usdc.getAddress();
        const createdAt = (await time.latest()) + 10;
        await time.setNextBlockTimestamp(createdAt);
        await expect(escrowV2.connect(poster).createTask(TASK_HASH, token, amount, CATEGORY, ZONE, DAY))
          .to.emit(escrowV2, "TaskCreated")
          .withArgs(
            before.config.nextTaskId,
            poster.address,
            token,
            amount,
            TASK_HASH,
            CATEGORY,
            ZONE,
            createdAt + DAY,
          );
        expect(await escrowV2.nextTaskId()).to.equal(before.config.nextTaskId + 1n);
      });

      it("refuses a second initialize", async () => {
        const { escrowV2, admin, treasury, verifier } = await loadFixture(upgradedEscrowFixture);
        await expect(
          escrowV2.connect(admin).initialize(admin.address, treasury.address, verifier.address, 0n, []),
        ).to.be.revertedWithCustomError(escrowV2, "InvalidInitialization");
      });
    });

    describe("#validateUpgrade", () => {
      it("accepts TaskEscrowV2", async () => {
        const { escrow } = await loadFixture(deployEscrowFixture);
        await expect(upgrades.validateUpgrade(escrow, await ethers.getContractFactory("TaskEscrowV2"))).to.be.fulfilled;
      });

      it("rejects TaskEscrowBadLayout for its reordered and inserted namespaced fields", async () => {
        const { escrow } = await loadFixture(deployEscrowFixture);
        const validation = upgrades.validateUpgrade(escrow, await ethers.getContractFactory("TaskEscrowBadLayout"));
        await expect(validation).to.be.rejectedWith(INCOMPATIBLE_LAYOUT);
        await expect(validation).to.be.rejectedWith(/Deleted `verifier`/);
        await expect(validation).to.be.rejectedWith(/Inserted `minTaskAmount`/);
      });

      it("makes upgradeProxy refuse TaskEscrowBadLayout and keep the implementation", async () => {
        const { escrow, admin, book } = await loadFixture(deployEscrowFixture);
        await expect(
          upgrades.upgradeProxy(escrow, await ethers.getContractFactory("TaskEscrowBadLayout", admin), {
            kind: "uups",
          }),
        ).to.be.rejectedWith(INCOMPATIBLE_LAYOUT);
        expect(await upgrades.erc1967.getImplementationAddress(book.escrow.proxy)).to.equal(book.escrow.implementation);
      });

      it("explains the rejection: forced through, TaskEscrowBadLayout reads the verifier as the admin", async () => {
        const { escrow, admin, verifier } = await loadFixture(deployEscrowFixture);
        const forced = await upgrades.upgradeProxy(
          escrow,
          await ethers.getContractFactory("TaskEscrowBadLayout", admin),
          { kind: "uups", unsafeSkipStorageCheck: true },
        );
        expect(await forced.getFunction("admin")()).to.equal(verifier.address);
      });
    });

    describe("#upgradeToAndCall", () => {
      it("reverts when the caller is not the admin", async () => {
        const { escrow, stranger } = await loadFixture(populatedEscrowFixture);
        const next = await (await ethers.getContractFactory("TaskEscrowV2")).deploy();
        await expect(
          escrow.connect(stranger).upgradeToAndCall(await next.getAddress(), "0x"),
        ).to.be.revertedWithCustomError(escrow, "NotAdmin");
      });

      it("reverts when the pending admin calls it before accepting", async () => {
        const { escrow, others } = await loadFixture(populatedEscrowFixture);
        const next = await (await ethers.getContractFactory("TaskEscrowV2")).deploy();
        await expect(
          escrow.connect(others[1]).upgradeToAndCall(await next.getAddress(), "0x"),
        ).to.be.revertedWithCustomError(escrow, "NotAdmin");
      });

      it("reverts when called on the implementation", async () => {
        const { book, admin } = await loadFixture(deployEscrowFixture);
        const implementation = await ethers.getContractAt("TaskEscrow", book.escrow.implementation);
        const next = await (await ethers.getContractFactory("TaskEscrowV2")).deploy();
        await expect(
          implementation.connect(admin).upgradeToAndCall(await next.getAddress(), "0x"),
        ).to.be.revertedWithCustomError(implementation, "UUPSUnauthorizedCallContext");
      });

      it("reverts when the new implementation is not UUPS", async () => {
        const { escrow, usdc, admin } = await loadFixture(deployEscrowFixture);
        const usdcAddress = await usdc.getAddress();
        await expect(escrow.connect(admin).upgradeToAndCall(usdcAddress, "0x"))
          .to.be.revertedWithCustomError(escrow, "ERC1967InvalidImplementation")
          .withArgs(usdcAddress);
      });

      it("upgrades when the admin calls it and runs the call data", async () => {
        const { escrow, admin, stranger } = await loadFixture(populatedEscrowFixture);
        const before = await readEscrowState(escrow, stranger.address);
        const next = await (await ethers.getContractFactory("TaskEscrowV2")).deploy();
        const nextAddress = await next.getAddress();
        const data = next.interface.encodeFunctionData("setReleaseTag", [RELEASE_TAG]);
        const escrowV2 = next.attach(await escrow.getAddress()) as TaskEscrowV2;

        await expect(escrow.connect(admin).upgradeToAndCall(nextAddress, data))
          .to.emit(escrow, "Upgraded")
          .withArgs(nextAddress)
          .and.to.emit(escrowV2, "ReleaseTagSet")
          .withArgs(RELEASE_TAG);
        expect(await upgrades.erc1967.getImplementationAddress(await escrow.getAddress())).to.equal(nextAddress);
        expect(await escrowV2.version()).to.equal("2");
        expect(await escrowV2.releaseTag()).to.equal(RELEASE_TAG);
        expect(await readEscrowState(escrow, stranger.address)).to.deep.equal(before);
      });

      it("moves the upgrade right with the admin role", async () => {
        const { escrow, admin, others } = await loadFixture(populatedEscrowFixture);
        await escrow.connect(others[1]).acceptAdmin();
        const next = await (await ethers.getContractFactory("TaskEscrowV2")).deploy();
        const nextAddress = await next.getAddress();
        await expect(escrow.connect(admin).upgradeToAndCall(nextAddress, "0x")).to.be.revertedWithCustomError(
          escrow,
          "NotAdmin",
        );
        await expect(escrow.connect(others[1]).upgradeToAndCall(nextAddress, "0x"))
          .to.emit(escrow, "Upgraded")
          .withArgs(nextAddress);
      });
    });
  });

  describe("AgentFactory", () => {
    describe("#upgradeProxy to AgentFactoryV2", () => {
      it("keeps the owner, pending owner, token, treasury, fee and nonce", async () => {
        const { agentFactory, admin } = await loadFixture(usedFactoryFixture);
        const before = await readFactoryState(agentFactory);
        const factoryV2 = (await upgrades.upgradeProxy(
          agentFactory,
          await ethers.getContractFactory("AgentFactoryV2", admin),
          { kind: "uups" },
        )) as unknown as AgentFactoryV2;
        expect(await readFactoryState(factoryV2 as unknown as AgentFactory)).to.deep.equal(before);
        expect(before.nonce).to.equal(1n);
        expect(before.pendingOwner).to.not.equal(ethers.ZeroAddress);
      });

      it("serves version 2 and stores the new value in its own namespaced slot", async () => {
        const { agentFactory, admin } = await loadFixture(usedFactoryFixture);
        const before = await readFactoryState(agentFactory);
        const factoryV2 = (await upgrades.upgradeProxy(
          agentFactory,
          await ethers.getContractFactory("AgentFactoryV2", admin),
          { kind: "uups" },
        )) as unknown as AgentFactoryV2;
        expect(await factoryV2.version()).to.equal("2");
        await expect(factoryV2.connect(admin).setReleaseTag(RELEASE_TAG))
          .to.emit(factoryV2, "ReleaseTagSet")
          .withArgs(RELEASE_TAG);
        expect(await ethers.provider.getStorage(await factoryV2.getAddress(), FACTORY_V2_SLOT)).to.equal(RELEASE_TAG);
        expect(await readFactoryState(factoryV2 as unknown as AgentFactory)).to.deep.equal(before);
      });

      it("continues the nonce and charges the kept fee", async () => {
        const { agentFactory, usdc, admin, poster, treasury } = await loadFixture(usedFactoryFixture);
        const fee = await agentFactory.deployFee();
        const factoryV2 = (await upgrades.upgradeProxy(
          agentFactory,
          await ethers.getContractFactory("AgentFactoryV2", admin),
          { kind: "uups" },
        )) as unknown as AgentFactoryV2;
        const deploy = factoryV2.connect(poster).deployAgent(0n);
        await expect(deploy).to.changeTokenBalances(usdc, [poster, treasury], [-fee, fee]);
        expect(await factoryV2.nonce()).to.equal(2n);
      });
    });

    describe("#validateUpgrade", () => {
      it("accepts AgentFactoryV2", async () => {
        const { agentFactory } = await loadFixture(deployEscrowFixture);
        await expect(upgrades.validateUpgrade(agentFactory, await ethers.getContractFactory("AgentFactoryV2"))).to.be
          .fulfilled;
      });

      it("rejects TaskEscrowV2, whose layout drops the factory's namespaces", async () => {
        const { agentFactory } = await loadFixture(deployEscrowFixture);
        await expect(
          upgrades.validateUpgrade(agentFactory, await ethers.getContractFactory("TaskEscrowV2")),
        ).to.be.rejectedWith(INCOMPATIBLE_LAYOUT);
      });
    });

    describe("#upgradeToAndCall", () => {
      it("reverts when the caller is not the owner", async () => {
        const { agentFactory, stranger } = await loadFixture(usedFactoryFixture);
        const next = await (await ethers.getContractFactory("AgentFactoryV2")).deploy();
        await expect(agentFactory.connect(stranger).upgradeToAndCall(await next.getAddress(), "0x"))
          .to.be.revertedWithCustomError(agentFactory, "OwnableUnauthorizedAccount")
          .withArgs(stranger.address);
      });

      it("upgrades when the owner calls it and runs the call data", async () => {
        const { agentFactory, admin } = await loadFixture(usedFactoryFixture);
        const before = await readFactoryState(agentFactory);
        const next = await (await ethers.getContractFactory("AgentFactoryV2")).deploy();
        const nextAddress = await next.getAddress();
        const data = next.interface.encodeFunctionData("setReleaseTag", [RELEASE_TAG]);
        const factoryV2 = next.attach(await agentFactory.getAddress()) as AgentFactoryV2;

        await expect(agentFactory.connect(admin).upgradeToAndCall(nextAddress, data))
          .to.emit(agentFactory, "Upgraded")
          .withArgs(nextAddress)
          .and.to.emit(factoryV2, "ReleaseTagSet")
          .withArgs(RELEASE_TAG);
        expect(await upgrades.erc1967.getImplementationAddress(await agentFactory.getAddress())).to.equal(nextAddress);
        expect(await factoryV2.releaseTag()).to.equal(RELEASE_TAG);
        expect(await readFactoryState(agentFactory)).to.deep.equal(before);
      });
    });
  });

  describe("upgradeContract (scripts/upgrade.ts)", () => {
    it("upgrades the escrow and reports both implementations", async () => {
      const { escrow, book } = await loadFixture(populatedEscrowFixture);
      const result = await upgradeContract({ proxy: book.escrow.proxy, newContractName: "TaskEscrowV2" });
      expect(result.proxy).to.equal(book.escrow.proxy);
      expect(result.previousImplementation).to.equal(book.escrow.implementation);
      expect(result.implementation).to.equal(await upgrades.erc1967.getImplementationAddress(book.escrow.proxy));
      expect(result.implementation).to.not.equal(book.escrow.implementation);
      expect(result.addressBookFile).to.equal(undefined);
      const escrowV2 = await ethers.getContractAt("TaskEscrowV2", await escrow.getAddress());
      expect(await escrowV2.version()).to.equal("2");
    });

    it("keeps the escrow's tasks and configuration", async () => {
      const { escrow, book, stranger } = await loadFixture(populatedEscrowFixture);
      const before = await readEscrowState(escrow, stranger.address);
      await upgradeContract({ proxy: book.escrow.proxy, newContractName: "TaskEscrowV2" });
      expect(await readEscrowState(escrow, stranger.address)).to.deep.equal(before);
    });

    it("upgrades the agent factory", async () => {
      const { book } = await loadFixture(usedFactoryFixture);
      const result = await upgradeContract({ proxy: book.agentFactory.proxy, newContractName: "AgentFactoryV2" });
      const factoryV2 = await ethers.getContractAt("AgentFactoryV2", book.agentFactory.proxy);
      expect(await factoryV2.version()).to.equal("2");
      expect(result.implementation).to.equal(await upgrades.erc1967.getImplementationAddress(book.agentFactory.proxy));
    });

    it("records the new implementation in the address book", async () => {
      const { book } = await loadFixture(deployEscrowFixture);
      const file = writeTemporaryBook(book);
      const result = await upgradeContract({
        proxy: book.escrow.proxy,
        newContractName: "TaskEscrowV2",
        addressBookFile: file,
      });
      expect(result.addressBookFile).to.equal(file);
      expect(readBook(file)).to.deep.equal({
        ...book,
        escrow: { proxy: book.escrow.proxy, implementation: result.implementation },
      });
    });

    it("records the factory's new implementation in its own entry", async () => {
      const { book } = await loadFixture(deployEscrowFixture);
      const file = writeTemporaryBook(book);
      const result = await upgradeContract({
        proxy: book.agentFactory.proxy,
        newContractName: "AgentFactoryV2",
        addressBookFile: file,
      });
      expect(readBook(file)).to.deep.equal({
        ...book,
        agentFactory: { proxy: book.agentFactory.proxy, implementation: result.implementation },
      });
    });

    it("runs the given call in the upgrade transaction", async () => {
      const { book } = await loadFixture(deployEscrowFixture);
      await upgradeContract({
        proxy: book.escrow.proxy,
        newContractName: "TaskEscrowV2",
        call: { fn: "setReleaseTag", args: [RELEASE_TAG] },
      });
      const escrowV2 = await ethers.getContractAt("TaskEscrowV2", book.escrow.proxy);
      expect(await escrowV2.releaseTag()).to.equal(RELEASE_TAG);
    });

    it("rejects an incompatible layout before sending any transaction", async () => {
      const { book } = await loadFixture(deployEscrowFixture);
      const file = writeTemporaryBook(book);
      const blockBefore = await ethers.provider.getBlockNumber();
      await expect(
        upgradeContract({ proxy: book.escrow.proxy, newContractName: "TaskEscrowBadLayout", addressBookFile: file }),
      ).to.be.rejectedWith(INCOMPATIBLE_LAYOUT);
      expect(await ethers.provider.getBlockNumber()).to.equal(blockBefore);
      expect(await upgrades.erc1967.getImplementationAddress(book.escrow.proxy)).to.equal(book.escrow.implementation);
      expect(readBook(file)).to.deep.equal(book);
    });

    it("rejects an address book of another chain before sending any transaction", async () => {
      const { book } = await loadFixture(deployEscrowFixture);
      const file = writeTemporaryBook({ ...book, chainId: book.chainId + 1 });
      const blockBefore = await ethers.provider.getBlockNumber();
      await expect(
        upgradeContract({ proxy: book.escrow.proxy, newContractName: "TaskEscrowV2", addressBookFile: file }),
      ).to.be.rejectedWith(/is for chain/);
      expect(await ethers.provider.getBlockNumber()).to.equal(blockBefore);
    });

    it("rejects a proxy the address book does not list", async () => {
      const { book, usdc } = await loadFixture(deployEscrowFixture);
      const file = writeTemporaryBook(book);
      await expect(
        upgradeContract({ proxy: await usdc.getAddress(), newContractName: "TaskEscrowV2", addressBookFile: file }),
      ).to.be.rejectedWith(/is neither the escrow nor the agent factory/);
    });

    it("reverts when the signer is not the admin", async () => {
      const { escrow, book, stranger } = await loadFixture(deployEscrowFixture);
      await expect(
        upgradeContract({ proxy: book.escrow.proxy, newContractName: "TaskEscrowV2", signer: stranger }),
      ).to.be.revertedWithCustomError(escrow, "NotAdmin");
      expect(await upgrades.erc1967.getImplementationAddress(book.escrow.proxy)).to.equal(book.escrow.implementation);
    });
  });
});
