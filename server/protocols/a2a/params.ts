/**
 * The shape checks of A2A JSON-RPC params, on the raw JSON before the SDK decodes it: its decoding turns a missing
 * message into an empty one, an unknown status name into UNRECOGNIZED (which the official client also sends for an
 * unset status) and a malformed timestamp into nothing, so these are told apart here. A failed check is the message
 * of a -32602 (invalid params) naming the field; undefined when the params are acceptable.
 */
import { TaskState } from "@a2a-js/sdk";

type Params = Record<string, unknown>;

const isObject = (value: unknown): value is Params =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const nonEmptyString = (value: unknown): value is string => typeof value === "string" && value !== "";

/** A2A 1.0 TaskState names, and v0.3's state names (tasks/list), as a ListTasks status filter may spell them. */
const STATUS_NAMES = new Set([
  ...Object.keys(TaskState).filter((name) => name.startsWith("TASK_STATE_")),
  "submitted",
  "working",
  "input-required",
  "completed",
  "canceled",
  "failed",
  "rejected",
  "auth-required",
  "unknown",
]);
/**
 * What an unset status looks like on the wire: absent, empty, TASK_STATE_UNSPECIFIED (0), or UNRECOGNIZED, the
 * official client's encoding of an unset enum.
 */
const UNSET_STATUS = new Set<unknown>([undefined, null, "", "UNRECOGNIZED", "TASK_STATE_UNSPECIFIED", 0, -1]);

/** RFC 3339 date-time, as A2A timestamps are (google.protobuf.Timestamp's JSON form). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** Whether a ListTasks status filter leaves the status unset (every open task is listed). */
export const isUnsetStatus = (status: unknown): boolean => UNSET_STATUS.has(status);

function checkMessage(params: Params): string | undefined {
  const message = params.message;
  if (!isObject(message)) return "params.message: a message object is required";
  if (!nonEmptyString(message.messageId)) return "params.message.messageId: a non-empty string is required";
  if (!nonEmptyString(message.role)) return "params.message.role: a role is required (ROLE_USER, or user in v0.3)";
  if (!Array.isArray(message.parts) || message.parts.length === 0) {
    return "params.message.parts: a non-empty array of parts is required";
  }
  if (!message.parts.every(isObject)) return "params.message.parts: every part must be an object";
  return undefined;
}

function checkTaskId(params: Params, field: "id" | "taskId"): string | undefined {
  return nonEmptyString(params[field]) ? undefined : `params.${field}: the task id is required (a task hash)`;
}

/** historyLength, where a method takes one: absent, or a whole number, 0 or more. */
function checkHistoryLength({ historyLength }: Params): string | undefined {
  if (historyLength === undefined || historyLength === null) return undefined;
  if (typeof historyLength === "number" && Number.isInteger(historyLength) && historyLength >= 0) return undefined;
  return "params.historyLength: must be a whole number, 0 or more";
}

function checkGet(params: Params): string | undefined {
  return checkTaskId(params, "id") ?? checkHistoryLength(params);
}

function checkList(params: Params): string | undefined {
  const { status, statusTimestampAfter } = params;
  if (!isUnsetStatus(status)) {
    const known =
      (typeof status === "string" && STATUS_NAMES.has(status)) ||
      (typeof status === "number" && Object.values(TaskState).includes(status));
    if (!known) {
      return `params.status: ${JSON.stringify(status)} is not a task state (TASK_STATE_SUBMITTED, TASK_STATE_WORKING, ...)`;
    }
  }
  const history = checkHistoryLength(params);
  if (history) return history;
  if (statusTimestampAfter !== undefined && statusTimestampAfter !== null) {
    if (
      typeof statusTimestampAfter !== "string" ||
      !RFC3339.test(statusTimestampAfter) ||
      Number.isNaN(Date.parse(statusTimestampAfter))
    ) {
      return "params.statusTimestampAfter: must be an RFC 3339 timestamp (2026-01-31T12:00:00Z)";
    }
  }
  return undefined;
}

const CHECKS: Record<string, (params: Params) => string | undefined> = {
  SendMessage: checkMessage,
  "message/send": checkMessage,
  GetTask: checkGet,
  "tasks/get": checkGet,
  CancelTask: (p) => checkTaskId(p, "id"),
  "tasks/cancel": (p) => checkTaskId(p, "id"),
  ListTasks: checkList,
  "tasks/list": checkList,
  "tasks/pushNotificationConfig/set": (p) =>
    checkTaskId(p, "taskId") ??
    (isObject(p.pushNotificationConfig) ? undefined : "params.pushNotificationConfig: an object is required"),
};

/** The -32602 message for `method`'s `params`, or undefined when they are acceptable (or not checked here). */
export function invalidParams(method: string, params: unknown): string | undefined {
  if (!Object.prototype.hasOwnProperty.call(CHECKS, method)) return undefined;
  if (!isObject(params)) return "params must be an object";
  return CHECKS[method](params);
}
