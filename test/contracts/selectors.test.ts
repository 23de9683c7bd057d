/**
 * The public interface fixed by the specification (shared/spec/selectors.json and the tables of marketplace-spec.md)
 * against the compiled ABIs of TaskEscrow and AgentFactory. The spec's tables are copied here so the suite runs
 * without the spec folder; each selector is also re-derived from its signature.
 */
import { expect } from "chai";
import { artifacts, ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import type { EventFragment, Interface } from "ethers";
import {
  STATUS,
  assignedTaskFixture,
  disputedTaskFixture,
  failedVerdictFixture,
  fundedTaskFixture,
  submittedTaskFixture,
} from "../helpers/fixtures";

/** selectors.json, "functions". */
const FUNCTION_SELECTORS: Record<"TaskEscrow" | "AgentFactory", Record<string, string>> = {
  TaskEscrow: {
    "createTask(bytes32,address,uint256,string,string,uint256)": "0x27a825b3",
    "createTaskWithVerifier(bytes32,address,uint256,string,string,uint256,address)": "0xca1f5690",
    "marketplaceAssign(uint256,address)": "0xb1e1fca4",
    "assignWorker(uint256,address)": "0x7464a25b",
    "submitEvidence(uint256,bytes32)": "0x912da4db",
    "completeVerification(uint256,bool)": "0x573b03f3",
    "completeVerificationWithTEE(uint256,bool,bytes,bytes)": "0x0afec3ef",
    "cancelTask(uint256)": "0x7eec20a8",
    "claimTimeout(uint256)": "0x86e773f1",
    "raiseDispute(uint256)": "0xa5c1674e",
    "resolveDispute(uint256,bool)": "0x34b25ee2",
    "releaseUnjudgedWork(uint256)": "0x2056f35b",
    "getTask(uint256)": "0x1d65e77e",
    "effectiveDeadline(uint256)": "0xf80298a8",
    "isTaskExpired(uint256)": "0x6893bd76",
    "upgradeToAndCall(address,bytes)": "0x4f1ef286",
    "setFeeBps(uint256)": "0x72c27b62",
    "setTreasury(address)": "0xf0f44260",
    "setVerifier(address)": "0x5437988d",
    "allowToken(address)": "0xb53472ef",
    "disallowToken(address)": "0xe79767af",
    "setReputationContract(address)": "0x9584660f",
    "setTaskRegistry(address)": "0xb2d78069",
    "setTeeSigner(address)": "0x248190c4",
    "setMinRatedAmount(address,uint256)": "0xaae61771",
    "pause()": "0x8456cb59",
    "unpause()": "0x3f4ba83a",
    "recordPauseStart(uint256)": "0xf6261d61",
    "proposeAdmin(address)": "0x147bf6c4",
    "acceptAdmin()": "0x0e18b681",
  },
  AgentFactory: {
    "deployAgent(uint256)": "0xc491a5dd",
    "getTotalCost(uint256)": "0x765f2079",
    "setDeployFee(uint256)": "0xa9e52987",
    "emergencyWithdraw(uint256)": "0x5312ea8e",
  },
};

/** selectors.json, "errors" (the same list as the spec's "Escrow contract errors" table, Error(string) aside). */
const ERROR_SELECTORS: Record<string, string> = {
  "NotAdmin()": "0x7bfa4b9f",
  "NotAgent()": "0x0d9ab13f",
  "NotWorker()": "0xfb55adaf",
  "NotVerifier()": "0x24663556",
  "NotPendingAdmin()": "0x058d9a1b",
  "ZeroAddress()": "0xd92e233d",
  "ZeroAmount()": "0x1f2a2005",
  "EmptyHash()": "0x70df377c",
  "TokenNotAllowed()": "0xa29c4986",
  "InvalidDeadline()": "0x769d11e4",
  "InvalidStatus(uint8,uint8)": "0xf924664d",
  "SelfAssignment()": "0xd004f0f8",
  "DeadlineNotReached()": "0x66ec4ee6",
  "DeadlineReached()": "0xb08ce5b3",
  "DisputeWindowActive()": "0xe52e798f",
  "MaxSubmissionAttemptsReached()": "0x6e041295",
  "FeeExceedsMax()": "0x5ff85e3f",
  "InvalidTEESignature()": "0x4c0f9589",
  "TEESignerNotSet()": "0x41437f70",
  "AppealWindowActive()": "0x2e4ade70",
  "EscalatedForAdjudication()": "0xf402cb4c",
  "NotEscalated()": "0x7834bcba",
  "InvalidPauseStart()": "0xe94b0b83",
  "EnforcedPause()": "0xd93c0665",
  "ExpectedPause()": "0x8dfc202b",
  "ReentrancyGuardReentrantCall()": "0x3ee5aeb5",
  "SafeERC20FailedOperation(address)": "0x5274afe7",
};

/** The "Error(string)" row of the spec's error table: the standard string revert, not declared in any ABI. */
const STRING_REVERT = { signature: "Error(string)", selector: "0x08c379a0" };

/** Functions the spec names without a selector: views, repository-only functions and the factory's ownership. */
const NAMED_FUNCTIONS: Record<"TaskEscrow" | "AgentFactory", string[]> = {
  TaskEscrow: [
    "createTasks",
    "MAX_BATCH",
    "createTaskOpen",
    "commitOpen",
    "revealOpen",
    "selectWinner",
    "releaseOpenDefault",
    "reclaimOpen",
    "openPhase",
    "openSubmission",
    "openSubmissionCount",
    "taskVerifier",
    "failedVerdictAt",
    "isEscalated",
    "nextTaskId",
    "paused",
    "totalPausedSeconds",
    "pauseStartedAt",
    "feeBps",
    "isTokenAllowed",
  ],
  AgentFactory: ["setTreasury", "transferOwnership", "acceptOwnership", "pendingOwner", "owner"],
};

/** Repository-only and factory errors the spec names. */
const NAMED_ERRORS: Record<"TaskEscrow" | "AgentFactory", string[]> = {
  TaskEscrow: ["EmptyBatch", "BatchTooLarge", "NotOpenTask", "WrongPhase"],
  AgentFactory: ["AgentFundingNotSupported"],
};

interface EventSpec {
  contract: "TaskEscrow" | "AgentFactory";
  /** Parameters in order; a trailing "*" marks an indexed one. */
  fields: string[];
}

/** The spec's "Events" table. */
const EVENTS: Record<string, EventSpec> = {
  TaskCreated: {
    contract: "TaskEscrow",
    fields: ["taskId*", "agent*", "token", "amount", "taskHash", "category", "locationZone", "deadline"],
  },
  TaskVerifierSet: { contract: "TaskEscrow", fields: ["taskId*", "verifier*"] },
  WorkerAssigned: { contract: "TaskEscrow", fields: ["taskId*", "worker*"] },
  EvidenceSubmitted: { contract: "TaskEscrow", fields: ["taskId*", "worker*", "evidenceHash", "attempt"] },
  VerificationCompleted: { contract: "TaskEscrow", fields: ["taskId*", "passed"] },
  TEESettled: { contract: "TaskEscrow", fields: ["taskId*", "passed", "teeSigner*"] },
  TaskCompleted: { contract: "TaskEscrow", fields: ["taskId*", "workerPayout", "platformFee"] },
  TaskCancelled: { contract: "TaskEscrow", fields: ["taskId*", "refundAmount"] },
  DeadlineExpired: { contract: "TaskEscrow", fields: ["taskId*", "refundAmount"] },
  TaskDisputed: { contract: "TaskEscrow", fields: ["taskId*", "initiator*"] },
  DisputeResolved: { contract: "TaskEscrow", fields: ["taskId*", "workerFavored"] },
  UnjudgedWorkEscalated: { contract: "TaskEscrow", fields: ["taskId*"] },
  UnjudgedWorkReleased: { contract: "TaskEscrow", fields: ["taskId*", "workerPayout", "platformFee"] },
  AgentDeployed: { contract: "AgentFactory", fields: ["user*", "usdcAmount", "nonce", "timestamp"] },
};

/** The spec's configuration events (fields not given). */
const CONFIGURATION_EVENTS = [
  "TreasuryUpdated",
  "VerifierUpdated",
  "FeeBpsUpdated",
  "TokenAllowed",
  "TokenDisallowed",
  "AdminTransferProposed",
  "AdminTransferCompleted",
  "ReputationContractUpdated",
  "TaskRegistryUpdated",
  "TeeSignerUpdated",
  "PauseStartRecorded",
  "MinRatedAmountUpdated",
  "Paused",
  "Unpaused",
  "Upgraded",
  "Initialized",
];

/** Status numbers: the spec gives Funded 0 to Verified 3 and Disputed 6; docs/contracts.md fixes Completed and Cancelled. */
const STATUS_NUMBERS = {
  Funded: 0n,
  Assigned: 1n,
  Submitted: 2n,
  Verified: 3n,
  Completed: 4n,
  Cancelled: 5n,
  Disputed: 6n,
} as const;

/** The spec's "On-chain task record", in order, as returned by getTask. */
const TASK_RECORD: Array<[string, string]> = [
  ["poster", "address"],
  ["worker", "address"],
  ["token", "address"],
  ["amount", "uint256"],
  ["taskHash", "bytes32"],
  ["evidenceHash", "bytes32"],
  ["status", "uint8"],
  ["category", "string"],
  ["locationZone", "string"],
  ["createdAt", "uint256"],
  ["deadline", "uint256"],
  ["submissionAttempts", "uint8"],
  ["disputedAt", "uint256"],
];

async function compiledInterfaces(): Promise<Record<"TaskEscrow" | "AgentFactory", Interface>> {
  const [escrow, factory] = await Promise.all([
    artifacts.readArtifact("TaskEscrow"),
    artifacts.readArtifact("AgentFactory"),
  ]);
  return { TaskEscrow: new ethers.Interface(escrow.abi), AgentFactory: new ethers.Interface(factory.abi) };
}

describe("Selectors", () => {
  describe("the spec's selector table", () => {
    for (const [contract, functions] of Object.entries(FUNCTION_SELECTORS)) {
      for (const [signature, selector] of Object.entries(functions)) {
        it(`${contract}: ${signature} hashes to ${selector}`, () => {
          expect(ethers.id(signature).slice(0, 10)).to.equal(selector);
        });
      }
    }

    for (const [signature, selector] of Object.entries({
      ...ERROR_SELECTORS,
      [STRING_REVERT.signature]: STRING_REVERT.selector,
    })) {
      it(`error ${signature} hashes to ${selector}`, () => {
        expect(ethers.id(signature).slice(0, 10)).to.equal(selector);
      });
    }
  });

  describe("functions", () => {
    for (const [contract, functions] of Object.entries(FUNCTION_SELECTORS) as Array<
      ["TaskEscrow" | "AgentFactory", Record<string, string>]
    >) {
      for (const [signature, selector] of Object.entries(functions)) {
        it(`${contract} exposes ${signature} as ${selector}`, async () => {
          const abi = (await compiledInterfaces())[contract];
          const fragment = abi.getFunction(signature);
          expect(fragment, `${signature} missing from the ${contract} ABI`).to.not.equal(null);
          expect(fragment!.selector).to.equal(selector);
        });
      }
    }

    for (const [contract, names] of Object.entries(NAMED_FUNCTIONS) as Array<
      ["TaskEscrow" | "AgentFactory", string[]]
    >) {
      for (const name of names) {
        it(`${contract} has ${name}`, async () => {
          const abi = (await compiledInterfaces())[contract];
          expect(abi.hasFunction(name), `${name} missing from the ${contract} ABI`).to.equal(true);
        });
      }
    }

    it("getTask returns the spec's task record fields in order", async () => {
      const abi = (await compiledInterfaces()).TaskEscrow;
      const [record] = abi.getFunction("getTask(uint256)")!.outputs;
      expect(record.components!.map((c) => [c.name, c.type])).to.deep.equal(TASK_RECORD);
    });

    it("createTasks takes the token and the NewTask tuples", async () => {
      const abi = (await compiledInterfaces()).TaskEscrow;
      expect(abi.getFunction("createTasks")!.format("sighash")).to.equal(
        "createTasks(address,(bytes32,uint256,string,string,uint256,address)[])",
      );
    });
  });

  describe("errors", () => {
    for (const [signature, selector] of Object.entries(ERROR_SELECTORS)) {
      it(`${signature} is declared with selector ${selector}`, async () => {
        const abis = await compiledInterfaces();
        const fragment = abis.TaskEscrow.getError(signature) ?? abis.AgentFactory.getError(signature);
        expect(fragment, `${signature} missing from both ABIs`).to.not.equal(null);
        expect(fragment!.selector).to.equal(selector);
      });
    }

    for (const [contract, names] of Object.entries(NAMED_ERRORS) as Array<["TaskEscrow" | "AgentFactory", string[]]>) {
      for (const name of names) {
        it(`${contract} declares ${name}`, async () => {
          const abi = (await compiledInterfaces())[contract];
          expect(abi.getError(name), `${name} missing from the ${contract} ABI`).to.not.equal(null);
        });
      }
    }

    it("InvalidStatus carries the Status enum twice", async () => {
      const abi = (await compiledInterfaces()).TaskEscrow;
      const artifact = await artifacts.readArtifact("TaskEscrow");
      const entry = artifact.abi.find(
        (item: { type: string; name?: string }) => item.type === "error" && item.name === "InvalidStatus",
      );
      expect(abi.getError("InvalidStatus")!.inputs.map((input) => input.name)).to.deep.equal(["current", "required"]);
      expect(entry.inputs.map((input: { internalType: string }) => input.internalType)).to.deep.equal([
        "enum ITaskEscrow.Status",
        "enum ITaskEscrow.Status",
      ]);
    });
  });

  describe("events", () => {
    for (const [name, { contract, fields }] of Object.entries(EVENTS)) {
      it(`${contract} emits ${name}(${fields.join(", ")})`, async () => {
        const abi = (await compiledInterfaces())[contract];
        const fragment: EventFragment | null = abi.getEvent(name);
        expect(fragment, `${name} missing from the ${contract} ABI`).to.not.equal(null);
        expect(fragment!.inputs.map((input) => `${input.name}${input.indexed ? "*" : ""}`)).to.deep.equal(fields);
      });
    }

    it("EvidenceSubmitted's attempt is a uint8", async () => {
      const abi = (await compiledInterfaces()).TaskEscrow;
      expect(abi.getEvent("EvidenceSubmitted")!.inputs[3].type).to.equal("uint8");
    });

    for (const name of CONFIGURATION_EVENTS) {
      it(`TaskEscrow emits the configuration event ${name}`, async () => {
        const abi = (await compiledInterfaces()).TaskEscrow;
        expect(abi.getEvent(name), `${name} missing from the TaskEscrow ABI`).to.not.equal(null);
      });
    }
  });

  describe("status numbers", () => {
    it("match the STATUS constants the other suites use", () => {
      expect(Object.fromEntries(Object.entries(STATUS).map(([name, value]) => [name, BigInt(value)]))).to.deep.equal(
        STATUS_NUMBERS,
      );
    });

    it("Funded is 0", async () => {
      const { escrow, taskId } = await loadFixture(fundedTaskFixture);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS_NUMBERS.Funded);
    });

    it("Assigned is 1", async () => {
      const { escrow, taskId } = await loadFixture(assignedTaskFixture);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS_NUMBERS.Assigned);
    });

    it("Submitted is 2", async () => {
      const { escrow, taskId } = await loadFixture(submittedTaskFixture);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS_NUMBERS.Submitted);
    });

    it("Verified is 3", async () => {
      const { escrow, taskId } = await loadFixture(failedVerdictFixture);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS_NUMBERS.Verified);
    });

    it("Completed is 4", async () => {
      const { escrow, verifier, taskId } = await loadFixture(submittedTaskFixture);
      await escrow.connect(verifier).completeVerification(taskId, true);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS_NUMBERS.Completed);
    });

    it("Cancelled is 5", async () => {
      const { escrow, poster, taskId } = await loadFixture(fundedTaskFixture);
      await escrow.connect(poster).cancelTask(taskId);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS_NUMBERS.Cancelled);
    });

    it("Disputed is 6", async () => {
      const { escrow, taskId } = await loadFixture(disputedTaskFixture);
      expect((await escrow.getTask(taskId)).status).to.equal(STATUS_NUMBERS.Disputed);
    });

    it("InvalidStatus reports the numbers too", async () => {
      const { escrow, poster, taskId } = await loadFixture(disputedTaskFixture);
      await expect(escrow.connect(poster).cancelTask(taskId))
        .to.be.revertedWithCustomError(escrow, "InvalidStatus")
        .withArgs(STATUS_NUMBERS.Disputed, STATUS_NUMBERS.Funded);
    });
  });
});
