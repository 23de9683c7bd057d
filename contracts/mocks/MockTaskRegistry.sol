// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ITaskRegistry} from "../interfaces/ITaskOutcomeHooks.sol";

/// @title MockTaskRegistry
/// @notice Test-only task registry: records what the escrow reports and re-emits it so tests can assert each call.
contract MockTaskRegistry is ITaskRegistry {
    struct Settlement {
        uint8 status;
        address worker;
    }

    /// @notice Poster reported at creation, per task.
    mapping(uint256 taskId => address poster) public posterOf;
    /// @notice Terminal outcome reported at settlement, per task.
    mapping(uint256 taskId => Settlement) public settlementOf;
    /// @notice Number of calls received, creations and settlements together.
    uint256 public calls;

    event TaskCreatedReported(address indexed reporter, uint256 indexed taskId, address poster, bytes32 taskHash);
    event TaskSettledReported(address indexed reporter, uint256 indexed taskId, uint8 status, address worker);

    /// @inheritdoc ITaskRegistry
    function taskCreated(uint256 taskId, address poster, bytes32 taskHash) external {
        posterOf[taskId] = poster;
        ++calls;
        emit TaskCreatedReported(msg.sender, taskId, poster, taskHash);
    }

    /// @inheritdoc ITaskRegistry
    function taskSettled(uint256 taskId, uint8 status, address worker) external {
        settlementOf[taskId] = Settlement(status, worker);
        ++calls;
        emit TaskSettledReported(msg.sender, taskId, status, worker);
    }
}
