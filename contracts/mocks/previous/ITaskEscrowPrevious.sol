// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title ITaskEscrowPrevious
/// @author The escrow task marketplace
/// @notice Test-only copy of ITaskEscrow as it was at commit 04d4f47, before commit-reveal submissions, for
/// TaskEscrowPrevious, the implementation the upgrade tests start from.
interface ITaskEscrowPrevious {
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

    /// @notice Emitted when a task is funded (createTask, createTaskWithVerifier, createTasks, createTaskOpen).
    /// @param taskId The new task's id.
    /// @param agent The poster (the funding caller).
    /// @param token The reward token (the zero address for the native currency).
    /// @param amount The reward, in the token's smallest units.
    /// @param taskHash The SHA-256 of the brief blob.
    /// @param category The free-text category.
    /// @param locationZone The free-text location zone.
    /// @param deadline The creation-time deadline (pauses later extend the effective deadline).
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
    /// @param taskId The task.
    /// @param verifier The verifier agent that judges this task instead of the marketplace verifier.
    event TaskVerifierSet(uint256 indexed taskId, address indexed verifier);
    /// @notice Emitted when a worker is assigned, by the marketplace verifier or by the poster.
    /// @param taskId The task.
    /// @param worker The assigned worker.
    event WorkerAssigned(uint256 indexed taskId, address indexed worker);
    /// @notice Emitted on each submission.
    /// @param taskId The task.
    /// @param worker The submitting worker.
    /// @param evidenceHash The keccak256 of the deliverable.
    /// @param attempt The submission's number, from 1 to MAX_SUBMISSIONS.
    event EvidenceSubmitted(uint256 indexed taskId, address indexed worker, bytes32 evidenceHash, uint8 attempt);
    /// @notice Emitted on every verdict.
    /// @param taskId The task.
    /// @param passed Whether the work passed (a payout follows) or failed (the task becomes Verified).
    event VerificationCompleted(uint256 indexed taskId, bool passed);
    /// @notice Emitted when a verdict was settled through a trusted-execution signature.
    /// @param taskId The task.
    /// @param passed The verdict.
    /// @param teeSigner The signer whose signature settled it.
    event TEESettled(uint256 indexed taskId, bool passed, address indexed teeSigner);
    /// @notice Emitted on every payout.
    /// @param taskId The task.
    /// @param workerPayout What the worker received: amount minus the fee.
    /// @param platformFee What the treasury received: amount x feeBps / 10000.
    event TaskCompleted(uint256 indexed taskId, uint256 workerPayout, uint256 platformFee);
    /// @notice Emitted on a refund by cancellation or by a ruling for the poster.
    /// @param taskId The task.
    /// @param refundAmount The whole reward, returned to the poster.
    event TaskCancelled(uint256 indexed taskId, uint256 refundAmount);
    /// @notice Emitted on a refund by timeout (claimTimeout, reclaimOpen).
    /// @param taskId The task.
    /// @param refundAmount The whole reward, returned to the poster.
    event DeadlineExpired(uint256 indexed taskId, uint256 refundAmount);
    /// @notice Emitted when a task enters Disputed.
    /// @param taskId The task.
    /// @param initiator Who raised it; on an escalation of unjudged work, the poster.
    event TaskDisputed(uint256 indexed taskId, address indexed initiator);
    /// @notice Emitted when the admin rules on a dispute (TaskCompleted or TaskCancelled follows).
    /// @param taskId The task.
    /// @param workerFavored Whether the ruling pays the worker (true) or refunds the poster (false).
    event DisputeResolved(uint256 indexed taskId, bool workerFavored);
    /// @notice Emitted when a timeout claim on submitted, unjudged work escalates it to Disputed instead of refunding.
    /// @param taskId The task.
    event UnjudgedWorkEscalated(uint256 indexed taskId);
    /// @notice Emitted when escalated work is released to the worker after the dispute window (TaskCompleted follows).
    /// @param taskId The task.
    /// @param workerPayout What the worker received.
    /// @param platformFee What the treasury received.
    event UnjudgedWorkReleased(uint256 indexed taskId, uint256 workerPayout, uint256 platformFee);
    /// @notice Emitted after TaskCreated for an open-submission task.
    /// @param taskId The task.
    event OpenTaskCreated(uint256 indexed taskId);
    /// @notice Emitted when somebody submits to an open-submission task.
    /// @param taskId The task.
    /// @param submitter The submitting address.
    /// @param evidenceHash The keccak256 of its deliverable.
    event OpenSubmission(uint256 indexed taskId, address indexed submitter, bytes32 evidenceHash);
    /// @notice Emitted when the poster picks the winner of an open-submission task (TaskCompleted follows).
    /// @param taskId The task.
    /// @param winner The paid submitter.
    event WinnerSelected(uint256 indexed taskId, address indexed winner);

    /// @notice Emitted when the admin changes the fee recipient.
    /// @param previousTreasury The former treasury.
    /// @param newTreasury The new treasury.
    event TreasuryUpdated(address indexed previousTreasury, address indexed newTreasury);
    /// @notice Emitted when the admin changes the marketplace verifier.
    /// @param previousVerifier The former marketplace verifier.
    /// @param newVerifier The new marketplace verifier.
    event VerifierUpdated(address indexed previousVerifier, address indexed newVerifier);
    /// @notice Emitted when the admin changes the platform fee.
    /// @param previousFeeBps The former fee, in basis points.
    /// @param newFeeBps The new fee, in basis points (at most MAX_FEE_BPS).
    event FeeBpsUpdated(uint256 previousFeeBps, uint256 newFeeBps);
    /// @notice Emitted when the admin allows a reward token.
    /// @param token The token (the zero address for the native currency).
    event TokenAllowed(address indexed token);
    /// @notice Emitted when the admin disallows a reward token (funded tasks are not affected).
    /// @param token The token.
    event TokenDisallowed(address indexed token);
    /// @notice Emitted when the admin proposes a successor (the first step of the two-step transfer).
    /// @param currentAdmin The admin.
    /// @param proposedAdmin The proposed admin, who must call acceptAdmin.
    event AdminTransferProposed(address indexed currentAdmin, address indexed proposedAdmin);
    /// @notice Emitted when the proposed admin accepts.
    /// @param previousAdmin The former admin.
    /// @param newAdmin The new admin.
    event AdminTransferCompleted(address indexed previousAdmin, address indexed newAdmin);
    /// @notice Emitted when the admin sets the reputation hook.
    /// @param previousContract The former hook (zero: none).
    /// @param newContract The new hook (zero: none).
    event ReputationContractUpdated(address indexed previousContract, address indexed newContract);
    /// @notice Emitted when the admin sets the task-registry hook.
    /// @param previousRegistry The former registry (zero: none).
    /// @param newRegistry The new registry (zero: none).
    event TaskRegistryUpdated(address indexed previousRegistry, address indexed newRegistry);
    /// @notice Emitted when the admin sets the trusted-execution signer.
    /// @param previousSigner The former signer (zero: the TEE path is disabled).
    /// @param newSigner The new signer (zero: the TEE path is disabled).
    event TeeSignerUpdated(address indexed previousSigner, address indexed newSigner);
    /// @notice Emitted when the admin moves the running pause's start back to when an incident began.
    /// @param pauseStart The recorded start (Unix seconds).
    event PauseStartRecorded(uint256 pauseStart);
    /// @notice Emitted when the admin pauses the escrow (as OpenZeppelin's Pausable, so tools recognise it).
    /// @param account The admin.
    event Paused(address account);
    /// @notice Emitted when the admin resumes the escrow (as OpenZeppelin's Pausable).
    /// @param account The admin.
    event Unpaused(address account);
    /// @notice Emitted when the admin sets the smallest reward of a token that the reputation hook rates.
    /// @param token The token.
    /// @param amount The smallest rated reward, in the token's smallest units.
    event MinRatedAmountUpdated(address indexed token, uint256 amount);
    /// @notice Emitted when a configured reputation contract or task registry rejected a report. Settlement goes on.
    /// @param hook The hook that failed.
    /// @param taskId The task being reported.
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
    /// @notice Thrown when the task is in `current` status and the call needs `required` (the first of several).
    /// @param current The task's status.
    /// @param required The status the call needs.
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
    /// @notice Thrown when the recorded pause start is zero, after the pause transaction, before the end of the
    /// previous pause, or more than MAX_PAUSE_BACKDATE (1 day) before the pause transaction.
    error InvalidPauseStart();
    /// @notice Thrown when a batch is empty.
    error EmptyBatch();
    /// @notice Thrown when a batch holds more than `MAX_BATCH` tasks.
    /// @param size The batch's size.
    /// @param maxSize MAX_BATCH.
    error BatchTooLarge(uint256 size, uint256 maxSize);
    /// @notice Thrown when an open-submission function is called on a single-worker task.
    error NotOpenTask();
    /// @notice Thrown when a single-worker function (assignment) is called on an open-submission task.
    error OpenTaskNotAssignable();
    /// @notice Thrown when an open-submission task is not in the phase the call needs.
    /// @param current The task's phase.
    /// @param required The phase the call needs.
    error WrongPhase(Phase current, Phase required);
    /// @notice Thrown when an address submits twice to an open-submission task.
    error AlreadySubmitted();
    /// @notice Thrown when the chosen winner did not submit to the open-submission task.
    error NotSubmitter();
    /// @notice Thrown when a native-token task is funded with a value other than its amount.
    /// @param sent The value sent.
    /// @param required The amount (a batch: the sum).
    error NativeValueMismatch(uint256 sent, uint256 required);
    /// @notice Thrown when the escrow received less than the amount (a fee-on-transfer token).
    /// @param received What the escrow's balance grew by.
    /// @param expected The amount.
    error TransferAmountMismatch(uint256 received, uint256 expected);
    /// @notice Thrown when a reward does not fit the packed task record (2^96 - 1 smallest units).
    error AmountTooLarge();
    /// @notice Thrown when sending native currency to a recipient fails.
    /// @param recipient The refused recipient.
    error NativeTransferFailed(address recipient);
    /// @notice Thrown when a hook (reputation contract, task registry) is set to an address without code.
    /// @param account The address without code.
    error NotAContract(address account);
    /// @notice Thrown when cancelling an open-submission task that already has submissions.
    error OpenTaskHasSubmissions();
    /// @notice Thrown when the category is longer than 65535 bytes.
    error LabelTooLong();
    /// @notice Thrown by every non-admin state-changing call except resolveDispute while the escrow is paused (as
    /// OpenZeppelin's Pausable).
    error EnforcedPause();
    /// @notice Thrown by pause-only calls (unpause, recordPauseStart) while the escrow runs (as OpenZeppelin's Pausable).
    error ExpectedPause();
    /// @notice Thrown when assigning a task id that was never created.
    /// @param taskId The unknown id.
    error TaskNotFound(uint256 taskId);
    /// @notice Thrown when too little gas is left to give a configured hook its full budget (the caller set the gas
    /// limit too low; retry with more gas).
    error InsufficientGasForHook();

    /*//////////////////////////////////////////////////////////////
                           POSTING FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @notice Funds a task; the caller becomes the poster. The reward is pulled from the caller (approve the escrow
    /// first) or, for the native currency (the zero token), sent as value. Emits TaskCreated. Reverts ZeroAmount,
    /// EmptyHash, TokenNotAllowed, InvalidDeadline, AmountTooLarge, LabelTooLong, NativeValueMismatch,
    /// TransferAmountMismatch, EnforcedPause.
    /// @param taskHash The SHA-256 of the brief blob (nonzero).
    /// @param token The reward token (allowlisted; the zero address for the native currency).
    /// @param amount The reward, in the token's smallest units (nonzero, below 2^96).
    /// @param category Free text.
    /// @param locationZone Free text.
    /// @param duration Seconds from now to the deadline, from MIN_DURATION (1 hour) to MAX_DURATION (90 days).
    /// @return taskId The new task's id.
    function createTask(
        bytes32 taskHash,
        address token,
        uint256 amount,
        string calldata category,
        string calldata locationZone,
        uint256 duration
    ) external payable returns (uint256 taskId);

    /// @notice As createTask, with a verifier agent that judges this task instead of the marketplace verifier. Emits
    /// TaskVerifierSet then TaskCreated. Reverts as createTask, and SelfAssignment when the verifier is the caller.
    /// @param taskHash The SHA-256 of the brief blob.
    /// @param token The reward token.
    /// @param amount The reward.
    /// @param category Free text.
    /// @param locationZone Free text.
    /// @param duration Seconds to the deadline.
    /// @param verifierAgent The task's judge (nonzero, not the poster).
    /// @return taskId The new task's id.
    function createTaskWithVerifier(
        bytes32 taskHash,
        address token,
        uint256 amount,
        string calldata category,
        string calldata locationZone,
        uint256 duration,
        address verifierAgent
    ) external payable returns (uint256 taskId);

    /// @notice Funds up to MAX_BATCH tasks in one token transfer; ids are consecutive. Each task is checked as by
    /// createTask (a zero verifierAgent lets the marketplace verifier judge). Reverts EmptyBatch, BatchTooLarge.
    /// @param token The reward token of every task.
    /// @param tasks The tasks.
    /// @return firstTaskId The first new id.
    function createTasks(address token, NewTask[] calldata tasks) external payable returns (uint256 firstTaskId);

    /// @notice Funds an open-submission task: anyone but the poster may submit once before the deadline, then the
    /// poster picks a winner within OPEN_SELECTION_WINDOW (see docs/contracts.md). Emits TaskCreated, OpenTaskCreated.
    /// @param taskHash The SHA-256 of the brief blob.
    /// @param token The reward token.
    /// @param amount The reward.
    /// @param category Free text.
    /// @param locationZone Free text.
    /// @param duration Seconds to the submission deadline.
    /// @return taskId The new task's id.
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

    /// @notice The marketplace verifier assigns a Funded task to the agent that accepted it. Emits WorkerAssigned.
    /// Reverts NotVerifier (caller), TaskNotFound, InvalidStatus (not Funded), ZeroAddress, SelfAssignment (the
    /// poster, or the task's judge), OpenTaskNotAssignable, DeadlineReached, EnforcedPause.
    /// @param taskId The task.
    /// @param worker The agent.
    function marketplaceAssign(uint256 taskId, address worker) external;

    /// @notice The poster assigns its Funded task directly (the marketplace listing is not informed). Emits
    /// WorkerAssigned. Reverts NotAgent, InvalidStatus, ZeroAddress, SelfAssignment, OpenTaskNotAssignable,
    /// DeadlineReached, EnforcedPause.
    /// @param taskId The task.
    /// @param worker The worker.
    function assignWorker(uint256 taskId, address worker) external;

    /// @notice The worker submits a deliverable's hash on an Assigned task, or resubmits after a failed verdict
    /// (Verified); at most MAX_SUBMISSIONS (3) times, before the effective deadline. Emits EvidenceSubmitted. Reverts
    /// NotWorker, InvalidStatus, EmptyHash, DeadlineReached, MaxSubmissionAttemptsReached, EnforcedPause.
    /// @param taskId The task.
    /// @param evidenceHash The keccak256 of the deliverable (nonzero).
    function submitEvidence(uint256 taskId, bytes32 evidenceHash) external;

    /// @notice The task's judge (its verifier agent if set, else the marketplace verifier; never the worker) gives a
    /// verdict on a Submitted task, with no deadline check. Passed: pays the worker (amount minus fee) and the
    /// treasury, Completed. Failed: Verified, the appeal window opens. Emits VerificationCompleted (and TaskCompleted).
    /// Reverts NotVerifier, InvalidStatus, EnforcedPause.
    /// @param taskId The task.
    /// @param passed The verdict.
    function completeVerification(uint256 taskId, bool passed) external;

    /// @notice Settles a verdict signed by the trusted-execution signer, as completeVerification. Reverts
    /// TEESignerNotSet while no signer is set (the posting chain's configuration), InvalidTEESignature.
    /// @param taskId The task.
    /// @param passed The verdict.
    /// @param payload Must equal teeVerdictPayload(taskId, passed).
    /// @param signature The signer's EIP-191 signature of `payload`.
    function completeVerificationWithTEE(uint256 taskId, bool passed, bytes calldata payload, bytes calldata signature)
        external;

    /// @notice The poster cancels a Funded task nobody took, at any time: full refund, Cancelled. Emits TaskCancelled.
    /// Reverts NotAgent, InvalidStatus, OpenTaskHasSubmissions, EnforcedPause.
    /// @param taskId The task.
    function cancelTask(uint256 taskId) external;

    /// @notice The poster's recourse after the effective deadline: Assigned refunds; Verified refunds once the appeal
    /// window (3 days after the failed verdict, plus paused time) passed; Submitted escalates unjudged work to Disputed
    /// (no refund; UnjudgedWorkEscalated, TaskDisputed); Disputed refunds once DISPUTE_WINDOW passed. Emits
    /// DeadlineExpired on a refund. Reverts NotAgent, InvalidStatus, DeadlineNotReached, AppealWindowActive,
    /// DisputeWindowActive, EscalatedForAdjudication, EnforcedPause.
    /// @param taskId The task.
    function claimTimeout(uint256 taskId) external;

    /// @notice The poster or the worker disputes a Submitted or Verified task before the effective deadline; the
    /// worker may also appeal a failed verdict after the deadline, within the appeal window. Emits TaskDisputed.
    /// Reverts with the string "TaskEscrow: not party to task" (the specification's wording) for anyone else, and
    /// InvalidStatus, DeadlineReached, AppealWindowActive, EnforcedPause.
    /// @param taskId The task.
    function raiseDispute(uint256 taskId) external;

    /// @notice The admin rules on a Disputed task, also while paused: for the worker pays out (Completed), for the
    /// poster refunds (Cancelled). Emits DisputeResolved then TaskCompleted or TaskCancelled. Reverts NotAdmin,
    /// InvalidStatus.
    /// @param taskId The task.
    /// @param workerFavored The ruling.
    function resolveDispute(uint256 taskId, bool workerFavored) external;

    /// @notice The worker's recourse when its judge is silent: a Submitted task still without a verdict
    /// ESCALATION_GRACE (3 days) after the effective deadline is escalated to Disputed, as the poster's claimTimeout
    /// would; releaseUnjudgedWork then pays the worker after DISPUTE_WINDOW unless the admin rules first. Emits
    /// UnjudgedWorkEscalated and TaskDisputed (initiator: the worker). Reverts NotWorker, InvalidStatus,
    /// DeadlineNotReached, EnforcedPause.
    /// @param taskId The task.
    function escalateUnjudgedWork(uint256 taskId) external;

    /// @notice The worker collects escalated, unjudged work once DISPUTE_WINDOW (plus paused time) passed without a
    /// ruling: pays out, Completed. Emits UnjudgedWorkReleased, TaskCompleted. Reverts NotWorker, InvalidStatus,
    /// NotEscalated, DisputeWindowActive, EnforcedPause.
    /// @param taskId The task.
    function releaseUnjudgedWork(uint256 taskId) external;

    /// @notice Submits once to an open-submission task during its Submission phase (not the poster). Emits
    /// OpenSubmission. Reverts NotOpenTask, WrongPhase, SelfAssignment, EmptyHash, AlreadySubmitted, EnforcedPause.
    /// @param taskId The task.
    /// @param evidenceHash The keccak256 of the deliverable.
    function submitOpen(uint256 taskId, bytes32 evidenceHash) external;

    /// @notice The poster pays one submitter of an open-submission task during the Selection phase. Emits
    /// WinnerSelected, TaskCompleted. Reverts NotAgent, NotOpenTask, WrongPhase, NotSubmitter, EnforcedPause.
    /// @param taskId The task.
    /// @param winner A submitter.
    function selectWinner(uint256 taskId, address winner) external;

    /// @notice The poster takes back an open-submission task's reward once it Expired (or when nobody submitted
    /// after the deadline). Emits DeadlineExpired. Reverts NotAgent, NotOpenTask, WrongPhase, EnforcedPause.
    /// @param taskId The task.
    function reclaimOpen(uint256 taskId) external;

    /*//////////////////////////////////////////////////////////////
                             ADMIN FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @notice Sets the platform fee taken on every payout. Emits FeeBpsUpdated. Reverts NotAdmin, FeeExceedsMax.
    /// @param newFeeBps The fee in basis points, at most MAX_FEE_BPS (3000).
    function setFeeBps(uint256 newFeeBps) external;

    /// @notice Sets the fee recipient. Emits TreasuryUpdated. Reverts NotAdmin, ZeroAddress.
    /// @param newTreasury The new treasury.
    function setTreasury(address newTreasury) external;

    /// @notice Sets the marketplace verifier (judge of tasks without a verifier agent, and marketplaceAssign's caller).
    /// Emits VerifierUpdated. Reverts NotAdmin, ZeroAddress.
    /// @param newVerifier The new marketplace verifier.
    function setVerifier(address newVerifier) external;

    /// @notice Allows a reward token (the zero address: the native currency). Emits TokenAllowed. Reverts NotAdmin.
    /// @param token The token.
    function allowToken(address token) external;

    /// @notice Disallows a reward token for new tasks; funded tasks settle as usual. Emits TokenDisallowed. Reverts
    /// NotAdmin.
    /// @param token The token.
    function disallowToken(address token) external;

    /// @notice Sets the reputation hook told of outcomes (zero: none). Emits ReputationContractUpdated. Reverts
    /// NotAdmin, NotAContract.
    /// @param newContract The hook.
    function setReputationContract(address newContract) external;

    /// @notice Sets the task-registry hook told of new tasks (zero: none). Emits TaskRegistryUpdated. Reverts
    /// NotAdmin, NotAContract.
    /// @param newRegistry The hook.
    function setTaskRegistry(address newRegistry) external;

    /// @notice Sets the trusted-execution signer (zero disables completeVerificationWithTEE). Emits TeeSignerUpdated.
    /// Reverts NotAdmin.
    /// @param newSigner The signer.
    function setTeeSigner(address newSigner) external;

    /// @notice Sets the smallest reward of `token` whose outcome the reputation hook rates. Emits
    /// MinRatedAmountUpdated. Reverts NotAdmin.
    /// @param token The token.
    /// @param amount The smallest rated reward.
    function setMinRatedAmount(address token, uint256 amount) external;

    /// @notice Pauses every non-admin state change except resolveDispute; deadlines and windows stop running. Emits
    /// Paused. Reverts NotAdmin, EnforcedPause (already paused).
    function pause() external;

    /// @notice Resumes; the paused time is added to every deadline and window. Emits Unpaused. Reverts NotAdmin,
    /// ExpectedPause.
    function unpause() external;

    /// @notice Moves the running pause's start back to when an incident began (bounded: see InvalidPauseStart). Emits
    /// PauseStartRecorded. Reverts NotAdmin, ExpectedPause, InvalidPauseStart.
    /// @param pauseStart The incident's start (Unix seconds).
    function recordPauseStart(uint256 pauseStart) external;

    /// @notice Proposes a new admin (two-step transfer). Emits AdminTransferProposed. Reverts NotAdmin, ZeroAddress.
    /// @param newAdmin The proposed admin.
    function proposeAdmin(address newAdmin) external;

    /// @notice The proposed admin takes over. Emits AdminTransferCompleted. Reverts NotPendingAdmin.
    function acceptAdmin() external;

    /*//////////////////////////////////////////////////////////////
                             READ FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @notice A task's record.
    /// @param taskId The task.
    /// @return The record (a zero record for an unknown id).
    function getTask(uint256 taskId) external view returns (TaskView memory);

    /// @notice The deadline plus the seconds the escrow spent paused since the task's creation.
    /// @param taskId The task.
    /// @return The effective deadline (Unix seconds).
    function effectiveDeadline(uint256 taskId) external view returns (uint256);

    /// @notice Whether the effective deadline has passed.
    /// @param taskId The task.
    /// @return Whether it passed.
    function isTaskExpired(uint256 taskId) external view returns (bool);

    /// @notice The task's own verifier agent.
    /// @param taskId The task.
    /// @return The verifier agent (zero: the marketplace verifier judges).
    function taskVerifier(uint256 taskId) external view returns (address);

    /// @notice When the latest failed verdict was given (the appeal window runs from it).
    /// @param taskId The task.
    /// @return Unix seconds, zero when none.
    function failedVerdictAt(uint256 taskId) external view returns (uint256);

    /// @notice Whether the task's dispute is an escalation of unjudged work (releaseUnjudgedWork applies).
    /// @param taskId The task.
    /// @return Whether it is escalated.
    function isEscalated(uint256 taskId) external view returns (bool);

    /// @notice Whether the task is an open-submission task.
    /// @param taskId The task.
    /// @return Whether it is open.
    function isOpenTask(uint256 taskId) external view returns (bool);

    /// @notice An open-submission task's phase, derived from time.
    /// @param taskId The task.
    /// @return The phase.
    function openPhase(uint256 taskId) external view returns (Phase);

    /// @notice What `submitter` submitted to an open-submission task.
    /// @param taskId The task.
    /// @param submitter The submitter.
    /// @return The evidence hash (zero: none).
    function openSubmission(uint256 taskId, address submitter) external view returns (bytes32);

    /// @notice How many addresses submitted to an open-submission task.
    /// @param taskId The task.
    /// @return The count.
    function openSubmissionCount(uint256 taskId) external view returns (uint256);

    /// @notice The payload a trusted-execution signer signs for a verdict (binds chain id, escrow, task, attempt).
    /// @param taskId The task.
    /// @param passed The verdict.
    /// @return The payload bytes.
    function teeVerdictPayload(uint256 taskId, bool passed) external view returns (bytes memory);

    /// @notice The id the next funded task will get (ids start at 1).
    /// @return The next id.
    function nextTaskId() external view returns (uint256);

    /// @notice The admin.
    /// @return The admin's address.
    function admin() external view returns (address);

    /// @notice The proposed admin awaiting acceptAdmin.
    /// @return The proposed admin (zero: none).
    function pendingAdmin() external view returns (address);

    /// @notice The fee recipient.
    /// @return The treasury.
    function treasury() external view returns (address);

    /// @notice The marketplace verifier.
    /// @return The marketplace verifier's address.
    function verifier() external view returns (address);

    /// @notice The platform fee.
    /// @return The fee in basis points.
    function feeBps() external view returns (uint256);

    /// @notice Whether new tasks may be funded in `token`.
    /// @param token The token.
    /// @return Whether it is allowed.
    function isTokenAllowed(address token) external view returns (bool);

    /// @notice The reputation hook.
    /// @return The hook (zero: none).
    function reputationContract() external view returns (address);

    /// @notice The task-registry hook.
    /// @return The hook (zero: none).
    function taskRegistry() external view returns (address);

    /// @notice The trusted-execution signer.
    /// @return The signer (zero: the TEE path is disabled).
    function teeSigner() external view returns (address);

    /// @notice The smallest reward of `token` the reputation hook rates.
    /// @param token The token.
    /// @return The smallest rated reward.
    function minRatedAmount(address token) external view returns (uint256);

    /// @notice Seconds the escrow spent paused in finished pauses.
    /// @return The total.
    function totalPausedSeconds() external view returns (uint256);

    /// @notice The start of the running pause.
    /// @return Unix seconds, zero while running.
    function pauseStartedAt() external view returns (uint256);

    /// @notice Seconds the escrow spent paused after `timestamp`, the running pause counted up to now.
    /// @param timestamp Unix seconds.
    /// @return The paused seconds.
    function pausedSecondsSince(uint256 timestamp) external view returns (uint256);

    /// @notice Whether the escrow is paused (every non-admin call but resolveDispute reverts EnforcedPause).
    /// @return Whether it is paused.
    function paused() external view returns (bool);
}
