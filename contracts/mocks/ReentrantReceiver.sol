// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title ReentrantReceiver
/// @notice Test-only contract account for native-currency tasks. It acts as a poster or worker through `execute` and
/// reacts to incoming native currency according to its mode: accept, reject, or call back into a target once. In
/// `Reenter` mode it records the callee's revert data and keeps the funds; in `ReenterAndBubble` it reverts with it.
contract ReentrantReceiver {
    enum Mode {
        Accept,
        Reject,
        Reenter,
        ReenterAndBubble
    }

    Mode public mode;
    address public reentryTarget;
    bytes public payload;
    /// @notice Revert data of the latest failed re-entry (empty if none failed).
    bytes public lastReentryError;
    /// @notice Number of re-entries attempted, and how many of them succeeded.
    uint256 public reentryAttempts;
    uint256 public reentrySuccesses;

    /// @notice Thrown by `receive` in `Reject` mode.
    error PaymentRejected();

    /// @notice Sets how the next incoming payment is handled; re-entry modes are one-shot.
    function setMode(Mode mode_, address target_, bytes calldata payload_) external {
        mode = mode_;
        reentryTarget = target_;
        payload = payload_;
    }

    /// @notice Calls `target_` with `data` and the attached value as this contract, and bubbles a revert.
    function execute(address target_, bytes calldata data) external payable returns (bytes memory result) {
        bool ok;
        (ok, result) = target_.call{value: msg.value}(data);
        if (!ok) _bubble(result);
    }

    receive() external payable {
        Mode current = mode;
        if (current == Mode.Reject) revert PaymentRejected();
        if (current == Mode.Accept) return;
        mode = Mode.Accept;
        ++reentryAttempts;
        (bool ok, bytes memory result) = reentryTarget.call(payload);
        if (ok) {
            ++reentrySuccesses;
        } else {
            if (current == Mode.ReenterAndBubble) _bubble(result);
            lastReentryError = result;
        }
    }

    function _bubble(bytes memory result) private pure {
        assembly {
            revert(add(result, 32), mload(result))
        }
    }
}
