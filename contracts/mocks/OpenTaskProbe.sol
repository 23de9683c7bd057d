// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ITaskEscrow} from "../interfaces/ITaskEscrow.sol";
import {ITaskRegistry} from "../interfaces/ITaskOutcomeHooks.sol";

/// @title OpenTaskProbe (test only)
/// @notice A task registry that asks the escrow, from inside `taskCreated`, whether the new task is an open-submission
/// task: the escrow must have written the task's state before calling its hook.
contract OpenTaskProbe is ITaskRegistry {
    /// @notice What `isOpenTask` answered during `taskCreated`, per task.
    mapping(uint256 taskId => bool open) public sawOpen;

    /// @inheritdoc ITaskRegistry
    function taskCreated(uint256 taskId, address, bytes32) external {
        sawOpen[taskId] = ITaskEscrow(msg.sender).isOpenTask(taskId);
    }

    /// @inheritdoc ITaskRegistry
    function taskSettled(uint256, uint8, address) external {}
}
