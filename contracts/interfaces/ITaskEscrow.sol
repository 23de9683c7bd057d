// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title ITaskEscrow
/// @notice The escrow of the task marketplace. A poster funds a reward; a worker is assigned, submits evidence and is
/// paid (less the platform fee) once a verifier passes the work. Every function, event and error selector declared
/// here is part of the public contract listed in `shared/spec/selectors.json`.
interface ITaskEscrow {
    /*//////////////////////////////////////////////////////////////
                                 TYPES
    //////////////////////////////////////////////////////////////*/

    /// @notice On-chain status of a task. The numbers are part of the public interface.
    enum Status {
        Funded, // 0: reward held, nobody assigned
        Assigned, // 1: a worker is assigned
        Submitted, // 2: evidence awaits a verdict
        Verified, // 3: a failed verdict was given; the worker may resubmit or appeal
        Completed, // 4: terminal, the worker was paid
        Cancelled, // 5: terminal, the poster was refunded
        Disputed // 6: awaiting an admin ruling, or an escalation awaiting its window
    }

    /// @notice Phase of an open-submission task, derived from time (see docs/contracts.md).
    enum Phase {
        Submission, // 0: before the effective deadline, anyone but the poster may submit once
        Selection, // 1: after the deadline, the poster may pick a winner among the submitters
        Expired, // 2: the selection window passed without a winner; the poster may reclaim
        Closed // 3: settled (paid or refunded)
    }

    /// @notice The task record as returned by `getTask`.
    struct TaskView {
        address poster;
        address worker;
        address token;
        uint256 amount;
        bytes32 taskHash;
        bytes32 evidenceHash;
        Status status;
        string category;
        string locationZone;
        uint256 createdAt;
        uint256 deadline;
        uint8 submissionAttempts;
        uint256 disputedAt;
    }

    /// @notice One task of a `createTasks` batch. A zero `verifierAgent` lets the marketplace verifier judge.
    struct NewTask {
        bytes32 taskHash;
        uint256 amount;
        string category;
        string locationZone;
        uint256 duration;
        address verifierAgent;
    }

    /*//////////////////////////////////////////////////////////////
                                 EVENTS
    //////////////////////////////////////////////////////////////*/

    /// @notice Emitted when a task is funded. `agent` is the poster; `deadline` is the creation-time value.
    event TaskCreated(
        uint256 indexed taskId,
        address indexed agent,
        address token,
        uint256 amount,
        bytes32 taskHash,
        string category,
        string locationZone,
        uint256 deadline
    );
    /// @notice Emitted before TaskCreated when a task names its own verifier agent.
    event TaskVerifierSet(uint256 indexed taskId, address indexed verifier);
    /// @notice Emitted when a worker is assigned, by the marketplace verifier or by the poster.
    event WorkerAssigned(uint256 indexed taskId, address indexed worker);
    /// @notice Emitted on each submission; `attempt` counts from 1.
    event EvidenceSubmitted(uint256 indexed taskId, address indexed worker, bytes32 evidenceHash, uint8 attempt);
    /// @notice Emitted on every verdict.
    event VerificationCompleted(uint256 indexed taskId, bool passed);
    /// @notice Emitted when a verdict was settled through a trusted-execution signature.
    event TEESettled(uint256 indexed taskId, bool passed, address indexed teeSigner);
    /// @notice Emitted on every payout.
    event TaskCompleted(uint256 indexed taskId, uint256 workerPayout, uint256 platformFee);
    /// @notice Emitted on a refund by cancellation or by a ruling for the poster.
    event TaskCancelled(uint256 indexed taskId, uint256 refundAmount);
    /// @notice Emitted on a refund by timeout.
    event DeadlineExpired(uint256 indexed taskId, uint256 refundAmount);
    /// @notice Emitted when a task enters Disputed; on an escalation the initiator is the poster.
    event TaskDisputed(uint256 indexed taskId, address indexed initiator);
    /// @notice Emitted when the admin rules on a dispute.
    event DisputeResolved(uint256 indexed taskId, bool workerFavored);
    /// @notice Emitted when a timeout claim on submitted, unjudged work escalates it instead of refunding.
    event UnjudgedWorkEscalated(uint256 indexed taskId);
    /// @notice Emitted when escalated work is released to the worker after the dispute window.
    event UnjudgedWorkReleased(uint256 indexed taskId, uint256 workerPayout, uint256 platformFee);
    /// @notice Emitted after TaskCreated for an open-submission task.
    event OpenTaskCreated(uint256 indexed taskId);
    /// @notice Emitted when somebody submits to an open-submission task.
    event OpenSubmission(uint256 indexed taskId, address indexed submitter, bytes32 evidenceHash);
    /// @notice Emitted when the poster picks the winner of an open-submission task (TaskCompleted follows).
    event WinnerSelected(uint256 indexed taskId, address indexed winner);

    // Configuration events.
    event TreasuryUpdated(address indexed previousTreasury, address indexed newTreasury);
    event VerifierUpdated(address indexed previousVerifier, address indexed newVerifier);
    event FeeBpsUpdated(uint256 previousFeeBps, uint256 newFeeBps);
    event TokenAllowed(address indexed token);
    event TokenDisallowed(address indexed token);
    event AdminTransferProposed(address indexed currentAdmin, address indexed proposedAdmin);
    event AdminTransferCompleted(address indexed previousAdmin, address indexed newAdmin);
    event ReputationContractUpdated(address indexed previousContract, address indexed newContract);
    event TaskRegistryUpdated(address indexed previousRegistry, address indexed newRegistry);
    event TeeSignerUpdated(address indexed previousSigner, address indexed newSigner);
    event PauseStartRecorded(uint256 pauseStart);
    event MinRatedAmountUpdated(address indexed token, uint256 amount);
    /// @notice Emitted when a configured reputation contract or task registry rejected a report. Settlement goes on.
    event HookFailed(address indexed hook, uint256 indexed taskId);

    /*//////////////////////////////////////////////////////////////
                                 ERRORS
    //////////////////////////////////////////////////////////////*/

    /// @notice Thrown when the caller is not the admin.
    error NotAdmin();
    /// @notice Thrown when the caller is not the task's poster.
    error NotAgent();
    /// @notice Thrown when the caller is not the task's worker.
    error NotWorker();
    /// @notice Thrown when the caller may not judge (or assign) this task, or is its worker.
    error NotVerifier();
    /// @notice Thrown when the caller is not the proposed admin.
    error NotPendingAdmin();
    /// @notice Thrown when an address argument is zero.
    error ZeroAddress();
    /// @notice Thrown on a zero reward, or when native value is sent with an ERC-20 task.
    error ZeroAmount();
    /// @notice Thrown on a zero task or evidence hash.
    error EmptyHash();
    /// @notice Thrown when the token is not on the allowlist.
    error TokenNotAllowed();
    /// @notice Thrown when the duration is under 1 hour or over 90 days.
    error InvalidDeadline();
    /// @notice Thrown when the task is in `current` status and the call needs `required`.
    error InvalidStatus(Status current, Status required);
    /// @notice Thrown when the poster would be the worker or the verifier, or the task's judge (its verifier agent, else
    /// the marketplace verifier) would be its worker.
    error SelfAssignment();
    /// @notice Thrown on a timeout claim before the effective deadline.
    error DeadlineNotReached();
    /// @notice Thrown on an assignment, submission or dispute at or after the effective deadline.
    error DeadlineReached();
    /// @notice Thrown when fewer than 14 days (plus paused time) passed since the dispute or escalation.
    error DisputeWindowActive();
    /// @notice Thrown on a fourth submission.
    error MaxSubmissionAttemptsReached();
    /// @notice Thrown when the fee would exceed 3000 basis points.
    error FeeExceedsMax();
    /// @notice Thrown when a TEE verdict's payload or signature does not match the configured signer.
    error InvalidTEESignature();
    /// @notice Thrown when the TEE path is used while no signer is set.
    error TEESignerNotSet();
    /// @notice Thrown when fewer than 3 days (plus paused time) passed since the failed verdict.
    error AppealWindowActive();
    /// @notice Thrown on a timeout claim on escalated work, which is released to the worker instead.
    error EscalatedForAdjudication();
    /// @notice Thrown when releasing a dispute that was not an escalation of unjudged work.
    error NotEscalated();
    /// @notice Thrown when the recorded pause start is zero, after the pause transaction, or before the end of the
    /// previous pause.
    error InvalidPauseStart();
    /// @notice Thrown when a batch is empty.
    error EmptyBatch();
    /// @notice Thrown when a batch holds more than `MAX_BATCH` tasks.
    error BatchTooLarge(uint256 size, uint256 maxSize);
    /// @notice Thrown when an open-submission function is called on a single-worker task.
    error NotOpenTask();
    /// @notice Thrown when a single-worker function (assignment) is called on an open-submission task.
    error OpenTaskNotAssignable();
    /// @notice Thrown when an open-submission task is not in the phase the call needs.
    error WrongPhase(Phase current, Phase required);
    /// @notice Thrown when an address submits twice to an open-submission task.
    error AlreadySubmitted();
    /// @notice Thrown when the chosen winner did not submit to the open-submission task.
    error NotSubmitter();
    /// @notice Thrown when a native-token task is funded with a value other than its amount.
    error NativeValueMismatch(uint256 sent, uint256 required);
    /// @notice Thrown when the escrow received less than the amount (a fee-on-transfer token).
    error TransferAmountMismatch(uint256 received, uint256 expected);
    /// @notice Thrown when a reward does not fit the packed task record (2^96 - 1 smallest units).
    error AmountTooLarge();
    /// @notice Thrown when sending native currency to a recipient fails.
    error NativeTransferFailed(address recipient);
    /// @notice Thrown when a hook (reputation contract, task registry) is set to an address without code.
    error NotAContract(address account);
    /// @notice Thrown when cancelling an open-submission task that already has submissions.
    error OpenTaskHasSubmissions();
    /// @notice Thrown when the category is longer than 65535 bytes.
    error LabelTooLong();
    /// @notice Thrown when assigning a task id that was never created.
    error TaskNotFound(uint256 taskId);
    /// @notice Thrown when too little gas is left to give a configured hook its full budget (the caller set the gas
    /// limit too low; retry with more gas).
    error InsufficientGasForHook();

    /*//////////////////////////////////////////////////////////////
                           POSTING FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @notice Funds a task; the caller becomes the poster. For a native-currency task pass the zero token and send
    /// `amount` as value. Returns the new task id.
    function createTask(
        bytes32 taskHash,
        address token,
        uint256 amount,
        string calldata category,
        string calldata locationZone,
        uint256 duration
    ) external payable returns (uint256 taskId);

    /// @notice As `createTask`, with a verifier agent that judges this task instead of the marketplace verifier.
    function createTaskWithVerifier(
        bytes32 taskHash,
        address token,
        uint256 amount,
        string calldata category,
        string calldata locationZone,
        uint256 duration,
        address verifierAgent
    ) external payable returns (uint256 taskId);

    /// @notice Funds up to `MAX_BATCH` tasks in one token transfer. Returns the id of the first; ids are consecutive.
    function createTasks(address token, NewTask[] calldata tasks) external payable returns (uint256 firstTaskId);

    /// @notice Funds an open-submission task: anyone may submit before the deadline, the poster then picks a winner.
    function createTaskOpen(
        bytes32 taskHash,
        address token,
        uint256 amount,
        string calldata category,
        string calldata locationZone,
        uint256 duration
    ) external payable returns (uint256 taskId);

    /*//////////////////////////////////////////////////////////////
                          LIFECYCLE FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    function marketplaceAssign(uint256 taskId, address worker) external;

    function assignWorker(uint256 taskId, address worker) external;

    function submitEvidence(uint256 taskId, bytes32 evidenceHash) external;

    function completeVerification(uint256 taskId, bool passed) external;

    /// @notice Settles a verdict signed by the trusted-execution signer. `payload` must equal
    /// `teeVerdictPayload(taskId, passed)` and `signature` must be the signer's EIP-191 signature of it.
    function completeVerificationWithTEE(uint256 taskId, bool passed, bytes calldata payload, bytes calldata signature)
        external;

    function cancelTask(uint256 taskId) external;

    function claimTimeout(uint256 taskId) external;

    function raiseDispute(uint256 taskId) external;

    function resolveDispute(uint256 taskId, bool workerFavored) external;

    function releaseUnjudgedWork(uint256 taskId) external;

    function submitOpen(uint256 taskId, bytes32 evidenceHash) external;

    function selectWinner(uint256 taskId, address winner) external;

    function reclaimOpen(uint256 taskId) external;

    /*//////////////////////////////////////////////////////////////
                             ADMIN FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    function setFeeBps(uint256 newFeeBps) external;

    function setTreasury(address newTreasury) external;

    function setVerifier(address newVerifier) external;

    function allowToken(address token) external;

    function disallowToken(address token) external;

    function setReputationContract(address newContract) external;

    function setTaskRegistry(address newRegistry) external;

    function setTeeSigner(address newSigner) external;

    function setMinRatedAmount(address token, uint256 amount) external;

    function pause() external;

    function unpause() external;

    function recordPauseStart(uint256 pauseStart) external;

    function proposeAdmin(address newAdmin) external;

    function acceptAdmin() external;

    /*//////////////////////////////////////////////////////////////
                             READ FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    function getTask(uint256 taskId) external view returns (TaskView memory);

    function effectiveDeadline(uint256 taskId) external view returns (uint256);

    function isTaskExpired(uint256 taskId) external view returns (bool);

    function taskVerifier(uint256 taskId) external view returns (address);

    function failedVerdictAt(uint256 taskId) external view returns (uint256);

    function isEscalated(uint256 taskId) external view returns (bool);

    function isOpenTask(uint256 taskId) external view returns (bool);

    function openPhase(uint256 taskId) external view returns (Phase);

    function openSubmission(uint256 taskId, address submitter) external view returns (bytes32);

    function openSubmissionCount(uint256 taskId) external view returns (uint256);

    function teeVerdictPayload(uint256 taskId, bool passed) external view returns (bytes memory);

    function nextTaskId() external view returns (uint256);

    function admin() external view returns (address);

    function pendingAdmin() external view returns (address);

    function treasury() external view returns (address);

    function verifier() external view returns (address);

    function feeBps() external view returns (uint256);

    function isTokenAllowed(address token) external view returns (bool);

    function reputationContract() external view returns (address);

    function taskRegistry() external view returns (address);

    function teeSigner() external view returns (address);

    function minRatedAmount(address token) external view returns (uint256);

    function totalPausedSeconds() external view returns (uint256);

    function pauseStartedAt() external view returns (uint256);

    function pausedSecondsSince(uint256 timestamp) external view returns (uint256);
}
