// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Initializable} from "@openzeppelin/contracts-upgradeable/proxy/utils/Initializable.sol";
import {UUPSUpgradeable} from "@openzeppelin/contracts-upgradeable/proxy/utils/UUPSUpgradeable.sol";

import {ITaskEscrow} from "../../interfaces/ITaskEscrow.sol";
import {TaskEscrowBeforeCompactBase} from "./TaskEscrowBeforeCompactBase.sol";
import {TaskEscrowBeforeCompactModule} from "./TaskEscrowBeforeCompactModule.sol";

/// @title TaskEscrowBeforeCompact
/// @notice Test-only copy of the escrow implementation as of commit 1160915 (before the compact task record), renamed
/// with its base and module. The upgrade tests deploy it behind a proxy, fill it with tasks in every state and upgrade
/// it to the current TaskEscrow, which must read and settle every task as this one would. Never deploy it elsewhere.
/// It shares ITaskEscrow with the current implementation (same functions, events and errors).
contract TaskEscrowBeforeCompact is ITaskEscrow, Initializable, UUPSUpgradeable, TaskEscrowBeforeCompactBase {
    /// @notice The module of rarely used functions, deployed with this implementation.
    /// @custom:oz-upgrades-unsafe-allow state-variable-immutable
    address public immutable MODULE;

    /*//////////////////////////////////////////////////////////////
                              CONSTRUCTOR
    //////////////////////////////////////////////////////////////*/

    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor() {
        _disableInitializers();
        MODULE = address(new TaskEscrowBeforeCompactModule());
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

    /// @inheritdoc ITaskEscrow
    function createTask(
        bytes32 taskHash,
        address token,
        uint256 amount,
        string calldata category,
        string calldata locationZone,
        uint256 duration
    ) external payable nonReentrant whenNotPaused returns (uint256 taskId) {
        taskId = _createTask(taskHash, token, amount, category, locationZone, duration, address(0));
        _pull(token, amount, msg.value);
    }

    /// @inheritdoc ITaskEscrow
    function createTaskWithVerifier(
        bytes32 taskHash,
        address token,
        uint256 amount,
        string calldata category,
        string calldata locationZone,
        uint256 duration,
        address verifierAgent
    ) external payable nonReentrant whenNotPaused returns (uint256 taskId) {
        taskId = _createTask(taskHash, token, amount, category, locationZone, duration, verifierAgent);
        _pull(token, amount, msg.value);
    }

    /// @inheritdoc ITaskEscrow
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
            NewTask calldata task = tasks[i];
            uint256 amount = task.amount;
            _createTask(
                task.taskHash, token, amount, task.category, task.locationZone, task.duration, task.verifierAgent
            );
            // Each amount fits 96 bits (checked in _createTask) and there are at most 50: no overflow.
            unchecked {
                total += amount;
            }
        }
        _pull(token, total, msg.value);
    }

    /// @inheritdoc ITaskEscrow
    function createTaskOpen(bytes32, address, uint256, string calldata, string calldata, uint256)
        external
        payable
        returns (uint256)
    {
        _delegateToModule();
    }

    /*//////////////////////////////////////////////////////////////
                     EXTERNAL STATE-CHANGING: LIFECYCLE
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc ITaskEscrow
    /// @dev No external call: no re-entrancy guard needed (as assignWorker and submitEvidence).
    function marketplaceAssign(uint256 taskId, address worker) external whenNotPaused {
        // Check: the caller is the marketplace verifier.
        if (msg.sender != _getEscrowStorage().verifier) revert NotVerifier();
        _assign(taskId, worker);
    }

    /// @inheritdoc ITaskEscrow
    function assignWorker(uint256 taskId, address worker) external whenNotPaused {
        // Check: the caller is the poster.
        if (msg.sender != _task(taskId).poster) revert NotAgent();
        _assign(taskId, worker);
    }

    /// @inheritdoc ITaskEscrow
    function submitEvidence(uint256 taskId, bytes32 evidenceHash) external whenNotPaused {
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
        // Check: fewer than MAX_SUBMISSIONS so far (the low bits count them; bits 6 and 7 are flags).
        uint8 packed = t.submissionAttempts;
        uint8 attempt = packed & ATTEMPTS_MASK;
        if (attempt >= MAX_SUBMISSIONS) revert MaxSubmissionAttemptsReached();

        // Effects. attempt < MAX_SUBMISSIONS, so the increments cannot overflow into the flags.
        unchecked {
            ++attempt;
            t.submissionAttempts = packed + 1;
        }
        t.status = Status.Submitted;
        t.evidenceHash = evidenceHash;
        emit EvidenceSubmitted(taskId, msg.sender, evidenceHash, attempt);
    }

    /// @inheritdoc ITaskEscrow
    function completeVerification(uint256 taskId, bool passed) external nonReentrant whenNotPaused {
        Task storage t = _task(taskId);
        _checkJudge(t);
        _settleVerdict(taskId, t, passed);
    }

    /// @inheritdoc ITaskEscrow
    function completeVerificationWithTEE(uint256, bool, bytes calldata, bytes calldata) external {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
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

    /// @inheritdoc ITaskEscrow
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
            // Check: an open task's dispute ends by judgeOpen or splitUnruled.
            if (t.open) revert OpenTask();
            // Check: escalated work goes to the worker, not back by timeout.
            if (t.escalated) revert EscalatedForAdjudication();
            // Check: the dispute window has passed without a ruling.
            if (!_windowPassed(t.disputedAt, DISPUTE_WINDOW)) revert DisputeWindowActive();
            // A silent arbiter decides for neither side: the reward is split (docs/contracts.md, "Silent arbiter").
            _splitUnruled(taskId, t, t.worker, address(0));
            return;
        }
        // A failure is rated only for a worker who delivered and was judged failing (Verified); an assignment that
        // lapsed undelivered, or a dispute that lapsed without a ruling, rates nobody (docs/contracts.md "Reputation").
        uint256 refund = _refund(taskId, t, status == Status.Verified);
        emit DeadlineExpired(taskId, refund);
    }

    /// @inheritdoc ITaskEscrow
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

    /// @inheritdoc ITaskEscrow
    /// @dev Not pause-gated: the admin can rule while the escrow is paused.
    function resolveDispute(uint256 taskId, bool workerFavored) external onlyAdmin nonReentrant {
        Task storage t = _task(taskId);
        // Check: the task is disputed, and has one worker (an open task's judge rules with judgeOpen).
        if (t.status != Status.Disputed) revert InvalidStatus(t.status, Status.Disputed);
        if (t.open) revert OpenTask();

        emit DisputeResolved(taskId, workerFavored);
        if (workerFavored) {
            _payout(taskId, t);
        } else {
            uint256 refund = _refund(taskId, t, true); // a ruling against delivered work
            emit TaskCancelled(taskId, refund);
        }
    }

    /// @inheritdoc ITaskEscrow
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

    /// @inheritdoc ITaskEscrow
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
          EXTERNAL STATE-CHANGING: OPEN SUBMISSION AND SURPLUS
                (run by the module, see TaskEscrowBeforeCompactModule)
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc ITaskEscrow
    function commitOpen(uint256, bytes32) external payable {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
    function revealOpen(uint256, bytes32, bytes32) external {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
    function selectWinner(uint256, address) external {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
    function reclaimOpen(uint256) external {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
    function releaseOpenDefault(uint256) external {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
    function reconcileHeld(uint256) external returns (uint256) {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
    function releaseSettled(uint256[] calldata) external {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
    function sweepSurplus(address, address) external returns (uint256) {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
    function withdraw(address, address) external returns (uint256) {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
    function contestOpen(uint256) external {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
    function judgeOpen(uint256, address) external {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
    function splitUnruled(uint256) external {
        _delegateToModule();
    }

    /// @dev Runs the current call in MODULE, in this contract's storage and with its caller and value, and returns
    /// or reverts with the module's answer. The module has no storage of its own and holds no funds.
    /// @custom:oz-upgrades-unsafe-allow delegatecall
    function _delegateToModule() private {
        address module = MODULE;
        assembly {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), module, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            if iszero(ok) { revert(0, returndatasize()) }
            return(0, returndatasize())
        }
    }

    /*//////////////////////////////////////////////////////////////
                     EXTERNAL STATE-CHANGING: ADMIN
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc ITaskEscrow
    function setFeeBps(uint256 newFeeBps) external onlyAdmin {
        if (newFeeBps > MAX_FEE_BPS) revert FeeExceedsMax();
        EscrowStorage storage $ = _getEscrowStorage();
        emit FeeBpsUpdated($.feeBps, newFeeBps);
        $.feeBps = uint16(newFeeBps);
    }

    /// @inheritdoc ITaskEscrow
    function setTreasury(address newTreasury) external onlyAdmin {
        if (newTreasury == address(0)) revert ZeroAddress();
        EscrowStorage storage $ = _getEscrowStorage();
        emit TreasuryUpdated($.treasury, newTreasury);
        $.treasury = newTreasury;
    }

    /// @inheritdoc ITaskEscrow
    function setVerifier(address newVerifier) external onlyAdmin {
        if (newVerifier == address(0)) revert ZeroAddress();
        EscrowStorage storage $ = _getEscrowStorage();
        emit VerifierUpdated($.verifier, newVerifier);
        $.verifier = newVerifier;
    }

    /// @inheritdoc ITaskEscrow
    /// @dev The zero address stands for the chain's native currency.
    function allowToken(address token) external onlyAdmin {
        _getEscrowStorage().allowedTokens[token] = true;
        emit TokenAllowed(token);
    }

    /// @inheritdoc ITaskEscrow
    /// @dev Existing tasks in the token settle as usual; only new funding is refused.
    function disallowToken(address token) external onlyAdmin {
        _getEscrowStorage().allowedTokens[token] = false;
        emit TokenDisallowed(token);
    }

    /// @inheritdoc ITaskEscrow
    function setReputationContract(address) external {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
    function setTaskRegistry(address) external {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
    function setTeeSigner(address newSigner) external onlyAdmin {
        EscrowStorage storage $ = _getEscrowStorage();
        emit TeeSignerUpdated($.teeSigner, newSigner);
        $.teeSigner = newSigner;
    }

    /// @inheritdoc ITaskEscrow
    function setMinRatedAmount(address token, uint256 amount) external onlyAdmin {
        _getEscrowStorage().minRatedAmount[token] = amount;
        emit MinRatedAmountUpdated(token, amount);
    }

    /// @inheritdoc ITaskEscrow
    function pause() external {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
    function unpause() external {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
    function recordPauseStart(uint256) external {
        _delegateToModule();
    }

    /// @inheritdoc ITaskEscrow
    function proposeAdmin(address newAdmin) external onlyAdmin {
        if (newAdmin == address(0)) revert ZeroAddress();
        EscrowStorage storage $ = _getEscrowStorage();
        $.pendingAdmin = newAdmin;
        emit AdminTransferProposed($.admin, newAdmin);
    }

    /// @inheritdoc ITaskEscrow
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

    /// @inheritdoc ITaskEscrow
    function getTask(uint256 taskId) external view returns (TaskView memory task) {
        Task storage t = _task(taskId);
        (string memory category, string memory locationZone) = t.submissionAttempts & DEFAULT_LABELS != 0
            ? (string(abi.encodePacked(DEFAULT_CATEGORY)), string(abi.encodePacked(DEFAULT_ZONE)))
            : _unpackLabels(t.labels);
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
            submissionAttempts: t.submissionAttempts & ATTEMPTS_MASK,
            disputedAt: t.disputedAt
        });
    }

    /// @inheritdoc ITaskEscrow
    function effectiveDeadline(uint256 taskId) external view returns (uint256) {
        Task storage t = _task(taskId);
        return t.poster == address(0) ? 0 : _effectiveDeadline(t);
    }

    /// @inheritdoc ITaskEscrow
    function isTaskExpired(uint256 taskId) external view returns (bool) {
        Task storage t = _task(taskId);
        return t.poster != address(0) && block.timestamp >= _effectiveDeadline(t);
    }

    /// @inheritdoc ITaskEscrow
    function taskVerifier(uint256 taskId) external view returns (address) {
        return _task(taskId).verifierAgent;
    }

    /// @inheritdoc ITaskEscrow
    function failedVerdictAt(uint256 taskId) external view returns (uint256) {
        return _task(taskId).failedVerdictAt;
    }

    /// @inheritdoc ITaskEscrow
    function isEscalated(uint256 taskId) external view returns (bool) {
        return _task(taskId).escalated;
    }

    /// @inheritdoc ITaskEscrow
    function isOpenTask(uint256 taskId) external view returns (bool) {
        return _task(taskId).open;
    }

    /// @inheritdoc ITaskEscrow
    function openPhase(uint256 taskId) external view returns (Phase) {
        Task storage t = _task(taskId);
        if (!t.open) revert NotOpenTask();
        return _openPhase(taskId, t);
    }

    /// @inheritdoc ITaskEscrow
    function openSubmission(uint256 taskId, address submitter) external view returns (bytes32) {
        return _getEscrowStorage().openSubmissions[taskId][submitter];
    }

    /// @inheritdoc ITaskEscrow
    function openSubmissionCount(uint256 taskId) external view returns (uint256) {
        return _task(taskId).openSubmissionCount;
    }

    /// @inheritdoc ITaskEscrow
    function openCommitment(uint256 taskId, address submitter) external view returns (bytes32) {
        return _getEscrowStorage().openCommitments[taskId][submitter];
    }

    /// @inheritdoc ITaskEscrow
    function openState(uint256 taskId)
        external
        view
        returns (address earliestRevealer, uint256 commitCount, uint256 revealCount, uint256 bond)
    {
        OpenState storage o = _getEscrowStorage().openStates[taskId];
        return (o.earliestRevealer, o.commitCount, o.revealCount, _openBond(_task(taskId).amount));
    }

    /// @inheritdoc ITaskEscrow
    function openVerdictState(uint256 taskId) external view returns (address chosen, uint256 chosenAt, address challenger) {
        OpenState storage o = _getEscrowStorage().openStates[taskId];
        return (o.chosen, o.chosenAt, o.challenger);
    }

    /// @inheritdoc ITaskEscrow
    function creditOf(address token, address account) external view returns (uint256) {
        return _getEscrowStorage().credits[token][account];
    }

    /// @inheritdoc ITaskEscrow
    function teeVerdictPayload(uint256 taskId, bool passed) external view returns (bytes memory) {
        return _teeVerdictPayload(taskId, _task(taskId), passed);
    }

    /// @inheritdoc ITaskEscrow
    function nextTaskId() external view returns (uint256) {
        return _getEscrowStorage().nextTaskId;
    }

    /// @inheritdoc ITaskEscrow
    function admin() external view returns (address) {
        return _getEscrowStorage().admin;
    }

    /// @inheritdoc ITaskEscrow
    function pendingAdmin() external view returns (address) {
        return _getEscrowStorage().pendingAdmin;
    }

    /// @inheritdoc ITaskEscrow
    function treasury() external view returns (address) {
        return _getEscrowStorage().treasury;
    }

    /// @inheritdoc ITaskEscrow
    function verifier() external view returns (address) {
        return _getEscrowStorage().verifier;
    }

    /// @inheritdoc ITaskEscrow
    function feeBps() external view returns (uint256) {
        return _getEscrowStorage().feeBps;
    }

    /// @inheritdoc ITaskEscrow
    function isTokenAllowed(address token) external view returns (bool) {
        return _getEscrowStorage().allowedTokens[token];
    }

    /// @inheritdoc ITaskEscrow
    function reputationContract() external view returns (address) {
        return _getEscrowStorage().reputationContract;
    }

    /// @inheritdoc ITaskEscrow
    function taskRegistry() external view returns (address) {
        return _getEscrowStorage().taskRegistry;
    }

    /// @inheritdoc ITaskEscrow
    function teeSigner() external view returns (address) {
        return _getEscrowStorage().teeSigner;
    }

    /// @inheritdoc ITaskEscrow
    function minRatedAmount(address token) external view returns (uint256) {
        return _getEscrowStorage().minRatedAmount[token];
    }

    /// @inheritdoc ITaskEscrow
    function totalPausedSeconds() external view returns (uint256) {
        EscrowStorage storage $ = _getEscrowStorage();
        if (!$.paused) return $.totalPausedSeconds;
        return $.totalPausedSeconds + block.timestamp - $.pauses[$.pauses.length - 1].start;
    }

    /// @inheritdoc ITaskEscrow
    function pauseStartedAt() external view returns (uint256) {
        EscrowStorage storage $ = _getEscrowStorage();
        return $.paused ? $.pauses[$.pauses.length - 1].start : 0;
    }

    /// @inheritdoc ITaskEscrow
    function pausedSecondsSince(uint256 timestamp) external view returns (uint256) {
        return _pausedSecondsSince(timestamp);
    }

    /// @inheritdoc ITaskEscrow
    function paused() external view returns (bool) {
        return _getEscrowStorage().paused;
    }

    /*//////////////////////////////////////////////////////////////
                                INTERNAL
    //////////////////////////////////////////////////////////////*/

    /// @dev Only the admin may upgrade.
    function _authorizeUpgrade(address) internal view override onlyAdmin {}

    function _assign(uint256 taskId, address worker) private {
        Task storage t = _task(taskId);
        // Check: a single-worker task that exists and nobody took yet.
        address poster = t.poster;
        if (poster == address(0)) revert TaskNotFound(taskId);
        if (t.open) revert OpenTaskNotAssignable();
        if (t.status != Status.Funded) revert InvalidStatus(t.status, Status.Funded);
        // Check: a real worker who is neither the poster nor the task's judge (who could then never judge it).
        if (worker == address(0)) revert ZeroAddress();
        address judge = _judgeOf(t);
        if (worker == poster || worker == judge) revert SelfAssignment();
        // Check: before the effective deadline.
        if (block.timestamp >= _effectiveDeadline(t)) revert DeadlineReached();

        t.worker = worker;
        t.status = Status.Assigned;
        emit WorkerAssigned(taskId, worker);
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
