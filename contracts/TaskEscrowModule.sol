// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";

import {ITaskEscrow} from "./interfaces/ITaskEscrow.sol";
import {TaskEscrowBase} from "./TaskEscrowBase.sol";

/// @title TaskEscrowModule
/// @notice The rarely used functions of `TaskEscrow`: open-submission tasks, trusted-execution verdicts, the surplus
/// sweep and the admin's settings but the admin role's transfer. `TaskEscrow` deploys this
/// module in its constructor and forwards these functions' calls to it by delegatecall, so they run in the proxy's
/// storage with the original caller and value; the interface (`ITaskEscrow`) documents each. Called directly, the
/// module sees its own empty storage (no admin, no allowed token, no task) and every function reverts or changes
/// nothing of value.
contract TaskEscrowModule is TaskEscrowBase {
    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor() {
        _disableInitializers();
    }

    /*//////////////////////////////////////////////////////////////
                             OPEN SUBMISSION
    //////////////////////////////////////////////////////////////*/

    /// @notice See ITaskEscrow.createTaskOpen.
    /// @dev The task is marked open before the task registry hears of it, so the hook reads `isOpenTask` as true.
    function createTaskOpen(
        bytes32 taskHash,
        address token,
        uint256 amount,
        string calldata category,
        string calldata locationZone,
        uint256 duration
    ) external payable nonReentrant whenNotPaused returns (uint256 taskId) {
        bool defaultLabels = _areDefaultLabels(category, locationZone);
        uint256 deadline;
        (taskId, deadline) = _recordTask(taskHash, token, amount, duration, address(0), defaultLabels, false);
        Task storage t = _task(taskId);
        t.open = true;
        if (!defaultLabels) _storeLabels(t, category, locationZone);
        _emitTaskCreated(taskId, token, amount, taskHash, category, locationZone, deadline);
        emit ITaskEscrow.OpenTaskCreated(taskId);
        _notifyTaskCreated(taskId, taskHash);
        _pull(token, amount, msg.value);
    }

    /// @notice See ITaskEscrow.commitOpen.
    function commitOpen(uint256 taskId, bytes32 commitment) external payable nonReentrant whenNotPaused {
        Task storage t = _openTask(taskId);
        // Check: the submission phase, a commitment, one per address (a plain submission made before
        // the commit-reveal design counts: its author could never reveal a commitment, and would lose the bond).
        ITaskEscrow.Phase phase = _openPhase(taskId, t);
        if (phase != ITaskEscrow.Phase.Submission) revert ITaskEscrow.WrongPhase(phase, ITaskEscrow.Phase.Submission);
        // Check: not the poster, nor the judge of the task's disputes (who could then rule for itself).
        if (msg.sender == t.poster || msg.sender == _judgeOf(t)) revert ITaskEscrow.SelfAssignment();
        if (commitment == bytes32(0)) revert ITaskEscrow.EmptyHash();
        EscrowStorage storage $ = _getEscrowStorage();
        if ($.openCommitments[taskId][msg.sender] != bytes32(0) || $.openSubmissions[taskId][msg.sender] != bytes32(0))
        {
            revert ITaskEscrow.AlreadySubmitted();
        }

        address token = t.token;
        uint256 bond = _openBond(t.amount);
        $.openCommitments[taskId][msg.sender] = commitment;
        // 2^32 commitments would cost far more gas than exists in any block range: no overflow.
        unchecked {
            ++t.openSubmissionCount;
            ++$.openStates[taskId].commitCount;
        }
        $.bondsHeld[token] += bond;
        emit ITaskEscrow.OpenSubmissionCommitted(taskId, msg.sender, commitment, bond);
        _pull(token, bond, msg.value);
    }

    /// @notice See ITaskEscrow.revealOpen.
    /// @dev The bond goes back to the caller in its own call: a revealer that cannot receive blocks only itself.
    function revealOpen(uint256 taskId, bytes32 evidenceHash, bytes32 salt) external nonReentrant whenNotPaused {
        Task storage t = _openTask(taskId);
        // Check: the reveal phase, a commitment of the caller not yet revealed, and the evidence and salt behind it.
        ITaskEscrow.Phase phase = _openPhase(taskId, t);
        if (phase != ITaskEscrow.Phase.Reveal) revert ITaskEscrow.WrongPhase(phase, ITaskEscrow.Phase.Reveal);
        EscrowStorage storage $ = _getEscrowStorage();
        bytes32 commitment = $.openCommitments[taskId][msg.sender];
        if (commitment == bytes32(0)) revert ITaskEscrow.NotSubmitter();
        if ($.openSubmissions[taskId][msg.sender] != bytes32(0)) revert ITaskEscrow.AlreadySubmitted();
        if (evidenceHash == bytes32(0)) revert ITaskEscrow.EmptyHash();
        if (keccak256(abi.encode(address(this), taskId, msg.sender, evidenceHash, salt)) != commitment) {
            revert ITaskEscrow.CommitmentMismatch();
        }

        $.openSubmissions[taskId][msg.sender] = evidenceHash;
        OpenState storage o = $.openStates[taskId];
        // revealCount <= commitCount < 2^32.
        unchecked {
            ++o.revealCount;
        }
        if (o.earliestRevealer == address(0)) o.earliestRevealer = msg.sender;
        address token = t.token;
        uint256 bond = _openBond(t.amount);
        $.bondsHeld[token] -= bond;
        emit ITaskEscrow.OpenSubmission(taskId, msg.sender, evidenceHash);
        _send(token, msg.sender, bond);
    }

    /// @notice See ITaskEscrow.selectWinner.
    function selectWinner(uint256 taskId, address winner) external nonReentrant whenNotPaused {
        Task storage t = _task(taskId);
        // Check: the caller is the poster of an open-submission task in its selection phase, not yet picked or disputed.
        if (msg.sender != _poster(t)) revert ITaskEscrow.NotAgent();
        if (!t.open) revert ITaskEscrow.NotOpenTask();
        _checkUnsettledOpen(t);
        ITaskEscrow.Phase phase = _openPhase(taskId, t);
        if (phase != ITaskEscrow.Phase.Selection) revert ITaskEscrow.WrongPhase(phase, ITaskEscrow.Phase.Selection);
        OpenState storage o = _getEscrowStorage().openStates[taskId];
        if (o.chosen != address(0)) revert ITaskEscrow.AlreadySubmitted();
        // Check: the winner revealed its submission (or submitted before the commit-reveal design).
        bytes32 evidence = _getEscrowStorage().openSubmissions[taskId][winner];
        if (evidence == bytes32(0)) revert ITaskEscrow.NotSubmitter();
        if (o.revealCount >= 2) {
            // Several revealed submissions: the pick waits OPEN_CONTEST_WINDOW, so a poster's own second address
            // cannot take the others' work for the fee (the others may dispute the pick).
            o.chosen = winner;
            o.chosenAt = uint40(block.timestamp);
            emit ITaskEscrow.OpenWinnerProposed(taskId, winner);
            return;
        }
        _payWinner(taskId, t, winner, evidence, msg.sender);
    }

    /// @notice See ITaskEscrow.releaseOpenDefault.
    function releaseOpenDefault(uint256 taskId) external nonReentrant whenNotPaused {
        Task storage t = _openTask(taskId);
        _checkUnsettledOpen(t);
        EscrowStorage storage $ = _getEscrowStorage();
        OpenState storage o = $.openStates[taskId];
        address chosen = o.chosen;
        if (chosen != address(0)) {
            // The poster's pick, uncontested for OPEN_CONTEST_WINDOW.
            if (!_windowPassed(o.chosenAt, OPEN_CONTEST_WINDOW)) revert ITaskEscrow.ContestWindow();
            _payWinner(taskId, t, chosen, $.openSubmissions[taskId][chosen], t.poster);
            return;
        }
        // Check: the selection window passed without a pick and a submission was revealed.
        ITaskEscrow.Phase phase = _openPhase(taskId, t);
        if (phase != ITaskEscrow.Phase.Expired) revert ITaskEscrow.WrongPhase(phase, ITaskEscrow.Phase.Expired);
        address winner = o.earliestRevealer;
        if (winner == address(0)) revert ITaskEscrow.NoRevealedSubmission();
        if (o.revealCount >= 2) {
            // Several revealed submissions and no pick: the judge picks; the earliest is the submitter side of the
            // dispute should the judge stay silent.
            _disputeOpen(taskId, t, o, winner);
            return;
        }
        // The only revealed submission, which its poster did not refuse (contestOpen) within the selection window. The
        // forfeited bonds go to it: a poster that cannot receive could otherwise block the payment it owes.
        emit ITaskEscrow.OpenDefaultReleased(taskId, winner);
        _payWinner(taskId, t, winner, $.openSubmissions[taskId][winner], winner);
    }

    /// @notice See ITaskEscrow.contestOpen.
    function contestOpen(uint256 taskId) external nonReentrant whenNotPaused {
        Task storage t = _openTask(taskId);
        _checkUnsettledOpen(t);
        EscrowStorage storage $ = _getEscrowStorage();
        OpenState storage o = $.openStates[taskId];
        address chosen = o.chosen;
        address challenger;
        if (msg.sender == t.poster && chosen == address(0)) {
            // The poster refuses what was revealed (a worthless entry), within the selection window.
            ITaskEscrow.Phase phase = _openPhase(taskId, t);
            if (phase != ITaskEscrow.Phase.Selection) revert ITaskEscrow.WrongPhase(phase, ITaskEscrow.Phase.Selection);
            challenger = o.earliestRevealer;
            if (challenger == address(0)) revert ITaskEscrow.NoRevealedSubmission();
        } else {
            // A revealed submitter contests the poster's pick within OPEN_CONTEST_WINDOW.
            if (chosen == address(0) || msg.sender == chosen || $.openCommitments[taskId][msg.sender] == bytes32(0)
                || $.openSubmissions[taskId][msg.sender] == bytes32(0)) revert ITaskEscrow.NotSubmitter();
            if (_windowPassed(o.chosenAt, OPEN_CONTEST_WINDOW)) revert ITaskEscrow.ContestWindow();
            challenger = msg.sender;
        }
        _disputeOpen(taskId, t, o, challenger);
    }

    /// @notice See ITaskEscrow.judgeOpen.
    function judgeOpen(uint256 taskId, address winner) external nonReentrant whenNotPaused {
        Task storage t = _openTask(taskId);
        // Check: the task is disputed and the caller its judge (the marketplace verifier) or the admin.
        if (t.status != ITaskEscrow.Status.Disputed) revert ITaskEscrow.InvalidStatus(t.status, ITaskEscrow.Status.Disputed);
        EscrowStorage storage $ = _getEscrowStorage();
        if (msg.sender != _judgeOf(t) && msg.sender != $.admin) revert ITaskEscrow.NotVerifier();
        emit ITaskEscrow.OpenJudged(taskId, winner);
        if (winner == address(0)) {
            t.status = ITaskEscrow.Status.Cancelled;
            address token = t.token;
            uint256 amount = t.amount;
            _forfeitBonds(taskId, t, t.poster);
            _credit(token, t.poster, amount);
            emit ITaskEscrow.TaskCancelled(taskId, amount);
            _reportOutcome(taskId, t, false, false);
            return;
        }
        bytes32 evidence = $.openSubmissions[taskId][winner];
        if (evidence == bytes32(0)) revert ITaskEscrow.NotSubmitter();
        _payWinner(taskId, t, winner, evidence, t.poster);
    }

    /// @notice See ITaskEscrow.splitUnruled.
    function splitUnruled(uint256 taskId) external nonReentrant whenNotPaused {
        Task storage t = _task(taskId);
        // Check: a dispute (not an escalation, which releaseUnjudgedWork pays) past its window without a ruling.
        if (t.status != ITaskEscrow.Status.Disputed) revert ITaskEscrow.InvalidStatus(t.status, ITaskEscrow.Status.Disputed);
        if (t.escalated) revert ITaskEscrow.EscalatedForAdjudication();
        if (!_windowPassed(t.disputedAt, DISPUTE_WINDOW)) revert ITaskEscrow.DisputeWindowActive();
        if (!t.open) {
            _splitUnruled(taskId, t, _worker(t), address(0));
            return;
        }
        OpenState storage o = _getEscrowStorage().openStates[taskId];
        address challenger = o.challenger;
        t.worker = challenger;
        t.evidenceHash = _getEscrowStorage().openSubmissions[taskId][challenger];
        _forfeitBonds(taskId, t, t.poster);
        _splitUnruled(taskId, t, challenger, o.chosen);
    }

    /// @notice See ITaskEscrow.reclaimOpen.
    function reclaimOpen(uint256 taskId) external nonReentrant whenNotPaused {
        Task storage t = _task(taskId);
        // Check: the caller is the poster of an open-submission task whose deadline passed.
        if (msg.sender != _poster(t)) revert ITaskEscrow.NotAgent();
        if (!t.open) revert ITaskEscrow.NotOpenTask();
        ITaskEscrow.Phase phase = _openPhase(taskId, t);
        uint256 submissions = t.openSubmissionCount;
        OpenState storage o = _getEscrowStorage().openStates[taskId];
        if (submissions == 0) {
            // Nobody committed: the reward comes back from the deadline on.
            if (phase == ITaskEscrow.Phase.Submission || phase == ITaskEscrow.Phase.Closed) {
                revert ITaskEscrow.WrongPhase(phase, ITaskEscrow.Phase.Reveal);
            }
        } else if (o.revealCount != 0) {
            // A revealed submission is paid: by the poster's choice, by releaseOpenDefault, or by the judge's ruling.
            revert ITaskEscrow.OpenTaskHasSubmissions();
        } else if (submissions != o.commitCount) {
            // A pre-commit-reveal task's plain submissions (no order recorded): their own rule, after expiry.
            if (phase != ITaskEscrow.Phase.Expired) revert ITaskEscrow.WrongPhase(phase, ITaskEscrow.Phase.Expired);
        } else if (phase != ITaskEscrow.Phase.Selection && phase != ITaskEscrow.Phase.Expired) {
            // Commitments nobody revealed: after the reveal window, with their bonds.
            revert ITaskEscrow.WrongPhase(phase, ITaskEscrow.Phase.Selection);
        }

        t.status = ITaskEscrow.Status.Cancelled;
        _forfeitBonds(taskId, t, msg.sender);
        uint256 refund = _refund(taskId, t, false); // open task: no worker
        emit ITaskEscrow.DeadlineExpired(taskId, refund);
    }

    /// @notice See ITaskEscrow.withdraw.
    function withdraw(address token, address to) external nonReentrant returns (uint256 amount) {
        if (to == address(0)) revert ITaskEscrow.ZeroAddress();
        EscrowStorage storage $ = _getEscrowStorage();
        amount = $.credits[token][msg.sender];
        if (amount == 0) revert ITaskEscrow.NothingOwed();
        $.credits[token][msg.sender] = 0;
        $.creditsHeld[token] -= amount;
        emit ITaskEscrow.Withdrawn(token, msg.sender, to, amount);
        _send(token, to, amount);
    }

    /// @dev An open-submission task, else NotOpenTask.
    function _openTask(uint256 taskId) private view returns (Task storage t) {
        t = _task(taskId);
        if (!t.open) revert ITaskEscrow.NotOpenTask();
    }

    /// @dev An open task not settled nor under dispute is Funded: else InvalidStatus.
    function _checkUnsettledOpen(Task storage t) private view {
        if (t.status != ITaskEscrow.Status.Funded) revert ITaskEscrow.InvalidStatus(t.status, ITaskEscrow.Status.Funded);
    }

    /// @dev Sends an open task to its judge: Disputed from now, `challenger` its submitter side.
    function _disputeOpen(uint256 taskId, Task storage t, OpenState storage o, address challenger) private {
        t.status = ITaskEscrow.Status.Disputed;
        t.disputedAt = uint40(block.timestamp);
        o.challenger = challenger;
        emit ITaskEscrow.TaskDisputed(taskId, msg.sender);
    }

    /// @dev Marks the task Completed with the winner and its evidence, then credits the unrevealed commitments' bonds to
    /// `bondsTo` and the winner's payout to the winner, sends the fee to the treasury, and reports the outcome. State
    /// first, then the one transfer.
    function _payWinner(uint256 taskId, Task storage t, address winner, bytes32 evidence, address bondsTo) private {
        t.status = ITaskEscrow.Status.Completed;
        t.worker = winner;
        t.evidenceHash = evidence;
        (uint256 workerPayout, uint256 fee) = _computePayout(t);
        emit ITaskEscrow.WinnerSelected(taskId, winner);
        _forfeitBonds(taskId, t, bondsTo);
        address token = t.token;
        _credit(token, winner, workerPayout);
        emit ITaskEscrow.TaskCompleted(taskId, workerPayout, fee);
        _send(token, _getEscrowStorage().treasury, fee);
        _reportOutcome(taskId, t, true, true);
    }

    /// @dev Credits the bonds of commitments that were never revealed (the griefer's cost) to `to`.
    function _forfeitBonds(uint256 taskId, Task storage t, address to) private {
        OpenState storage o = _getEscrowStorage().openStates[taskId];
        uint256 unrevealed = o.commitCount - o.revealCount;
        if (unrevealed == 0) return;
        address token = t.token;
        uint256 forfeited = unrevealed * _openBond(t.amount);
        _getEscrowStorage().bondsHeld[token] -= forfeited;
        emit ITaskEscrow.OpenBondsForfeited(taskId, to, forfeited);
        _credit(token, to, forfeited);
    }

    /*//////////////////////////////////////////////////////////////
                     TRUSTED-EXECUTION VERDICTS, ADMIN
    //////////////////////////////////////////////////////////////*/

    /// @notice See ITaskEscrow.completeVerificationWithTEE.
    function completeVerificationWithTEE(uint256 taskId, bool passed, bytes calldata payload, bytes calldata signature)
        external
        nonReentrant
        whenNotPaused
    {
        // Check: the TEE path is enabled.
        address signer = _getEscrowStorage().teeSigner;
        if (signer == address(0)) revert ITaskEscrow.TEESignerNotSet();
        Task storage t = _task(taskId);
        _checkJudge(t);
        // Check: the payload is this verdict on this round of this task, and the signer signed it.
        if (t.status != ITaskEscrow.Status.Submitted) revert ITaskEscrow.InvalidStatus(t.status, ITaskEscrow.Status.Submitted);
        if (keccak256(payload) != keccak256(_teeVerdictPayload(taskId, t, passed))) revert ITaskEscrow.InvalidTEESignature();
        (address recovered, ECDSA.RecoverError err,) =
            ECDSA.tryRecover(MessageHashUtils.toEthSignedMessageHash(payload), signature);
        if (err != ECDSA.RecoverError.NoError || recovered != signer) revert ITaskEscrow.InvalidTEESignature();

        _settleVerdict(taskId, t, passed);
        emit ITaskEscrow.TEESettled(taskId, passed, signer);
    }

    /// @notice See ITaskEscrow.setFeeBps.
    function setFeeBps(uint256 newFeeBps) external onlyAdmin {
        if (newFeeBps > MAX_FEE_BPS) revert ITaskEscrow.FeeExceedsMax();
        EscrowStorage storage $ = _getEscrowStorage();
        emit ITaskEscrow.FeeBpsUpdated($.feeBps, newFeeBps);
        $.feeBps = uint16(newFeeBps);
    }

    /// @notice See ITaskEscrow.setTreasury.
    function setTreasury(address newTreasury) external onlyAdmin {
        if (newTreasury == address(0)) revert ITaskEscrow.ZeroAddress();
        EscrowStorage storage $ = _getEscrowStorage();
        emit ITaskEscrow.TreasuryUpdated($.treasury, newTreasury);
        $.treasury = newTreasury;
    }

    /// @notice See ITaskEscrow.setVerifier.
    function setVerifier(address newVerifier) external onlyAdmin {
        if (newVerifier == address(0)) revert ITaskEscrow.ZeroAddress();
        EscrowStorage storage $ = _getEscrowStorage();
        emit ITaskEscrow.VerifierUpdated($.verifier, newVerifier);
        $.verifier = newVerifier;
    }

    /// @notice See ITaskEscrow.allowToken.
    /// @dev The zero address stands for the chain's native currency.
    /// A token allowed anew gets an allowlist index (one more when it was disallowed in between).
    function allowToken(address token) external onlyAdmin {
        EscrowStorage storage $ = _getEscrowStorage();
        $.allowedTokens[token] = true;
        if ($.tokenIndexes[token] == 0) _indexToken(token);
        emit ITaskEscrow.TokenAllowed(token);
    }

    /// @notice See ITaskEscrow.disallowToken.
    /// @dev Existing tasks in the token settle as usual; only new funding is refused.
    /// Its allowlist index stays readable for the tasks that use it.
    function disallowToken(address token) external onlyAdmin {
        EscrowStorage storage $ = _getEscrowStorage();
        $.allowedTokens[token] = false;
        $.tokenIndexes[token] = 0;
        emit ITaskEscrow.TokenDisallowed(token);
    }

    /// @notice See ITaskEscrow.setTeeSigner.
    function setTeeSigner(address newSigner) external onlyAdmin {
        EscrowStorage storage $ = _getEscrowStorage();
        emit ITaskEscrow.TeeSignerUpdated($.teeSigner, newSigner);
        $.teeSigner = newSigner;
    }

    /// @notice See ITaskEscrow.setMinRatedAmount.
    function setMinRatedAmount(address token, uint256 amount) external onlyAdmin {
        _getEscrowStorage().minRatedAmount[token] = amount;
        emit ITaskEscrow.MinRatedAmountUpdated(token, amount);
    }

    /// @notice See ITaskEscrow.setReputationContract.
    function setReputationContract(address newContract) external onlyAdmin {
        _checkHook(newContract);
        EscrowStorage storage $ = _getEscrowStorage();
        emit ITaskEscrow.ReputationContractUpdated($.reputationContract, newContract);
        $.reputationContract = newContract;
        $.hasReputationContract = newContract != address(0);
    }

    /// @notice See ITaskEscrow.setTaskRegistry.
    function setTaskRegistry(address newRegistry) external onlyAdmin {
        _checkHook(newRegistry);
        EscrowStorage storage $ = _getEscrowStorage();
        emit ITaskEscrow.TaskRegistryUpdated($.taskRegistry, newRegistry);
        $.taskRegistry = newRegistry;
    }

    /// @notice See ITaskEscrow.pause.
    function pause() external onlyAdmin {
        EscrowStorage storage $ = _getEscrowStorage();
        if ($.paused) revert ITaskEscrow.EnforcedPause();
        $.paused = true;
        $.pauses.push(PauseInterval({start: uint40(block.timestamp), end: 0, pausedAt: uint40(block.timestamp)}));
        emit ITaskEscrow.Paused(msg.sender);
    }

    /// @notice See ITaskEscrow.unpause.
    function unpause() external onlyAdmin {
        EscrowStorage storage $ = _getEscrowStorage();
        if (!$.paused) revert ITaskEscrow.ExpectedPause();
        PauseInterval storage running = $.pauses[$.pauses.length - 1];
        running.end = uint40(block.timestamp);
        $.totalPausedSeconds += block.timestamp - running.start;
        $.paused = false;
        $.lastPauseEnd = uint40(block.timestamp);
        emit ITaskEscrow.Unpaused(msg.sender);
    }

    /// @notice See ITaskEscrow.recordPauseStart.
    /// @dev Moves the start of the running pause back, for an incident that began before the pause transaction landed.
    /// The start may not be after the pause transaction, nor before the end of the previous pause (pauses never
    /// overlap), nor more than MAX_PAUSE_BACKDATE before the pause transaction; it may be moved again within those
    /// bounds.
    function recordPauseStart(uint256 pauseStart) external onlyAdmin {
        EscrowStorage storage $ = _getEscrowStorage();
        if (!$.paused) revert ITaskEscrow.ExpectedPause();
        uint256 count = $.pauses.length;
        PauseInterval storage running = $.pauses[count - 1];
        uint256 previousEnd = count > 1 ? $.pauses[count - 2].end : 0;
        // Check: the start is no later than the pause transaction, no earlier than the previous pause's end, and at most
        // MAX_PAUSE_BACKDATE before the pause transaction (one slip such as recordPauseStart(1) cannot restart every
        // deadline).
        if (
            pauseStart == 0 || pauseStart > running.pausedAt || pauseStart < previousEnd
                || pauseStart + MAX_PAUSE_BACKDATE < running.pausedAt
        ) revert ITaskEscrow.InvalidPauseStart();
        running.start = uint40(pauseStart);
        emit ITaskEscrow.PauseStartRecorded(pauseStart);
    }

    /*//////////////////////////////////////////////////////////////
                                 SURPLUS
    //////////////////////////////////////////////////////////////*/

    /// @notice See ITaskEscrow.reconcileHeld.
    function reconcileHeld(uint256 maxTasks) external onlyAdmin returns (uint256 reconciledBelow) {
        EscrowStorage storage $ = _getEscrowStorage();
        uint256 id = $.reconciledBelow;
        if (id == 0) id = 1;
        uint256 end = $.nextTaskId;
        for (; id < end && maxTasks != 0; ++id) {
            Task storage t = $.tasks[id];
            if (!_settled(t)) {
                $.pendingHeld[_token(t)] += _amount(t);
                $.pendingTask[id] = true;
            }
            unchecked {
                --maxTasks;
            }
        }
        $.reconciledBelow = uint48(id);
        emit ITaskEscrow.HeldReconciled(id);
        return id;
    }

    /// @notice See ITaskEscrow.releaseSettled.
    function releaseSettled(uint256[] calldata taskIds) external onlyAdmin {
        EscrowStorage storage $ = _getEscrowStorage();
        for (uint256 i = 0; i < taskIds.length; ++i) {
            uint256 id = taskIds[i];
            Task storage t = $.tasks[id];
            // Only a counted task that has settled since: anything else stays as it is.
            if (!$.pendingTask[id] || !_settled(t)) continue;
            $.pendingTask[id] = false;
            uint256 amount = _amount(t);
            $.pendingHeld[_token(t)] -= amount;
            emit ITaskEscrow.HeldReleased(id, amount);
        }
    }

    /// @notice See ITaskEscrow.sweepSurplus.
    function sweepSurplus(address token, address to) external onlyAdmin nonReentrant returns (uint256 amount) {
        if (to == address(0)) revert ITaskEscrow.ZeroAddress();
        EscrowStorage storage $ = _getEscrowStorage();
        // What the tasks hold: the counted unsettled rewards, the bonds, what is owed (credits), and the unsettled rewards of the tasks not yet
        // reconciled. A counted task that settled since still counts (its release is pending): the sweep then takes
        // less, never more.
        uint256 held = $.pendingHeld[token] + $.bondsHeld[token] + $.creditsHeld[token];
        uint256 id = $.reconciledBelow;
        if (id == 0) id = 1;
        for (uint256 end = $.nextTaskId; id < end; ++id) {
            Task storage t = $.tasks[id];
            if (_token(t) == token && !_settled(t)) held += _amount(t);
        }
        uint256 balance = token == address(0) ? address(this).balance : IERC20(token).balanceOf(address(this));
        if (balance <= held) revert ITaskEscrow.NoSurplus();
        amount = balance - held;
        emit ITaskEscrow.SurplusSwept(token, to, amount);
        _send(token, to, amount);
    }

    function _settled(Task storage t) private view returns (bool) {
        ITaskEscrow.Status status = t.status;
        return status == ITaskEscrow.Status.Completed || status == ITaskEscrow.Status.Cancelled;
    }
}
