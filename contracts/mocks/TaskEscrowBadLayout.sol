// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Initializable} from "@openzeppelin/contracts-upgradeable/proxy/utils/Initializable.sol";
import {UUPSUpgradeable} from "@openzeppelin/contracts-upgradeable/proxy/utils/UUPSUpgradeable.sol";
import {ReentrancyGuardTransientUpgradeable} from
    "@openzeppelin/contracts-upgradeable/utils/ReentrancyGuardTransientUpgradeable.sol";

import {ITaskEscrow} from "../interfaces/ITaskEscrow.sol";

/// @title TaskEscrowBadLayout
/// @notice Test-only "V2" of the escrow whose storage layout is incompatible with TaskEscrow, for the upgrades plugin
/// to reject. It keeps the ERC-7201 namespace `marketplace.storage.TaskEscrow` but declares its struct with `admin`
/// moved above `verifier` and a new `uint256 minTaskAmount` inserted before `totalPausedSeconds`: every field after
/// the change would read another field's data. Never deploy it over a real proxy.
contract TaskEscrowBadLayout is Initializable, UUPSUpgradeable, ReentrancyGuardTransientUpgradeable {
    struct Task {
        address poster;
        uint40 createdAt;
        uint40 deadline;
        ITaskEscrow.Status status;
        uint8 submissionAttempts;
        address token;
        uint96 amount;
        address worker;
        uint40 disputedAt;
        uint40 failedVerdictAt;
        bool escalated;
        bool open;
        bytes32 taskHash;
        bytes32 evidenceHash;
        address verifierAgent;
        uint32 openSubmissionCount;
        bytes labels;
    }

    struct PauseInterval {
        uint40 start;
        uint40 end;
        uint40 pausedAt;
    }

    /// @custom:storage-location erc7201:marketplace.storage.TaskEscrow
    struct EscrowStorage {
        uint48 nextTaskId;
        address taskRegistry;
        bool paused;
        uint40 lastPauseEnd;
        address treasury;
        uint16 feeBps;
        bool hasReputationContract;
        // Reordered: TaskEscrow has `verifier` here and `admin` after it.
        address admin;
        address verifier;
        address pendingAdmin;
        address reputationContract;
        address teeSigner;
        // Inserted: shifts every following field by one slot.
        uint256 minTaskAmount;
        uint256 totalPausedSeconds;
        PauseInterval[] pauses;
        mapping(address token => bool allowed) allowedTokens;
        mapping(address token => uint256 amount) minRatedAmount;
        mapping(uint256 taskId => Task) tasks;
        mapping(uint256 taskId => mapping(address submitter => bytes32 evidenceHash)) openSubmissions;
    }

    // keccak256(abi.encode(uint256(keccak256("marketplace.storage.TaskEscrow")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant ESCROW_STORAGE_LOCATION =
        0x85427c6a95a65b7f061f7d28e950b0fc8007b8fa7891146463529a609c299a00;

    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor() {
        _disableInitializers();
    }

    /// @notice The admin read through the reordered struct.
    function admin() external view returns (address) {
        return _getEscrowStorage().admin;
    }

    function _getEscrowStorage() private pure returns (EscrowStorage storage $) {
        assembly {
            $.slot := ESCROW_STORAGE_LOCATION
        }
    }

    function _authorizeUpgrade(address) internal view override {
        if (msg.sender != _getEscrowStorage().admin) revert ITaskEscrow.NotAdmin();
    }
}
