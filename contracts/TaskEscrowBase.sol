// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ReentrancyGuardTransientUpgradeable} from
    "@openzeppelin/contracts-upgradeable/utils/ReentrancyGuardTransientUpgradeable.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

import {ITaskEscrow} from "./interfaces/ITaskEscrow.sol";
import {IWorkerReputation, ITaskRegistry} from "./interfaces/ITaskOutcomeHooks.sol";

/// @title TaskEscrowBase
/// @notice The escrow's storage, constants and internal rules, shared by `TaskEscrow` (the proxy's implementation) and
/// `TaskEscrowModule` (its module of rarely used functions, run by delegatecall in the proxy's storage). Errors and
/// events are those of `ITaskEscrow`.
abstract contract TaskEscrowBase is ReentrancyGuardTransientUpgradeable {
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
    /// @notice Time after an open-submission task's deadline during which committed submissions are revealed.
    uint256 public constant OPEN_REVEAL_WINDOW = 1 days;
    /// @notice Time after the reveal window during which the poster of an open-submission task picks a winner.
    uint256 public constant OPEN_SELECTION_WINDOW = 3 days;
    /// @notice Time after the poster picks one of several revealed submissions during which another may dispute the pick.
    uint256 public constant OPEN_CONTEST_WINDOW = 2 days;
    /// @notice Bond of an open-submission commitment, in basis points of the reward (at least one smallest unit).
    uint256 public constant OPEN_BOND_BPS = 500;
    /// @notice How far before the pause transaction `recordPauseStart` may move the start of a pause.
    uint256 public constant MAX_PAUSE_BACKDATE = 1 days;
    /// @notice How long after the effective deadline a worker whose submission nobody judged may escalate it.
    uint256 public constant ESCALATION_GRACE = 3 days;
    /// @notice Largest `createTasks` batch.
    uint256 public constant MAX_BATCH = 50;
    /// @notice Gas forwarded to a reputation contract or task registry; a hook cannot starve settlement.
    uint256 public constant HOOK_GAS_LIMIT = 150_000;
    /// @dev Gas kept for the call itself and what follows it.
    uint256 internal constant HOOK_GAS_RESERVE = 10_000;
    /// @notice Domain tag of the TEE verdict payload.
    bytes32 public constant TEE_VERDICT_TYPEHASH = keccak256("TaskEscrow.TEEVerdict.v1");
    /// @dev Bit 7 of `Task.submissionAttempts`: set at creation when the task has no verifier agent, so that assignment
    /// and verdicts know the marketplace verifier judges without reading slot 5.
    uint8 internal constant MARKETPLACE_JUDGED = 0x80;
    /// @dev Bit 6 of `Task.submissionAttempts`: set at creation when the labels are DEFAULT_CATEGORY and DEFAULT_ZONE,
    /// which are then not stored (the labels slot stays empty): the API posts every task with them, and storing them
    /// was a fresh slot, 22,100 gas, on each creation.
    uint8 internal constant DEFAULT_LABELS = 0x40;
    /// @dev Bit 5 of `Task.submissionAttempts`: set at creation when the task's record is compact: the 160 bits of
    /// `Task.poster` then hold the poster's account id (bits 0-31), the worker's account id (32-63, 0 until
    /// assignment), the token's allowlist index (64-79) and the amount (80-159); `Task.token`, `Task.amount` and
    /// `Task.worker` stay empty. Creation then writes two fresh slots instead of three, and assignment none. Without the
    /// bit (tasks created before it existed, open-submission tasks, amounts of 2^80 or more) the fields hold what their
    /// names say. The low 5 bits count submissions (at most MAX_SUBMISSIONS).
    uint8 internal constant COMPACT = 0x20;
    uint8 internal constant ATTEMPTS_MASK = 0x1f;
    /// @dev Largest amount a compact record holds; a larger one (up to 2^96 - 1) is stored in the full record.
    uint256 internal constant COMPACT_AMOUNT_MAX = type(uint80).max;
    /// @dev The category the API sends on every task, and the location zone clients default to (fixed-size: compared
    /// with calldata in one word each).
    bytes7 internal constant DEFAULT_CATEGORY = "general";
    bytes6 internal constant DEFAULT_ZONE = "global";

    /*//////////////////////////////////////////////////////////////
                                STORAGE
    //////////////////////////////////////////////////////////////*/

    /// @dev A task, packed so that creation writes two fresh slots (the compact record in slot 0, the hash) or, without
    /// COMPACT, three (slots 0, 1 and the hash); the labels take more unless they are the defaults.
    struct Task {
        // slot 0: written at creation, read by every operation. With COMPACT, `poster` holds the compact record (see
        // COMPACT) and is read through _poster, _worker, _token and _amount.
        address poster;
        uint40 createdAt;
        uint40 deadline;
        ITaskEscrow.Status status;
        uint8 submissionAttempts; // low 5 bits: the count; bit 7: MARKETPLACE_JUDGED, bit 6: DEFAULT_LABELS, 5: COMPACT
        // slot 1: written at creation without COMPACT (empty with it); amounts above 2^96 - 1 revert AmountTooLarge
        address token;
        uint96 amount;
        // slot 2: written from assignment on (and at creation of an open-submission task); with COMPACT, from the first
        // failed verdict, dispute or escalation on, and `worker` stays empty
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
        uint32 openSubmissionCount; // open-submission tasks: commitments (pre-commit-reveal tasks: plain submissions)
        // slot 6+: category and location zone as one length-prefixed byte string (one slot when both are short); empty
        // when the task carries DEFAULT_LABELS
        bytes labels;
    }

    /// @dev One pause of the escrow. `end` is 0 while the pause is running; `pausedAt` is when pause() ran, the latest
    /// start recordPauseStart may record.
    struct PauseInterval {
        uint40 start;
        uint40 end;
        uint40 pausedAt;
    }

    /// @dev The open-submission state of a task beyond its record (one slot).
    struct OpenState {
        address earliestRevealer; // the first address whose commitment was revealed: paid when the poster stays silent
        uint32 commitCount; // commitments made, each with a bond (openSubmissionCount also counts them)
        uint32 revealCount; // commitments revealed, their bonds returned
        // Appended after the fields above, which keep their places (a second slot and a third).
        address chosen; // the poster's pick among two or more revealed submissions, paid once uncontested
        uint40 chosenAt;
        address challenger; // the submitter side of a dispute: credited half by a split when the judge stays silent
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
        // open-submission evidence: revealed submissions (pre-commit-reveal tasks: plain submissions)
        mapping(uint256 taskId => mapping(address submitter => bytes32 evidenceHash)) openSubmissions;
        // Appended after the slots above, which keep their places.
        // Surplus bookkeeping: every task below `reconciledBelow` is settled or counted in `pendingHeld`.
        uint48 reconciledBelow;
        mapping(address token => uint256 amount) pendingHeld;
        mapping(uint256 taskId => bool counted) pendingTask;
        // Open-submission bonds held, per token, and the commit-reveal state.
        mapping(address token => uint256 amount) bondsHeld;
        mapping(uint256 taskId => OpenState) openStates;
        mapping(uint256 taskId => mapping(address submitter => bytes32 commitment)) openCommitments;
        // Appended after the slots above: pull payments (what each account is owed, and their sum per token).
        mapping(address token => mapping(address account => uint256 amount)) credits;
        mapping(address token => uint256 amount) creditsHeld;
        // Appended after the slots above: the ids of compact task records. An account gets an id the first time it
        // posts or is assigned a compact task (ids from 1, never reused); a token gets an allowlist index when it is
        // allowed (or, allowed before indexes existed, when a task first uses it). `tokenIndexes[token]` is nonzero
        // exactly while an indexed token is allowed; `tokens[index]` keeps every index ever given.
        uint32 accountCount;
        uint16 tokenCount;
        mapping(address account => uint256 id) accountIds;
        mapping(uint256 id => address account) accounts;
        mapping(address token => uint256 index) tokenIndexes;
        mapping(uint256 index => address token) tokens;
    }

    // keccak256(abi.encode(uint256(keccak256("marketplace.storage.TaskEscrow")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant ESCROW_STORAGE_LOCATION = 0x85427c6a95a65b7f061f7d28e950b0fc8007b8fa7891146463529a609c299a00;

    function _getEscrowStorage() internal pure returns (EscrowStorage storage $) {
        assembly {
            $.slot := ESCROW_STORAGE_LOCATION
        }
    }

    /*//////////////////////////////////////////////////////////////
                               MODIFIERS
    //////////////////////////////////////////////////////////////*/

    modifier onlyAdmin() {
        if (msg.sender != _getEscrowStorage().admin) revert ITaskEscrow.NotAdmin();
        _;
    }

    modifier whenNotPaused() {
        if (_getEscrowStorage().paused) revert ITaskEscrow.EnforcedPause();
        _;
    }

    /*//////////////////////////////////////////////////////////////
                                INTERNAL
    //////////////////////////////////////////////////////////////*/

    function _task(uint256 taskId) internal view returns (Task storage) {
        return _getEscrowStorage().tasks[taskId];
    }

    /// @dev Validates and records a task; emits TaskVerifierSet (when named), then TaskCreated; tells the task registry.
    /// Pulls no funds. The strings stay in calldata: no copy before they are stored and logged.
    function _createTask(
        bytes32 taskHash,
        address token,
        uint256 amount,
        string calldata category,
        string calldata locationZone,
        uint256 duration,
        address verifierAgent
    ) internal returns (uint256 taskId) {
        uint256 deadline;
        bool defaultLabels = _areDefaultLabels(category, locationZone);
        (taskId, deadline) = _recordTask(taskHash, token, amount, duration, verifierAgent, defaultLabels, true);
        if (!defaultLabels) _storeLabels(_task(taskId), category, locationZone);
        _emitTaskCreated(taskId, token, amount, taskHash, category, locationZone, deadline);
        _notifyTaskCreated(taskId, taskHash);
    }

    /// @dev Checks a new task's terms and writes its record but the labels (`defaultLabels` sets the DEFAULT_LABELS flag;
    /// `compact` asks for a compact record, which an amount above COMPACT_AMOUNT_MAX declines).
    function _recordTask(
        bytes32 taskHash,
        address token,
        uint256 amount,
        uint256 duration,
        address verifierAgent,
        bool defaultLabels,
        bool compact
    ) internal returns (uint256 taskId, uint256 deadline) {
        EscrowStorage storage $ = _getEscrowStorage();
        // Check: a reward, a brief, an allowed token and a duration of 1 hour to 90 days.
        if (amount == 0) revert ITaskEscrow.ZeroAmount();
        if (amount > type(uint96).max) revert ITaskEscrow.AmountTooLarge();
        if (taskHash == bytes32(0)) revert ITaskEscrow.EmptyHash();
        uint256 tokenIndex = _allowedTokenIndex(token);
        if (duration < MIN_DURATION || duration > MAX_DURATION) revert ITaskEscrow.InvalidDeadline();
        // Check: the poster does not verify its own task.
        if (verifierAgent == msg.sender) revert ITaskEscrow.SelfAssignment();

        taskId = $.nextTaskId;
        // Ids are bounded by the gas ever spent creating tasks, far below 2^48.
        unchecked {
            $.nextTaskId = uint48(taskId + 1);
        }
        Task storage t = $.tasks[taskId];
        deadline = block.timestamp + duration;
        uint8 flags = verifierAgent == address(0) ? MARKETPLACE_JUDGED : 0;
        if (defaultLabels) flags |= DEFAULT_LABELS;
        if (compact && amount <= COMPACT_AMOUNT_MAX) {
            t.poster = address(uint160(_accountId(msg.sender) | tokenIndex << 64 | amount << 80));
            flags |= COMPACT;
        } else {
            t.poster = msg.sender;
            t.token = token;
            t.amount = uint96(amount);
        }
        t.createdAt = uint40(block.timestamp);
        t.deadline = uint40(deadline);
        t.submissionAttempts = flags;
        t.taskHash = taskHash;
        if (verifierAgent != address(0)) {
            t.verifierAgent = verifierAgent;
            emit ITaskEscrow.TaskVerifierSet(taskId, verifierAgent);
        }
    }

    /// @dev The allowlist index of `token`, given now if the token was allowed before indexes existed; TokenNotAllowed
    /// when the token is not allowed.
    function _allowedTokenIndex(address token) internal returns (uint256 index) {
        EscrowStorage storage $ = _getEscrowStorage();
        index = $.tokenIndexes[token];
        if (index != 0) return index;
        if (!$.allowedTokens[token]) revert ITaskEscrow.TokenNotAllowed();
        index = _indexToken(token);
    }

    /// @dev Gives `token` the next allowlist index (at most 2^16 - 1 are ever given: the count is checked).
    function _indexToken(address token) internal returns (uint256 index) {
        EscrowStorage storage $ = _getEscrowStorage();
        index = ++$.tokenCount;
        $.tokenIndexes[token] = index;
        $.tokens[index] = token;
    }

    /// @dev The account id of `account`, given now if it has none (ids fit 32 bits: the count is checked).
    function _accountId(address account) internal returns (uint256 id) {
        EscrowStorage storage $ = _getEscrowStorage();
        id = $.accountIds[account];
        if (id != 0) return id;
        id = ++$.accountCount;
        $.accountIds[account] = id;
        $.accounts[id] = account;
    }

    /// @dev Whether the task's record is compact (see COMPACT).
    function _isCompact(Task storage t) internal view returns (bool) {
        return t.submissionAttempts & COMPACT != 0;
    }

    /// @dev The task's poster (zero for an unwritten record).
    function _poster(Task storage t) internal view returns (address) {
        address raw = t.poster;
        if (!_isCompact(t)) return raw;
        return _getEscrowStorage().accounts[uint32(uint160(raw))];
    }

    /// @dev The task's worker (zero until assignment); account id 0 has no account.
    function _worker(Task storage t) internal view returns (address) {
        if (!_isCompact(t)) return t.worker;
        return _getEscrowStorage().accounts[uint32(uint160(t.poster) >> 32)];
    }

    function _token(Task storage t) internal view returns (address) {
        if (!_isCompact(t)) return t.token;
        return _getEscrowStorage().tokens[uint16(uint160(t.poster) >> 64)];
    }

    function _amount(Task storage t) internal view returns (uint256) {
        if (!_isCompact(t)) return t.amount;
        return uint160(t.poster) >> 80;
    }

    /// @dev Records `worker` as the task's worker.
    function _setWorker(Task storage t, address worker) internal {
        if (!_isCompact(t)) {
            t.worker = worker;
            return;
        }
        uint160 raw = uint160(t.poster) & ~uint160(0xffffffff << 32);
        t.poster = address(raw | uint160(_accountId(worker) << 32));
    }

    function _emitTaskCreated(
        uint256 taskId,
        address token,
        uint256 amount,
        bytes32 taskHash,
        string calldata category,
        string calldata locationZone,
        uint256 deadline
    ) internal {
        emit ITaskEscrow.TaskCreated(taskId, msg.sender, token, amount, taskHash, category, locationZone, deadline);
    }

    function _notifyTaskCreated(uint256 taskId, bytes32 taskHash) internal {
        address registry = _getEscrowStorage().taskRegistry;
        if (registry == address(0)) return;
        _checkHookGas();
        try ITaskRegistry(registry).taskCreated{gas: HOOK_GAS_LIMIT}(taskId, msg.sender, taskHash) {}
        catch {
            emit ITaskEscrow.HookFailed(registry, taskId);
        }
    }

    /// @dev Whether a new task's labels are exactly DEFAULT_CATEGORY and DEFAULT_ZONE (byte for byte).
    function _areDefaultLabels(string calldata category, string calldata locationZone) internal pure returns (bool) {
        return bytes(category).length == 7 && bytes7(bytes(category)) == DEFAULT_CATEGORY
            && bytes(locationZone).length == 6 && bytes6(bytes(locationZone)) == DEFAULT_ZONE;
    }

    /// @dev Writes `abi.encodePacked(uint16(category.length), category, locationZone)` as the task's labels. When the
    /// whole fits 31 bytes it writes the one slot of a short `bytes` directly: the data left-aligned, twice the length
    /// in the lowest byte, as Solidity stores it.
    function _storeLabels(Task storage t, string calldata category, string calldata locationZone) internal {
        uint256 categoryLength = bytes(category).length;
        if (categoryLength > type(uint16).max) revert ITaskEscrow.LabelTooLong();
        uint256 total = 2 + categoryLength + bytes(locationZone).length;
        if (total > 31) {
            t.labels = abi.encodePacked(uint16(categoryLength), category, locationZone);
            return;
        }
        bytes storage labels = t.labels;
        assembly ("memory-safe") {
            // Assemble the 31 data bytes in scratch space: the length prefix, the category, the zone.
            mstore(0x00, 0)
            mstore(0x20, 0)
            mstore(0x00, shl(240, categoryLength))
            calldatacopy(0x02, category.offset, categoryLength)
            calldatacopy(add(0x02, categoryLength), locationZone.offset, locationZone.length)
            sstore(labels.slot, or(and(mload(0x00), not(0xff)), mul(total, 2)))
        }
    }

    /// @dev Takes `amount` of `token` from the caller: native value for the zero token, else an ERC-20 transfer whose
    /// received amount is checked, so a fee-on-transfer token cannot leave the escrow short.
    function _pull(address token, uint256 amount, uint256 value) internal {
        if (token == address(0)) {
            if (value != amount) revert ITaskEscrow.NativeValueMismatch(value, amount);
            return;
        }
        if (value != 0) revert ITaskEscrow.ZeroAmount();
        uint256 balanceBefore = _selfBalance(token);
        IERC20(token).safeTransferFrom(msg.sender, address(this), amount);
        uint256 received = _selfBalance(token) - balanceBefore;
        if (received != amount) revert ITaskEscrow.TransferAmountMismatch(received, amount);
    }

    /// @dev The escrow's balance of the ERC-20 `token`: `balanceOf(address(this))` without the ABI helpers. A token
    /// without code, or one answering with less than a word, reverts the call.
    function _selfBalance(address token) private view returns (uint256 amount) {
        assembly ("memory-safe") {
            mstore(0x00, 0x70a08231) // balanceOf(address)
            mstore(0x20, address())
            if iszero(and(gt(returndatasize(), 0x1f), staticcall(gas(), token, 0x1c, 0x24, 0x00, 0x20))) {
                revert(0, 0)
            }
            amount := mload(0x00)
        }
    }

    function _send(address token, address to, uint256 amount) internal {
        if (amount == 0) return;
        if (token == address(0)) {
            (bool ok,) = to.call{value: amount}("");
            if (!ok) revert ITaskEscrow.NativeTransferFailed(to);
        } else {
            IERC20(token).safeTransfer(to, amount);
        }
    }

    function _computePayout(Task storage t) internal view returns (uint256 workerPayout, uint256 fee) {
        uint256 amount = _amount(t);
        // The fee is read live; feeBps <= MAX_FEE_BPS < BPS_DENOMINATOR, so fee <= amount.
        fee = amount * _getEscrowStorage().feeBps / BPS_DENOMINATOR;
        unchecked {
            workerPayout = amount - fee;
        }
    }

    /// @dev Marks the task Completed, pays the worker and the treasury, emits TaskCompleted, reports the outcome.
    function _payout(uint256 taskId, Task storage t) internal {
        (uint256 workerPayout, uint256 fee) = _computePayout(t);
        t.status = ITaskEscrow.Status.Completed;
        address token = _token(t);
        address worker = _worker(t);
        _send(token, worker, workerPayout);
        _send(token, _getEscrowStorage().treasury, fee);
        emit ITaskEscrow.TaskCompleted(taskId, workerPayout, fee);
        _reportOutcome(taskId, t, true, true);
    }

    /// @dev Marks the task Cancelled and returns the whole reward to the poster. The caller emits the refund event.
    /// `rateWorker`: whether the reputation hook records a failure for the worker.
    function _refund(uint256 taskId, Task storage t, bool rateWorker) internal returns (uint256 amount) {
        amount = _amount(t);
        t.status = ITaskEscrow.Status.Cancelled;
        _send(_token(t), _poster(t), amount);
        _reportOutcome(taskId, t, false, rateWorker);
    }

    /// @dev Reports a terminal outcome to the task registry and, when `rateWorker`, to the reputation contract. A hook
    /// that reverts or runs out of its gas is logged with HookFailed and settlement goes on.
    function _reportOutcome(uint256 taskId, Task storage t, bool completed, bool rateWorker) internal {
        EscrowStorage storage $ = _getEscrowStorage();
        address worker = _worker(t);
        address registry = $.taskRegistry;
        if (registry != address(0)) {
            _checkHookGas();
            try ITaskRegistry(registry).taskSettled{gas: HOOK_GAS_LIMIT}(taskId, uint8(t.status), worker) {}
            catch {
                emit ITaskEscrow.HookFailed(registry, taskId);
            }
        }
        // A rated outcome always has a worker (an assigned worker, or an open task's winner).
        if (!rateWorker || !$.hasReputationContract) return;
        address reputation = $.reputationContract;
        address token = _token(t);
        uint256 amount = _amount(t);
        if (amount < $.minRatedAmount[token]) return;
        _checkHookGas();
        if (completed) {
            try IWorkerReputation(reputation).recordCompleted{gas: HOOK_GAS_LIMIT}(worker, taskId, token, amount) {}
            catch {
                emit ITaskEscrow.HookFailed(reputation, taskId);
            }
        } else {
            try IWorkerReputation(reputation).recordFailed{gas: HOOK_GAS_LIMIT}(worker, taskId, token, amount) {}
            catch {
                emit ITaskEscrow.HookFailed(reputation, taskId);
            }
        }
    }

    /// @dev A hook gets its whole budget or the call reverts: otherwise a caller could pick a gas limit that starves the
    /// hook (63/64 rule) and make it fail on purpose while settlement succeeds.
    function _checkHookGas() internal view {
        if (gasleft() < HOOK_GAS_LIMIT * 64 / 63 + HOOK_GAS_RESERVE) revert ITaskEscrow.InsufficientGasForHook();
    }

    function _effectiveDeadline(Task storage t) internal view returns (uint256) {
        return uint256(t.deadline) + _pausedSecondsSince(t.createdAt);
    }

    /// @dev Whether `window` seconds, plus the seconds paused since `start`, have passed since `start`.
    function _windowPassed(uint256 start, uint256 window) internal view returns (bool) {
        return block.timestamp >= start + window + _pausedSecondsSince(start);
    }

    /// @dev Seconds the escrow spent paused after `timestamp`, the running pause included. Walks the pause history
    /// from the newest entry back to the first that ended before `timestamp`; pauses are rare, so the walk is short.
    function _pausedSecondsSince(uint256 timestamp) internal view returns (uint256 total) {
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

    /// @dev The phase of an open-submission task: Submission before the effective deadline, then Reveal for
    /// OPEN_REVEAL_WINDOW, Selection for OPEN_SELECTION_WINDOW, then Expired; Closed once settled. Time alone could
    /// move a phase back (recordPauseStart backdating a pause lengthens the effective deadline), so what already
    /// happened sets a floor: a reveal means at least Reveal (no commitment after evidence was shown), a pick or a
    /// dispute at least Selection.
    function _openPhase(uint256 taskId, Task storage t) internal view returns (ITaskEscrow.Phase) {
        ITaskEscrow.Status status = t.status;
        if (status == ITaskEscrow.Status.Completed || status == ITaskEscrow.Status.Cancelled) {
            return ITaskEscrow.Phase.Closed;
        }
        uint256 deadline = _effectiveDeadline(t);
        if (block.timestamp >= deadline + OPEN_REVEAL_WINDOW + OPEN_SELECTION_WINDOW) return ITaskEscrow.Phase.Expired;
        if (block.timestamp >= deadline + OPEN_REVEAL_WINDOW) return ITaskEscrow.Phase.Selection;
        OpenState storage o = _getEscrowStorage().openStates[taskId];
        if (status == ITaskEscrow.Status.Disputed || o.chosen != address(0)) return ITaskEscrow.Phase.Selection;
        if (block.timestamp >= deadline || o.revealCount != 0) return ITaskEscrow.Phase.Reveal;
        return ITaskEscrow.Phase.Submission;
    }

    /// @dev Owes `amount` of `token` to `account` (taken with withdraw): payments to parties the poster did not choose
    /// are never pushed, so a recipient that cannot receive cannot block a settlement.
    function _credit(address token, address account, uint256 amount) internal {
        if (amount == 0) return;
        EscrowStorage storage $ = _getEscrowStorage();
        $.credits[token][account] += amount;
        $.creditsHeld[token] += amount;
        emit ITaskEscrow.Credited(token, account, amount);
    }

    /// @dev Ends a dispute nobody ruled on within DISPUTE_WINDOW: half the reward to `workerSide`, the other half to
    /// `otherSide` (a worker, paid) or, when `otherSide` is zero, to the poster (refunded). A worker side's half pays
    /// the fee. Everything is credited. The task is Completed and nobody is rated.
    function _splitUnruled(uint256 taskId, Task storage t, address workerSide, address otherSide) internal {
        t.status = ITaskEscrow.Status.Completed;
        EscrowStorage storage $ = _getEscrowStorage();
        uint256 amount = _amount(t);
        uint256 feeBps = $.feeBps;
        uint256 half = amount / 2;
        uint256 otherHalf = amount - half;
        uint256 fee = half * feeBps / BPS_DENOMINATOR;
        uint256 workerPayout = half - fee;
        address token = _token(t);
        _credit(token, workerSide, workerPayout);
        if (otherSide == address(0)) {
            otherSide = _poster(t);
        } else {
            uint256 otherFee = otherHalf * feeBps / BPS_DENOMINATOR;
            fee += otherFee;
            otherHalf -= otherFee;
        }
        _credit(token, otherSide, otherHalf);
        emit ITaskEscrow.UnruledSplit(taskId, workerSide, workerPayout, otherSide, otherHalf, fee);
        _send(token, $.treasury, fee);
        _reportOutcome(taskId, t, true, false);
    }

    /// @dev The task's verifier agent judges it if set, else the marketplace verifier; never its worker. When the
    /// marketplace verifier was changed (setVerifier) to the worker of a task in flight, the admin judges that task in
    /// its place: otherwise nobody could.
    function _checkJudge(Task storage t) internal view {
        address judge = _judgeOf(t);
        address worker = _worker(t);
        if (msg.sender == judge && msg.sender != worker) return;
        if (judge == worker && msg.sender == _getEscrowStorage().admin) return;
        revert ITaskEscrow.NotVerifier();
    }

    /// @dev The task's verifier agent if it has one, else the marketplace verifier. Tasks created by this implementation
    /// carry MARKETPLACE_JUDGED when they have none, which spares the read of slot 5.
    function _judgeOf(Task storage t) internal view returns (address judge) {
        if (t.submissionAttempts & MARKETPLACE_JUDGED == 0) judge = t.verifierAgent;
        if (judge == address(0)) judge = _getEscrowStorage().verifier;
    }

    function _settleVerdict(uint256 taskId, Task storage t, bool passed) internal {
        // Check: evidence awaits a verdict.
        if (t.status != ITaskEscrow.Status.Submitted) revert ITaskEscrow.InvalidStatus(t.status, ITaskEscrow.Status.Submitted);
        emit ITaskEscrow.VerificationCompleted(taskId, passed);
        if (passed) {
            _payout(taskId, t);
        } else {
            t.status = ITaskEscrow.Status.Verified;
            t.failedVerdictAt = uint40(block.timestamp);
        }
    }

    /// @dev A hook is unset (zero) or a contract: a call to an address without code would revert past try/catch.
    function _checkHook(address hook) internal view {
        if (hook != address(0) && hook.code.length == 0) revert ITaskEscrow.NotAContract(hook);
    }

    function _teeVerdictPayload(uint256 taskId, Task storage t, bool passed) internal view returns (bytes memory) {
        return abi.encode(
            TEE_VERDICT_TYPEHASH,
            block.chainid,
            address(this),
            taskId,
            t.submissionAttempts & ATTEMPTS_MASK,
            t.evidenceHash,
            passed
        );
    }

    /// @dev The bond of one commitment to an open-submission task of reward `amount`: OPEN_BOND_BPS of it, at least 1.
    function _openBond(uint256 amount) internal pure returns (uint256 bond) {
        bond = amount * OPEN_BOND_BPS / BPS_DENOMINATOR;
        if (bond == 0) bond = 1;
    }
}
