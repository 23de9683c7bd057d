// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title ITaskEscrow
/// @author The escrow task marketplace
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

    /// @notice Phase of an open-submission task, derived from time (see docs/contracts.md). Reveal was added last so
    /// that the numbers of the others did not change.
    enum Phase {
        Submission, // 0: before the effective deadline, anyone but the poster may commit once, with a bond
        Selection, // 1: after the reveal window, the poster may pick a winner among the revealed submissions
        Expired, // 2: the selection window passed: the earliest revealed submission is paid, else the poster reclaims
        Closed, // 3: settled (paid or refunded)
        Reveal // 4: from the deadline for OPEN_REVEAL_WINDOW, committers reveal their evidence
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
    /// @param initiator Who raised it: the poster or worker (raiseDispute); on an escalation of unjudged work, the poster
    /// (claimTimeout) or the worker (escalateUnjudgedWork); on an open-submission task, the poster or the contesting
    /// submitter (contestOpen), or whoever released a contested default (releaseOpenDefault).
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
    /// @notice Emitted when somebody commits to an open-submission task (its evidence stays hidden until the reveal).
    /// @param taskId The task.
    /// @param submitter The committing address.
    /// @param commitment keccak256(abi.encode(escrow, taskId, submitter, evidenceHash, salt)).
    /// @param bond The bond paid with the commitment, returned on the reveal.
    event OpenSubmissionCommitted(uint256 indexed taskId, address indexed submitter, bytes32 commitment, uint256 bond);
    /// @notice Emitted when a committed submission to an open-submission task is revealed (its bond is returned).
    /// @param taskId The task.
    /// @param submitter The revealing address.
    /// @param evidenceHash The keccak256 of its deliverable.
    event OpenSubmission(uint256 indexed taskId, address indexed submitter, bytes32 evidenceHash);
    /// @notice Emitted when an open-submission task's winner is paid (credited): picked by the poster, ruled by the
    /// judge (OpenJudged precedes), or released by default (OpenDefaultReleased precedes). TaskCompleted follows.
    /// @param taskId The task.
    /// @param winner The paid submitter.
    event WinnerSelected(uint256 indexed taskId, address indexed winner);
    /// @notice Emitted when an open-submission task settles with commitments never revealed: their bonds go to the
    /// poster, or to the paid submitter when the poster let the selection window pass (releaseOpenDefault).
    /// @param taskId The task.
    /// @param recipient Who received the forfeited bonds.
    /// @param amount The forfeited bonds.
    event OpenBondsForfeited(uint256 indexed taskId, address indexed recipient, uint256 amount);
    /// @notice Emitted by releaseOpenDefault when it pays a submission the poster did not pick (WinnerSelected follows).
    /// @param taskId The task.
    /// @param winner The earliest (and only) revealed submitter.
    event OpenDefaultReleased(uint256 indexed taskId, address indexed winner);
    /// @notice Emitted when the poster of an open-submission task with two or more revealed submissions picks one: it
    /// is paid once OPEN_CONTEST_WINDOW passed uncontested (releaseOpenDefault).
    /// @param taskId The task.
    /// @param winner The picked submitter.
    event OpenWinnerProposed(uint256 indexed taskId, address indexed winner);
    /// @notice Emitted when the judge of a disputed open-submission task rules (judgeOpen).
    /// @param taskId The task.
    /// @param winner The submitter paid, or the zero address for a refund to the poster.
    event OpenJudged(uint256 indexed taskId, address indexed winner);
    /// @notice Emitted when a dispute nobody ruled on within DISPUTE_WINDOW is split (claimTimeout, splitUnruled).
    /// @param taskId The task.
    /// @param workerSide The submitter or worker credited the first half.
    /// @param workerPayout What it was credited, less the fee.
    /// @param otherSide The poster (refunded the second half) or the poster's picked submitter (paid it, less the fee).
    /// @param otherAmount What the other side was credited.
    /// @param platformFee The fee sent to the treasury.
    event UnruledSplit(
        uint256 indexed taskId,
        address indexed workerSide,
        uint256 workerPayout,
        address indexed otherSide,
        uint256 otherAmount,
        uint256 platformFee
    );
    /// @notice Emitted when an amount is owed to an account, to be taken with withdraw (pull payment).
    /// @param token The token (the zero address for the native currency).
    /// @param account The account owed.
    /// @param amount The amount added.
    event Credited(address indexed token, address indexed account, uint256 amount);
    /// @notice Emitted when an account takes what it is owed.
    /// @param token The token.
    /// @param account The account that was owed.
    /// @param to The recipient.
    /// @param amount The amount sent.
    event Withdrawn(address indexed token, address indexed account, address to, uint256 amount);
    /// @notice Emitted by releaseSettled for each counted task it releases from the held count.
    /// @param taskId The task.
    /// @param amount Its reward, no longer counted as held.
    event HeldReleased(uint256 indexed taskId, uint256 amount);
    /// @notice Emitted when the admin sweeps tokens the escrow holds beyond what its tasks hold.
    /// @param token The token (the zero address for the native currency).
    /// @param to The recipient.
    /// @param amount The surplus sent.
    event SurplusSwept(address indexed token, address indexed to, uint256 amount);
    /// @notice Emitted when the admin's bookkeeping of held rewards advances (reconcileHeld).
    /// @param reconciledBelow Every task below this id is settled or counted as held.
    event HeldReconciled(uint256 reconciledBelow);

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
    /// @notice Thrown when an address commits twice to an open-submission task, or reveals twice.
    error AlreadySubmitted();
    /// @notice Thrown when the chosen winner revealed no submission, or a revealing address made no commitment.
    error NotSubmitter();
    /// @notice Thrown when a reveal's evidence and salt do not hash to the caller's commitment.
    error CommitmentMismatch();
    /// @notice Thrown when releasing an open-submission task's default payout while no submission was revealed.
    error NoRevealedSubmission();
    /// @notice Thrown when a sweep finds no tokens beyond what the tasks hold.
    error NoSurplus();
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
    /// @notice Thrown when cancelling an open-submission task that has commitments, or reclaiming one whose submissions
    /// were revealed (one of them is paid).
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
    /// @notice A single-worker function (resolveDispute, claimTimeout of a dispute) called on an open-submission task.
    error OpenTask();
    /// @notice releaseOpenDefault before OPEN_CONTEST_WINDOW passed after the poster's pick, or contestOpen after it.
    error ContestWindow();
    /// @notice withdraw with nothing owed.
    error NothingOwed();

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

    /// @notice Funds an open-submission task: anyone but the poster may commit once before the deadline (with a bond),
    /// reveal within OPEN_REVEAL_WINDOW, then the poster picks a winner within OPEN_SELECTION_WINDOW, failing which the
    /// earliest revealed submission is paid (see docs/contracts.md). Emits TaskCreated, OpenTaskCreated. Reverts as
    /// createTask.
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
    /// verdict on a Submitted task, with no deadline check. When setVerifier made the marketplace verifier the worker of
    /// a task in flight, the admin judges that task instead. Passed: pays the worker (amount minus fee) and the
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

    /// @notice Commits once to an open-submission task during its Submission phase (not the poster), paying the bond
    /// (OPEN_BOND_BPS of the reward, at least 1 unit; approve it, or send it as value for a native task). The
    /// commitment binds the evidence to the caller: keccak256(abi.encode(escrow, taskId, caller, evidenceHash, salt)).
    /// Emits OpenSubmissionCommitted. Reverts NotOpenTask, WrongPhase, SelfAssignment, EmptyHash, AlreadySubmitted,
    /// NativeValueMismatch, TransferAmountMismatch, EnforcedPause.
    /// @param taskId The task.
    /// @param commitment The commitment (nonzero).
    function commitOpen(uint256 taskId, bytes32 commitment) external payable;

    /// @notice Reveals the caller's commitment during the Reveal phase: its evidence becomes a submission the poster may
    /// pick, the bond is returned, and the first reveal becomes the default winner. Emits OpenSubmission. Reverts
    /// NotOpenTask, WrongPhase, NotSubmitter (no commitment), AlreadySubmitted, EmptyHash, CommitmentMismatch,
    /// EnforcedPause.
    /// @param taskId The task.
    /// @param evidenceHash The keccak256 of the deliverable.
    /// @param salt The secret salt of the commitment.
    function revealOpen(uint256 taskId, bytes32 evidenceHash, bytes32 salt) external;

    /// @notice The poster picks one revealed submission of an open-submission task during the Selection phase. With one
    /// revealed submission (or plain submissions made before the commit-reveal design) the pick is paid at once; with
    /// two or more it is proposed (OpenWinnerProposed) and paid by releaseOpenDefault once OPEN_CONTEST_WINDOW passed,
    /// unless another revealed submitter disputes it (contestOpen). Payments are credited (withdraw); the bonds of
    /// unrevealed commitments are credited to the poster. Emits WinnerSelected, (OpenBondsForfeited,) TaskCompleted, or
    /// OpenWinnerProposed. Reverts NotAgent, NotOpenTask, InvalidStatus, WrongPhase, AlreadySubmitted (a second pick),
    /// NotSubmitter, EnforcedPause.
    /// @param taskId The task.
    /// @param winner A submitter who revealed.
    function selectWinner(uint256 taskId, address winner) external;

    /// @notice Anyone ends an open-submission task the poster did not settle: pays the poster's uncontested pick once
    /// OPEN_CONTEST_WINDOW passed; else, once Expired, pays the only revealed submission (OpenDefaultReleased, its
    /// poster had contestOpen to refuse it), or sends two or more revealed submissions to the judge (TaskDisputed).
    /// The bonds of unrevealed commitments are credited to the paid submitter when the poster picked nobody. Reverts
    /// NotOpenTask, InvalidStatus, WrongPhase, ContestWindow, NoRevealedSubmission, EnforcedPause.
    /// @param taskId The task.
    function releaseOpenDefault(uint256 taskId) external;

    /// @notice The poster takes back an open-submission task's reward when no submission was revealed: from the
    /// deadline when nobody committed, from the Selection phase when commitments were not revealed (their bonds are
    /// credited to the poster). Pre-commit-reveal tasks holding plain submissions reclaim once Expired. Emits
    /// (OpenBondsForfeited,) DeadlineExpired. Reverts NotAgent, NotOpenTask, WrongPhase, OpenTaskHasSubmissions,
    /// EnforcedPause.
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
    /// A task in flight whose worker is the new verifier is judged by the admin. Emits VerifierUpdated. Reverts
    /// NotAdmin, ZeroAddress.
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

    /// @notice Advances the bookkeeping of held rewards over at most `maxTasks` tasks from where it stopped: each unsettled
    /// task is counted as held until releaseSettled releases it. Bounds the scan sweepSurplus makes. Emits
    /// HeldReconciled. Reverts NotAdmin.
    /// @param maxTasks The most tasks to scan.
    /// @return reconciledBelow Every task below this id is now settled or counted.
    function reconcileHeld(uint256 maxTasks) external returns (uint256 reconciledBelow);

    /// @notice Releases from the held count the listed tasks that were counted by reconcileHeld and have settled since;
    /// other ids are skipped. Reverts NotAdmin.
    /// @param taskIds The tasks.
    function releaseSettled(uint256[] calldata taskIds) external;

    /// @notice Sends the caller what it is owed in `token` (winners, bonds, splits are credited, never pushed) to `to`,
    /// which may be another address when the caller cannot receive. Not pause-gated. Emits Withdrawn. Reverts
    /// ZeroAddress, NothingOwed.
    /// @param token The token (the zero address for the native currency).
    /// @param to The recipient.
    /// @return amount The amount sent.
    function withdraw(address token, address to) external returns (uint256 amount);

    /// @notice What `account` is owed in `token` (see withdraw).
    /// @param token The token.
    /// @param account The account.
    /// @return The amount.
    function creditOf(address token, address account) external view returns (uint256);

    /// @notice Sends a revealed open-submission task to its judge (the marketplace verifier, or the admin): by the
    /// poster during the selection window when it picked nobody (a worthless entry), or by a revealed submitter other
    /// than the poster's pick within OPEN_CONTEST_WINDOW of the pick. Emits TaskDisputed. Reverts NotOpenTask,
    /// InvalidStatus, WrongPhase, NoRevealedSubmission, NotSubmitter, ContestWindow, EnforcedPause.
    /// @param taskId The task.
    function contestOpen(uint256 taskId) external;

    /// @notice The judge's (or the admin's) ruling on a disputed open-submission task: pays a revealed submitter, or
    /// refunds the poster when `winner` is zero. Emits OpenJudged, then WinnerSelected and TaskCompleted, or
    /// TaskCancelled. Reverts NotOpenTask, InvalidStatus, NotVerifier, NotSubmitter, EnforcedPause.
    /// @param taskId The task.
    /// @param winner A revealed submitter, or zero.
    function judgeOpen(uint256 taskId, address winner) external;

    /// @notice Ends a dispute nobody ruled on within DISPUTE_WINDOW (not an escalation of unjudged work, which pays
    /// the worker): half the reward to each side, the fee on what a worker side gets. Anyone may call. Emits
    /// UnruledSplit. Reverts InvalidStatus, EscalatedForAdjudication, DisputeWindowActive, EnforcedPause.
    /// @param taskId The task.
    function splitUnruled(uint256 taskId) external;

    /// @notice The poster's pick of an open-submission task with several revealed submissions, when it was made, and
    /// the submitter of a dispute (the one its silent judge's split credits).
    /// @param taskId The task.
    /// @return chosen The picked submitter, or zero.
    /// @return chosenAt When it was picked.
    /// @return challenger The submitter side of a dispute, or zero.
    function openVerdictState(uint256 taskId) external view returns (address chosen, uint256 chosenAt, address challenger);

    /// @notice Sends `to` what the escrow holds in `token` beyond the unsettled rewards and bonds of its tasks (tokens
    /// sent to it directly). Never a task's funds: counted tasks whose release is pending still count. Emits
    /// SurplusSwept. Reverts NotAdmin, ZeroAddress, NoSurplus.
    /// @param token The token (the zero address for the native currency).
    /// @param to The recipient.
    /// @return amount The surplus sent.
    function sweepSurplus(address token, address to) external returns (uint256 amount);

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

    /// @notice What `submitter` revealed to (pre-commit-reveal tasks: submitted to) an open-submission task.
    /// @param taskId The task.
    /// @param submitter The submitter.
    /// @return The evidence hash (zero: none).
    function openSubmission(uint256 taskId, address submitter) external view returns (bytes32);

    /// @notice How many addresses committed to an open-submission task (pre-commit-reveal tasks: submitted).
    /// @param taskId The task.
    /// @return The count.
    function openSubmissionCount(uint256 taskId) external view returns (uint256);

    /// @notice The commitment `submitter` made to an open-submission task.
    /// @param taskId The task.
    /// @param submitter The committer.
    /// @return The commitment (zero: none).
    function openCommitment(uint256 taskId, address submitter) external view returns (bytes32);

    /// @notice The commit-reveal state of an open-submission task.
    /// @param taskId The task.
    /// @return earliestRevealer The first address that revealed (the default winner; zero: none).
    /// @return commitCount The commitments made.
    /// @return revealCount The commitments revealed.
    /// @return bond The bond of one commitment.
    function openState(uint256 taskId)
        external
        view
        returns (address earliestRevealer, uint256 commitCount, uint256 revealCount, uint256 bond);

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

    /// @notice Seconds the escrow spent paused, the running pause included.
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
