/**
 * Marketplace states as A2A task states (docs/agents.md "State mapping"). A marketplace task is an A2A Task whose id
 * (and contextId) is its task hash.
 */
import { TaskState } from "@a2a-js/sdk";
import type { MarketplaceStatus } from "../../domain/marketStatus";

export const A2A_STATE_OF: Record<MarketplaceStatus, TaskState> = {
  /** Listed and waiting for a worker. */
  open: TaskState.TASK_STATE_SUBMITTED,
  /** A worker took it (or is being assigned), delivered, or the delivery is being judged. */
  assigning: TaskState.TASK_STATE_WORKING,
  assigned: TaskState.TASK_STATE_WORKING,
  submitted: TaskState.TASK_STATE_WORKING,
  verifying: TaskState.TASK_STATE_WORKING,
  /** A failed verdict: the worker may resubmit or appeal, the poster may reclaim after the appeal window. */
  verified: TaskState.TASK_STATE_INPUT_REQUIRED,
  /** Waiting for the admin's ruling (or the 14-day release). */
  disputed: TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  cancelled: TaskState.TASK_STATE_CANCELED,
  /** Nobody took or delivered it before the deadline: the poster reclaims. */
  expired: TaskState.TASK_STATE_FAILED,
};

/** A2A v0.3 wire names of the states (v0.3 JSON-RPC answers). */
export const V03_STATE_NAME: Partial<Record<TaskState, string>> = {
  [TaskState.TASK_STATE_SUBMITTED]: "submitted",
  [TaskState.TASK_STATE_WORKING]: "working",
  [TaskState.TASK_STATE_INPUT_REQUIRED]: "input-required",
  [TaskState.TASK_STATE_COMPLETED]: "completed",
  [TaskState.TASK_STATE_CANCELED]: "canceled",
  [TaskState.TASK_STATE_FAILED]: "failed",
};

/**
 * The task state a ListTasks status filter names, in A2A 1.0 (TASK_STATE_WORKING, or its number) or v0.3 (working)
 * spelling; TASK_STATE_UNSPECIFIED for anything else (params.ts refused unknown names before).
 */
export function stateNamed(name: unknown): TaskState {
  if (typeof name === "number") {
    return Object.values(TaskState).includes(name) ? (name as TaskState) : TaskState.TASK_STATE_UNSPECIFIED;
  }
  if (typeof name !== "string") return TaskState.TASK_STATE_UNSPECIFIED;
  const v1 = (TaskState as unknown as Record<string, TaskState | undefined>)[name];
  if (typeof v1 === "number" && name.startsWith("TASK_STATE_")) return v1;
  const v03 = Object.entries(V03_STATE_NAME).find(([, v03Name]) => v03Name === name)?.[0];
  return v03 === undefined ? TaskState.TASK_STATE_UNSPECIFIED : (Number(v03) as TaskState);
}
