/**
 * The one derivation of a task's marketplace state (docs/marketplace.md "States") from what the service knows: the
 * escrow status, the effective deadline, the marketplace's assignment and the marketplace verifier's intents. The
 * marketplace operations (marketplace/taskContext.ts) and the read projections (listing.ts) both call `marketStatus`.
 */
import { TASK_STATUS, type TaskRecord } from "../escrow/records";
import type { AssignmentRecord } from "../db/repositories/assignments";
import type { IntentView } from "../verifier/types";
import type { MarketplaceStatus } from "./schemas/marketplace";

export type { MarketplaceStatus };

/** The marketplace's assignment of a Funded task: none, sent to the chain and unconfirmed, or confirmed. */
export type AssignmentState = "none" | "pending" | "confirmed";

export interface StatusFacts {
  /** The escrow status; Funded before the projection has the task (its funding receipt proved it). */
  onChainStatus: number;
  /** Chain time has reached the task's effective deadline. */
  lapsed: boolean;
  /** The marketplace's live assignment of the task (meaningful while the escrow says Funded). */
  assignment: AssignmentState;
  /** The marketplace verifier's verdict on the current attempt is pending or sent. */
  verdictInFlight: boolean;
}

const SETTLED: Record<number, MarketplaceStatus> = {
  [TASK_STATUS.Verified]: "verified",
  [TASK_STATUS.Disputed]: "disputed",
  [TASK_STATUS.Completed]: "completed",
  [TASK_STATUS.Cancelled]: "cancelled",
};

export function marketStatus(facts: StatusFacts): MarketplaceStatus {
  switch (facts.onChainStatus) {
    case TASK_STATUS.Funded:
      if (facts.lapsed) return "expired";
      if (facts.assignment === "none") return "open";
      return facts.assignment === "confirmed" ? "assigned" : "assigning";
    case TASK_STATUS.Assigned:
      return facts.lapsed ? "expired" : "assigned";
    case TASK_STATUS.Submitted:
      return facts.verdictInFlight ? "verifying" : "submitted";
    default:
      return SETTLED[facts.onChainStatus] ?? "open";
  }
}

/** Whether a verifier intent is still on its way to the chain. */
export function intentInFlight(intent: IntentView | undefined): boolean {
  return intent !== undefined && (intent.status === "pending" || intent.status === "sent");
}

/**
 * Whether an assignment still holds. An accept's assignment is void once its marketplaceAssign intent failed, or
 * when no intent exists and the accept that wrote it is older than the accept lock (it died before sending).
 * A poster's assignment (assignWorker, which the poster signs) holds until the chain says otherwise.
 */
export function assignmentHolds(
  assignment: AssignmentRecord,
  intent: IntentView | undefined,
  task: TaskRecord | undefined,
  wallNow: number,
  acceptLockSeconds: number,
): boolean {
  if (task && task.worker === assignment.agent && task.status !== TASK_STATUS.Funded) return true;
  if (assignment.via === "poster") return true;
  if (intent) return intent.status !== "failed";
  return wallNow < assignment.acceptedAt + acceptLockSeconds;
}

/** The state of a held assignment: confirmed once its marketplaceAssign intent is. */
export function assignmentState(held: AssignmentRecord | undefined, intent: IntentView | undefined): AssignmentState {
  if (!held) return "none";
  return intent?.status === "confirmed" ? "confirmed" : "pending";
}
