/**
 * Private keys of the in-process Hardhat chain's accounts, for code that signs by itself (the marketplace verifier).
 * The fixture's signers are accounts 0..: admin 0, treasury 1, verifier 2, poster 3, worker 4, verifierAgent 5.
 */
import hre, { ethers } from "hardhat";
import type { HardhatNetworkHDAccountsConfig } from "hardhat/types";

export const VERIFIER_ACCOUNT = 2;

/** The private key of Hardhat account `index` (derived from the configured mnemonic). */
export function hardhatPrivateKey(index: number): string {
  const accounts = hre.config.networks.hardhat.accounts as HardhatNetworkHDAccountsConfig;
  return ethers.HDNodeWallet.fromMnemonic(ethers.Mnemonic.fromPhrase(accounts.mnemonic), `${accounts.path}/${index}`)
    .privateKey;
}

/** The marketplace verifier's key (the fixture's `verifier`): VERIFIER_PRIVATE_KEY for startTestApi. */
export const verifierPrivateKey = () => hardhatPrivateKey(VERIFIER_ACCOUNT);
