// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IWorkerReputation, ITaskRegistry} from "../interfaces/ITaskOutcomeHooks.sol";

/// @title RevertingHook
/// @notice Test-only hostile hook, usable as reputation contract and as task registry: every report either reverts
/// or burns all the gas it was given, as chosen at deployment.
contract RevertingHook is IWorkerReputation, ITaskRegistry {
    enum Mode {
        Revert, // 0: revert with HookRejected
        BurnGas // 1: loop until the forwarded gas runs out
    }

    Mode public immutable mode;
    /// @notice Written by the gas-burning loop so the optimizer cannot drop it.
    uint256 public counter;

    error HookRejected();

    constructor(Mode mode_) {
        mode = mode_;
    }

    /// @inheritdoc IWorkerReputation
    function recordCompleted(address, uint256, address, uint256) external {
        _fail();
    }

    /// @inheritdoc IWorkerReputation
    function recordFailed(address, uint256, address, uint256) external {
        _fail();
    }

    /// @inheritdoc ITaskRegistry
    function taskCreated(uint256, address, bytes32) external {
        _fail();
    }

    /// @inheritdoc ITaskRegistry
    function taskSettled(uint256, uint8, address) external {
        _fail();
    }

    function _fail() private {
        if (mode == Mode.Revert) revert HookRejected();
        // Each iteration writes storage; the loop ends only when the call runs out of gas.
        while (true) {
            ++counter;
        }
    }
}
