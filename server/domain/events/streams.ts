/**
 * The open long-lived responses of this process (event streams, hosted agents' log follows, MCP GET streams) and the
 * rules they share (docs/api.md, "Events"):
 *
 * - caps per kind (counted apart): EVENTS_MAX_STREAMS_PER_KEY per credential (an API key, or a hosted agent's token),
 *   EVENTS_MAX_STREAMS_PER_WALLET per wallet (however many keys it mints) and EVENTS_MAX_STREAMS_PER_IP per client
 *   address; over any, 429 RATE_LIMIT naming it;
 * - a maximum lifetime (EVENTS_MAX_STREAM_LIFETIME_MS, or less for a kind that asks it): the client resumes;
 * - a credential that stops acting ends its streams: a revoked key at once in the process that revoked it, and in
 *   every process sharing the database within EVENTS_CREDENTIAL_CHECK_MS (each looks its open streams' keys and
 *   agents up); a hosted agent deleted or stopped by its owner likewise.
 */
import type { Knex } from "knex";
import type { Logger } from "../../logger";
import type { PushConfig } from "../../config";
import { fail } from "../../errors";
import { revokedKeyIds } from "../../db/repositories/apiKeys";
import { standingAgentIds } from "../../db/repositories/hostedAgents";

export type StreamKind = "event" | "log" | "mcp";

/** Who holds a stream: the wallet it acts as, the credential it presented and the client's address. */
export interface StreamHolder {
  wallet: string;
  /** The API key's id; null for a hosted agent's token. */
  keyId: number | null;
  /** The hosted agent whose token opened the stream. */
  agentId?: string;
  ip: string;
}

interface OpenStream {
  kind: StreamKind;
  holder: StreamHolder;
  counted: string[];
  end: () => void;
  timer: NodeJS.Timeout;
  released: boolean;
}

const WHAT: Record<StreamKind, string> = { event: "event streams", log: "log follows", mcp: "MCP streams" };

export class StreamRegistry {
  private readonly open = new Set<OpenStream>();
  private readonly counts = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(private readonly options: { db: Knex; logger: Logger; config: PushConfig }) {}

  /** Looks for revoked keys and stopped agents among the open streams' credentials every credentialCheckMs. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check(), this.options.config.credentialCheckMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Takes a stream of `kind` for `holder` (429 RATE_LIMIT over a cap); `end` closes the response and is called when
   * the stream must end (its lifetime, a revoked credential). Answers the release, which the caller runs when the
   * stream ends for any reason (idempotent).
   */
  take(kind: StreamKind, holder: StreamHolder, end: () => void, maxLifetimeMs?: number): () => void {
    const config = this.options.config;
    const credential =
      holder.keyId !== null
        ? `key:${holder.keyId}`
        : holder.agentId
          ? `agent:${holder.agentId}`
          : `wallet:${holder.wallet}`;
    const caps: [string, number, string][] = [
      [`${kind}:${credential}`, config.maxStreamsPerKey, "per API key"],
      [`${kind}:wallet:${holder.wallet.toLowerCase()}`, config.maxStreamsPerWallet, "per wallet (all its keys)"],
      [`${kind}:ip:${holder.ip}`, config.maxStreamsPerIp, "per client address"],
    ];
    for (const [key, limit, per] of caps) {
      if ((this.counts.get(key) ?? 0) >= limit) {
        fail(
          "RATE_LIMIT",
          `at most ${limit} concurrent ${WHAT[kind]} ${per}: close one first (a stream resumes with Last-Event-ID)`,
          { headers: { "Retry-After": "5" }, details: { maxStreams: limit } },
        );
      }
    }
    for (const [key] of caps) this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    const lifetimeMs = Math.min(config.maxStreamLifetimeMs, maxLifetimeMs ?? Infinity);
    const stream: OpenStream = {
      kind,
      holder,
      counted: caps.map(([key]) => key),
      end,
      timer: setTimeout(() => this.end(stream), lifetimeMs),
      released: false,
    };
    stream.timer.unref();
    this.open.add(stream);
    return () => this.release(stream);
  }

  /** Ends this process's open streams of API key `keyId` now (its revocation). */
  endKey(keyId: number): void {
    for (const stream of [...this.open]) if (stream.holder.keyId === keyId) this.end(stream);
  }

  /** Open streams of this process (all kinds). */
  get size(): number {
    return this.open.size;
  }

  private release(stream: OpenStream): void {
    if (stream.released) return;
    stream.released = true;
    clearTimeout(stream.timer);
    this.open.delete(stream);
    for (const key of stream.counted) {
      const left = (this.counts.get(key) ?? 1) - 1;
      if (left <= 0) this.counts.delete(key);
      else this.counts.set(key, left);
    }
  }

  private end(stream: OpenStream): void {
    this.release(stream);
    try {
      stream.end();
    } catch (error) {
      this.options.logger.warn("could not end a stream", { error });
    }
  }

  /** Ends the streams whose key was revoked, or whose hosted agent was deleted or stopped (in any process). */
  private async check(): Promise<void> {
    if (this.checking || this.open.size === 0) return;
    this.checking = true;
    try {
      const { db } = this.options;
      const keyIds = [...new Set([...this.open].flatMap((s) => (s.holder.keyId === null ? [] : [s.holder.keyId])))];
      const agentIds = [...new Set([...this.open].flatMap((s) => (s.holder.agentId ? [s.holder.agentId] : [])))];
      const revoked = new Set(await revokedKeyIds(db, keyIds));
      const standing = new Set(await standingAgentIds(db, agentIds));
      for (const stream of [...this.open]) {
        const { keyId, agentId } = stream.holder;
        if ((keyId !== null && revoked.has(keyId)) || (agentId && !standing.has(agentId))) this.end(stream);
      }
    } catch (error) {
      this.options.logger.warn("could not check open streams' credentials; trying again", { error });
    } finally {
      this.checking = false;
    }
  }
}
