/**
 * A hosted agent's log, as JSON lines or followed as Server-Sent Events: REST only, because the follow is the HTTP
 * stream itself.
 */
import { PassThrough } from "node:stream";
import { startSseResponse } from "../sseResponse";
import { takeStreamSlot } from "../../domain/events";
import { defineOperation } from "../../operations/operation";
import { OWNER } from "../../operations/agents";
import { agentParams, logsQuery, logsSchema, type LogLine } from "../../domain/schemas/agents";
import { followAgentLogs, logFollowStart, ownedAgent, readAgentLogs } from "../../domain/agents/hostedAgents";

export const agentLogsRoute = defineOperation({
  mcp: { restOnly: "following a log is the HTTP stream itself (Server-Sent Events)" },
  ...OWNER,
  method: "get",
  path: "/api/v1/agents/:agent/logs",
  summary: "A hosted agent's log: JSON lines, or followed as Server-Sent Events (Accept: text/event-stream)",
  description:
    "JSON: { logs } after ?after=<id> (oldest first), or the last `limit` lines without it. With Accept: " +
    "text/event-stream: one `id:`/`event: log`/`data:` record per line (after ?after= or Last-Event-ID, else the " +
    "new ones), polled every 500 ms, until the client goes. At most EVENTS_MAX_STREAMS_PER_KEY (5) concurrent follows " +
    "per API key, EVENTS_MAX_STREAMS_PER_WALLET (10) per wallet and EVENTS_MAX_STREAMS_PER_IP (20) per client " +
    "address (counted apart from event streams): over one, 429 RATE_LIMIT.",
  request: { params: agentParams, query: logsQuery },
  response: logsSchema,
  errors: ["NOT_FOUND", "DELEGATION_DISABLED", "RATE_LIMIT"],
  handler: async ({ params, query, caller, ctx, deps }) => {
    const agent = await ownedAgent(deps, caller!.wallet, params.agent);
    if (!/text\/event-stream/i.test(ctx.get("accept"))) return readAgentLogs(deps, agent, query);
    const lastEventId = Number(ctx.get("last-event-id") || NaN);
    const after = await logFollowStart(
      deps,
      agent,
      query.after ?? (Number.isSafeInteger(lastEventId) ? lastEventId : undefined),
    );
    // Capped per key, wallet and client address (429 RATE_LIMIT), each polling the database; ended by the registry
    // at its lifetime or its credential's revocation.
    const gone = new AbortController();
    const release = takeStreamSlot(deps, caller!, ctx.ip, "log", () => gone.abort());
    const body = new PassThrough();
    startSseResponse(ctx, body, () => {
      gone.abort();
      body.end();
    });
    const write = (line: LogLine) => body.write(`id: ${line.id}\nevent: log\ndata: ${JSON.stringify(line)}\n\n`);
    // Ends the stream when the follow ends (the client went, or a read failed: it resumes with Last-Event-ID).
    void followAgentLogs(deps, agent, after, write, gone.signal).then(() => {
      release();
      body.end();
    });
    return undefined as never;
  },
});
