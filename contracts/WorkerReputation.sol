// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IWorkerReputation} from "./interfaces/ITaskOutcomeHooks.sol";

/// @title WorkerReputation
/// @notice Reference reputation contract: counts completed and failed work per worker, as reported by one escrow.
contract WorkerReputation is IWorkerReputation {
    struct Record {
        uint64 completed;
        uint64 failed;
    }

    /// @notice The only escrow whose reports count.
    address public immutable escrow;

    mapping(address worker => Record) private _records;
    /// @dev Rewards of completed tasks per token, in the token's own units (tokens differ in decimals).
    mapping(address worker => mapping(address token => uint256 amount)) private _rewardVolume;

    event OutcomeRecorded(address indexed worker, uint256 indexed taskId, bool completed, uint256 amount);

    /// @notice Thrown when anyone but the escrow reports.
    error NotEscrow();

    constructor(address escrow_) {
        escrow = escrow_;
    }

    modifier onlyEscrow() {
        if (msg.sender != escrow) revert NotEscrow();
        _;
    }

    /// @inheritdoc IWorkerReputation
    function recordCompleted(address worker, uint256 taskId, address token, uint256 amount) external onlyEscrow {
        ++_records[worker].completed;
        _rewardVolume[worker][token] += amount;
        emit OutcomeRecorded(worker, taskId, true, amount);
    }

    /// @inheritdoc IWorkerReputation
    function recordFailed(address worker, uint256 taskId, address, uint256 amount) external onlyEscrow {
        ++_records[worker].failed;
        emit OutcomeRecorded(worker, taskId, false, amount);
    }

    /// @notice Completed and failed counts recorded for `worker`.
    function reputationOf(address worker) external view returns (uint256 completed, uint256 failed) {
        Record memory r = _records[worker];
        return (r.completed, r.failed);
    }

    /// @notice Sum of the rewards of `worker`'s completed tasks paid in `token` (the reward, before the platform fee).
    function rewardVolume(address worker, address token) external view returns (uint256) {
        return _rewardVolume[worker][token];
    }
}
