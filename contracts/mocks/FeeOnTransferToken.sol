// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title FeeOnTransferToken
/// @notice Test-only ERC-20 that burns `TRANSFER_FEE_BPS` of every transfer between two accounts, so the recipient
/// receives less than the amount sent.
contract FeeOnTransferToken is ERC20 {
    uint256 public constant TRANSFER_FEE_BPS = 100;
    uint256 public constant BPS_DENOMINATOR = 10_000;

    constructor() ERC20("Fee On Transfer Token (mock)", "FOT") {}

    /// @notice Mints `amount` to `to`. Open to anyone: tests only.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function _update(address from, address to, uint256 value) internal override {
        if (from == address(0) || to == address(0)) {
            super._update(from, to, value);
            return;
        }
        uint256 fee = value * TRANSFER_FEE_BPS / BPS_DENOMINATOR;
        super._update(from, address(0), fee);
        super._update(from, to, value - fee);
    }
}
