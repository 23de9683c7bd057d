// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Initializable} from "@openzeppelin/contracts-upgradeable/proxy/utils/Initializable.sol";
import {UUPSUpgradeable} from "@openzeppelin/contracts-upgradeable/proxy/utils/UUPSUpgradeable.sol";
import {Ownable2StepUpgradeable} from "@openzeppelin/contracts-upgradeable/access/Ownable2StepUpgradeable.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

import {IAgentFactory} from "./interfaces/IAgentFactory.sol";

/// @title AgentFactory
/// @notice Upgradeable (UUPS) collector of the agent deploy fee, with two-step ownership.
contract AgentFactory is IAgentFactory, Initializable, UUPSUpgradeable, Ownable2StepUpgradeable {
    using SafeERC20 for IERC20;

    /// @custom:storage-location erc7201:marketplace.storage.AgentFactory
    struct FactoryStorage {
        // slot 0
        address usdc;
        // slot 1
        address treasury;
        // slot 2
        uint256 deployFee;
        // slot 3
        uint256 nonce;
    }

    // keccak256(abi.encode(uint256(keccak256("marketplace.storage.AgentFactory")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant FACTORY_STORAGE_LOCATION =
        0x56001b57c59580894f3b9875620309a76894c129a4a4bbfd55aa4fbb8570b800;

    function _getFactoryStorage() private pure returns (FactoryStorage storage $) {
        assembly {
            $.slot := FACTORY_STORAGE_LOCATION
        }
    }

    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor() {
        _disableInitializers();
    }

    function initialize(address initialOwner, address usdcToken, address initialTreasury, uint256 initialFee)
        external
        initializer
    {
        if (usdcToken == address(0) || initialTreasury == address(0)) revert ZeroAddress();
        __Ownable_init(initialOwner);
        __Ownable2Step_init();
        FactoryStorage storage $ = _getFactoryStorage();
        $.usdc = usdcToken;
        $.treasury = initialTreasury;
        emit TreasuryUpdated(address(0), initialTreasury);
        $.deployFee = initialFee;
        emit DeployFeeUpdated(0, initialFee);
    }

    /// @inheritdoc IAgentFactory
    function deployAgent(uint256 usdcAmount) external returns (uint256 newNonce) {
        // Check: funding the agent is not supported, only the fee.
        if (usdcAmount != 0) revert AgentFundingNotSupported();
        FactoryStorage storage $ = _getFactoryStorage();
        // Check: a fee is configured.
        uint256 fee = $.deployFee;
        require(fee != 0, "AgentFactory: deploy fee not set");

        newNonce = ++$.nonce;
        IERC20($.usdc).safeTransferFrom(msg.sender, $.treasury, fee);
        emit AgentDeployed(msg.sender, usdcAmount, newNonce, block.timestamp);
    }

    /// @inheritdoc IAgentFactory
    function getTotalCost(uint256 usdcAmount) external view returns (uint256) {
        return _getFactoryStorage().deployFee + usdcAmount;
    }

    /// @inheritdoc IAgentFactory
    function setTreasury(address newTreasury) external onlyOwner {
        if (newTreasury == address(0)) revert ZeroAddress();
        FactoryStorage storage $ = _getFactoryStorage();
        emit TreasuryUpdated($.treasury, newTreasury);
        $.treasury = newTreasury;
    }

    /// @inheritdoc IAgentFactory
    function setDeployFee(uint256 newFee) external onlyOwner {
        FactoryStorage storage $ = _getFactoryStorage();
        emit DeployFeeUpdated($.deployFee, newFee);
        $.deployFee = newFee;
    }

    /// @inheritdoc IAgentFactory
    function emergencyWithdraw(uint256 amount) external onlyOwner {
        IERC20(_getFactoryStorage().usdc).safeTransfer(msg.sender, amount);
        emit EmergencyWithdrawal(msg.sender, amount);
    }

    /// @inheritdoc IAgentFactory
    function usdc() external view returns (address) {
        return _getFactoryStorage().usdc;
    }

    /// @inheritdoc IAgentFactory
    function treasury() external view returns (address) {
        return _getFactoryStorage().treasury;
    }

    /// @inheritdoc IAgentFactory
    function deployFee() external view returns (uint256) {
        return _getFactoryStorage().deployFee;
    }

    /// @inheritdoc IAgentFactory
    function nonce() external view returns (uint256) {
        return _getFactoryStorage().nonce;
    }

    /// @dev Only the owner may upgrade.
    function _authorizeUpgrade(address) internal view override onlyOwner {}
}
