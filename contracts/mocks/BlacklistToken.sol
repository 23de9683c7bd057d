// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title BlacklistToken
/// @notice Test-only ERC-20 that, like USDC, refuses every transfer from or to a blacklisted account.
contract BlacklistToken is ERC20 {
    mapping(address account => bool blocked) public isBlacklisted;

    /// @notice Thrown when a transfer involves a blacklisted account.
    error AccountBlacklisted(address account);

    constructor() ERC20("Blacklist Token (mock)", "BLT") {}

    /// @notice Mints `amount` to `to`. Open to anyone: tests only.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    /// @notice Blocks (true) or unblocks (false) `account`. Open to anyone: tests only.
    function setBlacklisted(address account, bool blocked) external {
        isBlacklisted[account] = blocked;
    }

    function _update(address from, address to, uint256 value) internal override {
        if (isBlacklisted[from]) revert AccountBlacklisted(from);
        if (isBlacklisted[to]) revert AccountBlacklisted(to);
        super._update(from, to, value);
    }
}
