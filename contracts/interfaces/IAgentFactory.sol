// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title IAgentFactory
/// @notice Collects the agent deploy fee in USDC. `deployAgent` takes the fee from the caller to the treasury and
/// emits AgentDeployed, which the service reads as proof of payment before it starts a hosted agent.
interface IAgentFactory {
    /// @notice Emitted when a deploy fee is paid. `nonce` counts payments from 1.
    event AgentDeployed(address indexed user, uint256 usdcAmount, uint256 nonce, uint256 timestamp);
    event TreasuryUpdated(address indexed previousTreasury, address indexed newTreasury);
    event DeployFeeUpdated(uint256 previousFee, uint256 newFee);
    event EmergencyWithdrawal(address indexed to, uint256 amount);

    /// @notice Thrown when `deployAgent` is asked to fund the agent: only the fee is supported.
    error AgentFundingNotSupported();
    /// @notice Thrown when an address argument is zero.
    error ZeroAddress();

    /// @notice Pays the deploy fee. `usdcAmount` must be 0; reverts with a string while the fee is 0 (not configured).
    function deployAgent(uint256 usdcAmount) external returns (uint256 nonce);

    /// @notice The fee plus `usdcAmount`: what the caller must approve.
    function getTotalCost(uint256 usdcAmount) external view returns (uint256);

    function setTreasury(address newTreasury) external;

    function setDeployFee(uint256 newFee) external;

    /// @notice Sends `amount` of USDC held by the factory (sent to it by mistake) to the owner.
    function emergencyWithdraw(uint256 amount) external;

    function usdc() external view returns (address);

    function treasury() external view returns (address);

    function deployFee() external view returns (uint256);

    function nonce() external view returns (uint256);
}
