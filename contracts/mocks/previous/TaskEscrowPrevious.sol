// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Initializable} from "@openzeppelin/contracts-upgradeable/proxy/utils/Initializable.sol";
import {UUPSUpgradeable} from "@openzeppelin/contracts-upgradeable/proxy/utils/UUPSUpgradeable.sol";
import {ReentrancyGuardTransientUpgradeable} from
    "@openzeppelin/contracts-upgradeable/utils/ReentrancyGuardTransientUpgradeable.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";

import {ITaskEscrowPrevious} from "./ITaskEscrowPrevious.sol";
import {IWorkerReputation, ITaskRegistry} from "../../interfaces/ITaskOutcomeHooks.sol";

/// @title TaskEscrowPrevious
/// @notice Test-only copy of the escrow implementation as deployed at commit 04d4f47 (before commit-reveal
/// submissions), renamed. The upgrade tests deploy it behind a proxy, fill it with tasks in every state and upgrade
/// it to the current TaskEscrow, which must keep every task intact. Never deploy it elsewhere.
contract TaskEscrowPrevious is ITaskEscrowPrevious, Initializable, UUPSUpgradeable, ReentrancyGuardTransientUpgradeable {
    using SafeERC20 for IERC20;

    /*//////////////////////////////////////////////////////////////
                               CONSTANTS
    //////////////////////////////////////////////////////////////*/

    /// @notice Largest fee the admin can set: 30%.
    uint256 public constant MAX_FEE_BPS = 3000;
    uint256 public constant BPS_DENOMINATOR = 10_000;
    /// @notice Shortest and longest task duration.
    uint256 public constant MIN_DURATION = 1 hours;
    uint256 public constant MAX_DURATION = 90 days;
    /// @notice Submissions a worker may make on one task.
    uint8 public constant MAX_SUBMISSIONS = 3;
    /// @notice Time after a failed verdict during which the worker may still appeal; the poster's refund waits for it.
    uint256 public constant APPEAL_WINDOW = 3 days;
    /// @notice Time after a dispute or escalation before a timeout refund (or, for escalations, a release).
    uint256 public constant DISPUTE_WINDOW = 14 days;
    /// @notice Time after an open-submission task's deadline during which the poster picks a winner.
    uint256 public constant OPEN_SELECTION_WINDOW = 3 days;
    /// @notice How far before the pause transaction `recordPauseStart` may move the start of a pause.
    uint256 public constant MAX_PAUSE_BACKDATE = 1 days;
    /// @notice How long after the effective deadline a worker whose submission nobody judged may escalate it.
    uint256 public constant ESCALATION_GRACE = 3 days;
    /// @notice Largest `createTasks` batch.
    uint256 public constant MAX_BATCH = 50;
    /// @notice Gas forwarded to a reputation contract or task registry; a hook cannot starve settlement.
    uint256 public constant HOOK_GAS_LIMIT = 150_000;
    /// @dev Gas kept for the call itself and what follows it.
    uint256 private constant HOOK_GAS_RESERVE = 10_000;
    /// @notice Domain tag of the TEE verdict payload.
    bytes32 public constant TEE_VERDICT_TYPEHASH = keccak256("TaskEscrow.TEEVerdict.v1");

    /*//////////////////////////////////////////////////////////////
                                STORAGE
    //////////////////////////////////////////////////////////////*/

    /// @dev A task, packed so that creation writes four fresh slots (poster/times/status, token/amount, hash, labels).
    struct Task {
        // slot 0: written at creation, read by every operation
        address poster;
        uint40 createdAt;
        uint40 deadline;
        Status status;
        uint8 submissionAttempts;
        // slot 1: written at creation; amounts above 2^96 - 1 revert AmountTooLarge
        address token;
        uint96 amount;
        // slot 2: written from assignment on (and at creation of an open-submission task)
        address worker;
        uint40 disputedAt;
        uint40 failedVerdictAt;
        bool escalated;
        bool open;
        // slot 3
        bytes32 taskHash;
        // slot 4
        bytes32 evidenceHash;
        // slot 5: written only when a task names its verifier or is an open-submission task
        address verifierAgent;
        uint32 openSubmissionCount;
        // slot 6+: category and location zone as one length-prefixed byte string (one slot when both are short)
        bytes labels;
    }

    /// @dev One pause of the escrow. `end` is 0 while the pause is running; `pausedAt` is when pause() ran, the latest
    /// start recordPauseStart may record.
    struct PauseInterval {
        uint40 start;
        uint40 end;
        uint40 pausedAt;
    }

    /// @custom:storage-location erc7201:marketplace.storage.TaskEscrow
    struct EscrowStorage {
        // slot 0: read by every state-changing call (the pause gate)
        uint48 nextTaskId;
        address taskRegistry;
        bool paused;
        uint40 lastPauseEnd; // lets deadline checks skip the pause history when no pause overlaps a task
        // slot 1: read by every payout
        address treasury;
        uint16 feeBps;
        bool hasReputationContract; // lets settlement skip the reputation hook's slot when none is set
        // slot 2
        address verifier;
        // slot 3
        address admin;
        // slot 4
        address pendingAdmin;
        // slot 5
        address reputationContract;
        // slot 6
        address teeSigner;
        // slot 7
        uint256 totalPausedSeconds;
        PauseInterval[] pauses;
        mapping(address token => bool allowed) allowedTokens;
        mapping(address token => uint256 amount) minRatedAmount;
        mapping(uint256 taskId => Task) tasks;
        mapping(uint256 taskId => mapping(address submitter => bytes32 evidenceHash)) openSubmissions;
    }

    // keccak256(abi.encode(uint256(keccak256("marketplace.storage.TaskEscrow")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant ESCROW_STORAGE_LOCATION = 0x85427c6a95a65b7f061f7d28e950b0fc8007b8fa7891146463529a609c299a00;

    function _getEscrowStorage() private pure returns (EscrowStorage storage $) {
        assembly {
            $.slot := ESCROW_STORAGE_LOCATION
        }
    }

    /*//////////////////////////////////////////////////////////////
                               MODIFIERS
    //////////////////////////////////////////////////////////////*/

    modifier onlyAdmin() {
        if (msg.sender != _getEscrowStorage().admin) revert NotAdmin();
        _;
    }

    modifier whenNotPaused() {
        if (_getEscrowStorage().paused) revert EnforcedPause();
        _;
    }

    /*//////////////////////////////////////////////////////////////
                              CONSTRUCTOR
    //////////////////////////////////////////////////////////////*/

    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor() {
        _disableInitializers();
    }

    /// @notice Sets the admin, treasury, marketplace verifier, fee and initial token allowlist. Task ids start at 1.
    function initialize(
        address initialAdmin,
        address initialTreasury,
        address initialVerifier,
        uint256 initialFeeBps,
        address[] calldata initialTokens
    ) external initializer {
        // Check: the roles are set.
        if (initialAdmin == address(0) || initialTreasury == address(0) || initialVerifier == address(0)) {
            revert ZeroAddress();
        }
        // Check: the fee is under the cap.
        if (initialFeeBps > MAX_FEE_BPS) revert FeeExceedsMax();

        __ReentrancyGuardTransient_init();
        EscrowStorage storage $ = _getEscrowStorage();
        $.nextTaskId = 1;
        $.admin = initialAdmin;
        emit AdminTransferCompleted(address(0), initialAdmin);
        $.treasury = initialTreasury;
        emit TreasuryUpdated(address(0), initialTreasury);
        $.verifier = initialVerifier;
        emit VerifierUpdated(address(0), initialVerifier);
        $.feeBps = uint16(initialFeeBps);
        emit FeeBpsUpdated(0, initialFeeBps);
        for (uint256 i = 0; i < initialTokens.length; ++i) {
            $.allowedTokens[initialTokens[i]] = true;
            emit TokenAllowed(initialTokens[i]);
        }
    }

    /*//////////////////////////////////////////////////////////////
                      EXTERNAL STATE-CHANGING: POSTING
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc ITaskEscrowPrevious
    function createTask(
        bytes32 taskHash,
        address token,
        uint256 amount,
        string calldata category,
        string calldata locationZone,
        uint256 duration
    ) external payable nonReentrant whenNotPaused returns (uint256 taskId) {
        taskId = _createTask(NewTask(taskHash, amount, category, locationZone, duration, address(0)), token, false);
        _pull(token, amount, msg.value);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function createTaskWithVerifier(
        bytes32 taskHash,
        address token,
        uint256 amount,
        string calldata category,
        string calldata locationZone,
        uint256 duration,
        address verifierAgent
    ) external payable nonReentrant whenNotPaused returns (uint256 taskId) {
        taskId = _createTask(NewTask(taskHash, amount, category, locationZone, duration, verifierAgent), token, false);
        _pull(token, amount, msg.value);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function createTasks(address token, NewTask[] calldata tasks)
        external
        payable
        nonReentrant
        whenNotPaused
        returns (uint256 firstTaskId)
    {
        // Check: the batch has 1 to MAX_BATCH tasks.
        uint256 count = tasks.length;
        if (count == 0) revert EmptyBatch();
        if (count > MAX_BATCH) revert BatchTooLarge(count, MAX_BATCH);

        firstTaskId = _getEscrowStorage().nextTaskId;
        uint256 total;
        for (uint256 i = 0; i < count; ++i) {
            _createTask(tasks[i], token, false);
            // Each amount fits 96 bits (checked in _createTask) and there are at most 50: no overflow.
            unchecked {
                total += tasks[i].amount;
            }
        }
        _pull(token, total, msg.value);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function createTaskOpen(
        bytes32 taskHash,
        address token,
        uint256 amount,
        string calldata category,
        string calldata locationZone,
        uint256 duration
    ) external payable nonReentrant whenNotPaused returns (uint256 taskId) {
        taskId = _createTask(NewTask(taskHash, amount, category, locationZone, duration, address(0)), token, true);
        _pull(token, amount, msg.value);
        emit OpenTaskCreated(taskId);
    }

    /*//////////////////////////////////////////////////////////////
                     EXTERNAL STATE-CHANGING: LIFECYCLE
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc ITaskEscrowPrevious
    function marketplaceAssign(uint256 taskId, address worker) external nonReentrant whenNotPaused {
        // Check: the caller is the marketplace verifier.
        if (msg.sender != _getEscrowStorage().verifier) revert NotVerifier();
        _assign(taskId, worker);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function assignWorker(uint256 taskId, address worker) external nonReentrant whenNotPaused {
        // Check: the caller is the poster.
        if (msg.sender != _task(taskId).poster) revert NotAgent();
        _assign(taskId, worker);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function submitEvidence(uint256 taskId, bytes32 evidenceHash) external nonReentrant whenNotPaused {
        Task storage t = _task(taskId);
        // Check: the caller is the worker.
        if (msg.sender != t.worker) revert NotWorker();
        // Check: the task awaits work (assigned, or a failed verdict to answer).
        Status status = t.status;
        if (status != Status.Assigned && status != Status.Verified) revert InvalidStatus(status, Status.Assigned);
        // Check: the evidence is not empty.
        if (evidenceHash == bytes32(0)) revert EmptyHash();
        // Check: the effective deadline is not reached.
        if (block.timestamp >= _effectiveDeadline(t)) revert DeadlineReached();
        // Check: fewer than MAX_SUBMISSIONS so far.
        uint8 attempt = t.submissionAttempts;
        if (attempt >= MAX_SUBMISSIONS) revert MaxSubmissionAttemptsReached();

        // Effects. attempt < MAX_SUBMISSIONS, so the increment cannot overflow.
        unchecked {
            ++attempt;
        }
        t.submissionAttempts = attempt;
        t.status = Status.Submitted;
        t.evidenceHash = evidenceHash;
        emit EvidenceSubmitted(taskId, msg.sender, evidenceHash, attempt);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function completeVerification(uint256 taskId, bool passed) external nonReentrant whenNotPaused {
        Task storage t = _task(taskId);
        _checkJudge(t);
        _settleVerdict(taskId, t, passed);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function completeVerificationWithTEE(uint256 taskId, bool passed, bytes calldata payload, bytes calldata signature)
        external
        nonReentrant
        whenNotPaused
    {
        // Check: the TEE path is enabled.
        address signer = _getEscrowStorage().teeSigner;
        if (signer == address(0)) revert TEESignerNotSet();
        Task storage t = _task(taskId);
        _checkJudge(t);
        // Check: the payload is this verdict on this round of this task, and the signer signed it.
        if (t.status != Status.Submitted) revert InvalidStatus(t.status, Status.Submitted);
        if (keccak256(payload) != keccak256(_teeVerdictPayload(taskId, t, passed))) revert InvalidTEESignature();
        (address recovered, ECDSA.RecoverError err,) =
            ECDSA.tryRecover(MessageHashUtils.toEthSignedMessageHash(payload), signature);
        if (err != ECDSA.RecoverError.NoError || recovered != signer) revert InvalidTEESignature();

        _settleVerdict(taskId, t, passed);
        emit TEESettled(taskId, passed, signer);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function cancelTask(uint256 taskId) external nonReentrant whenNotPaused {
        Task storage t = _task(taskId);
        // Check: the caller is the poster.
        if (msg.sender != t.poster) revert NotAgent();
        // Check: nobody took the task.
        if (t.status != Status.Funded) revert InvalidStatus(t.status, Status.Funded);
        // Check: an open-submission task has no submissions to honour.
        if (t.openSubmissionCount != 0) revert OpenTaskHasSubmissions();

        uint256 refund = _refund(taskId, t, false); // Funded: nobody worked
        emit TaskCancelled(taskId, refund);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function claimTimeout(uint256 taskId) external nonReentrant whenNotPaused {
        Task storage t = _task(taskId);
        // Check: the caller is the poster.
        if (msg.sender != t.poster) revert NotAgent();
        // Check: the task was taken and is not settled.
        Status status = t.status;
        if (status == Status.Funded || status == Status.Completed || status == Status.Cancelled) {
            revert InvalidStatus(status, Status.Assigned);
        }
        // Check: the effective deadline is reached.
        if (block.timestamp < _effectiveDeadline(t)) revert DeadlineNotReached();

        if (status == Status.Submitted) {
            // Delivered work nobody judged is escalated, never refunded by timeout.
            _escalate(taskId, t);
            return;
        }
        if (status == Status.Verified) {
            // Check: the worker's appeal window after the failed verdict has passed.
            if (!_windowPassed(t.failedVerdictAt, APPEAL_WINDOW)) revert AppealWindowActive();
        } else if (status == Status.Disputed) {
            // Check: escalated work goes to the worker, not back by timeout.
            if (t.escalated) revert EscalatedForAdjudication();
            // Check: the dispute window has passed without a ruling.
            if (!_windowPassed(t.disputedAt, DISPUTE_WINDOW)) revert DisputeWindowActive();
        }
        // A failure is rated only for a worker who delivered and was judged failing (Verified); an assignment that
        // lapsed undelivered, or a dispute that lapsed without a ruling, rates nobody (docs/contracts.md "Reputation").
        uint256 refund = _refund(taskId, t, status == Status.Verified);
        emit DeadlineExpired(taskId, refund);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function raiseDispute(uint256 taskId) external nonReentrant whenNotPaused {
        Task storage t = _task(taskId);
        // Check: the caller is a party to the task. The specification mandates this exact string revert (its only one):
        // clients match the text, so it stays a string rather than a custom error.
        require(msg.sender == t.poster || msg.sender == t.worker, "TaskEscrow: not party to task");
        // Check: there is work to dispute.
        Status status = t.status;
        if (status != Status.Submitted && status != Status.Verified) revert InvalidStatus(status, Status.Submitted);
        // Check: before the deadline, or the worker appealing a failed verdict within the appeal window.
        if (block.timestamp >= _effectiveDeadline(t)) {
            bool appeal = status == Status.Verified && msg.sender == t.worker
                && !_windowPassed(t.failedVerdictAt, APPEAL_WINDOW);
            if (!appeal) revert DeadlineReached();
        }

        t.status = Status.Disputed;
        t.disputedAt = uint40(block.timestamp);
        emit TaskDisputed(taskId, msg.sender);
    }

    /// @inheritdoc ITaskEscrowPrevious
    /// @dev Not pause-gated: the admin can rule while the escrow is paused.
    function resolveDispute(uint256 taskId, bool workerFavored) external onlyAdmin nonReentrant {
        Task storage t = _task(taskId);
        // Check: the task is disputed.
        if (t.status != Status.Disputed) revert InvalidStatus(t.status, Status.Disputed);

        emit DisputeResolved(taskId, workerFavored);
        if (workerFavored) {
            _payout(taskId, t);
        } else {
            uint256 refund = _refund(taskId, t, true); // a ruling against delivered work
            emit TaskCancelled(taskId, refund);
        }
    }

    /// @inheritdoc ITaskEscrowPrevious
    function escalateUnjudgedWork(uint256 taskId) external nonReentrant whenNotPaused {
        Task storage t = _task(taskId);
        // Check: the caller is the worker.
        if (msg.sender != t.worker) revert NotWorker();
        // Check: its submission still awaits a verdict.
        if (t.status != Status.Submitted) revert InvalidStatus(t.status, Status.Submitted);
        // Check: the judge stayed silent past the effective deadline plus the grace.
        if (block.timestamp < _effectiveDeadline(t) + ESCALATION_GRACE) revert DeadlineNotReached();
        _escalate(taskId, t);
    }

    /// @dev Escalates a Submitted task nobody judged: Disputed, escalated; releaseUnjudgedWork pays the worker after
    /// DISPUTE_WINDOW unless the admin rules first. `msg.sender` is the initiator (the poster's claimTimeout, or the
    /// worker's escalateUnjudgedWork).
    function _escalate(uint256 taskId, Task storage t) private {
        t.status = Status.Disputed;
        t.disputedAt = uint40(block.timestamp);
        t.escalated = true;
        emit UnjudgedWorkEscalated(taskId);
        emit TaskDisputed(taskId, msg.sender);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function releaseUnjudgedWork(uint256 taskId) external nonReentrant whenNotPaused {
        Task storage t = _task(taskId);
        // Check: the caller is the worker.
        if (msg.sender != t.worker) revert NotWorker();
        // Check: the task is disputed, by escalation, and the dispute window passed without a ruling.
        if (t.status != Status.Disputed) revert InvalidStatus(t.status, Status.Disputed);
        if (!t.escalated) revert NotEscalated();
        if (!_windowPassed(t.disputedAt, DISPUTE_WINDOW)) revert DisputeWindowActive();

        (uint256 workerPayout, uint256 fee) = _computePayout(t);
        emit UnjudgedWorkReleased(taskId, workerPayout, fee);
        _payout(taskId, t);
    }

    /*//////////////////////////////////////////////////////////////
                   EXTERNAL STATE-CHANGING: OPEN SUBMISSION
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc ITaskEscrowPrevious
    function submitOpen(uint256 taskId, bytes32 evidenceHash) external nonReentrant whenNotPaused {
        Task storage t = _task(taskId);
        // Check: an open-submission task in its submission phase.
        if (!t.open) revert NotOpenTask();
        Phase phase = _openPhase(t);
        if (phase != Phase.Submission) revert WrongPhase(phase, Phase.Submission);
        // Check: the poster cannot compete for its own reward.
        if (msg.sender == t.poster) revert SelfAssignment();
        if (evidenceHash == bytes32(0)) revert EmptyHash();
        // Check: one submission per address.
        EscrowStorage storage $ = _getEscrowStorage();
        if ($.openSubmissions[taskId][msg.sender] != bytes32(0)) revert AlreadySubmitted();

        $.openSubmissions[taskId][msg.sender] = evidenceHash;
        // 2^32 submissions would cost far more gas than exists in any block range: no overflow.
        unchecked {
            ++t.openSubmissionCount;
        }
        emit OpenSubmission(taskId, msg.sender, evidenceHash);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function selectWinner(uint256 taskId, address winner) external nonReentrant whenNotPaused {
        Task storage t = _task(taskId);
        // Check: the caller is the poster of an open-submission task in its selection phase.
        if (msg.sender != t.poster) revert NotAgent();
        if (!t.open) revert NotOpenTask();
        Phase phase = _openPhase(t);
        if (phase != Phase.Selection) revert WrongPhase(phase, Phase.Selection);
        // Check: the winner submitted.
        bytes32 evidence = _getEscrowStorage().openSubmissions[taskId][winner];
        if (evidence == bytes32(0)) revert NotSubmitter();

        t.worker = winner;
        t.evidenceHash = evidence;
        emit WinnerSelected(taskId, winner);
        _payout(taskId, t);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function reclaimOpen(uint256 taskId) external nonReentrant whenNotPaused {
        Task storage t = _task(taskId);
        // Check: the caller is the poster of an open-submission task.
        if (msg.sender != t.poster) revert NotAgent();
        if (!t.open) revert NotOpenTask();
        // Check: the selection window passed, or the deadline passed with nobody to choose.
        Phase phase = _openPhase(t);
        bool nobodySubmitted = phase == Phase.Selection && t.openSubmissionCount == 0;
        if (phase != Phase.Expired && !nobodySubmitted) revert WrongPhase(phase, Phase.Expired);

        uint256 refund = _refund(taskId, t, false); // open task: no worker
        emit DeadlineExpired(taskId, refund);
    }

    /*//////////////////////////////////////////////////////////////
                     EXTERNAL STATE-CHANGING: ADMIN
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc ITaskEscrowPrevious
    function setFeeBps(uint256 newFeeBps) external onlyAdmin {
        if (newFeeBps > MAX_FEE_BPS) revert FeeExceedsMax();
        EscrowStorage storage $ = _getEscrowStorage();
        emit FeeBpsUpdated($.feeBps, newFeeBps);
        $.feeBps = uint16(newFeeBps);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function setTreasury(address newTreasury) external onlyAdmin {
        if (newTreasury == address(0)) revert ZeroAddress();
        EscrowStorage storage $ = _getEscrowStorage();
        emit TreasuryUpdated($.treasury, newTreasury);
        $.treasury = newTreasury;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function setVerifier(address newVerifier) external onlyAdmin {
        if (newVerifier == address(0)) revert ZeroAddress();
        EscrowStorage storage $ = _getEscrowStorage();
        emit VerifierUpdated($.verifier, newVerifier);
        $.verifier = newVerifier;
    }

    /// @inheritdoc ITaskEscrowPrevious
    /// @dev The zero address stands for the chain's native currency.
    function allowToken(address token) external onlyAdmin {
        _getEscrowStorage().allowedTokens[token] = true;
        emit TokenAllowed(token);
    }

    /// @inheritdoc ITaskEscrowPrevious
    /// @dev Existing tasks in the token settle as usual; only new funding is refused.
    function disallowToken(address token) external onlyAdmin {
        _getEscrowStorage().allowedTokens[token] = false;
        emit TokenDisallowed(token);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function setReputationContract(address newContract) external onlyAdmin {
        _checkHook(newContract);
        EscrowStorage storage $ = _getEscrowStorage();
        emit ReputationContractUpdated($.reputationContract, newContract);
        $.reputationContract = newContract;
        $.hasReputationContract = newContract != address(0);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function setTaskRegistry(address newRegistry) external onlyAdmin {
        _checkHook(newRegistry);
        EscrowStorage storage $ = _getEscrowStorage();
        emit TaskRegistryUpdated($.taskRegistry, newRegistry);
        $.taskRegistry = newRegistry;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function setTeeSigner(address newSigner) external onlyAdmin {
        EscrowStorage storage $ = _getEscrowStorage();
        emit TeeSignerUpdated($.teeSigner, newSigner);
        $.teeSigner = newSigner;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function setMinRatedAmount(address token, uint256 amount) external onlyAdmin {
        _getEscrowStorage().minRatedAmount[token] = amount;
        emit MinRatedAmountUpdated(token, amount);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function pause() external onlyAdmin {
        EscrowStorage storage $ = _getEscrowStorage();
        if ($.paused) revert EnforcedPause();
        $.paused = true;
        $.pauses.push(PauseInterval({start: uint40(block.timestamp), end: 0, pausedAt: uint40(block.timestamp)}));
        emit Paused(msg.sender);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function unpause() external onlyAdmin {
        EscrowStorage storage $ = _getEscrowStorage();
        if (!$.paused) revert ExpectedPause();
        PauseInterval storage running = $.pauses[$.pauses.length - 1];
        running.end = uint40(block.timestamp);
        $.totalPausedSeconds += block.timestamp - running.start;
        $.paused = false;
        $.lastPauseEnd = uint40(block.timestamp);
        emit Unpaused(msg.sender);
    }

    /// @inheritdoc ITaskEscrowPrevious
    /// @dev Moves the start of the running pause back, for an incident that began before the pause transaction landed.
    /// The start may not be after the pause transaction, nor before the end of the previous pause (pauses never
    /// overlap), nor more than MAX_PAUSE_BACKDATE before the pause transaction; it may be moved again within those
    /// bounds.
    function recordPauseStart(uint256 pauseStart) external onlyAdmin {
        EscrowStorage storage $ = _getEscrowStorage();
        if (!$.paused) revert ExpectedPause();
        uint256 count = $.pauses.length;
        PauseInterval storage running = $.pauses[count - 1];
        uint256 previousEnd = count > 1 ? $.pauses[count - 2].end : 0;
        // Check: the start is no later than the pause transaction, no earlier than the previous pause's end, and at most
        // MAX_PAUSE_BACKDATE before the pause transaction (one slip such as recordPauseStart(1) cannot restart every
        // deadline).
        if (
            pauseStart == 0 || pauseStart > running.pausedAt || pauseStart < previousEnd
                || pauseStart + MAX_PAUSE_BACKDATE < running.pausedAt
        ) revert InvalidPauseStart();
        running.start = uint40(pauseStart);
        emit PauseStartRecorded(pauseStart);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function proposeAdmin(address newAdmin) external onlyAdmin {
        if (newAdmin == address(0)) revert ZeroAddress();
        EscrowStorage storage $ = _getEscrowStorage();
        $.pendingAdmin = newAdmin;
        emit AdminTransferProposed($.admin, newAdmin);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function acceptAdmin() external {
        EscrowStorage storage $ = _getEscrowStorage();
        if (msg.sender != $.pendingAdmin) revert NotPendingAdmin();
        emit AdminTransferCompleted($.admin, msg.sender);
        $.admin = msg.sender;
        $.pendingAdmin = address(0);
    }

    /*//////////////////////////////////////////////////////////////
                          EXTERNAL READ-ONLY
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc ITaskEscrowPrevious
    function getTask(uint256 taskId) external view returns (TaskView memory task) {
        Task storage t = _task(taskId);
        (string memory category, string memory locationZone) = _unpackLabels(t.labels);
        task = TaskView({
            poster: t.poster,
            worker: t.worker,
            token: t.token,
            amount: t.amount,
            taskHash: t.taskHash,
            evidenceHash: t.evidenceHash,
            status: t.status,
            category: category,
            locationZone: locationZone,
            createdAt: t.createdAt,
            deadline: t.deadline,
            submissionAttempts: t.submissionAttempts,
            disputedAt: t.disputedAt
        });
    }

    /// @inheritdoc ITaskEscrowPrevious
    function effectiveDeadline(uint256 taskId) external view returns (uint256) {
        Task storage t = _task(taskId);
        return t.poster == address(0) ? 0 : _effectiveDeadline(t);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function isTaskExpired(uint256 taskId) external view returns (bool) {
        Task storage t = _task(taskId);
        return t.poster != address(0) && block.timestamp >= _effectiveDeadline(t);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function taskVerifier(uint256 taskId) external view returns (address) {
        return _task(taskId).verifierAgent;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function failedVerdictAt(uint256 taskId) external view returns (uint256) {
        return _task(taskId).failedVerdictAt;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function isEscalated(uint256 taskId) external view returns (bool) {
        return _task(taskId).escalated;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function isOpenTask(uint256 taskId) external view returns (bool) {
        return _task(taskId).open;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function openPhase(uint256 taskId) external view returns (Phase) {
        Task storage t = _task(taskId);
        if (!t.open) revert NotOpenTask();
        return _openPhase(t);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function openSubmission(uint256 taskId, address submitter) external view returns (bytes32) {
        return _getEscrowStorage().openSubmissions[taskId][submitter];
    }

    /// @inheritdoc ITaskEscrowPrevious
    function openSubmissionCount(uint256 taskId) external view returns (uint256) {
        return _task(taskId).openSubmissionCount;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function teeVerdictPayload(uint256 taskId, bool passed) external view returns (bytes memory) {
        return _teeVerdictPayload(taskId, _task(taskId), passed);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function nextTaskId() external view returns (uint256) {
        return _getEscrowStorage().nextTaskId;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function admin() external view returns (address) {
        return _getEscrowStorage().admin;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function pendingAdmin() external view returns (address) {
        return _getEscrowStorage().pendingAdmin;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function treasury() external view returns (address) {
        return _getEscrowStorage().treasury;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function verifier() external view returns (address) {
        return _getEscrowStorage().verifier;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function feeBps() external view returns (uint256) {
        return _getEscrowStorage().feeBps;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function isTokenAllowed(address token) external view returns (bool) {
        return _getEscrowStorage().allowedTokens[token];
    }

    /// @inheritdoc ITaskEscrowPrevious
    function reputationContract() external view returns (address) {
        return _getEscrowStorage().reputationContract;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function taskRegistry() external view returns (address) {
        return _getEscrowStorage().taskRegistry;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function teeSigner() external view returns (address) {
        return _getEscrowStorage().teeSigner;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function minRatedAmount(address token) external view returns (uint256) {
        return _getEscrowStorage().minRatedAmount[token];
    }

    /// @inheritdoc ITaskEscrowPrevious
    function totalPausedSeconds() external view returns (uint256) {
        EscrowStorage storage $ = _getEscrowStorage();
        if (!$.paused) return $.totalPausedSeconds;
        return $.totalPausedSeconds + block.timestamp - $.pauses[$.pauses.length - 1].start;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function pauseStartedAt() external view returns (uint256) {
        EscrowStorage storage $ = _getEscrowStorage();
        return $.paused ? $.pauses[$.pauses.length - 1].start : 0;
    }

    /// @inheritdoc ITaskEscrowPrevious
    function pausedSecondsSince(uint256 timestamp) external view returns (uint256) {
        return _pausedSecondsSince(timestamp);
    }

    /// @inheritdoc ITaskEscrowPrevious
    function paused() external view returns (bool) {
        return _getEscrowStorage().paused;
    }

    /*//////////////////////////////////////////////////////////////
                                INTERNAL
    //////////////////////////////////////////////////////////////*/

    /// @dev Only the admin may upgrade.
    function _authorizeUpgrade(address) internal view override onlyAdmin {}

    function _task(uint256 taskId) private view returns (Task storage) {
        return _getEscrowStorage().tasks[taskId];
    }

    /// @dev Validates and records a task; emits TaskVerifierSet (when named), then TaskCreated. Pulls no funds.
    function _createTask(NewTask memory task, address token, bool open) private returns (uint256 taskId) {
        EscrowStorage storage $ = _getEscrowStorage();
        // Check: a reward, a brief, an allowed token and a duration of 1 hour to 90 days.
        if (task.amount == 0) revert ZeroAmount();
        if (task.amount > type(uint96).max) revert AmountTooLarge();
        if (task.taskHash == bytes32(0)) revert EmptyHash();
        if (!$.allowedTokens[token]) revert TokenNotAllowed();
        if (task.duration < MIN_DURATION || task.duration > MAX_DURATION) revert InvalidDeadline();
        // Check: the poster does not verify its own task.
        if (task.verifierAgent == msg.sender) revert SelfAssignment();
        uint256 categoryLength = bytes(task.category).length;
        if (categoryLength > type(uint16).max) revert LabelTooLong();

        taskId = $.nextTaskId;
        // Ids are bounded by the gas ever spent creating tasks, far below 2^48.
        unchecked {
            $.nextTaskId = uint48(taskId + 1);
        }
        Task storage t = $.tasks[taskId];
        uint256 deadline = block.timestamp + task.duration;
        t.poster = msg.sender;
        t.createdAt = uint40(block.timestamp);
        t.deadline = uint40(deadline);
        t.token = token;
        t.amount = uint96(task.amount);
        t.taskHash = task.taskHash;
        t.labels = abi.encodePacked(uint16(categoryLength), task.category, task.locationZone);
        if (open) t.open = true;
        if (task.verifierAgent != address(0)) {
            t.verifierAgent = task.verifierAgent;
            emit TaskVerifierSet(taskId, task.verifierAgent);
        }
        emit TaskCreated(
            taskId, msg.sender, token, task.amount, task.taskHash, task.category, task.locationZone, deadline
        );

        address registry = $.taskRegistry;
        if (registry != address(0)) {
            _checkHookGas();
            try ITaskRegistry(registry).taskCreated{gas: HOOK_GAS_LIMIT}(taskId, msg.sender, task.taskHash) {}
            catch {
                emit HookFailed(registry, taskId);
            }
        }
    }

    /// @dev Takes `amount` of `token` from the caller: native value for the zero token, else an ERC-20 transfer whose
    /// received amount is checked, so a fee-on-transfer token cannot leave the escrow short.
    function _pull(address token, uint256 amount, uint256 value) private {
        if (token == address(0)) {
            if (value != amount) revert NativeValueMismatch(value, amount);
            return;
        }
        if (value != 0) revert ZeroAmount();
        uint256 balanceBefore = IERC20(token).balanceOf(address(this));
        IERC20(token).safeTransferFrom(msg.sender, address(this), amount);
        uint256 received = IERC20(token).balanceOf(address(this)) - balanceBefore;
        if (received != amount) revert TransferAmountMismatch(received, amount);
    }

    function _send(address token, address to, uint256 amount) private {
        if (amount == 0) return;
        if (token == address(0)) {
            (bool ok,) = to.call{value: amount}("");
            if (!ok) revert NativeTransferFailed(to);
        } else {
            IERC20(token).safeTransfer(to, amount);
        }
    }

    function _assign(uint256 taskId, address worker) private {
        Task storage t = _task(taskId);
        // Check: a single-worker task that exists and nobody took yet.
        address poster = t.poster;
        if (poster == address(0)) revert TaskNotFound(taskId);
        if (t.open) revert OpenTaskNotAssignable();
        if (t.status != Status.Funded) revert InvalidStatus(t.status, Status.Funded);
        // Check: a real worker who is neither the poster nor the task's judge (who could then never judge it).
        if (worker == address(0)) revert ZeroAddress();
        address judge = t.verifierAgent;
        if (judge == address(0)) judge = _getEscrowStorage().verifier;
        if (worker == poster || worker == judge) revert SelfAssignment();
        // Check: before the effective deadline.
        if (block.timestamp >= _effectiveDeadline(t)) revert DeadlineReached();

        t.worker = worker;
        t.status = Status.Assigned;
        emit WorkerAssigned(taskId, worker);
    }

    /// @dev The task's verifier agent judges it if set, else the marketplace verifier; never its worker.
    function _checkJudge(Task storage t) private view {
        address judge = t.verifierAgent;
        if (judge == address(0)) judge = _getEscrowStorage().verifier;
        if (msg.sender != judge || msg.sender == t.worker) revert NotVerifier();
    }

    function _settleVerdict(uint256 taskId, Task storage t, bool passed) private {
        // Check: evidence awaits a verdict.
        if (t.status != Status.Submitted) revert InvalidStatus(t.status, Status.Submitted);
        emit VerificationCompleted(taskId, passed);
        if (passed) {
            _payout(taskId, t);
        } else {
            t.status = Status.Verified;
            t.failedVerdictAt = uint40(block.timestamp);
        }
    }

    function _computePayout(Task storage t) private view returns (uint256 workerPayout, uint256 fee) {
        uint256 amount = t.amount;
        // The fee is read live; feeBps <= MAX_FEE_BPS < BPS_DENOMINATOR, so fee <= amount.
        fee = amount * _getEscrowStorage().feeBps / BPS_DENOMINATOR;
        unchecked {
            workerPayout = amount - fee;
        }
    }

    /// @dev Marks the task Completed, pays the worker and the treasury, emits TaskCompleted, reports the outcome.
    function _payout(uint256 taskId, Task storage t) private {
        (uint256 workerPayout, uint256 fee) = _computePayout(t);
        t.status = Status.Completed;
        address token = t.token;
        address worker = t.worker;
        _send(token, worker, workerPayout);
        _send(token, _getEscrowStorage().treasury, fee);
        emit TaskCompleted(taskId, workerPayout, fee);
        _reportOutcome(taskId, t, true, true);
    }

    /// @dev Marks the task Cancelled and returns the whole reward to the poster. The caller emits the refund event.
    /// `rateWorker`: whether the reputation hook records a failure for the worker.
    function _refund(uint256 taskId, Task storage t, bool rateWorker) private returns (uint256 amount) {
        amount = t.amount;
        t.status = Status.Cancelled;
        _send(t.token, t.poster, amount);
        _reportOutcome(taskId, t, false, rateWorker);
    }

    /// @dev Reports a terminal outcome to the task registry and, when `rateWorker`, to the reputation contract. A hook
    /// that reverts or runs out of its gas is logged with HookFailed and settlement goes on.
    function _reportOutcome(uint256 taskId, Task storage t, bool completed, bool rateWorker) private {
        EscrowStorage storage $ = _getEscrowStorage();
        address worker = t.worker;
        address registry = $.taskRegistry;
        if (registry != address(0)) {
            _checkHookGas();
            try ITaskRegistry(registry).taskSettled{gas: HOOK_GAS_LIMIT}(taskId, uint8(t.status), worker) {}
            catch {
                emit HookFailed(registry, taskId);
            }
        }
        if (!rateWorker || !$.hasReputationContract || worker == address(0)) return;
        address reputation = $.reputationContract;
        address token = t.token;
        uint256 amount = t.amount;
        if (amount < $.minRatedAmount[token]) return;
        _checkHookGas();
        if (completed) {
            try IWorkerReputation(reputation).recordCompleted{gas: HOOK_GAS_LIMIT}(worker, taskId, token, amount) {}
            catch {
                emit HookFailed(reputation, taskId);
            }
        } else {
            try IWorkerReputation(reputation).recordFailed{gas: HOOK_GAS_LIMIT}(worker, taskId, token, amount) {}
            catch {
                emit HookFailed(reputation, taskId);
            }
        }
    }

    /// @dev A hook gets its whole budget or the call reverts: otherwise a caller could pick a gas limit that starves the
    /// hook (63/64 rule) and make it fail on purpose while settlement succeeds.
    function _checkHookGas() private view {
        if (gasleft() < HOOK_GAS_LIMIT * 64 / 63 + HOOK_GAS_RESERVE) revert InsufficientGasForHook();
    }

    /// @dev A hook is unset (zero) or a contract: a call to an address without code would revert past try/catch.
    function _checkHook(address hook) private view {
        if (hook != address(0) && hook.code.length == 0) revert NotAContract(hook);
    }

    function _effectiveDeadline(Task storage t) private view returns (uint256) {
        return uint256(t.deadline) + _pausedSecondsSince(t.createdAt);
    }

    /// @dev Whether `window` seconds, plus the seconds paused since `start`, have passed since `start`.
    function _windowPassed(uint256 start, uint256 window) private view returns (bool) {
        return block.timestamp >= start + window + _pausedSecondsSince(start);
    }

    /// @dev Seconds the escrow spent paused after `timestamp`, the running pause included. Walks the pause history
    /// from the newest entry back to the first that ended before `timestamp`; pauses are rare, so the walk is short.
    function _pausedSecondsSince(uint256 timestamp) private view returns (uint256 total) {
        EscrowStorage storage $ = _getEscrowStorage();
        // No pause running and none ended after `timestamp`: nothing to add (the common case, read from a warm slot).
        if (!$.paused && $.lastPauseEnd <= timestamp) return 0;
        PauseInterval[] storage pauses = $.pauses;
        for (uint256 i = pauses.length; i > 0;) {
            unchecked {
                --i;
            }
            PauseInterval memory p = pauses[i];
            uint256 end = p.end == 0 ? block.timestamp : p.end;
            if (end <= timestamp) break;
            uint256 start = p.start > timestamp ? p.start : timestamp;
            total += end - start;
        }
    }

    function _openPhase(Task storage t) private view returns (Phase) {
        Status status = t.status;
        if (status == Status.Completed || status == Status.Cancelled) return Phase.Closed;
        uint256 deadline = _effectiveDeadline(t);
        if (block.timestamp < deadline) return Phase.Submission;
        if (block.timestamp < deadline + OPEN_SELECTION_WINDOW) return Phase.Selection;
        return Phase.Expired;
    }

    function _teeVerdictPayload(uint256 taskId, Task storage t, bool passed) private view returns (bytes memory) {
        return abi.encode(
            TEE_VERDICT_TYPEHASH, block.chainid, address(this), taskId, t.submissionAttempts, t.evidenceHash, passed
        );
    }

    /// @dev Splits the length-prefixed labels written by _createTask. An unwritten record has empty labels.
    function _unpackLabels(bytes memory labels) private pure returns (string memory category, string memory zone) {
        if (labels.length < 2) return ("", "");
        uint256 categoryLength = (uint256(uint8(labels[0])) << 8) | uint8(labels[1]);
        bytes memory c = new bytes(categoryLength);
        bytes memory z = new bytes(labels.length - 2 - categoryLength);
        for (uint256 i = 0; i < categoryLength; ++i) {
            c[i] = labels[2 + i];
        }
        for (uint256 i = 0; i < z.length; ++i) {
            z[i] = labels[2 + categoryLength + i];
        }
        return (string(c), string(z));
    }
}
