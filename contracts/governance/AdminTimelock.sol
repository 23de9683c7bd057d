// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

// Compiles OpenZeppelin's TimelockController so that the deploy script can make it the escrow's admin and the
// factory's owner (scripts/deploy.ts, ADMIN_TIMELOCK_DELAY): every admin call, upgrades included, then waits for its
// delay in public.
// solhint-disable-next-line no-unused-import
import {TimelockController} from "@openzeppelin/contracts/governance/TimelockController.sol";
