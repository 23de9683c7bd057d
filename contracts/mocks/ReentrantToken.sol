// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title ReentrantToken
/// @notice Test-only ERC-20 that calls back into a target (the escrow) from inside `transfer` or `transferFrom`, after
/// moving the funds, and bubbles the callee's revert. It can also act as a caller itself (`execute`), so that the
/// re-entrant call comes from an account the escrow would otherwise accept (the task's poster or worker).
contract ReentrantToken is ERC20 {
    /// @notice Which token call triggers the re-entry.
    enum Hook {
        None,
        TransferFrom,
        Transfer
    }

    Hook public hook;
    address public reentryTarget;
    bytes public payload;

    constructor() ERC20("Reentrant Token (mock)", "RENT") {}

    /// @notice Mints `amount` to `to`. Open to anyone: tests only.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    /// @notice Arms a one-shot re-entry: on the next `hook_` call the token calls `target_` with `payload_`.
    function arm(Hook hook_, address target_, bytes calldata payload_) external {
        hook = hook_;
        reentryTarget = target_;
        payload = payload_;
    }

    /// @notice Calls `target_` with `data` as this contract and bubbles a revert.
    function execute(address target_, bytes calldata data) external returns (bytes memory result) {
        bool ok;
        (ok, result) = target_.call(data);
        if (!ok) _bubble(result);
    }

    function transfer(address to, uint256 value) public override returns (bool) {
        bool ok = super.transfer(to, value);
        if (hook == Hook.Transfer) _reenter();
        return ok;
    }

    function transferFrom(address from, address to, uint256 value) public override returns (bool) {
        bool ok = super.transferFrom(from, to, value);
        if (hook == Hook.TransferFrom) _reenter();
        return ok;
    }

    function _reenter() private {
        // Disarm first: the re-entered call may move this token again.
        hook = Hook.None;
        (bool ok, bytes memory result) = reentryTarget.call(payload);
        if (!ok) _bubble(result);
    }

    function _bubble(bytes memory result) private pure {
        assembly {
            revert(add(result, 32), mload(result))
        }
    }
}
