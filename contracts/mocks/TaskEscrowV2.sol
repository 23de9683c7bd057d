// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TaskEscrow} from "../TaskEscrow.sol";

/// @title TaskEscrowV2
/// @notice Test-only second version of the escrow. It inherits TaskEscrow unchanged (so its namespaced storage is
/// byte-for-byte the same) and adds a version string and one value kept in a new ERC-7201 namespace, which the
/// upgrade tests read back through the proxy.
/// @custom:oz-upgrades-from TaskEscrow
contract TaskEscrowV2 is TaskEscrow {
    /// @custom:storage-location erc7201:marketplace.storage.TaskEscrowV2
    struct EscrowV2Storage {
        // slot 0
        bytes32 releaseTag;
    }

    // keccak256(abi.encode(uint256(keccak256("marketplace.storage.TaskEscrowV2")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant ESCROW_V2_STORAGE_LOCATION =
        0x07f2e2def3953316eca9b5727c38dad22050443e352435cbdb8cb46ef4e09500;

    /// @notice Emitted when the admin records a release tag.
    event ReleaseTagSet(bytes32 releaseTag);

    function _getEscrowV2Storage() private pure returns (EscrowV2Storage storage $) {
        assembly {
            $.slot := ESCROW_V2_STORAGE_LOCATION
        }
    }

    /// @notice The implementation version.
    function version() external pure returns (string memory) {
        return "2";
    }

    /// @notice Records a release tag in the V2 namespace. Admin only; also usable as `upgradeToAndCall` data.
    function setReleaseTag(bytes32 tag) external onlyAdmin {
        _getEscrowV2Storage().releaseTag = tag;
        emit ReleaseTagSet(tag);
    }

    /// @notice The release tag recorded by `setReleaseTag` (zero until set).
    function releaseTag() external view returns (bytes32) {
        return _getEscrowV2Storage().releaseTag;
    }
}
