// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title ReturnsFalseToken
/// @notice Test-only ERC-20 whose `transfer` and `transferFrom` can be switched to return false without moving funds
/// (the pre-standard failure style that SafeERC20 must catch).
contract ReturnsFalseToken is ERC20 {
    bool public failTransfer;
    bool public failTransferFrom;

    constructor() ERC20("Returns False Token (mock)", "RFT") {}

    /// @notice Mints `amount` to `to`. Open to anyone: tests only.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    /// @notice Makes `transfer` and `transferFrom` return false (true) or behave normally (false).
    function setFailures(bool failTransfer_, bool failTransferFrom_) external {
        failTransfer = failTransfer_;
        failTransferFrom = failTransferFrom_;
    }

    function transfer(address to, uint256 value) public override returns (bool) {
        if (failTransfer) return false;
        return super.transfer(to, value);
    }

    function transferFrom(address from, address to, uint256 value) public override returns (bool) {
        if (failTransferFrom) return false;
        return super.transferFrom(from, to, value);
    }
}
