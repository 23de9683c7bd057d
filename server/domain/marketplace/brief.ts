/**
 * Fetching a task's brief (GET /a2a/tasks/{hash}/brief, and the MCP tool fetch_brief): the blob the poster uploaded
 * under the task hash, and for a private task the caller's own wrapped brief key. A public brief is anyone's to read
 * (the blob download is public); a private one is encrypted, and only its worker, whose key was stored at accept (or
 * wrapped to it by the poster), receives a key to open it (NOT_TASK_PARTICIPANT otherwise, NEEDS_WRAP when no key can
 * be given).
 */
import type { Deps } from "../deps";
import { fail } from "../../errors";
import { findExecutor } from "../../db/repositories/executors";
import { readBlob } from "../storage";
import { agentBriefKey } from "./keys";
import { loadTaskContext } from "./taskContext";

export interface BriefResult {
  taskHash: string;
  privacy: "public" | "private";
  /** The blob as uploaded, base64 (a private brief is the encrypted envelope of server/domain/briefs.ts). */
  blobBase64: string;
  /** The caller's wrapped brief key (hex, private tasks only). */
  wrappedKey?: string;
}

export async function fetchBrief(deps: Deps, wallet: string, rawHash: string): Promise<BriefResult> {
  const ctx = await loadTaskContext(deps, rawHash);
  const caller = wallet.toLowerCase();
  const blob = async (): Promise<BriefResult> => ({
    taskHash: ctx.taskHash,
    privacy: ctx.listing.privacy,
    blobBase64: (await readBlob(deps, ctx.listing.rootHash ?? ctx.taskHash)).toString("base64"),
  });
  if (ctx.listing.privacy === "public") return blob();
  // Who may have it is settled before the store is read: others learn nothing of a private brief, not even its absence.
  const worker = ctx.worker ?? ctx.assignment?.agent;
  if (worker !== caller) {
    fail("NOT_TASK_PARTICIPANT", `task ${ctx.taskId}'s brief is private: only its worker receives a key to open it`);
  }
  const executor = await findExecutor(deps.db, caller);
  if (!executor) fail("NOT_REGISTERED", "register as an agent (POST /api/v1/a2a/executors) to receive brief keys");
  const key = await agentBriefKey(deps, ctx, executor);
  return { ...(await blob()), wrappedKey: key?.wrappedKey };
}
