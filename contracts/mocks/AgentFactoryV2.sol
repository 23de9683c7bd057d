// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {AgentFactory} from "../AgentFactory.sol";

/// @title AgentFactoryV2
/// @notice Test-only second version of the factory. It inherits AgentFactory unchanged and adds a version string and
/// one value kept in a new ERC-7201 namespace.
/// @dev V2 is only reached by upgrading an initialized proxy, so it needs no initializer of its own; AgentFactory's
/// external `initialize` (which calls the Ownable initializers) stays for fresh deployments. The plugin cannot see
/// that an inherited external initializer covers the parents and reports "Missing initializer" without the
/// annotation below (TaskEscrowV2 needs none: TaskEscrow's parents have empty initializers).
/// @custom:oz-upgrades-unsafe-allow missing-initializer
/// @custom:oz-upgrades-from AgentFactory
contract AgentFactoryV2 is AgentFactory {
    /// @custom:storage-location erc7201:marketplace.storage.AgentFactoryV2
    struct FactoryV2Storage {
        // slot 0
        bytes32 releaseTag;
    }

    // keccak256(abi.encode(uint256(keccak256("marketplace.storage.AgentFactoryV2")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant FACTORY_V2_STORAGE_LOCATION =
        0xd8a3717ed24c5d01aa1b2ab0b78dd0cc1daadf6561428c3f0e7f88d2ff606c00;

    /// @notice Emitted when the owner records a release tag.
    event ReleaseTagSet(bytes32 releaseTag);

    function _getFactoryV2Storage() private pure returns (FactoryV2Storage storage $) {
        assembly {
            $.slot := FACTORY_V2_STORAGE_LOCATION
        }
    }

    /// @notice The implementation version.
    function version() external pure returns (string memory) {
        return "2";
    }

    /// @notice Records a release tag in the V2 namespace. Owner only; also usable as `upgradeToAndCall` data.
    function setReleaseTag(bytes32 tag) external onlyOwner {
        _getFactoryV2Storage().releaseTag = tag;
        emit ReleaseTagSet(tag);
    }

    /// @notice The release tag recorded by `setReleaseTag` (zero until set).
    function releaseTag() external view returns (bytes32) {
        return _getFactoryV2Storage().releaseTag;
    }
}
