/**
 * Exporting a hosted agent's wallet key, by its owner only, with a fresh signature of the owner's wallet:
 * POST /agents/:agent/export/challenge answers an EIP-4361 message naming the agent and its wallet with a one-time
 * nonce (the sign-in nonces' storage, bound to the owner); POST /agents/:agent/export trades the signed message for
 * the key. The checks are sign-in's (MISSING_FIELDS, VALIDATION_ERROR, BAD_SIGNATURE, NONCE_INVALID, NONCE_MISMATCH),
 * plus NOT_OWNER_SIGNATURE when the signer is not the agent's owner and NO_KEY when no key is stored (deleted).
 * The export is recorded (hosted_agent_key_exports, with the caller's IP) in the transaction that consumes the nonce,
 * before the key is opened: a record that cannot be written answers EXPORT_NOT_LOGGED and leaves the nonce usable.
 * The log says that an export happened, never the key.
 */
import { Wallet } from "ethers";
import type { Deps } from "../deps";
import { AppError, fail } from "../../errors";
import {
  checkMessageContext,
  checkNonce,
  issueServiceMessage,
  parseSiweMessage,
  signerOf,
  spendNonce,
} from "../accounts";
import { findHostedAgent, recordKeyExport, type HostedAgentRow } from "../../db/repositories/hostedAgents";
import { openSecret, secretLabel } from "./secrets";
import { ownedAgent } from "./hostedAgents";

const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

/** The statement an export message carries: it names the agent and its wallet, so it opens nothing else. */
export const exportStatement = (agent: Pick<HostedAgentRow, "id" | "wallet">) =>
  `Export the private key of hosted agent ${agent.id} with wallet ${agent.wallet}.`;

/** The purpose an export challenge's nonce is bound to: this agent's key export, and nothing else (no sign-in). */
const exportPurpose = (agent: Pick<HostedAgentRow, "id">) => `key-export:${agent.id}`;

function requireKey(agent: HostedAgentRow): string {
  if (!agent.encryptedKey) {
    return fail("NO_KEY", `agent ${agent.id} has no stored key (it was deleted): there is nothing to export`);
  }
  return agent.encryptedKey;
}

/** POST /agents/:agent/export/challenge. */
export async function exportChallenge(
  deps: Deps,
  owner: string,
  idOrSlug: string,
): Promise<{ message: string; nonce: string; expiresAt: string }> {
  const agent = await ownedAgent(deps, owner, idOrSlug, true);
  requireKey(agent);
  const { message, nonce, expiresAt } = await issueServiceMessage(deps, agent.owner, exportStatement(agent), {
    purpose: exportPurpose(agent),
    requestId: `export:${agent.id}`,
  });
  return { message, nonce, expiresAt: iso(expiresAt) };
}

/** POST /agents/:agent/export. */
export async function exportAgentKey(
  deps: Deps,
  owner: string,
  idOrSlug: string,
  input: { message: string; signature: string },
  ip: string | null,
): Promise<{ address: string; privateKey: string }> {
  const agent = await ownedAgent(deps, owner, idOrSlug, true);
  requireKey(agent);
  const nowMs = deps.clock.wallNowMs();
  const message = parseSiweMessage(input.message);
  checkMessageContext(deps, message, nowMs);
  if (message.statement !== exportStatement(agent)) {
    fail("BAD_SIGNATURE", `message: not the export challenge of agent ${agent.id} (POST .../export/challenge)`);
  }
  const signer = signerOf(input.message, input.signature);
  if (signer !== agent.owner) {
    fail("NOT_OWNER_SIGNATURE", `signature: signed by ${signer}, not by the agent's owner ${agent.owner}`);
  }
  if (message.address.toLowerCase() !== signer) {
    fail("BAD_SIGNATURE", `signature is not by the message's address ${message.address}`);
  }
  const now = Math.floor(nowMs / 1000);
  await checkNonce(deps, message.nonce, agent.owner, exportPurpose(agent), now, "request a new export challenge");

  const sealed = await deps.db.transaction(async (trx) => {
    await spendNonce(trx, message.nonce, agent.owner, exportPurpose(agent), now);
    const current = await findHostedAgent(trx, agent.id);
    const key = requireKey(current ?? { ...agent, encryptedKey: null });
    try {
      await recordKeyExport(trx, { agentId: agent.id, owner: agent.owner, ip, atMs: nowMs });
    } catch (cause) {
      throw new AppError({
        code: "EXPORT_NOT_LOGGED",
        message: "the export could not be recorded, so the key is not answered: retry later",
        cause,
      });
    }
    return key;
  });
  const privateKey = openSecret(deps.config.hostedAgents.keyEncryptionKey, sealed, secretLabel.walletKey(agent.id));
  const address = new Wallet(privateKey).address.toLowerCase();
  if (address !== agent.wallet) throw new Error(`stored key of ${agent.id} does not match its wallet`);
  deps.logger.info("hosted agent key exported", { agentId: agent.id, owner: agent.owner, ip });
  return { address, privateKey };
}
