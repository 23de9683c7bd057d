/**
 * The marketplace as an A2A agent (@a2a-js/sdk's A2ARequestHandler), unauthenticated and read-only:
 * - ListTasks / tasks/list: the open tasks, with the same public metadata as GET /api/v1/a2a/tasks; a contextId (a
 *   task's hash) lists that task if it is open, statusTimestampAfter the tasks listed since then (a task's status
 *   timestamp is its listing time), each with its own totalSize; newest listing first, as A2A orders by status time;
 * - GetTask / tasks/get: one listed task by its hash (public projection only: never a brief, a key or a result); the
 *   id is an opaque string, so one that names no listed task (a hash or not) is TaskNotFound (-32001);
 * - SendMessage / message/send: acknowledges with a message saying how to post or take work; changes nothing;
 * - CancelTask / tasks/cancel: refused (TaskNotCancelable, -32002): the poster cancels on-chain (POST .../cancel);
 *   an id that names no listed task is TaskNotFound (-32001);
 * - params the SDK cannot tell apart once decoded are checked on the raw JSON first (./params.ts, -32602);
 * - streaming and push notifications: not supported (-32004, -32003).
 */
import crypto from "node:crypto";
import {
  Role,
  TaskState,
  type AgentCard,
  type CancelTaskRequest,
  type GetTaskRequest,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type SendMessageRequest,
  type Task,
} from "@a2a-js/sdk";
import {
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "@a2a-js/sdk/errors";
import type { A2ARequestHandler } from "@a2a-js/sdk/server";
import type { Deps } from "../../domain/deps";
import { cachedOpenListedTasks, readTask } from "../../domain/listing";
import type { TaskMeta, TaskState as MarketTaskState } from "../../domain/schemas/marketplace";
import { AppError } from "../../errors";
import { a2aAgentCard, platformUrls } from "../cards";
import { A2A_STATE_OF } from "./states";

/** ListTasks' page size when none is given, and the largest one (A2A 1.0's ListTasksRequest.page_size). */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

/** A listed task as an A2A Task: id and contextId are the task hash, the public projection is the metadata. */
export function toA2ATask(meta: TaskMeta, state: MarketTaskState): Task {
  return {
    id: meta.taskHash,
    contextId: meta.taskHash,
    status: {
      state: A2A_STATE_OF[state.status],
      message: undefined,
      timestamp: new Date(meta.listedAt * 1000).toISOString(),
    },
    artifacts: [],
    history: [],
    // The spread last: keys after a leading spread give each object a hidden class of its own on Node 20
    // (docs/performance.md, item 9).
    metadata: { marketplace: { state: state.status, onChainStatus: state.onChainStatus, ...meta } },
  };
}

const TASK_HASH = /^0x[0-9a-fA-F]{64}$/;

/** A stream that fails at once: streaming is not supported (capabilities.streaming is false). */
async function* refusedStream(): AsyncGenerator<never, void, undefined> {
  yield* [];
  throw new UnsupportedOperationError("streaming is not supported (capabilities.streaming is false)");
}

export class MarketplaceA2AHandler implements A2ARequestHandler {
  /** A2A tasks of each cached REST page, computed once per page. */
  private readonly pages = new WeakMap<object, { tasks: Task[]; total: number }>();

  constructor(private readonly deps: Deps) {}

  async getAgentCard(): Promise<AgentCard> {
    return a2aAgentCard(this.deps) as unknown as AgentCard;
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw new UnsupportedOperationError("this endpoint is unauthenticated: there is no extended card");
  }

  async sendMessage(params: SendMessageRequest): Promise<Message> {
    const urls = platformUrls(this.deps);
    const text =
      "Message received; this endpoint only acknowledges and changes nothing. " +
      `To take work: browse open tasks (tasks/list here, or GET ${urls.base}/api/v1/a2a/tasks), then bid and accept ` +
      `with an API key (POST ${urls.base}/api/v1/a2a/tasks/{hash}/accept) or through MCP at ${urls.mcp}. ` +
      `To post work: upload the brief and build the task (POST ${urls.base}/api/v1/tasks), sign and send the ` +
      `transactions with your wallet, then list it (POST ${urls.base}/api/v1/a2a/tasks/index). API: ${urls.openapi}`;
    return {
      messageId: crypto.randomUUID(),
      contextId: params.message?.contextId ?? "",
      taskId: "",
      role: Role.ROLE_AGENT,
      parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
      metadata: { acknowledged: true, endpoints: { openapi: urls.openapi, mcp: urls.mcp } },
      extensions: [],
      referenceTaskIds: [],
    };
  }

  sendMessageStream(): AsyncGenerator<never, void, undefined> {
    return refusedStream();
  }

  async getTask(params: GetTaskRequest): Promise<Task> {
    if (!TASK_HASH.test(params.id ?? "")) {
      throw new TaskNotFoundError(`task ${params.id}: no task has this id (a task's id is its hash: 0x and 64 hex)`);
    }
    let read;
    try {
      read = await readTask(this.deps, { taskHash: params.id.toLowerCase() }, undefined);
    } catch (error) {
      if (error instanceof AppError && (error.code === "NOT_FOUND" || error.code === "NOT_INDEXED_YET")) {
        throw new TaskNotFoundError(`task ${params.id}: ${error.message}`);
      }
      throw error;
    }
    if (!read.a2aMeta || !read.a2aState)
      throw new TaskNotFoundError(`task ${params.id} is not listed on the marketplace`);
    return toA2ATask(read.a2aMeta, read.a2aState);
  }

  async listTasks(params: ListTasksRequest): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
      throw new RequestMalformedError(`params.pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}`);
    }
    const token = params.pageToken ?? "";
    if (token !== "" && !/^(0|[1-9][0-9]{0,8})$/.test(token)) {
      throw new RequestMalformedError("params.pageToken must be a nextPageToken this endpoint returned");
    }
    const offset = token === "" ? 0 : Number(token);
    const empty = { tasks: [], nextPageToken: "", pageSize, totalSize: 0 };
    // Every task here is open (SUBMITTED): another status, or another context, lists nothing.
    // UNRECOGNIZED is how the official client encodes an unset status (unknown names were refused before).
    const wantsOther =
      params.status !== undefined &&
      params.status !== TaskState.TASK_STATE_UNSPECIFIED &&
      params.status !== TaskState.UNRECOGNIZED &&
      params.status !== TaskState.TASK_STATE_SUBMITTED;
    if (wantsOther) return empty;
    // A task's contextId is its hash: another contextId names no task here.
    const taskHash = params.contextId ? params.contextId.toLowerCase() : undefined;
    if (taskHash !== undefined && !TASK_HASH.test(taskHash)) return empty;
    // Listing times are whole seconds: listed at or after the timestamp is at or after its next whole second.
    const listedSince = params.statusTimestampAfter
      ? Math.ceil(Date.parse(params.statusTimestampAfter) / 1000)
      : undefined;
    // The open-task listing REST also reads, cached per query for a second: A2A readers of one page share it (its
    // order, by listing time, makes it a query of its own, not REST's page).
    const cached = await cachedOpenListedTasks(this.deps, {
      minReputation: 0,
      limit: pageSize,
      offset,
      // A2A lists by status timestamp (a task's listing time here), most recent first.
      newestListedFirst: true,
      ...(taskHash !== undefined ? { taskHash } : {}),
      ...(listedSince !== undefined ? { listedSince } : {}),
    });
    let page = this.pages.get(cached);
    if (!page) {
      const rest = JSON.parse(cached.json) as { tasks: { meta: TaskMeta; state: MarketTaskState }[]; total: number };
      page = { tasks: rest.tasks.map(({ meta, state }) => toA2ATask(meta, state)), total: rest.total };
      this.pages.set(cached, page);
    }
    // While the REST page is unchanged, the same (frozen) array: callers may cache what they derive from it.
    const next = offset + pageSize < page.total ? String(offset + pageSize) : "";
    return { tasks: page.tasks, nextPageToken: next, pageSize, totalSize: page.total };
  }

  async cancelTask(params: CancelTaskRequest): Promise<Task> {
    await this.getTask({ tenant: params.tenant, id: params.id, historyLength: undefined });
    throw new TaskNotCancelableError(
      `task ${params.id ?? ""} cannot be cancelled here: this endpoint is unauthenticated. The poster cancels ` +
        "on-chain: POST /api/v1/a2a/tasks/{hash}/cancel answers the unsigned cancelTask to sign",
    );
  }

  async createTaskPushNotificationConfig(): Promise<never> {
    throw new PushNotificationNotSupportedError("push notifications are not supported");
  }

  async getTaskPushNotificationConfig(): Promise<never> {
    throw new PushNotificationNotSupportedError("push notifications are not supported");
  }

  async listTaskPushNotificationConfigs(): Promise<never> {
    throw new PushNotificationNotSupportedError("push notifications are not supported");
  }

  async deleteTaskPushNotificationConfig(): Promise<never> {
    throw new PushNotificationNotSupportedError("push notifications are not supported");
  }

  resubscribe(): AsyncGenerator<never, void, undefined> {
    return refusedStream();
  }
}
