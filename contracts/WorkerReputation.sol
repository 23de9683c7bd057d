// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IWorkerReputation} from "./interfaces/ITaskOutcomeHooks.sol";

/// @title WorkerReputation
/// @notice Reference reputation contract: counts completed and failed work per worker, as reported by one escrow.
contract WorkerReputation is IWorkerReputation {
    struct Record {
        uint64 completed;
        uint64 failed;
        uint128 earned;
    }

    /// @notice The only escrow whose reports count.
    address public immutable escrow;

    mapping(address worker => Record) private _records;

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
    function recordCompleted(address worker, uint256 taskId, address, uint256 amount) external onlyEscrow {
        Record storage r = _records[worker];
        ++r.completed;
        r.earned += uint128(amount);
        emit OutcomeRecorded(worker, taskId, true, amount);
    }

    /// @inheritdoc IWorkerReputation
    function recordFailed(address worker, uint256 taskId, address, uint256 amount) external onlyEscrow {
        ++_records[worker].failed;
        emit OutcomeRecorded(worker, taskId, false, amount);
    }

    /// @notice Completed and failed counts and the rewards recorded for `worker`.
    function reputationOf(address worker) external view returns (uint256 completed, uint256 failed, uint256 earned) {
        Record memory r = _records[worker];
        return (r.completed, r.failed, r.earned);
    }
}
