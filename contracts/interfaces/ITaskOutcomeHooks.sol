// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title IWorkerReputation
/// @notice What the escrow reports to a configured reputation contract. Only tasks whose reward is at least the
/// token's minimum rated amount are reported. A failing report never blocks settlement.
interface IWorkerReputation {
    /// @notice `worker` was paid for `taskId` (verified, released after escalation, winner of an open task, or a
    /// ruling in the worker's favour).
    function recordCompleted(address worker, uint256 taskId, address token, uint256 amount) external;

    /// @notice `worker` delivered on `taskId` and was judged against: a failed verdict left standing past the appeal
    /// window, or a ruling in the poster's favour. A lapsed assignment or an unruled dispute rates nobody.
    function recordFailed(address worker, uint256 taskId, address token, uint256 amount) external;
}

/// @title ITaskRegistry
/// @notice What the escrow reports to a configured task registry: every creation and every terminal outcome.
interface ITaskRegistry {
    function taskCreated(uint256 taskId, address poster, bytes32 taskHash) external;

    /// @param status the terminal status reached: 4 (Completed) or 5 (Cancelled)
    function taskSettled(uint256 taskId, uint8 status, address worker) external;
}
