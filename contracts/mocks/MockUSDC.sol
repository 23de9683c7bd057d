// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";

/// @title MockUSDC
/// @notice USDC stand-in for local networks: 6 decimals, EIP-2612 permit, and a mint anyone may call.
contract MockUSDC is ERC20, ERC20Permit {
    constructor() ERC20("USD Coin (mock)", "USDC") ERC20Permit("USD Coin (mock)") {}

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice Mints `amount` to `to`. Open to anyone: local networks only.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }
}
