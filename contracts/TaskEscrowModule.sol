// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";

import {ITaskEscrow} from "./interfaces/ITaskEscrow.sol";
import {TaskEscrowBase} from "./TaskEscrowBase.sol";

/// @title TaskEscrowModule
/// @notice The rarely used functions of `TaskEscrow`: open-submission tasks, trusted-execution verdicts, the surplus
/// sweep and the admin's pause and hook settings. `TaskEscrow` deploys this
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
    function createTaskOpen(
        bytes32 taskHash,
        address token,
        uint256 amount,
        string calldata category,
        string calldata locationZone,
        uint256 duration
    ) external payable nonReentrant whenNotPaused returns (uint256 taskId) {
        taskId = _createTask(taskHash, token, amount, category, locationZone, duration, address(0));
        _task(taskId).open = true;
        _pull(token, amount, msg.value);
        emit ITaskEscrow.OpenTaskCreated(taskId);
    }

    /// @notice See ITaskEscrow.commitOpen.
    function commitOpen(uint256 taskId, bytes32 commitment) external payable nonReentrant whenNotPaused {
        Task storage t = _openTask(taskId);
        // Check: the submission phase, not the poster, a commitment, one per address.
        ITaskEscrow.Phase phase = _openPhase(t);
        if (phase != ITaskEscrow.Phase.Submission) revert ITaskEscrow.WrongPhase(phase, ITaskEscrow.Phase.Submission);
        if (msg.sender == t.poster) revert ITaskEscrow.SelfAssignment();
        if (commitment == bytes32(0)) revert ITaskEscrow.EmptyHash();
        EscrowStorage storage $ = _getEscrowStorage();
        if ($.openCommitments[taskId][msg.sender] != bytes32(0)) revert ITaskEscrow.AlreadySubmitted();

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
    function revealOpen(uint256 taskId, bytes32 evidenceHash, bytes32 salt) external nonReentrant whenNotPaused {
        Task storage t = _openTask(taskId);
        // Check: the reveal phase, a commitment of the caller not yet revealed, and the evidence and salt behind it.
        ITaskEscrow.Phase phase = _openPhase(t);
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
        // Check: the caller is the poster of an open-submission task in its selection phase.
        if (msg.sender != t.poster) revert ITaskEscrow.NotAgent();
        if (!t.open) revert ITaskEscrow.NotOpenTask();
        ITaskEscrow.Phase phase = _openPhase(t);
        if (phase != ITaskEscrow.Phase.Selection) revert ITaskEscrow.WrongPhase(phase, ITaskEscrow.Phase.Selection);
        // Check: the winner revealed its submission (or submitted before issue 9).
        bytes32 evidence = _getEscrowStorage().openSubmissions[taskId][winner];
        if (evidence == bytes32(0)) revert ITaskEscrow.NotSubmitter();
        _payWinner(taskId, t, winner, evidence, msg.sender);
    }

    /// @notice See ITaskEscrow.releaseOpenDefault.
    function releaseOpenDefault(uint256 taskId) external nonReentrant whenNotPaused {
        Task storage t = _openTask(taskId);
        // Check: the selection window passed without a choice and a submission was revealed.
        ITaskEscrow.Phase phase = _openPhase(t);
        if (phase != ITaskEscrow.Phase.Expired) revert ITaskEscrow.WrongPhase(phase, ITaskEscrow.Phase.Expired);
        EscrowStorage storage $ = _getEscrowStorage();
        address winner = $.openStates[taskId].earliestRevealer;
        if (winner == address(0)) revert ITaskEscrow.NoRevealedSubmission();
        // The silent poster's share of the forfeited bonds goes to the paid submitter: a poster that cannot receive
        // (a contract refusing native currency, a blacklisted address) cannot block the payout.
        _payWinner(taskId, t, winner, $.openSubmissions[taskId][winner], winner);
    }

    /// @notice See ITaskEscrow.reclaimOpen.
    function reclaimOpen(uint256 taskId) external nonReentrant whenNotPaused {
        Task storage t = _task(taskId);
        // Check: the caller is the poster of an open-submission task whose deadline passed.
        if (msg.sender != t.poster) revert ITaskEscrow.NotAgent();
        if (!t.open) revert ITaskEscrow.NotOpenTask();
        ITaskEscrow.Phase phase = _openPhase(t);
        uint256 submissions = t.openSubmissionCount;
        OpenState storage o = _getEscrowStorage().openStates[taskId];
        if (submissions == 0) {
            // Nobody committed: the reward comes back from the deadline on.
            if (phase == ITaskEscrow.Phase.Submission || phase == ITaskEscrow.Phase.Closed) {
                revert ITaskEscrow.WrongPhase(phase, ITaskEscrow.Phase.Reveal);
            }
        } else if (o.revealCount != 0) {
            // A revealed submission is paid: by the poster's choice, else by releaseOpenDefault.
            revert ITaskEscrow.OpenTaskHasSubmissions();
        } else if (submissions != o.commitCount) {
            // Plain submissions made before issue 9 (no order recorded): the rule they were made under, after expiry.
            if (phase != ITaskEscrow.Phase.Expired) revert ITaskEscrow.WrongPhase(phase, ITaskEscrow.Phase.Expired);
        } else if (phase != ITaskEscrow.Phase.Selection && phase != ITaskEscrow.Phase.Expired) {
            // Commitments nobody revealed: after the reveal window, with their bonds.
            revert ITaskEscrow.WrongPhase(phase, ITaskEscrow.Phase.Selection);
        }

        _forfeitBonds(taskId, t, msg.sender);
        uint256 refund = _refund(taskId, t, false); // open task: no worker
        emit ITaskEscrow.DeadlineExpired(taskId, refund);
    }

    /// @dev An open-submission task, else NotOpenTask.
    function _openTask(uint256 taskId) private view returns (Task storage t) {
        t = _task(taskId);
        if (!t.open) revert ITaskEscrow.NotOpenTask();
    }

    /// @dev Records the winner and its evidence, sends the unrevealed commitments' bonds to `bondsTo`, pays out.
    function _payWinner(uint256 taskId, Task storage t, address winner, bytes32 evidence, address bondsTo) private {
        t.worker = winner;
        t.evidenceHash = evidence;
        emit ITaskEscrow.WinnerSelected(taskId, winner);
        _forfeitBonds(taskId, t, bondsTo);
        _payout(taskId, t);
    }

    /// @dev Sends the bonds of commitments that were never revealed (the griefer's cost) to `to`.
    function _forfeitBonds(uint256 taskId, Task storage t, address to) private {
        OpenState storage o = _getEscrowStorage().openStates[taskId];
        uint256 unrevealed = o.commitCount - o.revealCount;
        if (unrevealed == 0) return;
        address token = t.token;
        uint256 forfeited = unrevealed * _openBond(t.amount);
        _getEscrowStorage().bondsHeld[token] -= forfeited;
        emit ITaskEscrow.OpenBondsForfeited(taskId, to, forfeited);
        _send(token, to, forfeited);
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
                $.pendingHeld[t.token] += t.amount;
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
            $.pendingHeld[t.token] -= t.amount;
        }
    }

    /// @notice See ITaskEscrow.sweepSurplus.
    function sweepSurplus(address token, address to) external onlyAdmin nonReentrant returns (uint256 amount) {
        if (to == address(0)) revert ITaskEscrow.ZeroAddress();
        EscrowStorage storage $ = _getEscrowStorage();
        // What the tasks hold: the counted unsettled rewards, the bonds, and the unsettled rewards of the tasks not yet
        // reconciled. A counted task that settled since still counts (its release is pending): the sweep then takes
        // less, never more.
        uint256 held = $.pendingHeld[token] + $.bondsHeld[token];
        uint256 id = $.reconciledBelow;
        if (id == 0) id = 1;
        for (uint256 end = $.nextTaskId; id < end; ++id) {
            Task storage t = $.tasks[id];
            if (t.token == token && !_settled(t)) held += t.amount;
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
